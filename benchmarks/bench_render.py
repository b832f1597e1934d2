"""Does a fast stream flood the frontend? 10,000 one-character deltas through the widget view.

The deltas arrive over about a second (a burst of 10 every 1 ms, like a fast local model).
Counts the widget updates sent to the frontend (goal: at most one per 50 ms) and checks the
final text is byte-identical to what was streamed. Prints the ratio last.

    python benchmarks/bench_render.py
"""

from __future__ import annotations

import asyncio
import random
import string
import time

from clawnb.events import AgentEvent
from clawnb.notebook.render import WidgetView
from clawnb.types import AssistantTurn


async def run(n: int = 10_000) -> None:
    shown: list[object] = []
    view = WidgetView(
        display=lambda obj, raw=False: shown.append(obj),
        clear_output=lambda wait=False: shown.clear(),
    )
    view.root._view_count = 1
    view.start()
    rng = random.Random(7)
    pieces = [rng.choice(string.ascii_letters + " \n") for _ in range(n)]
    stamps: list[float] = []  # when each throttled round went out
    flush = view.throttle._flush

    def timed_flush() -> None:
        stamps.append(time.perf_counter())
        flush()

    view.throttle._flush = timed_flush
    start = time.perf_counter()
    for i, piece in enumerate(pieces):
        view(AgentEvent.TextDelta(piece))
        if i % 10 == 9:
            await asyncio.sleep(0.001)
    elapsed = time.perf_counter() - start
    streamed_rounds = len(stamps)
    view(AgentEvent.TurnEnd(AssistantTurn("".join(pieces))))
    view.throttle.flush_now()  # the end of the stream always shows the final text at once
    live_text = view.transcript.answer
    view.finish()
    budget = 1 + elapsed / 0.05  # the first round goes out at once
    identical = (
        live_text == "".join(pieces) and "".join(pieces).strip() in shown[-1]["text/markdown"]
    )
    print(f"deltas: {n}, stream time: {elapsed:.2f} s")
    print(f"widget messages sent: {view.updates} (naive: one per delta = {n})")
    gaps = [b - a for a, b in zip(stamps, stamps[1:streamed_rounds], strict=False)]
    print(f"update rounds while streaming: {streamed_rounds} (budget at 1 per 50 ms: {budget:.1f})")
    print(f"closest two rounds while streaming: {min(gaps) * 1000:.1f} ms apart")
    print(f"rounds in all, with the final flush: {view.flushes}")
    print(f"final text byte-identical: {identical}")
    print(f"update rounds per 50 ms while streaming: {streamed_rounds / budget:.2f} (goal <= 1.00)")


if __name__ == "__main__":
    asyncio.run(run())
