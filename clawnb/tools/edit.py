"""EditTool (book ch9, seed 002): replace one exact string in a file.

The book's contract: ``old_string`` must occur exactly once — zero matches means the model's
picture of the file is wrong, several mean the edit is ambiguous — and success returns
``edited {path}``.

Beyond the book:

* **quote tolerance**: models often "fix" typographic quotes. When there is no exact match,
  the search is retried with curly quotes (‘ ’ ′ “ ” ″) folded to straight ones on both sides;
  the file's *original* characters in the matched span are replaced, so the rest of the file
  keeps its quotes. The same retry handles CRLF files searched with ``\\n`` line ends;
* the result shows a small diff with line numbers, so the model sees what changed;
* the write is atomic (see :func:`clawnb.tools.write.atomic_write`) and goes through symlinks;
* with a shared :class:`~clawnb.tools.base.FileState` the file must have been read first and
  be unchanged on disk since (read-before-edit) — compared by content, on the very bytes the
  edit is computed from, so a change between the preview a person approved and the apply
  (even one that keeps the size and puts the mtime back) is refused, never written over;
* only regular files are opened (a FIFO or a device is an error, never a read that blocks);
* :meth:`EditTool.preview` runs every one of those checks and computes the exact diff without
  writing, so a front end can show the real change (line numbers, context) before asking —
  ``call`` applies the very same computation.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from ..types import JSON, ToolDefinition
from .base import ChangePreview, FileTool, ToolError, read_regular, require_str, resolve_path
from .diff import PREVIEW_DIFF_LINES, change_counts, render_diff
from .write import atomic_write, real_target, refuse_notebook

__all__ = ["EditTool", "change_counts", "find_unique", "normalize_quotes", "render_diff"]

_QUOTES = str.maketrans(
    {
        "\u2018": "'",  # ‘
        "\u2019": "'",  # ’
        "\u2032": "'",  # ′
        "\u201c": '"',  # “
        "\u201d": '"',  # ”
        "\u2033": '"',  # ″
    }
)


class OldStringNotFound(ToolError):
    """No occurrence at all (as opposed to an ambiguous one)."""


def normalize_quotes(text: str) -> str:
    """Fold curly quotes and primes to ASCII quotes. One character in, one character out,
    so indexes in the folded text are indexes in the original."""
    return text.translate(_QUOTES)


def find_unique(text: str, old: str, shown: str) -> tuple[int, int, str]:
    """Locate the single occurrence of ``old`` in ``text``.

    Returns ``(start, end, how)``: the span in ``text`` to replace and how it was found
    (``""`` for an exact match, ``"quotes"`` after folding quotes). Raises :class:`ToolError`
    naming the count when there is no match or more than one.
    """
    count = text.count(old)
    if count == 1:
        start = text.index(old)
        return start, start + len(old), ""
    if count > 1:
        raise ToolError(f"old_string appears {count} times in '{shown}', must be unique")
    folded_text, folded_old = normalize_quotes(text), normalize_quotes(old)
    count = folded_text.count(folded_old)
    if count == 1:
        start = folded_text.index(folded_old)
        return start, start + len(old), "quotes"
    if count > 1:
        raise ToolError(
            f"old_string appears {count} times in '{shown}' (after normalising quotes), "
            "must be unique"
        )
    raise OldStringNotFound(f"old_string not found in '{shown}'")


class EditTool(FileTool):
    """Replace the one occurrence of ``old_string`` in ``path`` with ``new_string``."""

    definition = (
        ToolDefinition("edit", "Replace an exact string in a file (must appear exactly once).")
        .param("path", "string", "The file path to edit", required=True)
        .param("old_string", "string", "The exact string to find and replace", required=True)
        .param("new_string", "string", "The replacement string", required=True)
    )

    def _checked(self, args: JSON) -> tuple[str, Path, str, str]:
        """The argument checks ``preview`` and ``call`` share (read-before-edit is checked
        in :meth:`_plan`, on the bytes the edit is computed from)."""
        path = require_str(args, "path")
        old = require_str(args, "old_string")
        new = require_str(args, "new_string")
        if old == "":
            raise ToolError("old_string must not be empty; use the write tool to create a file")
        if old == new:
            raise ToolError("old_string and new_string are identical; nothing to change")
        target = real_target(resolve_path(path, self.workspace))
        refuse_notebook(path, target, "edit")
        return path, target, old, new

    async def preview(self, args: JSON) -> ChangePreview:
        """The exact change ``call(args)`` would make now, or the :class:`ToolError` it would
        fail with; nothing is written."""
        path, target, old, new = self._checked(args)
        before, after, _how = await asyncio.to_thread(self._plan, path, target, old, new)
        removed, added = change_counts(before, after)
        first = _first_changed_line(before, after)
        summary = f"line {first}: {removed} removed, {added} added"
        return ChangePreview(
            path=path,
            kind="edit",
            summary=summary,
            diff=render_diff(before, after, max_lines=PREVIEW_DIFF_LINES),
            after=after,
            before=before,
        )

    async def call(self, args: JSON) -> str:
        path, target, old, new = self._checked(args)
        before, after, how, written = await asyncio.to_thread(self._edit, path, target, old, new)
        if self.file_state is not None:
            self.file_state.record(target, written)
        note = {
            "": "",
            "quotes": " (matched after normalising quotes)",
            "crlf": " (matched with CRLF line endings)",
        }[how]
        diff = render_diff(before, after) or "(no change: the file already read like that)"
        return f"edited {path}{note}\n\n{diff}"

    def _edit(self, shown: str, target: Path, old: str, new: str) -> tuple[str, str, str, bytes]:
        before, after, how = self._plan(shown, target, old, new)
        data = after.encode("utf-8", errors="replace")
        try:
            atomic_write(target, data)
        except OSError as exc:
            raise ToolError(f"failed to write '{shown}': {exc.strerror or exc}") from exc
        return before, after, how, data

    def _plan(self, shown: str, target: Path, old: str, new: str) -> tuple[str, str, str]:
        """``(before, after, how)`` for the edit, computed from the file on disk — after
        checking that those bytes are the ones the agent read (read-before-edit)."""
        try:
            data = read_regular(target, shown)
        except OSError as exc:
            raise ToolError(f"failed to read '{shown}'") from exc
        if self.file_state is not None:
            self.file_state.check_fresh(target, "editing", shown, data)
        if b"\x00" in data[:8192]:
            raise ToolError(f"'{shown}' looks like a binary file; edit only changes text files")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolError(
                f"'{shown}' is not valid UTF-8 (byte {exc.start}); edit only changes UTF-8 "
                "text files, rewrite it with bash if you must"
            ) from None
        try:
            start, end, how = find_unique(text, old, shown)
        except OldStringNotFound:
            if "\r\n" not in text or "\n" not in old:
                raise
            # A CRLF file searched with LF line ends: match and replace in CRLF terms.
            old_crlf = old.replace("\r\n", "\n").replace("\n", "\r\n")
            start, end, _ = find_unique(text, old_crlf, shown)
            new = new.replace("\r\n", "\n").replace("\n", "\r\n")
            how = "crlf"
        return text, text[:start] + new + text[end:], how


def _first_changed_line(before: str, after: str) -> int:
    """1-based number of the first line that differs (where the change starts)."""
    old, new = before.split("\n"), after.split("\n")
    for i, (a, b) in enumerate(zip(old, new, strict=False)):
        if a != b:
            return i + 1
    return min(len(old), len(new)) + 1
