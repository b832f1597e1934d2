"""Result size control (seeds 001/002): keep huge tool results out of the context window.

A ``grep`` over a big tree or a ``cat`` of a log can return megabytes; sent as-is it would
crowd out the conversation (or overflow the model's context). :class:`ResultLimiter` is a
``result_limit`` callable for :class:`~clawnb.executor.ToolExecutor` (and the loops'
``result_limit=`` option): results up to ``max_chars`` (default 50,000) pass unchanged; longer
ones keep their head and tail around a ``[... truncated N chars ...]`` marker, and the full
text is saved to a file under the session directory whose path is given to the model, so it
can ``read`` (with ``offset``/``limit``) or ``grep`` the rest.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
import uuid
from pathlib import Path

from ..types import ToolCall

__all__ = ["DEFAULT_MAX_RESULT_CHARS", "ResultLimiter", "truncate_middle"]

DEFAULT_MAX_RESULT_CHARS = 50_000

# Room reserved in the budget for the marker and the "saved to" note.
_OVERHEAD = 400


def truncate_middle(text: str, max_chars: int) -> str:
    """``text`` if short enough, else head + ``[... truncated N chars ...]`` + tail, at most
    ``max_chars`` long overall (for any ``max_chars`` ≥ 100)."""
    if len(text) <= max_chars:
        return text
    marker_room = 60
    keep = max(0, (max_chars - marker_room) // 2)
    dropped = len(text) - 2 * keep
    return f"{text[:keep]}\n\n[... truncated {dropped} chars ...]\n\n{text[len(text) - keep :]}"


class ResultLimiter:
    """``result_limit`` callable: truncate long results and save them in full.

    ``directory`` is where full results go (the session directory); by default a fresh
    ``clawnb-results-*`` folder under the system temp dir, created on first use.
    """

    def __init__(
        self,
        max_chars: int = DEFAULT_MAX_RESULT_CHARS,
        directory: str | os.PathLike[str] | None = None,
    ) -> None:
        if max_chars < 1000:
            raise ValueError("max_chars must be at least 1000")
        self.max_chars = max_chars
        self._directory = Path(directory) if directory is not None else None

    @property
    def directory(self) -> Path:
        if self._directory is None:
            self._directory = Path(tempfile.mkdtemp(prefix="clawnb-results-"))
        return self._directory

    def save(self, call: ToolCall, content: str) -> Path:
        """Write ``content`` to a new file named after the time, tool and call id."""
        directory = self.directory / "tool-results"
        directory.mkdir(parents=True, exist_ok=True)
        safe_id = re.sub(r"[^A-Za-z0-9_.-]", "_", call.id)[:40] or uuid.uuid4().hex[:8]
        safe_name = re.sub(r"[^A-Za-z0-9_.-]", "_", call.name)[:40]
        path = directory / f"{int(time.time() * 1000)}-{safe_name}-{safe_id}.txt"
        path.write_text(content, encoding="utf-8", errors="replace")
        return path

    def __call__(self, call: ToolCall, content: str) -> str:
        if len(content) <= self.max_chars:
            return content
        try:
            saved = self.save(call, content)
            note = (
                f"[the full result ({len(content)} chars) was saved to {saved}; "
                "use the read tool with offset/limit, or grep, to see the rest]"
            )
        except OSError as exc:
            note = f"[the full result ({len(content)} chars) could not be saved: {exc}]"
        body = truncate_middle(content, self.max_chars - len(note) - 2)
        return f"{note}\n\n{body}"
