"""What auto memory costs the next prompt (issue 25: goal ≤ 1.05×).

A model server on 127.0.0.1 (OpenAI-compatible, in a thread of this process) answers a turn
after ``--turn-ms`` and a memory review — the request that offers no tools — after
``--review-ms``, with one memory to create. Two sessions on the real provider and loop, in a
trusted temporary workspace, differ only in ``memory = "on"`` / ``"off"``. Each round sends
one prompt, then times the **next** prompt, sent at once while the first one's review is
still running (with memory on); the reviews are waited for after the round, outside the
timing. The sessions alternate round by round; the figure printed last is the ratio of the
median next-prompt latency, on over off.

A review runs in a thread on an event loop of its own and waits
:data:`clawnb.memory.extract.START_DELAY` (0.25 s) before it builds and sends its request
(measured 2026-12-02: 1.025-1.027). On the caller's loop with no delay the same case measured
1.04-1.23: the review's request took the loop for a few milliseconds just as the next prompt
built its own.

    python benchmarks/bench_memory.py [--rounds 20] [--turn-ms 30] [--review-ms 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def serve(turn_s: float, review_s: float) -> tuple[ThreadingHTTPServer, str]:
    counter = iter(range(10**9))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if body.get("tools"):
                time.sleep(turn_s)
                text = "ok"
            else:  # the memory review
                time.sleep(review_s)
                n = next(counter)
                text = json.dumps(
                    {
                        "operations": [
                            {
                                "op": "create",
                                "name": f"fact {n}",
                                "description": f"column {n} of table {n * 7919 % 104729}",
                                "type": "project",
                            }
                        ]
                    }
                )
            payload = json.dumps(
                {
                    "id": "x",
                    "object": "chat.completion",
                    "model": "bench",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


async def run(rounds: int, turn_s: float, review_s: float) -> tuple[list[float], list[float]]:
    from clawnb.config import Config, trust_workspace
    from clawnb.providers.openai import OpenAICompatProvider
    from clawnb.session.assemble import build_agent

    server, url = serve(turn_s, review_s)
    tmp = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    os.environ["XDG_CONFIG_HOME"] = str(tmp / "config")
    os.environ["XDG_DATA_HOME"] = str(tmp / "data")
    sessions = {}
    for memory in ("on", "off"):
        ws = tmp / memory
        ws.mkdir()
        trust_workspace(ws)
        sessions[memory] = build_agent(
            Config(memory=memory, base_url=url, model="bench"),  # type: ignore[arg-type]
            workspace=ws,
            provider=OpenAICompatProvider("bench", base_url=url, api_key="none"),
            model="bench",
            streaming=False,
            subagents=False,
            skills=False,
        )
    assert sessions["on"].memory is not None and sessions["off"].memory is None
    timings: dict[str, list[float]] = {"on": [], "off": []}
    try:
        for i in range(rounds + 1):
            for memory in ("on", "off") if i % 2 else ("off", "on"):
                session = sessions[memory]
                await session.send(f"round {i}: the id column is 'key'")
                start = time.perf_counter()
                await session.send(f"round {i}: and what next?")
                took = time.perf_counter() - start
                if i:  # the first round warms the connections up
                    timings[memory].append(took)
                await session.memory_settled()
    finally:
        for session in sessions.values():
            session.close()
        server.shutdown()
        server.server_close()
    kept = len(list((tmp / "on" / ".claw" / "memory").glob("fact-*.md")))
    print(f"memories written with memory on: {kept}")
    return timings["on"], timings["off"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--turn-ms", type=float, default=30.0)
    parser.add_argument("--review-ms", type=float, default=300.0)
    args = parser.parse_args()
    on, off = asyncio.run(run(args.rounds, args.turn_ms / 1000, args.review_ms / 1000))
    med_on, med_off = statistics.median(on), statistics.median(off)
    print(f"next prompt, memory off: median {med_off * 1000:.1f} ms over {len(off)} rounds")
    print(f"next prompt, memory on:  median {med_on * 1000:.1f} ms over {len(on)} rounds")
    print(f"ratio on/off (goal <= 1.05): {med_on / med_off:.3f}")


if __name__ == "__main__":
    main()
