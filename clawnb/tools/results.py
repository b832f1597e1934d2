"""Result size control (seeds 001/002): keep huge tool results out of the context window.

A ``grep`` over a big tree or a ``cat`` of a log can return megabytes; sent as-is it would
crowd out the conversation (or overflow the model's context). :class:`ResultLimiter` is a
``result_limit`` callable for :class:`~clawnb.executor.ToolExecutor` (and the loops'
``result_limit=`` option):

* a result up to its tool's threshold (``max_chars``, default 16,000 characters — about 4,000
  tokens; ``per_tool`` sets another for a named tool) passes unchanged;
* a longer one is **persisted**: the full text is written to a file under the session
  directory (``<workspace>/.claw/tool-results`` in a session) and the model gets a
  **preview** instead — about 2 KB (:data:`PREVIEW_CHARS`: the head, and the tail where the
  output is long enough for one to help), the file's path, its size in characters and lines,
  and how to page through it with ``read`` ``offset``/``limit``;
* a **budget per model turn** (``turn_budget``, default 60,000 characters): when one turn's
  results together exceed it, the largest results left are persisted first until the rest
  fit (:meth:`ResultLimiter.limit_round`, which the loop calls once the turn's tools are done).
  Ten parallel reads each under the threshold can no longer fill a small model's window in
  one step.

A persisted result many turns behind costs its preview on every later request.
:func:`cleared_stub` gives the one line (path and size) that stands for it once
:class:`~clawnb.context.ContextManager` clears old results in place (see
``docs/sessions.md``): the full text is still on disk, so nothing is lost that ``read`` cannot
bring back.

What the person sees on the tool card does not change: :meth:`ResultLimiter.card` gives the
front end the output as before (up to :data:`CARD_CHARS`, head and tail, with the path of the
saved copy when it was cut) — only the model's copy is the preview.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

from ..types import ToolCall

__all__ = [
    "CARD_CHARS",
    "DEFAULT_MAX_RESULT_CHARS",
    "DEFAULT_TURN_BUDGET_CHARS",
    "PREVIEW_CHARS",
    "ResultLimiter",
    "cleared_stub",
    "truncate_middle",
]

DEFAULT_MAX_RESULT_CHARS = 16_000
DEFAULT_TURN_BUDGET_CHARS = 60_000
PREVIEW_CHARS = 2_000  # what a persisted result costs the context (plus its note)
CARD_CHARS = 50_000  # what the card shows of one result (the card before persistence)

_PREVIEW_START = "[output too large for the context ("
_CLEARED_START = "[old result cleared from the context ("
_SAVED_NOTE = re.compile(
    re.escape(_PREVIEW_START)
    + r"([\d,]+) chars, ([\d,]+) lines\): saved in full to (.+?)\. Below is a preview;"
)
_TAIL_FROM = 4 * PREVIEW_CHARS  # below this a tail adds little to the head
_TAIL_CHARS = 500


def truncate_middle(text: str, max_chars: int) -> str:
    """``text`` if short enough, else head + ``[... truncated N chars ...]`` + tail, at most
    ``max_chars`` long overall (for any ``max_chars`` ≥ 100)."""
    if len(text) <= max_chars:
        return text
    marker_room = 60
    keep = max(0, (max_chars - marker_room) // 2)
    dropped = len(text) - 2 * keep
    return f"{text[:keep]}\n\n[... truncated {dropped} chars ...]\n\n{text[len(text) - keep :]}"


def _line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def _cut_at_line(text: str, limit: int, *, from_end: bool = False) -> str:
    """At most ``limit`` characters of ``text`` from its start (or end), ending (starting) on
    a line boundary when one is near, so the preview shows whole lines."""
    if len(text) <= limit:
        return text
    if from_end:
        piece = text[len(text) - limit :]
        newline = piece.find("\n")
        return piece[newline + 1 :] if 0 <= newline < limit // 2 else piece
    piece = text[:limit]
    newline = piece.rfind("\n")
    return piece[: newline + 1] if newline >= limit // 2 else piece


def preview(content: str, saved: Path | None, error: str | None = None) -> str:
    """What the model gets for a persisted result: a note with the path and size, then the
    head (and, for a long output, the tail) of ``content`` — about :data:`PREVIEW_CHARS`."""
    lines = _line_count(content)
    size = f"{len(content):,} chars, {lines:,} lines"
    if saved is not None:
        note = (
            f"{_PREVIEW_START}{size}): saved in full to {saved}. "
            "Below is a preview; page through the rest with the read tool "
            f'(e.g. {{"path": "{saved}", "offset": 1, "limit": 200}}), or grep it.]'
        )
    else:
        note = f"{_PREVIEW_START}{size}); it could not be saved: {error}]"
    if len(content) >= _TAIL_FROM:
        head = _cut_at_line(content, PREVIEW_CHARS - _TAIL_CHARS)
        tail = _cut_at_line(content, _TAIL_CHARS, from_end=True)
        hidden = len(content) - len(head) - len(tail)
        body = f"{head}\n[... {hidden:,} chars not shown ...]\n{tail}"
    else:
        head = _cut_at_line(content, PREVIEW_CHARS)
        body = f"{head}\n[... {len(content) - len(head):,} chars not shown ...]"
    return f"{note}\n\n{body}"


def cleared_stub(content: str) -> str | None:
    """The one line that replaces a persisted result's preview when old results are cleared
    from the context: the saved file's path and size, and how to read it again. ``None``
    when ``content`` is not a preview of a saved result (a result in full, a preview whose
    save failed, or a stub already)."""
    match = _SAVED_NOTE.match(content)
    if match is None:
        return None
    chars, lines, path = match.groups()
    return (
        f"{_CLEARED_START}{chars} chars, {lines} lines): saved in full to {path}; "
        "read it with the read tool (offset/limit) or grep it if it is needed again]"
    )


class ResultLimiter:
    """``result_limit`` callable: persist long results and give the model a preview.

    ``directory`` is where full results go (the session directory; files land in its
    ``tool-results`` folder); by default a fresh ``clawnb-results-*`` folder under the system
    temp dir, created on first use. ``max_chars`` is the threshold for every tool,
    ``per_tool`` overrides it by tool name (``{"bash": 30_000}``); ``turn_budget`` caps one
    model turn's results together (``None``: no cap).
    """

    def __init__(
        self,
        max_chars: int = DEFAULT_MAX_RESULT_CHARS,
        directory: str | os.PathLike[str] | None = None,
        *,
        per_tool: Mapping[str, int] | None = None,
        turn_budget: int | None = DEFAULT_TURN_BUDGET_CHARS,
    ) -> None:
        for name, value in {"max_chars": max_chars, **(per_tool or {})}.items():
            if value < 1000:
                raise ValueError(f"{name}: a result threshold must be at least 1000 characters")
        if turn_budget is not None and turn_budget < 1000:
            raise ValueError("turn_budget must be at least 1000 characters")
        self.max_chars = max_chars
        self.per_tool = dict(per_tool or {})
        self.turn_budget = turn_budget
        self._directory = Path(directory) if directory is not None else None
        # the model's preview → the saved file, for the card of that result
        self._saved: dict[str, tuple[Path | None, str | None]] = {}

    @property
    def directory(self) -> Path:
        if self._directory is None:
            self._directory = Path(tempfile.mkdtemp(prefix="clawnb-results-"))
        return self._directory

    def threshold(self, tool_name: str) -> int:
        """The size above which ``tool_name``'s results are persisted."""
        return self.per_tool.get(tool_name, self.max_chars)

    def save(self, call: ToolCall, content: str) -> Path:
        """Write ``content`` to a new file named after the time, tool and call id."""
        directory = self.directory / "tool-results"
        directory.mkdir(parents=True, exist_ok=True)
        safe_id = re.sub(r"[^A-Za-z0-9_.-]", "_", call.id)[:40] or uuid.uuid4().hex[:8]
        safe_name = re.sub(r"[^A-Za-z0-9_.-]", "_", call.name)[:40]
        path = directory / f"{int(time.time() * 1000)}-{safe_name}-{safe_id}.txt"
        path.write_text(content, encoding="utf-8", errors="replace")
        return path

    def persist(self, call: ToolCall, content: str) -> str:
        """Save ``content`` and return the preview that stands for it in the context."""
        saved: Path | None
        error: str | None = None
        try:
            saved = self.save(call, content)
        except OSError as exc:
            saved, error = None, str(exc)
        shown = preview(content, saved, error)
        self._saved[call.id] = (saved, error)
        return shown

    def __call__(self, call: ToolCall, content: str) -> str:
        if len(content) <= self.threshold(call.name):
            return content
        return self.persist(call, content)

    def limit_round(self, calls: list[ToolCall], results: list[str]) -> list[str]:
        """One model turn's results within ``turn_budget``: while they exceed it together,
        the largest one not yet persisted is persisted (so the fewest results lose their
        text). Results already previews stay as they are."""
        if self.turn_budget is None or sum(map(len, results)) <= self.turn_budget:
            return results
        out = list(results)
        candidates = sorted(
            (i for i, text in enumerate(out) if not text.startswith(_PREVIEW_START)),
            key=lambda i: len(out[i]),
            reverse=True,
        )
        for i in candidates:
            if sum(map(len, out)) <= self.turn_budget:
                break
            if len(out[i]) <= PREVIEW_CHARS + 400:
                break  # what is left is already preview-sized; persisting would not shrink it
            out[i] = self.persist(calls[i], out[i])
        return out

    def card(self, call: ToolCall, content: str) -> str:
        """What the tool card shows for ``content`` (the whole, unlimited output): as before
        persistence — the text itself up to :data:`CARD_CHARS`, else head and tail with the
        path of the saved copy."""
        if len(content) <= CARD_CHARS:
            return content
        saved, error = self._saved.get(call.id, (None, None))
        if saved is not None:
            note = (
                f"[the full result ({len(content)} chars) was saved to {saved}; "
                "use the read tool with offset/limit, or grep, to see the rest]"
            )
        elif error is not None:
            note = f"[the full result ({len(content)} chars) could not be saved: {error}]"
        else:
            note = f"[the full result is {len(content)} chars]"
        return f"{note}\n\n{truncate_middle(content, CARD_CHARS - len(note) - 2)}"
