"""ReadTool (book ch2): give the model a file's contents.

By default the result is the raw file, exactly as on disk — no numbering, no truncation —
which is what the book's tests pin down. With ``offset`` and/or ``limit`` the tool returns a
window of numbered lines (``{n}\\t{line}``), useful for large files.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ..types import ToolDefinition
from .base import FileState, FileTool, ToolError, optional_int, require_str, resolve_path

__all__ = ["ReadTool"]


class ReadTool(FileTool):
    read_only = True
    concurrency_safe = True

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None = None,
        file_state: FileState | None = None,
    ) -> None:
        super().__init__(workspace, file_state)
        self.definition = (
            ToolDefinition("read", "Read the contents of a file.")
            .param("path", "string", "The file path to read", True)
            .param("offset", "integer", "Line number to start reading from (1-based)", False)
            .param("limit", "integer", "Maximum number of lines to read", False)
        )

    async def call(self, args: Any) -> str:
        path = require_str(args, "path")
        offset = optional_int(args, "offset", minimum=1)
        limit = optional_int(args, "limit", minimum=0)
        target = resolve_path(path, self.workspace)
        try:
            data = await asyncio.to_thread(target.read_bytes)
        except OSError as exc:
            raise ToolError(f"failed to read '{path}'") from exc
        if b"\x00" in data[:8192]:
            raise ToolError(f"'{path}' looks like a binary file ({len(data)} bytes); not shown")
        text = data.decode("utf-8", errors="replace")
        if self.file_state is not None:
            self.file_state.record(target)
        if offset is None and limit is None:
            return text
        lines = text.splitlines()
        start = min((offset or 1) - 1, len(lines))
        end = len(lines) if limit is None else min(start + limit, len(lines))
        return "\n".join(f"{n}\t{line}" for n, line in enumerate(lines[start:end], start + 1))
