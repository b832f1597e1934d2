"""Folders outside the workspace that the person added (``additional_directories``, ``add-dir``).

An added folder is treated as part of the workspace: the file tools read it without asking and
write it as they write the workspace (same modes, same questions), and the sandbox binds it
read-write for bash. Secret files and control files stay protected there as everywhere.

Only the person adds folders: the user config's ``additional_directories`` (a project's config
may not name any — a repository must not grant itself writes to ``~``) and the ``%claw add-dir
DIR`` / ``/add-dir DIR`` command. One :class:`AddedDirectories` is shared by the session's gate
and its sandbox policy, so a folder added while the session runs counts at once for both.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["AddedDirectories", "DirectoryRefused"]


class DirectoryRefused(ValueError):
    """A folder that cannot be added; the message is one line for the person."""


class AddedDirectories:
    """The added folders, each as its real path (links resolved), in the order added."""

    def __init__(self, paths: Iterable[str | os.PathLike[str]] = ()) -> None:
        self._paths: list[Path] = []
        self._lock = threading.Lock()
        for path in paths:
            self.add(path)

    @classmethod
    def from_config(
        cls, entries: Iterable[str] | None, workspace: str | os.PathLike[str]
    ) -> AddedDirectories:
        """The folders a config lists, relative ones read from ``workspace``; a folder that
        does not exist (a user-wide ``"../data"`` that this workspace has no sibling for)
        grants nothing and is left out."""
        added = cls()
        for entry in entries or ():
            try:
                added.add(entry, base=workspace)
            except DirectoryRefused:
                continue
        return added

    def add(
        self, path: str | os.PathLike[str], *, base: str | os.PathLike[str] | None = None
    ) -> Path:
        """Add ``path`` (``~`` expanded; relative to ``base``, default the current directory)
        and return where it really is; :class:`DirectoryRefused` for a folder that does not
        exist, a file, the root of the file system, or the home folder or a folder above it."""
        text = os.fspath(path)
        if not text or "\x00" in text:
            raise DirectoryRefused(f"not a folder: {text!r}")
        expanded = os.path.expanduser(text)
        full = os.path.join(os.fspath(base) if base is not None else os.getcwd(), expanded)
        try:
            real = Path(os.path.realpath(full, strict=True))
        except OSError:
            raise DirectoryRefused(f"no such folder: {full}") from None
        if not real.is_dir():
            raise DirectoryRefused(f"not a folder: {real}")
        if real == Path("/"):
            raise DirectoryRefused("the whole file system cannot be added; name a folder")
        home = os.path.realpath(os.path.expanduser("~"))
        if os.path.isabs(home) and home != "/" and Path(home).is_relative_to(real):
            # ~/.ssh/authorized_keys, ~/.bashrc: files that are no secret by name, yet
            # writing them is a way in; the folder the work needs is narrower
            raise DirectoryRefused(
                f"{real} holds your home folder (its keys and shell start-up files), so it "
                "cannot be added; add the folder you need inside it"
            )
        with self._lock:
            if real not in self._paths:
                self._paths.append(real)
        return real

    def paths(self) -> tuple[Path, ...]:
        with self._lock:
            return tuple(self._paths)

    def __iter__(self) -> Iterator[Path]:
        return iter(self.paths())

    def __len__(self) -> int:
        return len(self.paths())

    def __bool__(self) -> bool:
        return bool(self.paths())

    def __repr__(self) -> str:
        return f"AddedDirectories({[str(p) for p in self.paths()]!r})"
