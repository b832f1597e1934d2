"""Shared helpers for the provider tests: run a body through httpx.MockTransport or a real
loopback server, and check an assembled turn against a variant's expectation."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable

import httpx

from clawnb.course._http_fixture import LoopbackServer, chunk, chunked_head
from clawnb.events import StreamEvent
from clawnb.providers.openai import OpenAICompatProvider
from clawnb.providers.sse import ChunkNormaliser, SSEDecoder, StreamAccumulator
from clawnb.types import AssistantTurn, Message

KEY = "sk-test-SECRET-0123456789abcdef"


def split_lines(raw: bytes) -> list[bytes]:
    """Cut a body after every newline: one TCP chunk per line, as servers flush."""
    parts, start = [], 0
    for i, byte in enumerate(raw):
        if byte == 10:
            parts.append(raw[start : i + 1])
            start = i + 1
    if start < len(raw):
        parts.append(raw[start:])
    return parts


def assemble_payloads(payloads: Iterable[bytes | str]) -> tuple[AssistantTurn, list]:
    """``data`` payloads through the normaliser into the book's accumulator, as the provider
    streams them: the turn, and every event in order (``close`` included)."""
    normaliser, accumulator = ChunkNormaliser(), StreamAccumulator()
    events: list = []
    for payload in payloads:
        events += normaliser.feed(payload)
    events += normaliser.close()
    for event in events:
        accumulator.feed(event)
    return accumulator.finish(), events


def assemble_bytes(pieces: Iterable[bytes]) -> tuple[AssistantTurn, list]:
    """Raw body pieces through the SSE decoder, then :func:`assemble_payloads`."""
    decoder = SSEDecoder()
    payloads = [payload for piece in pieces for payload in decoder.feed(piece)]
    return assemble_payloads(payloads + decoder.flush())


def mock_provider(parts: Iterable[bytes], *, status: int = 200, **options) -> OpenAICompatProvider:
    chunks = list(parts)

    async def stream() -> AsyncIterator[bytes]:
        for piece in chunks:
            yield piece

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            status, headers={"content-type": "text/event-stream"}, content=stream()
        )

    return OpenAICompatProvider(
        "test-model",
        KEY,
        "http://mock.invalid/v1",
        transport=httpx.MockTransport(handler),
        **options,
    )


async def stream_via_mock(raw: bytes, parts: list[bytes] | None = None, **options):
    provider = mock_provider(parts if parts is not None else split_lines(raw), **options)
    events: list = []
    turn = await provider.stream_chat([Message.User("hi")], [], events.append)
    return turn, events


async def stream_via_loopback(raw: bytes, **options):
    steps = [chunked_head()] + [chunk(p) for p in split_lines(raw)] + [chunk(b"")]
    events: list = []
    async with LoopbackServer(steps) as server:
        provider = OpenAICompatProvider("test-model", KEY, server.url, **options)
        turn = await provider.stream_chat([Message.User("hi")], [], events.append)
    return turn, events


def check_turn(turn: AssistantTurn, events: list, variant) -> None:
    """The turn matches the variant, and the events tell the same story exactly once."""
    assert turn.text == variant.text
    assert turn.reasoning == variant.reasoning
    assert turn.usage == variant.usage
    got = [(c.id, c.name, c.arguments) for c in turn.tool_calls]
    want = [
        (cid if cid is not None else f"call_{i}", name, args)
        for i, (cid, name, args) in enumerate(variant.calls)
    ]
    assert got == want
    for i, raw in variant.invalid.items():
        assert turn.tool_calls[i].invalid_arguments == raw
    starts = [e for e in events if isinstance(e, StreamEvent.ToolCallStart)]
    assert [(s.index, s.id, s.name) for s in starts] == [
        (i, c.id, c.name) for i, c in enumerate(turn.tool_calls)
    ]
    text = "".join(e.text for e in events if isinstance(e, StreamEvent.TextDelta))
    assert text == (variant.text or "")
    reasoning = "".join(e.text for e in events if isinstance(e, StreamEvent.ReasoningDelta))
    assert reasoning == (variant.reasoning or "")
    assert sum(isinstance(e, StreamEvent.Done) for e in events) == 1
    assert isinstance(events[-1], StreamEvent.Done)


def check_deltas(turn: AssistantTurn, events: list) -> None:
    """Argument deltas per call, joined, give the call's arguments."""
    import json

    for i, call in enumerate(turn.tool_calls):
        joined = "".join(
            e.arguments for e in events if isinstance(e, StreamEvent.ToolCallDelta) and e.index == i
        )
        if call.invalid_arguments is not None:
            assert joined == call.invalid_arguments
        else:
            assert json.loads(joined or "{}") == call.arguments
