"""The notebook's one line when a memory review finishes: ``noted: new dataset-id-column``.

The review ends after its cell has returned, so the line cannot be printed then (it would
land in whichever cell runs at that moment). :class:`NotedLine` instead places an empty
output in the cell while it still runs — only when a review is under way — and fills it in
when the review ends (an ``update_display_data``, which reaches that cell's output). A
review that finished before the output was placed shows its line at once. ``show`` is how
the front end displays: ``show(text)`` returns a handle with ``update(text)`` (IPython's
``display(..., display_id=True)``); the engine never imports Jupyter.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["NotedLine"]


class NotedLine:
    """``on_noted`` for one cell (see the module docstring)."""

    def __init__(self, show: Callable[[str], Any]) -> None:
        self.show = show
        self.handle: Any = None
        self.early: str | None = None
        self._lock = threading.Lock()  # the review calls from its own thread

    def __call__(self, text: str) -> None:
        with self._lock:
            if self.handle is None:
                self.early = text
                return
            handle = self.handle
        handle.update(text)

    def place(self, pending: bool) -> None:
        """At the end of the cell: an output for the line when a review is still running
        (``pending``), or the line itself when one already finished."""
        with self._lock:
            if self.early is not None:
                self.handle = self.show(self.early)
            elif pending:
                self.handle = self.show("")
