"""Record what real local model servers send, for tests/fake_servers.py to replay (issue 27).

    python tests/providers/record_real_servers.py PEER=URL [PEER=URL ...]

Each PEER names a running server (``../shared/reference/local-model-peers.md`` says how to
build them; ``docs/local-models.md`` lists the commands this file was made with):

* ``lcp`` — llama-cpp-python's server, ``--n_ctx 8192 --chat_format chatml-function-calling``;
* ``lcp512`` — the same with ``--n_ctx 512``;
* ``ls`` — llama.cpp's ``llama-server --jinja -c 8192`` with the Qwen2.5 template;
* ``ls512`` — the same with ``-c 512``;
* ``nemo`` — ``llama-server --jinja`` with the Mistral-Nemo-Instruct-2407 template.

Every exchange is sent as clawnb would send it (a request body of the same shape) with plain
httpx, and the answer is written down byte for byte: status, the headers that matter, and the
body as text (server-sent events included, as they arrived). The result is
``tests/providers/data/recorded_exchanges.json``; peers not given keep their earlier
recordings. Replies are short (``max_tokens`` 16 or so) and ``temperature`` 0, so the file
stays small and a rerun says much the same.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import httpx

OUT = Path(__file__).parent / "data" / "recorded_exchanges.json"

READ_TOOL = {
    "type": "function",
    "function": {
        "name": "read",
        "description": "Read a text file and return its contents.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "The file to read."}},
            "required": ["path"],
        },
    },
}
SYSTEM = {"role": "system", "content": "You are a helpful assistant. Answer briefly."}
QUESTION = {"role": "user", "content": "What is the capital of France?"}
LONG = {"role": "user", "content": "Please remember these words: " + "apple banana cherry " * 300}
KEPT = ("content-type", "server", "content-length", "transfer-encoding")


def chat(**fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "smollm2",
        "messages": [SYSTEM, QUESTION],
        "temperature": 0,
        "max_tokens": 16,
    }
    body.update(fields)
    return body


def streamed(**fields: Any) -> dict[str, Any]:
    return chat(stream=True, stream_options={"include_usage": True}, **fields)


def tool_round(call_id: str, *, answered: bool = False) -> list[dict[str, Any]]:
    """A tool round, then the person's next message (after the model's answer, or — as after
    a Ctrl-C — straight after the result)."""
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "read", "arguments": '{"path":"notes.txt"}'},
    }
    return [
        SYSTEM,
        {"role": "user", "content": "Read notes.txt"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": "buy milk"},
        *([{"role": "assistant", "content": "It says: buy milk."}] if answered else []),
        {"role": "user", "content": "What did it say?"},
    ]


# case name → (peer, method, path, request body or None)
CASES: dict[str, tuple[str, str, str, dict[str, Any] | None]] = {
    # llama-cpp-python
    "lcp/models": ("lcp", "GET", "/v1/models", None),
    "lcp/stream": ("lcp", "POST", "/v1/chat/completions", streamed()),
    "lcp/stream_tools_auto": (
        "lcp",
        "POST",
        "/v1/chat/completions",
        streamed(tools=[READ_TOOL], tool_choice="auto"),
    ),
    "lcp/json_tools_auto": (
        "lcp",
        "POST",
        "/v1/chat/completions",
        chat(tools=[READ_TOOL], tool_choice="auto"),
    ),
    "lcp/stream_tools_forced": (
        "lcp",
        "POST",
        "/v1/chat/completions",
        streamed(tools=[READ_TOOL], tool_choice={"type": "function", "function": {"name": "read"}}),
    ),
    "lcp/stream_tools_ignored": (
        "lcp",
        "POST",
        "/v1/chat/completions",
        streamed(tools=[READ_TOOL]),
    ),
    "lcp512/stream_overflow": (
        "lcp512",
        "POST",
        "/v1/chat/completions",
        streamed(messages=[SYSTEM, LONG]),
    ),
    "lcp512/json_overflow": (
        "lcp512",
        "POST",
        "/v1/chat/completions",
        chat(messages=[SYSTEM, LONG]),
    ),
    # llama.cpp's llama-server
    "ls/models": ("ls", "GET", "/v1/models", None),
    "ls/props": ("ls", "GET", "/props", None),
    "ls/stream": ("ls", "POST", "/v1/chat/completions", streamed()),
    "ls/stream_tools_auto": (
        "ls",
        "POST",
        "/v1/chat/completions",
        streamed(tools=[READ_TOOL], tool_choice="auto"),
    ),
    "ls/stream_tools_required": (
        "ls",
        "POST",
        "/v1/chat/completions",
        streamed(tools=[READ_TOOL], tool_choice="required", max_tokens=48),
    ),
    "ls/json_tools_required": (
        "ls",
        "POST",
        "/v1/chat/completions",
        chat(tools=[READ_TOOL], tool_choice="required", max_tokens=48),
    ),
    "ls/stream_tools_named": (
        "ls",
        "POST",
        "/v1/chat/completions",
        streamed(tools=[READ_TOOL], tool_choice={"type": "function", "function": {"name": "read"}}),
    ),
    "ls/stream_tool_followup": (
        "ls",
        "POST",
        "/v1/chat/completions",
        streamed(messages=tool_round("call_abc123"), tools=[READ_TOOL]),
    ),
    "ls512/props": ("ls512", "GET", "/props", None),
    "ls512/models": ("ls512", "GET", "/v1/models", None),
    "ls512/stream_overflow": (
        "ls512",
        "POST",
        "/v1/chat/completions",
        streamed(messages=[SYSTEM, LONG]),
    ),
    "ls512/json_overflow": ("ls512", "POST", "/v1/chat/completions", chat(messages=[SYSTEM, LONG])),
    # llama-server with the Mistral-Nemo template: alternation and 9-character ids
    "nemo/stream": ("nemo", "POST", "/v1/chat/completions", streamed()),
    "nemo/tool_round_no_answer": (
        "nemo",
        "POST",
        "/v1/chat/completions",
        streamed(messages=tool_round("a1B2c3D4e"), tools=[READ_TOOL]),
    ),
    "nemo/two_users": (
        "nemo",
        "POST",
        "/v1/chat/completions",
        streamed(messages=[SYSTEM, QUESTION, {"role": "user", "content": "And of Italy?"}]),
    ),
    "nemo/two_systems": (
        "nemo",
        "POST",
        "/v1/chat/completions",
        streamed(messages=[SYSTEM, {"role": "system", "content": "Summary: none."}, QUESTION]),
    ),
    "nemo/long_tool_id": (
        "nemo",
        "POST",
        "/v1/chat/completions",
        streamed(
            messages=tool_round("call_7fK2pQxLmN3vR8sT1uWyZa0b", answered=True), tools=[READ_TOOL]
        ),
    ),
    "nemo/nine_char_tool_id": (
        "nemo",
        "POST",
        "/v1/chat/completions",
        streamed(messages=tool_round("a1B2c3D4e", answered=True), tools=[READ_TOOL]),
    ),
    "nemo/stream_tools_required": (
        "nemo",
        "POST",
        "/v1/chat/completions",
        streamed(tools=[READ_TOOL], tool_choice="required", max_tokens=48),
    ),
}


def record(base: str, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
    started = time.monotonic()
    with httpx.Client(timeout=300) as client:
        with client.stream(method, base + path, json=body) as response:
            raw = response.read()
    entry: dict[str, Any] = {
        "method": method,
        "path": path,
        "status": response.status_code,
        "headers": {k: v for k, v in response.headers.items() if k.lower() in KEPT},
        "body": raw.decode("utf-8", "replace"),
        "seconds": round(time.monotonic() - started, 2),
    }
    if body is not None:
        entry["request"] = body
    return entry


def main(argv: list[str]) -> int:
    peers = dict(arg.split("=", 1) for arg in argv)
    unknown = set(peers) - {p for p, *_ in CASES.values()}
    if unknown:
        print(f"unknown peers: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    data = json.loads(OUT.read_text()) if OUT.exists() else {}
    exchanges = data.setdefault("exchanges", {})
    for name, (peer, method, path, body) in CASES.items():
        if peer not in peers:
            continue
        root = peers[peer].rstrip("/").removesuffix("/v1")
        exchanges[name] = record(root, method, path, body)
        got = exchanges[name]
        print(f"{name:<28} {got['status']} {len(got['body']):>6} bytes {got['seconds']}s")
    data["exchanges"] = dict(sorted(exchanges.items()))
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
