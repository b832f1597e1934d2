"""Project instructions (book ch8/ch18): the CLAUDE.md / AGENTS.md files a project carries.

:class:`InstructionLoader` walks from the workspace up to the filesystem root and collects
every instruction file it finds. Files nearer the root come first, so a repository-wide file
sets the scene and a sub-directory's file refines it (the later text wins where they differ).
Within one directory the files keep the order of the name list. Each file becomes a section::

    # Instructions from /repo/CLAUDE.md

    <content>

and sections are joined with ``---`` lines. Empty files are skipped; with nothing found
:meth:`InstructionLoader.load` returns ``None``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

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

    @classmethod
    def default_files(cls) -> InstructionLoader:
        """``CLAUDE.md``, ``AGENTS.md`` and ``.claw/instructions.md``."""
        return cls(DEFAULT_INSTRUCTION_FILES)

    def discover(self, start: str | os.PathLike[str]) -> list[Path]:
        """Instruction files from ``start`` up to the root, root first."""
        here = Path(start).absolute()
        levels: list[list[Path]] = []
        for directory in (here, *here.parents):
            found = [directory / name for name in self.file_names if (directory / name).is_file()]
            if found:
                levels.append(found)
        return [path for level in reversed(levels) for path in level]

    def load(self, start: str | os.PathLike[str]) -> str | None:
        """The files' text as ``# Instructions from {path}`` sections, or ``None``."""
        sections = []
        for path in self.discover(start):
            try:
                content = path.read_text(encoding="utf-8", errors="replace").strip()
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
