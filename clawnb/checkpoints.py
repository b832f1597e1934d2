"""Per-turn checkpoints of the files the agent writes, so ``%claw undo`` can put them back.

The session's gate calls :meth:`Checkpoints.before_tool` once a file-changing call is
allowed, for the agent's own calls and its subagents' alike: it snapshots the file about to be
touched (its bytes, or the fact that it did not exist) into the current turn's checkpoint
(a ``%%claw`` cell, a chat message) — only the first snapshot per path per turn counts, so undo
returns to the state before the turn. ``undo()`` restores the most recent turn's files and
drops that checkpoint.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Checkpoint", "Checkpoints", "FILE_TOOLS", "target_path"]

# tools that change a file named by their ``path`` argument
FILE_TOOLS = frozenset({"write", "edit", "multi_edit", "notebook_edit"})
_MAX_SNAPSHOT = 20 * 1024 * 1024


def target_path(name: str, arguments: Any, workspace: str | os.PathLike[str] | None) -> Path | None:
    """The file a file-changing call will touch, or ``None`` for other calls."""
    if name not in FILE_TOOLS or not isinstance(arguments, dict):
        return None
    raw = arguments.get("path") or arguments.get("file_path") or arguments.get("notebook_path")
    if not isinstance(raw, str) or not raw:
        return None
    path = Path(raw).expanduser()
    if not path.is_absolute() and workspace is not None:
        path = Path(workspace) / path
    return path.absolute()


@dataclass
class Checkpoint:
    label: str
    files: dict[Path, bytes | None] = field(default_factory=dict)

    def snapshot(self, path: Path) -> None:
        if path in self.files:
            return
        try:
            if path.is_file() and path.stat().st_size <= _MAX_SNAPSHOT:
                self.files[path] = path.read_bytes()
            elif not path.exists():
                self.files[path] = None
        except OSError:
            pass  # unreadable: nothing we could restore anyway

    def restore(self) -> list[str]:
        """Put every file back; return one line per file saying what was done."""
        lines = []
        for path, data in self.files.items():
            try:
                if data is None:
                    if path.exists():
                        path.unlink()
                        lines.append(f"removed {path}")
                else:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(data)
                    lines.append(f"restored {path}")
            except OSError as exc:
                lines.append(f"could not restore {path}: {exc.strerror or exc}")
        return lines


class Checkpoints:
    """A stack of per-turn checkpoints (turns that changed no file leave none)."""

    def __init__(self, limit: int = 50) -> None:
        self._stack: list[Checkpoint] = []
        self._current: Checkpoint | None = None
        self.limit = limit

    def begin(self, label: str) -> None:
        self._current = Checkpoint(label)

    def before_tool(self, name: str, arguments: Any, workspace: Any) -> None:
        path = target_path(name, arguments, workspace)
        if path is None or self._current is None:
            return
        if not self._current.files:
            self._stack.append(self._current)
            del self._stack[: -self.limit]
        self._current.snapshot(path)

    def end(self) -> None:
        self._current = None

    @property
    def active(self) -> bool:
        """Whether a turn's checkpoint is open."""
        return self._current is not None

    @contextmanager
    def turn(self, label: str) -> Iterator[None]:
        """A checkpoint for one turn, unless the front end already opened one (a notebook
        cell labels it ``cell N`` and may run plan and execute inside it)."""
        if self.active:
            yield
            return
        self.begin(label)
        try:
            yield
        finally:
            self.end()

    def __len__(self) -> int:
        return len(self._stack)

    def undo(self) -> str:
        if not self._stack:
            return "nothing to undo"
        checkpoint = self._stack.pop()
        lines = checkpoint.restore()
        return f"undo {checkpoint.label}:\n" + "\n".join("  " + line for line in lines)
