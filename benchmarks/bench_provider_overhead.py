"""Benchmark: what the provider adds between a local model server and the agent — time to first
token and tokens per second, clawnb vs openai-python, against the same server in one run.

A streaming server on 127.0.0.1, in its own process (so it never competes for our GIL), answers
every ``POST /v1/chat/completions`` the way llama.cpp's ``llama-server`` does: headers at
once, then one ``chat.completion.chunk`` per token, each flushed on its own, ``[DONE]`` last.
``--pace`` sets how fast the "model" generates (0 = as fast as the socket takes them, which
makes any client overhead as visible as it can be; 100 ≈ a small model on a laptop).

Each client is used the way an application uses it — one object, many requests:

* clawnb: ``OpenAICompatProvider.stream_chat`` with an ``on_event`` callback (the path the agent
  loop runs), text deltas timed as they arrive;
* openai-python: ``AsyncOpenAI(...).chat.completions.create(stream=True)``, chunks iterated.

Runs alternate between the two clients; medians are compared. Printed last, both as
clawnb / openai (lower is better; the goal is ≤ 1.05 on both):

    time-to-first-token ratio: clawnb TTFT / openai TTFT
    generation ratio:          openai tokens/s / clawnb tokens/s

    python benchmarks/bench_provider_overhead.py [--tokens 2000] [--runs 15] [--pace 0]

``--base-url http://127.0.0.1:8775/v1`` measures against a real server you started instead
(``docs/local-models.md``: llama-server, llama-cpp-python's server): both clients send the same
request — ``--model``, ``max_tokens`` = ``--tokens``, temperature 0, usage asked for — and
tokens/s counts the text chunks each client saw (a model may stop before the cap; both see
the same reply).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import textwrap
import time

SERVER = textwrap.dedent(
    r"""
    import asyncio, json, sys

    TOKENS, PACE = int(sys.argv[1]), float(sys.argv[2])
    HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n")

    def frame(obj):
        data = b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"
        return b"%x\r\n%s\r\n" % (len(data), data)

    def chunk(delta, finish=None):
        return frame({"id": "chatcmpl-1", "object": "chat.completion.chunk",
                      "created": 1764400000, "model": "local",
                      "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    WORDS = [chunk({"content": f"tok{i % 97} "}) for i in range(TOKENS)]
    END = (chunk({}, "stop")
           + frame({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                    "model": "local", "choices": [],
                    "usage": {"prompt_tokens": 20, "completion_tokens": TOKENS,
                              "total_tokens": 20 + TOKENS}})
           + b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n")

    async def handle(reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                await reader.readexactly(length)
                writer.write(HEAD + chunk({"role": "assistant", "content": ""}))
                await writer.drain()
                for word in WORDS:
                    if PACE:
                        await asyncio.sleep(1 / PACE)
                    writer.write(word)
                    await writer.drain()
                writer.write(END)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main():
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        print(server.sockets[0].getsockname()[1], flush=True)
        await server.serve_forever()

    asyncio.run(main())
    """
)

MESSAGES = [{"role": "user", "content": "Write a long story."}]


async def run_clawnb(provider, tokens: int, exact: bool) -> tuple[float, float]:
    from clawnb.events import StreamEvent
    from clawnb.types import Message

    start = time.perf_counter()
    first: list[float] = []
    deltas = 0

    def on_event(event) -> None:
        nonlocal deltas
        if isinstance(event, StreamEvent.TextDelta):
            deltas += 1
            if not first:
                first.append(time.perf_counter())

    turn = await provider.stream_chat([Message.User(MESSAGES[0]["content"])], [], on_event)
    end = time.perf_counter()
    if exact:
        assert turn.text is not None and turn.text.count("tok") == tokens, "clawnb lost tokens"
    assert first, "clawnb saw no text"
    return first[0] - start, deltas / (end - first[0])


async def run_openai(client, model: str, tokens: int, exact: bool) -> tuple[float, float]:
    start = time.perf_counter()
    first = 0.0
    seen = 0
    options = {} if exact else {"max_tokens": tokens, "temperature": 0}
    stream = await client.chat.completions.create(
        model=model,
        messages=MESSAGES,
        stream=True,
        stream_options={"include_usage": True},  # as clawnb asks
        **options,
    )
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            if not first:
                first = time.perf_counter()
            seen += 1
    end = time.perf_counter()
    if exact:
        assert seen == tokens, "openai lost tokens"
    assert first, "openai saw no text"
    return first - start, seen / (end - first)


async def measure(
    url: str, tokens: int, runs: int, *, model: str = "local", exact: bool = True
) -> dict[str, list[tuple[float, float]]]:
    """``exact``: the built-in server, whose replies have exactly ``tokens`` chunks; a real
    server is asked for at most ``tokens`` at temperature 0 instead."""
    from openai import AsyncOpenAI

    from clawnb.providers.openai import OpenAICompatProvider

    options = {} if exact else {"max_tokens": tokens, "temperature": 0}
    provider = OpenAICompatProvider(
        model, api_key="none", base_url=url, stream_usage=True, **options
    )
    client = AsyncOpenAI(base_url=url, api_key="none", max_retries=0)
    results: dict[str, list[tuple[float, float]]] = {"clawnb": [], "openai": []}
    # warm both (imports, TLS context, first connection)
    await run_clawnb(provider, tokens, exact)
    await run_openai(client, model, tokens, exact)
    for i in range(runs):
        order = ("clawnb", "openai") if i % 2 == 0 else ("openai", "clawnb")
        for name in order:
            runner = (
                run_clawnb(provider, tokens, exact)
                if name == "clawnb"
                else run_openai(client, model, tokens, exact)
            )
            results[name].append(await runner)
    await client.close()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=2000, help="tokens per reply")
    parser.add_argument("--runs", type=int, default=15, help="requests per client")
    parser.add_argument("--pace", type=float, default=0.0, help="server tokens/s (0: unpaced)")
    parser.add_argument(
        "--base-url", help="a real server's API root (default: the built-in fake server)"
    )
    parser.add_argument("--model", default="local", help="model name sent (with --base-url)")
    args = parser.parse_args()

    if args.base_url:
        results = asyncio.run(
            measure(args.base_url, args.tokens, args.runs, model=args.model, exact=False)
        )
        where = f"{args.base_url} (a real server, max_tokens {args.tokens}, temperature 0)"
    else:
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(args.tokens), str(args.pace)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            port = int(server.stdout.readline())
            url = f"http://127.0.0.1:{port}/v1"
            results = asyncio.run(measure(url, args.tokens, args.runs))
        finally:
            server.terminate()
            server.wait(5)
        pace = "unpaced" if not args.pace else f"{args.pace:g} tok/s"
        where = f"127.0.0.1 (own process), {args.tokens} tokens/reply, pace {pace}"

    ttft = {k: statistics.median(r[0] for r in v) for k, v in results.items()}
    rate = {k: statistics.median(r[1] for r in v) for k, v in results.items()}
    import openai

    print(
        f"server: {where}, {args.runs} runs each, openai {openai.__version__}, "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}"
    )
    for name in ("clawnb", "openai"):
        print(f"{name:>7}: first token {ttft[name] * 1000:7.2f} ms   {rate[name]:10.0f} tokens/s")
    print(f"time-to-first-token ratio (clawnb / openai): {ttft['clawnb'] / ttft['openai']:.3f}")
    print(f"generation ratio (openai tok/s / clawnb tok/s): {rate['openai'] / rate['clawnb']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
