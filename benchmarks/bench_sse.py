"""Benchmark: parse and assemble a ~10 MB chat-completions stream, clawnb vs openai-python.

One run, same machine, same bytes. A recorded-style stream of real-shaped chunks (OpenAI's
``chat.completion.chunk`` objects with ids, fingerprints and ``logprobs: null``; text deltas,
then a long ``write`` tool call streamed in argument pieces, then a usage chunk) is served by
``httpx.MockTransport`` in 4 KiB network chunks to

* clawnb: ``OpenAICompatProvider.stream_chat`` (SSEDecoder + ChunkNormaliser + the book's
  StreamAccumulator, every event handed to an ``on_event`` callback), and
* openai-python: ``AsyncOpenAI.chat.completions.create(stream=True)`` (its SSE decoder and chunk
  models) folded by ``ChatCompletionStreamState.handle_chunk`` (its accumulator), every event
  iterated.

Both must produce the same text and tool call; the best of a few repetitions is compared.
For context it also times openai-python's decoder and chunk models alone, folded by a minimal
hand-written loop instead of its accumulator. The ratio (openai-python time / clawnb time, full
machinery) is printed last; the goal is >= 1.5.

    python benchmarks/bench_sse.py [--mb 10] [--repeat 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

import httpx

CHUNK_BYTES = 4096
WORDS = (
    "the agent reads the file then edits a function and runs the tests again until they pass "
    "while streaming every token to the notebook cell"
).split()


def _chunk(delta: dict, finish: str | None = None, n: int = 0) -> bytes:
    obj = {
        "id": "chatcmpl-AbCdEfGhIjKlMnOpQrStUvWxYz012",
        "object": "chat.completion.chunk",
        "created": 1764400000 + n // 1000,
        "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_0ba0d124f1",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


def make_body(megabytes: float) -> tuple[bytes, str, str]:
    """The stream, plus the text and the tool-call arguments it must assemble to."""
    target = int(megabytes * 1_000_000)
    parts = [_chunk({"role": "assistant", "content": "", "refusal": None})]
    size = len(parts[0])
    text_pieces: list[str] = []
    n = 0
    while size < target * 0.7:  # 70 % text deltas
        piece = " " + WORDS[n % len(WORDS)]
        text_pieces.append(piece)
        part = _chunk({"content": piece}, n=n)
        parts.append(part)
        size += len(part)
        n += 1
    start = {
        "tool_calls": [
            {
                "index": 0,
                "id": "call_Xy12AbCdEf34GhIj",
                "type": "function",
                "function": {"name": "write", "arguments": ""},
            }
        ]
    }
    parts.append(_chunk(start, n=n))
    arg_pieces: list[str] = []

    def argument(piece: str) -> None:
        nonlocal size
        arg_pieces.append(piece)
        part = _chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}, n=n)
        parts.append(part)
        size += len(part)

    argument('{"path": "src/app.py", "content": "')
    while size < target:  # 30 % argument deltas
        argument(WORDS[n % len(WORDS)] + " ")
        n += 1
    argument('"}')
    parts.append(_chunk({}, "tool_calls", n=n))
    usage = {
        "id": "chatcmpl-AbCdEfGhIjKlMnOpQrStUvWxYz012",
        "object": "chat.completion.chunk",
        "created": 1764400000,
        "model": "gpt-4o-mini-2024-07-18",
        "system_fingerprint": "fp_0ba0d124f1",
        "choices": [],
        "usage": {"prompt_tokens": 1200, "completion_tokens": n, "total_tokens": 1200 + n},
    }
    parts.append(b"data: " + json.dumps(usage).encode() + b"\n\ndata: [DONE]\n\n")
    return b"".join(parts), "".join(text_pieces), "".join(arg_pieces)


def transport(body: bytes) -> httpx.MockTransport:
    slices = [body[i : i + CHUNK_BYTES] for i in range(0, len(body), CHUNK_BYTES)]

    async def stream():
        for piece in slices:
            yield piece

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=stream())

    return httpx.MockTransport(handler)


async def run_clawnb(body: bytes) -> tuple[float, str, str, int]:
    from clawnb.providers.openai import OpenAICompatProvider
    from clawnb.types import Message, ToolDefinition

    tools = [ToolDefinition("write", "Write a file").param("path", "string", "path", True)]
    provider = OpenAICompatProvider(
        "gpt-4o-mini", "badkey", "http://bench.invalid/v1", transport=transport(body)
    )
    count = 0

    def on_event(event: object) -> None:
        nonlocal count
        count += 1

    started = time.perf_counter()
    turn = await provider.stream_chat([Message.User("go")], tools, on_event)
    elapsed = time.perf_counter() - started
    call = turn.tool_calls[0]
    return elapsed, turn.text or "", json.dumps(call.arguments), count


async def run_openai_decode_only(body: bytes) -> tuple[float, str, str, int]:
    """openai-python's SSE decoder and chunk models, with a hand-written minimal fold (no
    ChatCompletionStreamState) — for context: how much of the gap is the accumulator."""
    import openai

    async with httpx.AsyncClient(transport=transport(body)) as http:
        client = openai.AsyncOpenAI(
            api_key="badkey", base_url="http://bench.invalid/v1", http_client=http, max_retries=0
        )
        count = 0
        text: list[str] = []
        args: list[str] = []
        started = time.perf_counter()
        stream = await client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "go"}], stream=True
        )
        async for chunk in stream:
            count += 1
            if not chunk.choices:
                continue
            delta = chunk.choices[0].delta
            if delta.content:
                text.append(delta.content)
            for call in delta.tool_calls or ():
                if call.function and call.function.arguments:
                    args.append(call.function.arguments)
        arguments = json.loads("".join(args))
        elapsed = time.perf_counter() - started
    return elapsed, "".join(text), json.dumps(arguments), count


async def run_openai(body: bytes) -> tuple[float, str, str, int]:
    import openai
    from openai.lib.streaming.chat import ChatCompletionStreamState

    tools = [
        {
            "type": "function",
            "function": {
                "name": "write",
                "description": "Write a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
        }
    ]
    async with httpx.AsyncClient(transport=transport(body)) as http:
        client = openai.AsyncOpenAI(
            api_key="badkey", base_url="http://bench.invalid/v1", http_client=http, max_retries=0
        )
        count = 0
        started = time.perf_counter()
        stream = await client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "go"}],
            tools=tools,
            stream=True,
            stream_options={"include_usage": True},
        )
        state = ChatCompletionStreamState()
        async for chunk in stream:
            for _event in state.handle_chunk(chunk):
                count += 1
        completion = state.get_final_completion()
        elapsed = time.perf_counter() - started
    message = completion.choices[0].message
    args = json.loads(message.tool_calls[0].function.arguments)
    return elapsed, message.content or "", json.dumps(args), count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=10.0, help="stream size in MB (default 10)")
    parser.add_argument("--repeat", type=int, default=2, help="repetitions, best is kept")
    options = parser.parse_args()

    body, text, arguments = make_body(options.mb)
    lines = body.count(b"\n\n")
    print(f"stream: {len(body) / 1e6:.1f} MB, {lines} SSE events, {CHUNK_BYTES} B network chunks")

    best: dict[str, float] = {}
    for _ in range(options.repeat):
        runners = (
            ("clawnb", run_clawnb),
            ("openai-decode", run_openai_decode_only),
            ("openai-python", run_openai),
        )
        for name, runner in runners:
            elapsed, got_text, got_args, events = asyncio.run(runner(body))
            assert got_text == text, f"{name} assembled different text"
            assert json.loads(got_args) == json.loads(arguments), f"{name}: different arguments"
            best[name] = min(best.get(name, float("inf")), elapsed)
            print(f"  {name:14s} {elapsed:7.3f} s  ({events} events)")

    import openai

    print(f"best clawnb:        {best['clawnb']:.3f} s")
    print(
        f"best openai-python decoder + chunk models only (no accumulator): "
        f"{best['openai-decode']:.3f} s  ({best['openai-decode'] / best['clawnb']:.2f}x)"
    )
    print(f"best openai-python: {best['openai-python']:.3f} s  (openai {openai.__version__})")
    print(f"ratio (openai-python / clawnb): {best['openai-python'] / best['clawnb']:.2f}x")


if __name__ == "__main__":
    main()
