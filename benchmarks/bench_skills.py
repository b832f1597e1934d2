"""Benchmark: skills in a session — what the listing costs in the prompt, and what ``/NAME``
costs before the model hears anything.

1. **System-prompt tokens** (characters / 4, as clawnb.context estimates them) of a session
   built by ``build_agent`` on a trusted workspace with no skills (``skills=False``) and with
   60 project skills, each with a 200-character description and a body of ~2,000 characters.
   Goal: the prompt grows by at most the listing budget (1% of ``max_context_tokens``), and no
   body is in it. The ``skill`` tool's schema, sent with every request, is printed too.
2. **Time from the command to the first request**: ``await session.command("/NAME args")``
   (find the skill, read its SKILL.md, substitute the arguments, send the turn) against
   ``await session.send(prompt)`` with the same prompt text — alternating, on one session,
   medians — until the request reaches a local OpenAI-compatible server on 127.0.0.1 (in a
   process of its own, noting arrivals on the shared monotonic clock): what the issue
   measures. The two requests are byte-for-byte the same (same text, same empty history).
   The same is printed until the provider's ``chat`` is called in-process, which leaves out
   building and sending the request and so shows the skill's own cost at its largest. Goal
   ratio (HTTP) <= 1.1.

   Measured on a quiet 2-CPU machine (load 0.1-0.7), nineteen runs of 300: 1.06-1.11, median
   1.09, one run over 1.10 (in-process 0.050 vs 0.039 ms). The same code with the kernel's change reports
   switched off, alternated with it: 1.14 three times (against 1.08-1.10); before, 1.10-1.14
   without the kept prompts, 1.18-1.20 without the per-skill caches. Why HTTP magnified the
   gap: after each round trip the first stat of a turn runs cold (~33 us against ~3 us warm;
   a look at an epoll costs ~2 us, as the event loop keeps that call warm), so the kernel's
   change reports now stand for the stats of SKILL.md and of the redactor's folders
   (clawnb.control.watch): an edited SKILL.md, a key added to .env, still take effect on the
   very next /NAME.

The ratios are printed last.

    python benchmarks/bench_skills.py [--runs 300]
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from clawnb.config import Config, trust_workspace  # noqa: E402
from clawnb.context import estimate_tokens  # noqa: E402
from clawnb.providers.openai import OpenAICompatProvider  # noqa: E402
from clawnb.session.assemble import AgentSession, build_agent  # noqa: E402
from clawnb.types import AssistantTurn, Message, ToolDefinition  # noqa: E402


class Stamped:
    """A model that answers at once and notes when each request arrived."""

    def __init__(self) -> None:
        self.arrived: list[float] = []

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        self.arrived.append(time.perf_counter())
        return AssistantTurn(text="ok")

    def take(self) -> list[float]:
        times, self.arrived = self.arrived, []
        return times


class Server:
    """A local OpenAI-compatible server that answers "ok", in a process of its own (so its
    work never takes the interpreter lock from the caller mid-measurement), noting when each
    request's headers arrived on ``perf_counter`` — on Linux the system's monotonic clock,
    the same in both processes. :meth:`take` fetches the times noted so far."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True
        )
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline())

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def take(self) -> list[float]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port)
        connection.request("GET", "/arrivals")
        times: list[float] = json.loads(connection.getresponse().read())
        connection.close()
        return times

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait()


def serve() -> None:
    arrived: list[float] = []
    body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "ok"}}]}).encode()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            arrived.append(time.perf_counter())
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.reply(body)

        def do_GET(self) -> None:
            # emptied before the reply leaves: the caller's next request may arrive (in
            # another thread) as soon as it has read the reply, and must not be cleared away
            times = arrived[:]
            arrived.clear()
            self.reply(json.dumps(times).encode())

        def reply(self, data: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(httpd.server_address[1], flush=True)
    httpd.serve_forever()


def tokens(text: str) -> int:
    return estimate_tokens([Message.System(text)])


def write_skills(ws: Path, count: int) -> None:
    for i in range(count):
        folder = ws / ".claw" / "skills" / f"task-{i:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        description = (
            f"Runs project task number {i}: checks the inputs, runs the steps in order and "
            f"reports what changed. Use when the person asks for task {i} or its report, or "
            "when the notebook's data for it changed since the last run."
        )[:200]
        body = f"BODY-OF-TASK-{i} " + "Follow the steps carefully and report. " * 50
        (folder / "SKILL.md").write_text(
            f"---\ndescription: {description}\n---\n{body}\nTarget: $ARGUMENTS\n",
            encoding="utf-8",
        )


def settled(ws: Path) -> None:
    """Date the workspace's folders and files an hour back, as a person's workspace is: the
    secrets redactor lists a folder changed within the last second again on every call
    (the "racy" rule that catches a ``.env`` written that instant), which would time a
    workspace created a moment ago rather than the skill."""
    hour_ago = time.time() - 3600
    for path in [ws, *ws.rglob("*")]:
        os.utime(path, (hour_ago, hour_ago), follow_symlinks=False)


def session(ws: Path, provider: object, *, skills: bool) -> AgentSession:
    return build_agent(
        Config(memory="off"),  # a memory review after a turn would be another request
        workspace=ws,
        provider=provider,  # type: ignore[arg-type]
        model="bench",
        streaming=False,
        subagents=False,
        skills=skills,
    )


async def started(built: AgentSession, line: str, plain: bool) -> float:
    """Start one turn (``/NAME args``, or the same text as a plain prompt) on a fresh
    conversation; the time it started (the provider notes when the request arrived)."""
    built.new_session(persist=False)
    start = time.perf_counter()
    if plain:
        await built.send(line)
    else:
        await built.command(line)
    return start


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        return serve()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["XDG_CONFIG_HOME"] = str(base / "config")  # our own trust store, no user skills
        os.environ["XDG_DATA_HOME"] = str(base / "data")
        ws = base / "ws"
        ws.mkdir()
        trust_workspace(ws)
        bare = session(ws, Stamped(), skills=False)
        write_skills(ws, 60)
        settled(ws)
        provider = Stamped()
        built = session(ws, provider, skills=True)
        assert built.skills is not None
        listing = built.skills.listing
        before, after = tokens(bare.system_prompt), tokens(built.system_prompt)
        grown = after - before
        tool = built.tools.get("skill")
        assert tool is not None
        definition = tool.definition
        schema = tokens(
            json.dumps([definition.name, definition.description, definition.parameters])
        )
        print(f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
        print("system prompt tokens:")
        print(f"  0 skills: {before}   60 project skills (+ the built-ins): {after}")
        print(
            f"  listing: {listing.tokens} tokens, budget {listing.budget}; "
            f"{len(listing.listed)} with a description, {len(listing.names_only)} named only, "
            f"{len(listing.omitted)} left out"
        )
        print(f"  skill tool schema: ~{schema} tokens per request")
        print(f"  a body in the prompt: {'BODY-OF-TASK' in built.system_prompt}")

        line = "/task-07 the sales notebook"
        from clawnb.skills import prepare_invocation

        skill = built.skills.get("task-07")
        assert skill is not None
        plain = prepare_invocation(skill, "the sales notebook").render()  # the same text
        server = Server()
        atexit.register(server.close)  # a failed run leaves no server behind
        remote = OpenAICompatProvider("bench", api_key="badkey", base_url=server.url)
        over_http = session(ws, remote, skills=True)
        medians = {}
        for name, target, model in (("in-process", built, provider), ("HTTP", over_http, server)):
            for _ in range(20):  # warm up both paths (and the HTTP connection)
                await started(target, line, plain=False)
                await started(target, plain, plain=True)
            model.take()
            starts = []
            for _ in range(args.runs):
                starts.append(await started(target, line, plain=False))
                starts.append(await started(target, plain, plain=True))
            waits = [arrived - start for start, arrived in zip(starts, model.take(), strict=True)]
            medians[name] = (
                statistics.median(waits[0::2]) * 1000,
                statistics.median(waits[1::2]) * 1000,
            )
        print(f"command to first request ({args.runs} runs each, alternating, medians):")
        for name, (skill_ms, plain_ms) in medians.items():
            print(f"  {name}: /task-07 args {skill_ms:.3f} ms   plain prompt {plain_ms:.3f} ms")
        server.close()
        for each in (built, bare, over_http):
            each.close()
    print()
    print(f"prompt growth / listing budget (goal <= 1.0): {grown / listing.budget:.2f}")
    skill_ms, plain_ms = medians["in-process"]
    print(f"/NAME / plain prompt, to the provider's chat (in-process): {skill_ms / plain_ms:.2f}")
    skill_ms, plain_ms = medians["HTTP"]
    print(
        f"/NAME / plain prompt, to the first HTTP request (goal <= 1.1): {skill_ms / plain_ms:.2f}"
    )


if __name__ == "__main__":
    asyncio.run(main())
