"""Coalescing frontend updates: a fast stream must not flood the browser."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

__all__ = ["Throttle"]


class Throttle:
    """Call ``flush`` soon after :meth:`poke`, coalescing the pokes that come in between.

    Two flushes are at least :attr:`gap` seconds apart. The gap is one screen frame
    (``interval``, 1/60 s by default: a faster update is never seen) unless updating is
    expensive: then it is what keeps updating within ``share`` of the time, ``cost / share``,
    where ``cost`` is the last flush's own run time plus what ``flush`` returns — the work it
    caused elsewhere (the browser re-rendering what was sent), in seconds. So a short answer
    streams at the frame rate, and a long one, re-sent and re-rendered whole on every update,
    coalesces more. The default ``share``, a fifth, leaves most of the time to the agent in
    the kernel and to the person scrolling and typing in the browser. The first poke after a
    quiet spell flushes at once (leading edge).

    Without a running event loop (plain scripts) every poke flushes at once.
    """

    #: one frame of a 60 Hz screen: the default (and shortest useful) gap between updates
    FRAME = 1 / 60

    def __init__(
        self,
        flush: Callable[[], float | None],
        interval: float = FRAME,
        clock: Callable[[], float] = time.monotonic,
        *,
        share: float = 0.2,
    ) -> None:
        self._flush = flush
        self.interval = interval
        self.share = share
        self.gap = interval
        self.cost = 0.0  # seconds the last flush cost, here and (by its estimate) elsewhere
        self._clock = clock
        self._last = float("-inf")
        self._handle: asyncio.TimerHandle | None = None

    def poke(self) -> None:
        if self._handle is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush_now()
            return
        wait = max(0.0, self._last + self.gap - self._clock())
        self._handle = loop.call_later(wait, self._run)

    def _run(self) -> None:
        self._handle = None
        self._last = start = self._clock()
        elsewhere = self._flush() or 0.0
        self.cost = self._clock() - start + elsewhere
        self.gap = max(self.interval, self.cost / self.share)

    def flush_now(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._run()

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
