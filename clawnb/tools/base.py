"""What every tool shares: :class:`ToolError`, argument helpers, path resolution and the
per-session :class:`FileState` (which files the agent has read, and when).

A tool is any object with a ``definition`` and an ``async call(args) -> str`` (see
:class:`clawnb.types.Tool`). Subclassing :class:`BaseTool` is optional; it only supplies the
fail-closed metadata defaults: not read-only, not concurrency-safe.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar

from ..types import ToolDefinition

__all__ = ["BaseTool", "FileState", "ToolError", "optional_int", "require_str", "resolve_path"]


class ToolError(Exception):
    """A tool failed; the loop shows the model ``error: {message}``."""


class BaseTool:
    """Convenience base class. Subclasses set ``definition`` (or build it in ``__init__``)."""

    definition: ToolDefinition
    read_only: ClassVar[bool] = False
    concurrency_safe: ClassVar[bool] = False

    async def call(self, args: Any) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def require_str(args: Any, key: str, message: str | None = None) -> str:
    """``args[key]`` if it is a string, else :class:`ToolError` (``missing '{key}' argument``)."""
    value = args.get(key) if isinstance(args, dict) else None
    if not isinstance(value, str):
        raise ToolError(message or f"missing '{key}' argument")
    return value


def optional_int(args: Any, key: str, *, minimum: int | None = None) -> int | None:
    """An optional integer argument; a bool, float or string is a clear error, not a guess."""
    value = args.get(key) if isinstance(args, dict) else None
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"'{key}' must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ToolError(f"'{key}' must be at least {minimum}, got {value}")
    return value


def resolve_path(path: str, workspace: str | os.PathLike[str] | None = None) -> Path:
    """``path`` as given when absolute, else joined to ``workspace`` (default: the process cwd).

    This is only where relative paths are anchored; the safety layer's PathValidator decides
    whether a path is *allowed*.
    """
    p = Path(path).expanduser() if path.startswith("~") else Path(path)
    if p.is_absolute() or workspace is None:
        return p
    return Path(workspace) / p


class FileState:
    """Remembers the mtime of each file the agent read in this session (read-before-edit)."""

    def __init__(self) -> None:
        self._mtimes: dict[str, int] = {}

    @staticmethod
    def _key(path: Path) -> str:
        return os.path.realpath(path)

    def record(self, path: Path) -> None:
        """Note that the agent has seen ``path`` as it is on disk now."""
        try:
            self._mtimes[self._key(path)] = os.stat(path).st_mtime_ns
        except OSError:
            self._mtimes.pop(self._key(path), None)

    def forget(self, path: Path) -> None:
        self._mtimes.pop(self._key(path), None)

    def seen_mtime(self, path: Path) -> int | None:
        return self._mtimes.get(self._key(path))

    def __contains__(self, path: object) -> bool:
        return isinstance(path, Path | str) and self._key(Path(path)) in self._mtimes
