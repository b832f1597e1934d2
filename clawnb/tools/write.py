"""WriteTool (book ch9): create or overwrite a file.

The book's contract: ``path`` and ``content`` are required, parent directories are created,
an existing file is overwritten, and the result is ``wrote {path}``.

Beyond the book:

* the write is **atomic**: the content goes to a temporary file in the same directory, is
  flushed to disk, then renamed over the target, so a crash or a full disk never leaves a
  half-written file behind (readers see the old file or the new one, nothing between);
* writing through a symlink replaces the file the link points to, not the link;
* an existing file keeps its permission bits; a new one gets the usual ``0o666 & ~umask``;
* with a shared :class:`~clawnb.tools.base.FileState`, overwriting an existing file the agent
  never read (or that changed on disk since it read it, compared by content) is refused
  (read-before-edit);
* an existing path that is not a regular file (a FIFO, a socket, a device, ``/proc``) is
  refused before anything opens it;
* :meth:`WriteTool.preview` says "new file, N lines" or "overwrites N lines" and gives the
  content (new file) or its diff against the file on disk, after the same checks as ``call``.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from ..control.files import replace_file
from ..types import JSON, ToolDefinition
from .base import (
    ChangePreview,
    FileTool,
    ToolError,
    check_regular,
    read_regular,
    require_str,
    resolve_path,
)
from .diff import PREVIEW_DIFF_LINES, change_counts, render_diff

__all__ = ["WriteTool", "atomic_write", "real_target", "refuse_notebook"]


def atomic_write(target: Path, data: bytes) -> None:
    """Replace ``target`` with ``data`` all at once (temp file + fsync + rename), keeping its
    permission bits (:func:`clawnb.control.files.replace_file`).

    ``target`` should already be resolved (symlinks followed); its directory must exist.
    """
    replace_file(target, data)


def real_target(path: Path) -> Path:
    """Where a write to ``path`` lands: the symlink's final target, or ``path`` itself."""
    if path.is_symlink():
        return Path(os.path.realpath(path))
    return path


def refuse_notebook(shown: str, target: Path, tool: str) -> None:
    """``edit``/``write`` leave notebooks to ``notebook_edit``: rewriting the JSON by hand
    loses ids and outputs, breaks on base64 images and shows the person approving it a wall
    of JSON instead of the cell that changes."""
    if shown.lower().endswith(".ipynb") or target.name.lower().endswith(".ipynb"):
        raise ToolError(
            f"'{shown}' is a Jupyter notebook; {tool} does not change notebooks. Use "
            "notebook_read to see its cells and notebook_edit to replace, insert or delete "
            "a cell (it also creates a new notebook)"
        )


class WriteTool(FileTool):
    """Write ``content`` to ``path`` (relative paths are anchored at ``workspace``)."""

    definition = (
        ToolDefinition("write", "Write content to a file, creating directories as needed.")
        .param("path", "string", "The file path to write to", required=True)
        .param("content", "string", "The content to write to the file", required=True)
    )

    def _checked(self, args: JSON) -> tuple[str, str, Path]:
        """The argument and read-before-edit checks ``preview`` and ``call`` share."""
        path = require_str(args, "path")
        content = require_str(args, "content")
        target = real_target(resolve_path(path, self.workspace))
        refuse_notebook(path, target, "write")
        if self.file_state is not None:
            self.file_state.check_fresh(target, "overwriting", path)
        return path, content, target

    async def preview(self, args: JSON) -> ChangePreview:
        """What ``call(args)`` would do now: a new file's content, or the diff against the file
        it overwrites; the :class:`ToolError` ``call`` would raise otherwise. Writes nothing."""
        path, content, target = self._checked(args)
        return await asyncio.to_thread(_preview_write, path, content, target)

    async def call(self, args: JSON) -> str:
        path, content, target = self._checked(args)
        written = await asyncio.to_thread(self._write, path, target, content)
        if self.file_state is not None:
            self.file_state.record(target, written)
        return f"wrote {path}"

    @staticmethod
    def _write(shown: str, target: Path, content: str) -> bytes:
        if target.is_dir():
            raise ToolError(f"failed to write '{shown}': it is a directory")
        _refuse_special(target, shown)
        parent = target.parent
        if str(parent) not in ("", "."):  # os.makedirs("") raises; the cwd exists
            try:
                parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ToolError(f"failed to create directories for '{shown}'") from exc
        data = content.encode("utf-8", errors="replace")
        try:
            atomic_write(target, data)
        except OSError as exc:
            raise ToolError(f"failed to write '{shown}': {exc.strerror or exc}") from exc
        return data


def _refuse_special(target: Path, shown: str) -> None:
    """An existing FIFO, socket, device or /proc file in the way: refused, not replaced (a
    write to a named pipe someone listens on is not a file the project keeps)."""
    try:
        st = os.stat(target)
    except OSError:
        return  # a new file (or a problem the write itself reports)
    check_regular(target, st, shown)


def _line_count(text: str) -> int:
    return len(text.splitlines())


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _preview_write(shown: str, content: str, target: Path) -> ChangePreview:
    if target.is_dir():
        raise ToolError(f"failed to write '{shown}': it is a directory")
    _refuse_special(target, shown)
    after = content.encode("utf-8", errors="replace").decode("utf-8")
    try:
        data: bytes | None = read_regular(target, shown)
    except FileNotFoundError:
        data = None
    except OSError as exc:
        raise ToolError(f"failed to write '{shown}': {exc.strerror or exc}") from exc
    if data is None:
        rows = after.split("\n")
        if rows and rows[-1] == "":
            rows.pop()
        shown_rows = [f"+{i + 1:>5} | {row}" for i, row in enumerate(rows[:PREVIEW_DIFF_LINES])]
        if len(rows) > PREVIEW_DIFF_LINES:
            shown_rows.append(f"… ({len(rows) - PREVIEW_DIFF_LINES} more lines)")
        diff = "\n".join([f"@@ -0,0 +1,{len(rows)} @@", *shown_rows]) if rows else ""
        summary = f"new file, {_plural(_line_count(after), 'line')}"
        return ChangePreview(shown, "create", summary, diff, after, None)
    try:
        before = data.decode("utf-8")
    except UnicodeDecodeError:
        summary = (
            f"overwrites a file that is not UTF-8 text ({_plural(len(data), 'byte')}) "
            f"with {_plural(_line_count(after), 'line')}"
        )
        diff = render_diff("", after, max_lines=PREVIEW_DIFF_LINES)
        return ChangePreview(shown, "overwrite", summary, diff, after, None)
    removed, added = change_counts(before, after)
    summary = f"overwrites {_plural(_line_count(before), 'line')}"
    if before == after:
        summary += " (no change)"
    else:
        summary += f": {removed} removed, {added} added"
    diff = render_diff(before, after, max_lines=PREVIEW_DIFF_LINES)
    return ChangePreview(shown, "overwrite", summary, diff, after, before)
