"""Recorded-style SSE bodies of real OpenAI-compatible servers, and what each must assemble to.

Each variant reproduces one server's quirk (see the module docstring of clawnb.providers.sse);
``expected`` is the turn a correct client gets, whatever the quirk.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from clawnb.types import TokenUsage


def data(obj: Any) -> str:
    return "data: " + json.dumps(obj, separators=(",", ":"))


def delta(content: str | None = None, *, tool_calls: Any = None, **extra: Any) -> dict:
    d: dict[str, Any] = {}
    if content is not None:
        d["content"] = content
    if tool_calls is not None:
        d["tool_calls"] = tool_calls
    d.update(extra)
    return {"choices": [{"index": 0, "delta": d, "finish_reason": None}]}


def finish(reason: str) -> dict:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


def tc(
    index: int | None = None,
    id: str | None = None,
    name: str | None = None,
    arguments: str | None = None,
) -> dict:
    entry: dict[str, Any] = {}
    if index is not None:
        entry["index"] = index
    if id is not None:
        entry["id"] = id
        entry["type"] = "function"
    fn: dict[str, Any] = {}
    if name is not None:
        fn["name"] = name
    if arguments is not None:
        fn["arguments"] = arguments
    if fn:
        entry["function"] = fn
    return entry


def body(*lines: str, newline: str = "\n", trailing: str = "\n\n") -> bytes:
    """Events separated by blank lines; ``trailing`` ends the body."""
    return (newline * 2).join(lines).encode() + trailing.replace("\n", newline).encode()


@dataclass
class Variant:
    name: str
    body: bytes
    text: str | None = None
    calls: list[tuple[str | None, str, Any]] = field(default_factory=list)  # (id, name, args)
    reasoning: str | None = None
    usage: TokenUsage | None = None
    invalid: dict[int, str] = field(default_factory=dict)  # call position -> raw text


USAGE = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}

VARIANTS = [
    Variant(
        "openrouter_comments_and_usage_chunk",
        body(
            ": OPENROUTER PROCESSING",
            data(delta("", role="assistant")),
            ": OPENROUTER PROCESSING",
            data(delta("Hel")),
            data(delta("lo")),
            data(finish("stop")),
            data({"choices": [], "usage": USAGE}),
            "data: [DONE]",
        ),
        text="Hello",
        usage=TokenUsage(12, 7),
    ),
    Variant(
        "data_without_space",
        body(
            "data:" + data(delta("Hi"))[6:],
            "data:" + data(delta(" there"))[6:],
            "data:[DONE]",
        ),
        text="Hi there",
    ),
    Variant(
        "crlf_line_endings",
        body(
            data(delta("a\nb")),
            data(delta(tool_calls=[tc(0, "c1", "read", '{"path":')])),
            data(delta(tool_calls=[tc(0, arguments='"x.txt"}')])),
            data(finish("tool_calls")),
            "data: [DONE]",
            newline="\r\n",
        ),
        text="a\nb",
        calls=[("c1", "read", {"path": "x.txt"})],
    ),
    Variant(
        "llama_cpp_repeats_id_and_name",
        body(
            data(delta(tool_calls=[tc(0, "call_abc", "bash", "")])),
            data(delta(tool_calls=[tc(0, "call_abc", "bash", '{"comm')])),
            data(delta(tool_calls=[tc(0, "call_abc", "bash", 'and":"ls"}')])),
            data(finish("tool_calls")),
            "data: [DONE]",
        ),
        calls=[("call_abc", "bash", {"command": "ls"})],
    ),
    Variant(
        "vllm_name_only_first_chunk",
        body(
            data(delta(tool_calls=[tc(0, "chatcmpl-tool-1", "read")])),
            data(delta(tool_calls=[tc(0, arguments='{"path"')])),
            data(delta(tool_calls=[tc(0, arguments=': "a.txt"}')])),
            data({**finish("tool_calls"), "usage": USAGE}),
            "data: [DONE]",
        ),
        calls=[("chatcmpl-tool-1", "read", {"path": "a.txt"})],
        usage=TokenUsage(12, 7),
    ),
    Variant(
        "mistral_no_index_parallel",
        body(
            data(
                delta(
                    tool_calls=[
                        tc(None, "AbC123xyZ", "read", '{"path": "a.txt"}'),
                        tc(None, "DeF456uvW", "read", '{"path": "b.txt"}'),
                    ]
                )
            ),
            data(finish("tool_calls")),
            "data: [DONE]",
        ),
        calls=[("AbC123xyZ", "read", {"path": "a.txt"}), ("DeF456uvW", "read", {"path": "b.txt"})],
    ),
    Variant(
        "anthropic_compat_first_index_1",
        body(
            data(delta("Let me look.")),
            data(delta(tool_calls=[tc(1, "toolu_01", "glob", "")])),
            data(delta(tool_calls=[tc(1, arguments='{"pattern":"*.py"}')])),
            data(finish("tool_calls")),
            "data: [DONE]",
        ),
        text="Let me look.",
        calls=[("toolu_01", "glob", {"pattern": "*.py"})],
    ),
    Variant(
        "ollama_whole_arguments_separate_chunks",
        body(
            data(delta(tool_calls=[tc(0, "call_1", "read", '{"path":"a.txt"}')])),
            data(delta(tool_calls=[tc(0, "call_2", "read", '{"path":"b.txt"}')])),
            data(finish("tool_calls")),
            "data: [DONE]",
        ),
        calls=[("call_1", "read", {"path": "a.txt"}), ("call_2", "read", {"path": "b.txt"})],
    ),
    Variant(
        "done_missing",
        body(data(delta("no done")), data(finish("stop")), trailing="\n\n"),
        text="no done",
    ),
    Variant(
        "done_without_trailing_newline",
        body(data(delta("tail")), "data: [DONE]", trailing=""),
        text="tail",
    ),
    Variant(
        "last_chunk_without_newline",
        body(data(delta("x")), data(delta("y")), trailing=""),
        text="xy",
    ),
    Variant(
        "reasoning_fields",
        body(
            data(delta(reasoning_content="think ")),  # DeepSeek, vLLM
            data(delta(reasoning="more")),  # OpenRouter, Ollama
            data(delta("answer")),
            "data: [DONE]",
        ),
        text="answer",
        reasoning="think more",
    ),
    Variant(
        "invalid_json_arguments",
        body(
            data(delta(tool_calls=[tc(0, "c9", "write", "{path: 'x'")])),
            data(finish("length")),
            "data: [DONE]",
        ),
        calls=[("c9", "write", None)],
        invalid={0: "{path: 'x'"},
    ),
    Variant(
        "groq_usage_in_x_groq",
        body(
            data(delta("ok")),
            data({**finish("stop"), "x_groq": {"usage": USAGE}}),
            "data: [DONE]",
        ),
        text="ok",
        usage=TokenUsage(12, 7),
    ),
    Variant(
        "regenerated_id_on_every_chunk",
        body(
            data(delta(tool_calls=[tc(0, "id-1", "read", "")])),
            data(delta(tool_calls=[tc(0, "id-2", None, '{"path":')])),
            data(delta(tool_calls=[tc(0, "id-3", None, '"z"}')])),
            "data: [DONE]",
        ),
        calls=[("id-1", "read", {"path": "z"})],
    ),
    Variant(
        "gemini_no_index_with_ids_and_continuations",
        body(
            data(delta(tool_calls=[tc(None, "g1", "read", '{"path":')])),
            data(delta(tool_calls=[tc(None, None, None, '"a"}')])),
            data(delta(tool_calls=[tc(None, "g2", "read", '{"path":"b"}')])),
            "data: [DONE]",
        ),
        calls=[("g1", "read", {"path": "a"}), ("g2", "read", {"path": "b"})],
    ),
    Variant(
        "no_tool_call_ids",
        body(
            data(delta(tool_calls=[tc(0, None, "read", '{"path":"a"}')])),
            data(delta(tool_calls=[tc(1, None, "read", '{"path":"b"}')])),
            "data: [DONE]",
        ),
        calls=[("call_0", "read", {"path": "a"}), ("call_1", "read", {"path": "b"})],
    ),
]
