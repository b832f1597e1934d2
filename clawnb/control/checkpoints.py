"""Per-turn checkpoints of the files the agent writes, so ``%claw undo`` can put them back.

The session's gate calls :meth:`Checkpoints.before_tool` once a file-changing call is
allowed, for the agent's own calls and its subagents' alike: it snapshots the file about to be
touched (its bytes, or the fact that it did not exist) into the current turn's checkpoint
(a ``%%claw`` cell, a chat message) — only the first snapshot per path per turn counts, so undo
returns to the state before the turn. ``undo()`` restores the most recent turn's files and
drops that checkpoint.

With a ``directory`` (a notebook session's ``.claw/sessions/<id>.checkpoints``) every snapshot
is also written to disk — fsync-ed before the tool changes the file — and
:meth:`Checkpoints.open` reads the stack back, so ``%claw undo`` still works after a kernel
restart or crash. Layout: one folder per checkpoint (``0001``, ``0002`` …) holding
``label``, one ``N.bin`` per saved file and ``files.jsonl`` (``{"path", "blob"}``, ``blob``
``null`` when the file did not exist).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..types import JSON

__all__ = ["Checkpoint", "Checkpoints", "FILE_TOOLS", "target_path"]

# tools that change a file named by their ``path`` argument
FILE_TOOLS = frozenset({"write", "edit", "multi_edit", "notebook_edit"})
_MAX_SNAPSHOT = 20 * 1024 * 1024


def target_path(
    name: str, arguments: JSON, workspace: str | os.PathLike[str] | None
) -> Path | None:
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
    # bytes: the file's content; None: it did not exist; a Path: the content saved on disk
    files: dict[Path, bytes | None | Path] = field(default_factory=dict)
    directory: Path | None = None

    def snapshot(self, path: Path) -> None:
        if path in self.files:
            return
        try:
            if path.is_file() and path.stat().st_size <= _MAX_SNAPSHOT:
                data: bytes | None = path.read_bytes()
            elif not path.exists():
                data = None
            else:
                return
        except OSError:
            return  # unreadable: nothing we could restore anyway
        self.files[path] = data
        if self.directory is not None:
            self._save(path, data)

    def _save(self, path: Path, data: bytes | None) -> None:
        """Write one snapshot durably (before the tool that changes ``path`` runs)."""
        assert self.directory is not None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            label = self.directory / "label"
            if not label.exists():
                label.write_text(self.label, encoding="utf-8")
            blob = None
            if data is not None:
                blob = f"{len(self.files)}.bin"
                _write_durably(self.directory / blob, data)
            line = json.dumps({"path": str(path), "blob": blob}, ensure_ascii=False) + "\n"
            with open(self.directory / "files.jsonl", "a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError:
            pass  # undo still works from memory in this process

    @classmethod
    def load(cls, directory: Path) -> Checkpoint:
        label = (directory / "label").read_text(encoding="utf-8")
        files: dict[Path, bytes | None | Path] = {}
        with open(directory / "files.jsonl", encoding="utf-8") as fh:
            for line in fh:
                try:
                    entry = json.loads(line)
                except ValueError:
                    break  # a line cut off by a crash: the file it named was not touched yet
                blob = entry.get("blob")
                files.setdefault(Path(entry["path"]), directory / blob if blob else None)
        return cls(label, files, directory)

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
                    content = data.read_bytes() if isinstance(data, Path) else data
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(content)
                    lines.append(f"restored {path}")
            except OSError as exc:
                lines.append(f"could not restore {path}: {exc.strerror or exc}")
        return lines

    def discard(self) -> None:
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)


def _write_durably(path: Path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


class Checkpoints:
    """A stack of per-turn checkpoints (turns that changed no file leave none)."""

    def __init__(self, limit: int = 50, *, directory: str | os.PathLike[str] | None = None) -> None:
        self._stack: list[Checkpoint] = []
        self._current: Checkpoint | None = None
        self.limit = limit
        self.directory = Path(directory) if directory is not None else None
        self._next = 1

    @classmethod
    def open(cls, directory: str | os.PathLike[str], limit: int = 50) -> Checkpoints:
        """The checkpoints saved under ``directory`` (none yet if it does not exist), which
        new ones are saved to as well."""
        cps = cls(limit, directory=directory)
        assert cps.directory is not None
        if cps.directory.is_dir():
            for sub in sorted(p for p in cps.directory.iterdir() if p.name.isdigit()):
                cps._next = max(cps._next, int(sub.name) + 1)
                try:
                    checkpoint = Checkpoint.load(sub)
                except (OSError, ValueError, KeyError):
                    continue  # a checkpoint cut off before its first file was saved
                if checkpoint.files:
                    cps._stack.append(checkpoint)
        return cps

    def begin(self, label: str) -> None:
        self._current = Checkpoint(label)

    def before_tool(self, name: str, arguments: JSON, workspace: Any) -> None:
        path = target_path(name, arguments, workspace)
        if path is None or self._current is None:
            return
        if not self._current.files:
            if self.directory is not None:
                self._current.directory = self.directory / f"{self._next:04d}"
                self._next += 1
            self._stack.append(self._current)
            for dropped in self._stack[: -self.limit]:
                dropped.discard()
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
        checkpoint.discard()
        return f"undo {checkpoint.label}:\n" + "\n".join("  " + line for line in lines)
