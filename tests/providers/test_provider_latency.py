"""No buffering beyond the line: the first chunk's event fires before the server sends the
second chunk (the server literally waits for the client's callback before going on)."""

from __future__ import annotations

import asyncio
import time

from provider_helpers import KEY
from provider_variants import data, delta

from clawnb.course._http_fixture import LoopbackServer, WaitFor, chunk, chunked_head
from clawnb.events import StreamEvent
from clawnb.providers.openai import OpenAICompatProvider
from clawnb.types import Message


async def test_first_event_fires_before_the_second_chunk_is_sent():
    seen_first = asyncio.Event()
    times: dict[str, float] = {}

    def on_event(event):
        if event == StreamEvent.TextDelta("first") and "first" not in times:
            times["first"] = time.monotonic()
            seen_first.set()
        if event == StreamEvent.TextDelta("second"):
            times["second"] = time.monotonic()

    def reply(request):
        return [
            chunked_head(),
            # One data line, no blank line yet: the event must still come through.
            chunk(data(delta("first")) + "\n"),
            WaitFor(seen_first, timeout=5),
            chunk("\n" + data(delta("second")) + "\n\ndata: [DONE]\n\n"),
            chunk(b""),
        ]

    async with LoopbackServer(reply) as server:
        provider = OpenAICompatProvider("m", KEY, server.url, max_retries=0)
        turn = await provider.stream_chat([Message.User("hi")], [], on_event)
    assert turn.text == "firstsecond"
    assert times["first"] < times["second"]


async def test_async_callbacks_are_awaited_in_order():
    order: list[str] = []

    async def on_event(event):
        await asyncio.sleep(0)
        if isinstance(event, StreamEvent.TextDelta):
            order.append(event.text)

    lines = "".join(data(delta(c)) + "\n\n" for c in "abc") + "data: [DONE]\n\n"
    async with LoopbackServer([chunked_head(), chunk(lines), chunk(b"")]) as server:
        provider = OpenAICompatProvider("m", KEY, server.url)
        await provider.stream_chat([Message.User("hi")], [], on_event)
    assert order == ["a", "b", "c"]
