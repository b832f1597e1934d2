"""Does a fast stream flood the frontend? 10,000 one-character deltas through the widget view.

The deltas arrive over about a second (a burst of 10 every 1 ms, like a fast local model).
Counts the update rounds sent to the frontend against one per delta, and checks that no two
rounds were closer than the throttle's bound: one screen frame (1/60 s), or more as the
answer grows, since each round re-sends and re-renders it whole (the bound keeps updating
within a fifth of the time: :class:`clawnb.notebook.throttle.Throttle`). Checks the final text
is byte-identical to what was streamed. Prints the ratio last.

    python benchmarks/bench_render.py
"""

from __future__ import annotations

import asyncio
import random
import string
import time

from clawnb.events import AgentEvent
from clawnb.notebook.throttle import Throttle
from clawnb.notebook.widgets import WidgetView
from clawnb.types import AssistantTurn

# the event loop may run a timer up to one clock tick early
TICK = time.get_clock_info("monotonic").resolution


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
    # when each round went out, and the spacing the throttle required before it
    rounds: list[tuple[float, float]] = []
    flush = view.throttle._flush

    def timed_flush() -> float | None:
        rounds.append((time.monotonic(), view.throttle.gap))
        return flush()

    view.throttle._flush = timed_flush
    start = time.monotonic()
    for i, piece in enumerate(pieces):
        view(AgentEvent.TextDelta(piece))
        if i % 10 == 9:
            await asyncio.sleep(0.001)
    elapsed = time.monotonic() - start
    streamed = len(rounds)
    view(AgentEvent.TurnEnd(AssistantTurn("".join(pieces))))
    view.throttle.flush_now()  # the end of the stream always shows the final text at once
    live_text = view.transcript.answer
    view.finish()
    identical = (
        live_text == "".join(pieces) and "".join(pieces).strip() in shown[-1]["text/markdown"]
    )
    pairs = list(zip(rounds, rounds[1:streamed], strict=False))
    spacing = [(b[0] - a[0]) / b[1] for a, b in pairs]  # actual gap / required gap
    early = sum(1 for (a, b) in pairs if b[0] - a[0] < b[1] - TICK)
    gaps = [gap for _, gap in rounds[1:streamed]]
    print(f"deltas: {n}, stream time: {elapsed:.2f} s")
    print(f"widget messages sent: {view.updates} (naive: one per delta = {n})")
    print(
        f"update rounds while streaming: {streamed} "
        f"(at most one per frame would allow {1 + elapsed / Throttle.FRAME:.0f})"
    )
    print(
        f"required gap between rounds: {gaps[0] * 1000:.1f} ms at the start, "
        f"{gaps[-1] * 1000:.1f} ms at the end ({len(live_text):,} characters)"
    )
    print(f"rounds closer than the required gap: {early}")
    print(f"rounds in all, with the final flush: {view.flushes}")
    print(f"final text byte-identical: {identical}")
    print(f"closest round / its required gap: {min(spacing):.2f} (goal >= 1.00)")


if __name__ == "__main__":
    asyncio.run(run())
