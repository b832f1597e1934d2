"""Property tests: chunk boundaries never matter; garbage never escapes the parser."""

from __future__ import annotations

import asyncio
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from provider_helpers import assemble_bytes, check_turn, stream_via_mock
from provider_variants import VARIANTS

from clawnb.errors import StreamError
from clawnb.events import StreamEvent
from clawnb.providers.sse import ChunkNormaliser, parse_sse_line

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def cut(raw: bytes, points: list[int]) -> list[bytes]:
    edges = sorted({p % (len(raw) + 1) for p in points})
    pieces, start = [], 0
    for edge in edges:
        pieces.append(raw[start:edge])
        start = edge
    pieces.append(raw[start:])
    return pieces


@FAST
@given(st.sampled_from(VARIANTS), st.lists(st.integers(min_value=0), max_size=40))
def test_any_chunking_assembles_the_same_turn(variant, points):
    turn, events = assemble_bytes(cut(variant.body, points))
    check_turn(turn, events, variant)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(VARIANTS), st.lists(st.integers(min_value=0), max_size=12))
def test_any_chunking_through_httpx_assembles_the_same_turn(variant, points):
    turn, events = asyncio.run(stream_via_mock(variant.body, cut(variant.body, points)))
    check_turn(turn, events, variant)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "choices",
                    "delta",
                    "content",
                    "tool_calls",
                    "index",
                    "id",
                    "function",
                    "name",
                    "arguments",
                    "usage",
                    "reasoning",
                    "finish_reason",
                    "x",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)


def _reports_error(value) -> bool:
    """The only documented way to raise: the server sent an error object."""
    text = json.dumps(value)
    return '"error"' in text


@FAST
@given(st.lists(st.binary(max_size=60) | st.text(max_size=60).map(str.encode), max_size=20))
def test_garbage_bytes_never_raise(pieces):
    assemble_bytes(pieces)  # must not raise


@FAST
@given(st.lists(json_values, max_size=10))
def test_arbitrary_json_chunks_never_raise(values):
    raw = b"".join(b"data: " + json.dumps(v).encode() + b"\n\n" for v in values)
    try:
        assemble_bytes([raw])
    except StreamError:
        assert any(_reports_error(v) for v in values)


@FAST
@given(st.lists(json_values, max_size=10))
def test_normalised_events_keep_the_book_accumulators_contract(values):
    # Whatever arrives, the events are what the book's servers send: calls started once each,
    # numbered 0, 1, ... in order; deltas only for started calls; Done once, last.
    normaliser = ChunkNormaliser()
    events = []
    for value in values:
        try:
            events += normaliser.feed(json.dumps(value))
        except StreamError:
            return
    events += normaliser.close()
    starts = [e.index for e in events if isinstance(e, StreamEvent.ToolCallStart)]
    assert starts == list(range(len(starts)))
    started = 0
    for event in events:
        if isinstance(event, StreamEvent.ToolCallStart):
            started += 1
        elif isinstance(event, StreamEvent.ToolCallDelta):
            assert event.index < started
    assert [type(e) for e in events].count(StreamEvent.Done) == 1
    assert isinstance(events[-1], StreamEvent.Done)


@FAST
@given(st.text(max_size=120))
def test_book_parser_never_raises(line):
    parse_sse_line(line)
    parse_sse_line("data: " + line)


@FAST
@given(json_values)
def test_book_parser_never_raises_on_json(value):
    parse_sse_line("data: " + json.dumps(value))


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(VARIANTS), st.lists(st.integers(min_value=0), max_size=8))
def test_any_chunking_over_real_tcp_assembles_the_same_turn(variant, points):
    from provider_helpers import KEY

    from clawnb.course._http_fixture import LoopbackServer, chunk, chunked_head
    from clawnb.providers.openai import OpenAICompatProvider
    from clawnb.types import Message

    async def run():
        pieces = [p for p in cut(variant.body, points) if p]
        steps = [chunked_head()] + [chunk(p) for p in pieces] + [chunk(b"")]
        events: list = []
        async with LoopbackServer(steps) as server:
            provider = OpenAICompatProvider("m", KEY, server.url)
            turn = await provider.stream_chat([Message.User("x")], [], events.append)
        return turn, events

    turn, events = asyncio.run(run())
    check_turn(turn, events, variant)
