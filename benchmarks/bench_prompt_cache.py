"""Prompt-cache prefix share over a compaction-free stretch, with memory loaded (issue 25).

A provider's prompt cache pays only for a request that *begins* with bytes it has seen: the
longer the byte-identical prefix a request shares with the one before, the less of it is
processed again. A conversation that only ever appends is the best case: each request begins
with the whole of the one before (the **append-only limit**, the previous request's length
over the next's).

A session built by ``build_agent`` in a trusted temporary workspace with everything that
could rewrite the start of a request in play — the person's and the project's memory loaded
(a ``MEMORY.md`` each, a few memories), 8 project skills listed, auto memory on (a review after
every turn; every other review notes a new memory, which the model hears as a reminder), a
reminder set from outside (``session.remind``), the model loading a skill with the ``skill``
tool, a ``/NAME`` command, reads of a file — talks to an OpenAI-compatible server on
127.0.0.1 (a thread of this process) over the real provider and loop. The server records
each request body; the memory reviews (the requests with no tools) are another
conversation and are left out. No compaction happens in the stretch (checked).

A request is compared as a server's cache sees it: its tool definitions, then its messages
in order, each as JSON. For each request after the first the benchmark prints its size, the
share of its bytes that is a byte-identical prefix shared with the request before, the
append-only limit, and their ratio. The last line is the lowest ratio (goal: 1.00, the
limit on every request).

Measured (2026-12-02, 10 turns, 16 requests, 5 memories noted and told in 5 reminders):
1.000 on every request — the memory section of the system prompt is read once at the start,
and what a review notes arrives after the history (:meth:`clawnb.memory.extract.MemoryKeeper.reminder`).
The figure is a property of the bytes sent, not a timing, so the machine's load does not
move it.

    python benchmarks/bench_prompt_cache.py [--turns 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _reply(message: dict[str, Any], finish: str) -> bytes:
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "model": "bench",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105},
        }
    ).encode()


def serve() -> tuple[ThreadingHTTPServer, str, list[dict[str, Any]]]:
    """The model: ``read notes.md`` → a read; ``use SKILL`` → the skill tool; anything else
    (and after a tool result) → a line of text. A review (no tools) notes a memory every
    other time. Returns the server, its URL and the list the turns' bodies go to."""
    bodies: list[dict[str, Any]] = []
    reviews = iter(range(10**9))
    facts = [
        "the sample file has forty numbered notes",
        "task 1 is the data check and must run before training",
        "figures go to reports/figures as SVG",
        "the person answers in French when asked about units",
        "training stops early after three flat epochs",
    ]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if not body.get("tools"):  # a memory review
                n = next(reviews)
                operations = (
                    [
                        {
                            "op": "create",
                            "name": f"finding {n}",
                            "description": facts[(n // 2) % len(facts)],
                            "type": "project",
                        }
                    ]
                    if n % 2 == 0
                    else []
                )
                message = {"role": "assistant", "content": json.dumps({"operations": operations})}
                payload = _reply(message, "stop")
            else:
                bodies.append(body)
                last = body["messages"][-1]
                text = str(last.get("content") or "")
                call = None
                if last["role"] == "user" and text.startswith("read notes.md"):
                    call = ("read", {"path": "notes.md"})
                elif last["role"] == "user" and text.startswith("use "):
                    call = ("skill", {"name": text.split()[1]})
                if call is None:
                    message = {"role": "assistant", "content": f"done ({len(bodies)})"}
                    payload = _reply(message, "stop")
                else:
                    name, args = call
                    tool_call = {
                        "id": f"call_{len(bodies)}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                    message = {"role": "assistant", "content": None, "tool_calls": [tool_call]}
                    payload = _reply(message, "tool_calls")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1", bodies


def workspace(base: Path) -> Path:
    """A trusted workspace with memories (the person's and the project's), skills, a file."""
    from clawnb.config import trust_workspace
    from clawnb.memory.store import Memory, MemoryStore, project_memory_dir, user_memory_dir

    ws = base / "ws"
    ws.mkdir()
    trust_workspace(ws)
    (ws / "notes.md").write_text("".join(f"note {i}: the sample is fine\n" for i in range(40)))
    for i in range(8):
        folder = ws / ".claw" / "skills" / f"task-{i}"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\ndescription: Runs project task {i} and reports what changed.\n---\n"
            f"Steps of task {i}: check the inputs, run, report.\nTarget: $ARGUMENTS\n"
        )
    project = MemoryStore(project_memory_dir(ws))
    for name, description in [
        ("dataset id column", "the dataset's id column is 'key', never 'id'"),
        ("raw data folder", "raw files are under data/raw and are never edited"),
        ("test command", "the tests run with pytest -q from the repository root"),
    ]:
        project.save(Memory(name, description, "project"))
    user = MemoryStore(user_memory_dir())
    user.save(Memory("plots", "the person wants seaborn plots with titles", "user"))
    return ws


def prompt_bytes(body: dict[str, Any]) -> bytes:
    """A request as a cache sees it: tool definitions, then each message, in order."""
    parts = [json.dumps(body.get("tools", []), sort_keys=True)]
    parts += [json.dumps(message, sort_keys=True) for message in body["messages"]]
    return "\n".join(parts).encode()


def shared_prefix(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


async def run(turns: int) -> tuple[list[bytes], int, int, int]:
    """Run the stretch; the requests' bytes, the compactions, the memories noted and the
    reminders that told of them."""
    from clawnb.config import Config
    from clawnb.providers.openai import OpenAICompatProvider
    from clawnb.session.assemble import build_agent

    base = Path(tempfile.mkdtemp(prefix="bench-prompt-cache-"))
    os.environ["XDG_CONFIG_HOME"] = str(base / "config")
    os.environ["XDG_DATA_HOME"] = str(base / "data")
    ws = workspace(base)
    server, url, bodies = serve()
    session = build_agent(
        Config(memory="on", base_url=url, model="bench"),  # type: ignore[arg-type]
        workspace=ws,
        provider=OpenAICompatProvider("bench", base_url=url, api_key="none"),
        model="bench",
        streaming=False,
        subagents=False,
    )
    assert session.memory is not None and session.skills is not None
    script = ["read notes.md", "use task-1", "/task-2 the sample", "what changed?"]
    try:
        for turn in range(turns):
            if turn == 3:
                session.remind("job", "The background job 'train' finished (exit 0).")
            line = script[turn % len(script)] + f" (turn {turn})"
            if line.startswith("/"):
                await session.command(line)
            else:
                await session.send(line)
            await session.memory_settled()  # the next message carries what it noted
        compactions = session.context.compactions
    finally:
        session.close()
        server.shutdown()
        server.server_close()
    noted = len(list((ws / ".claw" / "memory").glob("finding-*.md")))
    told = sum(
        "Memory changed during this session" in str(m.get("content"))
        for m in bodies[-1]["messages"]
    )
    assert told > 0 and "background job" in json.dumps(bodies[-1]), "the reminders were sent"
    return [prompt_bytes(body) for body in bodies], compactions, noted, told


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args()
    requests, compactions, noted, told = asyncio.run(run(args.turns))
    assert compactions == 0, "the stretch must be compaction-free"
    print(
        f"{len(requests)} requests over {args.turns} turns, {noted} memories noted "
        f"(told in {told} reminders), no compaction"
    )
    ratios: list[float] = []
    for i, (before, after) in enumerate(zip(requests, requests[1:], strict=False), start=2):
        share = shared_prefix(before, after) / len(after)
        limit = len(before) / len(after)
        ratios.append(share / limit)
        print(
            f"request {i:2d}: {len(after):6,} bytes, shared prefix {share:.3f}, "
            f"append-only limit {limit:.3f}, ratio {share / limit:.3f}"
        )
    print(f"prefix share over the append-only limit, lowest (goal 1.00): {min(ratios):.3f}")


if __name__ == "__main__":
    main()
