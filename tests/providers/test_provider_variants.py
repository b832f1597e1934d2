"""Every real-server quirk, as real SSE bytes, through httpx.MockTransport and through a real
HTTP server on 127.0.0.1: all must assemble to the same clean turn."""

from __future__ import annotations

import pytest
from provider_helpers import (
    assemble_bytes,
    check_deltas,
    check_turn,
    stream_via_loopback,
    stream_via_mock,
)
from provider_variants import VARIANTS

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
def test_variant_normalised_events_build_the_turn_in_the_book_accumulator(variant):
    # No network: decoder → normaliser → StreamAccumulator, the same turn and event story.
    turn, events = assemble_bytes([variant.body])
    check_turn(turn, events, variant)
    check_deltas(turn, events)
