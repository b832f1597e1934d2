"""ReadTool (book ch2): give the model a file's contents.

By default the result is the raw file, exactly as on disk — no numbering, no truncation —
which is what the book's tests pin down. With ``offset`` and/or ``limit`` the tool returns a
window of numbered lines (``{n}\\t{line}``), useful for large files.

Memory stays bounded whatever the file: a window is **streamed** (lines before ``offset`` are
skipped without being kept, reading stops after ``limit`` lines, and a line longer than
``MAX_LINE_CHARS`` is cut with a note instead of being held whole), and a whole-file read of a
file over ``max_bytes`` (10 MiB) is refused with a hint to read it in windows.

Only regular files are opened (:func:`~clawnb.tools.base.open_regular`): a FIFO, a socket, a
device or a ``/proc`` file is an error at once, never a read that blocks. The
:class:`~clawnb.tools.base.FileStamp` recorded for read-before-edit is taken from the very
file handle that was read, with a hash of what it held.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ..types import JSON, ToolDefinition, ToolTraits
from .base import (
    FileStamp,
    FileState,
    FileTool,
    ToolError,
    open_regular,
    optional_int,
    require_str,
    resolve_path,
)

__all__ = ["ReadTool"]


class ReadTool(FileTool):
    """A file's text, whole or as a window of numbered lines. ``max_bytes`` is a class
    setting: change it on an instance or a subclass."""

    traits = ToolTraits(read_only=True)
    max_bytes = 10 * 1024 * 1024  # a bigger file is read in windows, never whole

    definition = (
        ToolDefinition("read", "Read the contents of a file.")
        .param("path", "string", "The file path to read", required=True)
        .param("offset", "integer", "Line number to start reading from (1-based)")
        .param("limit", "integer", "Maximum number of lines to read")
    )

    async def call(self, args: JSON) -> str:
        path = require_str(args, "path")
        offset = optional_int(args, "offset", minimum=1)
        limit = optional_int(args, "limit", minimum=0)
        target = resolve_path(path, self.workspace)
        state = self.file_state
        try:
            if offset is None and limit is None:
                text, stamp = await asyncio.to_thread(self._read_whole, target, path, state)
            else:
                text, stamp = await asyncio.to_thread(
                    _read_window, target, path, offset or 1, limit, state
                )
        except OSError as exc:
            raise ToolError(f"failed to read '{path}'") from exc
        if state is not None and stamp is not None:
            state.remember(target, stamp)
        return text

    def _read_whole(
        self, target: Path, path: str, state: FileState | None
    ) -> tuple[str, FileStamp | None]:
        with open_regular(target, path) as fh:
            size = os.fstat(fh.fileno()).st_size
            head = fh.read(8192)
            if b"\x00" in head:
                raise ToolError(f"'{path}' looks like a binary file ({size} bytes); not shown")
            if size > self.max_bytes:
                raise ToolError(
                    f"'{path}' is {_size(size)}, more than a whole read returns "
                    f"({_size(self.max_bytes)}); read it in windows with offset and limit"
                )
            # read up to the limit only: the file may have grown since fstat
            data = head + fh.read(self.max_bytes + 1 - len(head))
            if len(data) > self.max_bytes:
                raise ToolError(
                    f"'{path}' is more than {_size(self.max_bytes)}; read it in windows with "
                    "offset and limit"
                )
            stamp = FileStamp.of(fh, data, limit=state.max_hash_bytes) if state else None
        return data.decode("utf-8", errors="replace"), stamp


# A line longer than this is cut in a windowed read (a minified bundle, a NUL-filled hole).
MAX_LINE_CHARS = 64 * 1024
_CHUNK = 64 * 1024


def _size(n: int) -> str:
    value = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} bytes"  # pragma: no cover


def _physical_lines(fh: BinaryIO) -> Iterator[tuple[bytes, int]]:
    """The file's ``\\n``-separated lines, each cut to ``MAX_LINE_CHARS`` bytes, with how many
    bytes were left out of it; never holds more than one chunk of a long line."""
    while True:
        line = fh.readline(MAX_LINE_CHARS)
        if not line:
            return
        if line.endswith(b"\n") or len(line) < MAX_LINE_CHARS:
            yield line, 0
            continue
        skipped = 0
        while True:  # drop the rest of an over-long line, chunk by chunk
            rest = fh.readline(_CHUNK)
            if not rest:
                break
            skipped += len(rest)
            if rest.endswith(b"\n"):
                skipped -= 1
                line += b"\n"
                break
        yield line, skipped


def _read_window(
    target: Path, path: str, offset: int, limit: int | None, state: FileState | None
) -> tuple[str, FileStamp | None]:
    """Numbered lines ``offset`` .. ``offset + limit - 1``, read as a stream; with a
    ``state``, the stamp of the whole file (hashed in one more pass over the same handle)."""
    out: list[str] = []
    n = 0
    with open_regular(target, path) as fh:
        if b"\x00" in fh.read(8192):
            size = os.fstat(fh.fileno()).st_size
            raise ToolError(f"'{path}' looks like a binary file ({size} bytes); not shown")
        fh.seek(0)
        for raw, skipped in _physical_lines(fh):
            if limit is not None and len(out) >= limit:
                break
            # str.splitlines() also splits on \r, \f, \x1c … — as a whole-file read would
            pieces = raw.decode("utf-8", errors="replace").splitlines() or [""]
            for i, piece in enumerate(pieces):
                n += 1
                if n < offset:
                    continue
                if limit is not None and len(out) >= limit:
                    break
                if skipped and i == len(pieces) - 1:
                    piece += f" [... {skipped} more bytes of this line not shown ...]"
                out.append(f"{n}\t{piece}")
        stamp = FileStamp.of(fh, limit=state.max_hash_bytes) if state is not None else None
    return "\n".join(out), stamp
