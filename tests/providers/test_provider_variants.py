"""Every real-server quirk, as real SSE bytes, through httpx.MockTransport and through a real
HTTP server on 127.0.0.1: all must assemble to the same clean turn."""

from __future__ import annotations

import pytest
from provider_helpers import check_deltas, check_turn, stream_via_loopback, stream_via_mock
from provider_variants import VARIANTS

from clawnb.providers.sse import SSEDecoder, StreamAccumulator, TurnAssembler

IDS = [v.name for v in VARIANTS]


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
async def test_variant_through_mock_transport(variant):
    turn, events = await stream_via_mock(variant.body)
    check_turn(turn, events, variant)
    check_deltas(turn, events)


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
async def test_variant_through_loopback_server(variant):
    turn, events = await stream_via_loopback(variant.body)
    check_turn(turn, events, variant)
    check_deltas(turn, events)


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
async def test_variant_in_one_piece(variant):
    # The whole body in a single network chunk (a proxy that buffers).
    turn, events = await stream_via_mock(variant.body, [variant.body])
    check_turn(turn, events, variant)


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
def test_variant_events_rebuild_the_turn_with_the_book_accumulator(variant):
    # The tolerant path's events use contiguous indices, so the book's accumulator agrees.
    decoder, assembler = SSEDecoder(), TurnAssembler()
    events = []
    for payload in decoder.feed(variant.body) + decoder.flush():
        events += assembler.feed(payload)
    events += assembler.close()
    acc = StreamAccumulator()
    for event in events:
        acc.feed(event)
    book, tolerant = acc.finish(), assembler.finish()
    assert book.text == tolerant.text
    assert [(c.id, c.name) for c in book.tool_calls] == [
        (c.id, c.name) for c in tolerant.tool_calls
    ]
    for b, t in zip(book.tool_calls, tolerant.tool_calls, strict=True):
        if t.invalid_arguments is None and t.arguments != {}:
            assert b.arguments == t.arguments
