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

Beyond the book (clawnb's sessions turn these on; the course's loader is the book's):

* ``user_file``: the person's own instructions (``instructions.md`` in clawnb's user config
  directory), appended **last** — root > project > user, so the person's own preferences
  have the last word;
* ``includes=True``: ``@path`` in a file (at the start of a line or after a space, outside
  code spans and fences) is replaced by that file, relative to the including file — inside
  the directory the including file was found in (the user file: its own folder), at most
  :data:`MAX_INCLUDE_DEPTH` deep, each file once, each under the size cap. A reference that
  names no file stays as written (``@here`` in prose, an e-mail address); one that is refused
  becomes ``[@path not included: why]``;
* :attr:`InstructionLoader.sources` lists every file that went into the prompt, includes
  too (``%claw config`` / ``/config`` show them).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from .control.files import INSTRUCTION_MAX_BYTES, read_workspace_text
from .errors import UnsafeFileError

__all__ = ["DEFAULT_INSTRUCTION_FILES", "InstructionLoader", "PREAMBLE", "USER_INSTRUCTIONS"]

DEFAULT_INSTRUCTION_FILES = ["CLAUDE.md", "AGENTS.md", ".claw/instructions.md"]
USER_INSTRUCTIONS = "instructions.md"  # in clawnb's user config directory

PREAMBLE = (
    "The following project instructions were loaded automatically. Follow them carefully:\n\n"
)

_SEPARATOR = "\n\n---\n\n"

MAX_INCLUDE_DEPTH = 5
MAX_INCLUDES = 50  # files included in all, so a wide fan of references cannot flood the prompt
# @path: at a line's start or after whitespace; a path-like word (a "/" or an extension)
_INCLUDE = re.compile(r"(?<![^\s(])@((?:~/|\.{1,2}/|/)?[\w.\-/]*[\w\-](?:\.[\w]+|/[\w.\-]+))")
_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"`[^`]*`")


class InstructionLoader:
    """Finds and concatenates instruction files named ``file_names``."""

    def __init__(
        self,
        file_names: Iterable[str],
        *,
        user_file: str | os.PathLike[str] | None = None,
        includes: bool = False,
    ) -> None:
        self.file_names = list(file_names)
        self.user_file = Path(user_file) if user_file is not None else None
        self.includes = includes
        # (file, reason) for each file the last load() refused; a front end may show them
        self.skipped: list[tuple[Path, str]] = []
        # every file the last load() put into the prompt, in order, includes too
        self.sources: list[Path] = []

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
        self.sources = []
        found = self._found(start)
        if self.user_file is not None and self.user_file.is_file():
            found.append((self.user_file.parent, self.user_file))  # the person's: last
        seen: set[Path] = set()
        for directory, path in found:
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
            self.sources.append(path)
            seen.add(path.absolute())
            if content and self.includes:
                content = self._expand(content, path.parent, directory, seen, 1)
            if content:
                sections.append(f"# Instructions from {path}\n\n{content}")
        return _SEPARATOR.join(sections) if sections else None

    def _expand(self, text: str, here: Path, root: Path, seen: set[Path], depth: int) -> str:
        """``text`` with its ``@path`` references replaced (see the module docstring)."""
        out: list[str] = []
        fenced = False
        for line in text.split("\n"):
            if _FENCE.match(line):
                fenced = not fenced
            if fenced or "@" not in line:
                out.append(line)
                continue
            spans = [m.span() for m in _CODE_SPAN.finditer(line)]

            def one(match: re.Match[str], spans: list[tuple[int, int]] = spans) -> str:
                if any(a <= match.start() < b for a, b in spans):
                    return match.group(0)
                return self._include(match.group(1), here, root, seen, depth) or match.group(0)

            out.append(_INCLUDE.sub(one, line))
        return "\n".join(out)

    def _include(self, ref: str, here: Path, root: Path, seen: set[Path], depth: int) -> str | None:
        """The referenced file's text, a ``[@ref not included: why]`` note, or ``None`` when
        ``ref`` names no file (then it is left as written)."""
        target = Path(os.path.expanduser(ref)) if ref.startswith("~/") else here / ref
        if not target.exists():  # names no file: left as written (a FIFO exists, and is refused)
            return None
        key = target.absolute()
        if key in seen:
            return f"[@{ref} not included: it is already in the instructions]"
        if depth > MAX_INCLUDE_DEPTH:
            return f"[@{ref} not included: more than {MAX_INCLUDE_DEPTH} includes deep]"
        if len(self.sources) >= MAX_INCLUDES:
            return f"[@{ref} not included: more than {MAX_INCLUDES} files in all]"
        try:
            content = read_workspace_text(target, root=root, max_bytes=INSTRUCTION_MAX_BYTES)
        except UnsafeFileError as exc:
            self.skipped.append((target, str(exc)))
            return f"[@{ref} not included: {exc}]"
        except OSError as exc:
            return f"[@{ref} not included: {exc.strerror or exc}]"
        seen.add(key)
        self.sources.append(target)
        return self._expand(content.strip(), target.parent, root, seen, depth + 1)

    def system_prompt_section(self, start: str | os.PathLike[str]) -> str | None:
        """:meth:`load` with the preamble that tells the model to follow it, or ``None``."""
        content = self.load(start)
        return None if content is None else PREAMBLE + content

    def __repr__(self) -> str:
        return f"InstructionLoader({self.file_names!r})"
