"""Project instructions (book ch8/ch18): the CLAUDE.md / AGENTS.md files a project carries.

:class:`InstructionLoader` walks from the workspace up to the filesystem root and collects
every instruction file it finds. Files nearer the root come first, so a repository-wide file
sets the scene and a sub-directory's file refines it (the later text wins where they differ).
Within one directory the files keep the order of the name list. Each file becomes a section::

    # Instructions from /repo/CLAUDE.md

    <content>

and sections are joined with ``---`` lines. Empty files are skipped; with nothing found
:meth:`InstructionLoader.load` returns ``None``.

The files come from a repository someone else wrote, and they go into the system prompt of
the very first request, before any tool call or question. So each is read with
:func:`clawnb.control.files.read_workspace_text`: it must stay inside the directory it was
found in (``AGENTS.md -> /proc/self/environ`` or ``CLAUDE.md -> ../../.ssh/id_rsa`` is not
followed; a link to a file beside it is), be a regular file (a FIFO, a socket or a device is
refused before it is opened, so nothing blocks) and hold at most 256 KiB. A refused file
keeps its place as a one-line section saying why it was not loaded — the model can tell the
person, and the person can see it in the prompt — and :attr:`InstructionLoader.skipped`
lists it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .control.files import INSTRUCTION_MAX_BYTES, read_workspace_text
from .errors import UnsafeFileError

__all__ = ["DEFAULT_INSTRUCTION_FILES", "InstructionLoader", "PREAMBLE"]

DEFAULT_INSTRUCTION_FILES = ["CLAUDE.md", "AGENTS.md", ".claw/instructions.md"]

PREAMBLE = (
    "The following project instructions were loaded automatically. Follow them carefully:\n\n"
)

_SEPARATOR = "\n\n---\n\n"


class InstructionLoader:
    """Finds and concatenates instruction files named ``file_names``."""

    def __init__(self, file_names: Iterable[str]) -> None:
        self.file_names = list(file_names)
        # (file, reason) for each file the last load() refused; a front end may show them
        self.skipped: list[tuple[Path, str]] = []

    @classmethod
    def default_files(cls) -> InstructionLoader:
        """``CLAUDE.md``, ``AGENTS.md`` and ``.claw/instructions.md``."""
        return cls(DEFAULT_INSTRUCTION_FILES)

    def discover(self, start: str | os.PathLike[str]) -> list[Path]:
        """Instruction files from ``start`` up to the root, root first."""
        return [path for _directory, path in self._found(start)]

    def _found(self, start: str | os.PathLike[str]) -> list[tuple[Path, Path]]:
        """(the directory the walk was in, the file found there), root first. The directory
        is what the file must stay inside: ``/repo`` for ``/repo/CLAUDE.md`` and for
        ``/repo/.claw/instructions.md`` alike, so a linked ``.claw`` that leads elsewhere is
        as much out as a linked file."""
        here = Path(start).absolute()
        levels: list[list[tuple[Path, Path]]] = []
        for directory in (here, *here.parents):
            found = [
                (directory, directory / name)
                for name in self.file_names
                if (directory / name).is_file()  # stat only: nothing is opened here
            ]
            if found:
                levels.append(found)
        return [pair for level in reversed(levels) for pair in level]

    def load(self, start: str | os.PathLike[str]) -> str | None:
        """The files' text as ``# Instructions from {path}`` sections, or ``None``.

        A file that is not safe to read (see the module docstring) becomes a one-line
        ``# Instructions from {path} (not loaded)`` section with the reason."""
        sections = []
        self.skipped = []
        for directory, path in self._found(start):
            try:
                content = read_workspace_text(
                    path, root=directory, max_bytes=INSTRUCTION_MAX_BYTES
                ).strip()
            except UnsafeFileError as exc:
                self.skipped.append((path, str(exc)))
                sections.append(f"# Instructions from {path} (not loaded)\n\n{exc}.")
                continue
            except OSError:
                continue  # unreadable (permissions, vanished): not worth failing the session
            if content:
                sections.append(f"# Instructions from {path}\n\n{content}")
        return _SEPARATOR.join(sections) if sections else None

    def system_prompt_section(self, start: str | os.PathLike[str]) -> str | None:
        """:meth:`load` with the preamble that tells the model to follow it, or ``None``."""
        content = self.load(start)
        return None if content is None else PREAMBLE + content

    def __repr__(self) -> str:
        return f"InstructionLoader({self.file_names!r})"
