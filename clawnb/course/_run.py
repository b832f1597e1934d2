"""Run one suite test with a time limit, in a way the kernel's interrupt can stop.

A learner's bug can loop forever (a retry loop that never gives up, an agent that never stops
calling tools). Two things must still hold: the check ends by itself after a few seconds, and
the notebook's interrupt button stops it at once, leaving the kernel usable.

So every test runs on its own daemon thread with its own event loop, and the calling thread
only waits in short slices. The kernel delivers an interrupt as ``KeyboardInterrupt`` to the
main thread, which is never blocked for more than one slice; a blocked ``future.result()`` (as
before) is. To stop the test's thread we first cancel its task (an ``await`` anywhere wakes up
with ``CancelledError``), then, for code that never awaits or that swallows the cancellation,
raise :class:`Stopped` inside the thread itself (``PyThreadState_SetAsyncExc``, the one way
CPython offers to stop a thread running Python code). ``Stopped`` derives from
``BaseException`` so that ``except Exception`` in a retry loop cannot swallow it.
"""

from __future__ import annotations

import asyncio
import ctypes
import inspect
import threading
import time
from collections.abc import Callable
from typing import Any

__all__ = ["Stopped", "TestTimeout", "run_bounded"]

DEFAULT_TIMEOUT = 5.0
_SLICE = 0.05  # how often the waiting thread looks up; bounds the reaction to an interrupt
_STOP_GRACE = 0.8  # how long we try to stop a runaway test before leaving its thread behind


class Stopped(BaseException):
    """Raised inside a test's thread to stop it (timeout or interrupt)."""


class TestTimeout(Exception):
    """The test ran past its time limit."""

    __test__ = False  # not a pytest test class

    def __init__(self, seconds: float, stopped: bool, where: BaseException | None = None) -> None:
        self.seconds = seconds
        self.stopped = stopped
        self.where = where  # what the stopped test raised: its traceback shows where it was
        text = f"timed out after {seconds:g} s — does your loop ever end?"
        if not stopped:
            text += (
                " (its thread is blocked in a system call and could not be stopped;"
                " restart the kernel if the notebook stays slow)"
            )
        super().__init__(text)


class _Worker(threading.Thread):
    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        super().__init__(name="clawnb-check", daemon=True)
        self.fn = fn
        self.args = args
        self.error: BaseException | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.task: asyncio.Task[Any] | None = None

    def run(self) -> None:
        try:
            if inspect.iscoroutinefunction(self.fn):
                self._run_async()
            else:
                self.fn(*self.args)
        except BaseException as exc:  # handed to the waiting thread
            self.error = exc

    def _run_async(self) -> None:
        loop = self.loop = asyncio.new_event_loop()
        try:
            self.task = loop.create_task(self.fn(*self.args))
            loop.run_until_complete(self.task)
        finally:
            try:
                _cancel_leftovers(loop)
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()

    def stop(self) -> bool:
        """Stop the test; True if its thread ended."""
        loop, task = self.loop, self.task
        if loop is not None and task is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(task.cancel)
            except RuntimeError:  # the loop closed meanwhile
                pass
        deadline = time.monotonic() + _STOP_GRACE
        self.join(0.05)
        while self.is_alive() and time.monotonic() < deadline:
            _raise_in_thread(self, Stopped)
            self.join(0.02)
        return not self.is_alive()


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))


def _raise_in_thread(thread: threading.Thread, exc_type: type[BaseException]) -> None:
    ident = thread.ident
    if ident is not None and thread.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(ident), ctypes.py_object(exc_type)
        )


def run_bounded(fn: Callable[..., Any], *args: Any, timeout: float = DEFAULT_TIMEOUT) -> None:
    """Run ``fn(*args)`` (sync or async) on a worker thread; raise what it raised.

    Raises :class:`TestTimeout` after ``timeout`` seconds; a ``KeyboardInterrupt`` in the
    calling thread stops the test and is re-raised.
    """
    worker = _Worker(fn, args)
    worker.start()
    deadline = time.monotonic() + timeout
    try:
        while worker.is_alive():
            worker.join(_SLICE)
            if worker.is_alive() and time.monotonic() >= deadline:
                stopped = worker.stop()
                raise TestTimeout(timeout, stopped, worker.error)
    except KeyboardInterrupt:
        worker.stop()
        raise
    if worker.error is not None:
        raise worker.error
