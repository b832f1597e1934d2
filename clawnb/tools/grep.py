"""GrepTool (book ch11): search file contents with a regular expression.

The book's contract: ``pattern`` (regex, required), ``path`` (file or directory, optional) and
``include`` (a glob on the file *name*, e.g. ``*.rs``); each match is ``{path}:{line}: {text}``
(1-based, a space after the second colon); nothing found gives ``no matches found``; a missing
path gives ``path does not exist: …``; a bad regex ``invalid regex pattern: …``.

How it searches:

1. The file list comes from the same walk as :class:`~clawnb.tools.glob.GlobTool` — hidden
   directories skipped, ``.gitignore`` honoured, symlinked directories not entered — sorted by
   path, so the output order never depends on the file system. A directory search never
   opens a secret file (``.env``, keys), a symlink leading out of the workspace or a file
   with several hard links (:func:`searchable`): no match/no-match oracle, no escape.
2. The files are then searched by the system ``grep`` (``grep -P`` in the C locale, several
   processes in parallel, each killed if the call is cancelled) when one with PCRE support is
   on ``PATH``; otherwise by a pure-Python scanner. Both read bytes, treat files containing NUL
   as binary (skipped), use Perl-style regex semantics with ASCII ``\\d \\w \\s``, and feed the
   same formatter, so the output is identical whichever engine ran (tested on both).
3. Output is capped (default 200 lines, long lines cut at 500 characters) with a final
   ``… and N more matches`` line.

Known edge: a file whose first NUL byte lies far into it (past grep's first buffer) may show
its early matches with system grep and none with the Python scanner.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from ..secrets import is_secret_file
from ..types import ToolDefinition
from .base import BaseTool, ToolError, optional_str, require_str, resolve_path
from .glob import GlobError, cap_lines, compile_glob, sort_key, walk_files

__all__ = ["GrepTool", "searchable", "system_grep"]

# Lookarounds and absolute anchors behave differently on a whole file than on one line, so
# for those patterns the Python scanner skips its whole-file pre-check.
_LINE_SENSITIVE = re.compile(rb"\(\?<|\(\?!|\(\?=|\\[AZzG]")

# Bytes of file names per grep invocation (well under the kernel's argument limit).
_BATCH_ARG_BYTES = 256 * 1024


@lru_cache(maxsize=1)
def system_grep() -> str | None:
    """Path of a ``grep`` that supports ``-P`` (PCRE), or ``None``."""
    exe = shutil.which("grep")
    if exe is None:
        return None
    try:
        probe = subprocess.run(
            [exe, "-P", "-e", r"\d", os.devnull],
            capture_output=True,
            env={**os.environ, "LC_ALL": "C"},
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return exe if probe.returncode == 1 else None  # 1 = ran fine, found nothing


Match = tuple[int, int, bytes]  # (file index, line number, raw line)


def _is_binary(data: bytes) -> bool:
    return b"\x00" in data


def python_search(regex: re.Pattern[bytes], files: list[str]) -> list[Match]:
    """Search ``files`` line by line, in order, skipping unreadable and binary files."""
    whole_file_check = not _LINE_SENSITIVE.search(regex.pattern)
    found: list[Match] = []
    for index, path in enumerate(files):
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if whole_file_check and regex.search(data) is None:
            continue  # the common case: one C-level scan rules the file out
        if _is_binary(data):
            continue
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        for number, line in enumerate(lines, 1):
            if regex.search(line) is not None:
                found.append((index, number, line))
    return found


async def grep_search(exe: str, pattern: str, files: list[str]) -> list[Match] | None:
    """Search ``files`` with the system grep (parallel batches, in order).

    Returns ``None`` when grep rejected the pattern, so the caller can use the Python scanner.
    """
    batches: list[tuple[int, list[str]]] = []
    start, size = 0, 0
    for i, path in enumerate(files):
        size += len(path) + 1
        if size > _BATCH_ARG_BYTES:
            batches.append((start, files[start:i]))
            start, size = i, len(path) + 1
    if start < len(files):
        batches.append((start, files[start:]))
    limit = asyncio.Semaphore(max(1, os.cpu_count() or 1))
    env = {**os.environ, "LC_ALL": "C"}

    async def run(offset: int, batch: list[str]) -> list[Match] | None:
        async with limit:
            proc = await asyncio.create_subprocess_exec(
                exe,
                "-P",
                "-n",
                "-H",
                "-Z",
                "-I",
                "-s",
                "-e",
                pattern,
                "--",
                *batch,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
            )
            try:
                out, err = await proc.communicate()
            except BaseException:
                if proc.returncode is None:
                    proc.kill()
                    await proc.wait()
                raise
        if proc.returncode == 2 and not _pattern_ok(exe, pattern):
            return None
        index = {path: offset + k for k, path in enumerate(batch)}
        found: list[Match] = []
        for record in out.split(b"\n"):
            if not record:
                continue
            name, _, rest = record.partition(b"\x00")
            number, _, line = rest.partition(b":")
            file_index = index.get(os.fsdecode(name))
            if file_index is None or not number.isdigit():
                continue
            found.append((file_index, int(number), line))
        return found

    results = await asyncio.gather(*(run(offset, batch) for offset, batch in batches))
    if any(r is None for r in results):
        return None
    return [m for r in results for m in r]  # type: ignore[union-attr]


@lru_cache(maxsize=64)
def _pattern_ok(exe: str, pattern: str) -> bool:
    probe = subprocess.run(
        [exe, "-P", "-e", pattern, os.devnull],
        capture_output=True,
        env={**os.environ, "LC_ALL": "C"},
        timeout=5,
    )
    return probe.returncode != 2


def searchable(path: str, workspace: str) -> bool:
    """May a directory search open ``path``? Not a secret file (``.env``, keys: a match/no-match
    answer would leak them bit by bit), not a symlink that leads out of ``workspace``, and not
    a file with several hard links (it may be a file outside). This is the file-selection rule
    every search engine shares; a secret file named directly goes through the gate instead."""
    if is_secret_file(path):
        return False
    try:
        if os.path.islink(path):
            real = os.path.realpath(path)
            if is_secret_file(real) or os.path.commonpath([real, workspace]) != workspace:
                return False
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(st.st_mode) and st.st_nlink > 1)


class GrepTool(BaseTool):
    """Search file contents with a regex; ``engine`` is ``"auto"`` (system grep when it can,
    else Python), ``"grep"`` or ``"python"``."""

    read_only = True
    concurrency_safe = True

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None = None,
        *,
        max_results: int | None = 200,
        max_line_chars: int = 500,
        engine: str = "auto",
    ) -> None:
        if engine not in ("auto", "grep", "python"):
            raise ValueError(f"engine must be 'auto', 'grep' or 'python', not {engine!r}")
        self.workspace = workspace
        self.max_results = max_results
        self.max_line_chars = max_line_chars
        self.engine = engine
        self.last_engine: str | None = None  # which engine answered the last call
        self.definition = (
            ToolDefinition("grep", "Search file contents using a regex pattern")
            .param("pattern", "string", "Regex pattern to search for", True)
            .param(
                "path",
                "string",
                "File or directory to search in (default: current directory)",
                False,
            )
            .param("include", "string", 'Glob pattern to filter files (e.g. "*.rs")', False)
        )

    async def call(self, args: Any) -> str:
        pattern = require_str(args, "pattern")
        path = optional_str(args, "path")
        include = optional_str(args, "include")
        lines = await self.matches(pattern, path, include)
        if not lines:
            return "no matches found"
        return cap_lines(lines, self.max_results, "matches")

    async def matches(
        self, pattern: str, path: str | None = None, include: str | None = None
    ) -> list[str]:
        """Every match line (uncapped), in file order then line order."""
        try:
            regex = re.compile(pattern.encode("utf-8"), re.MULTILINE)
        except re.error as exc:
            raise ToolError(f"invalid regex pattern: {exc}") from None
        include_rx = None
        if include:
            try:
                include_rx = compile_glob(include)
            except GlobError as exc:
                raise ToolError(f"invalid include pattern: {exc}") from None
        shown_files = await asyncio.to_thread(self._files, path, include, include_rx)
        real = [real for _, real in shown_files]
        found: list[Match] | None = None
        exe = system_grep() if self.engine in ("auto", "grep") else None
        if self.engine == "grep" and exe is None:
            raise ToolError("no grep with -P support found on PATH")
        if exe is not None and real:
            found = await grep_search(exe, pattern, real)
            self.last_engine = "grep"
        if found is None:
            found = await asyncio.to_thread(python_search, regex, real)
            self.last_engine = "python"
        return list(self._format(found, [shown for shown, _ in shown_files]))

    def _files(
        self, path: str | None, include: str | None, include_rx: re.Pattern[str] | None
    ) -> list[tuple[str, str]]:
        """(shown path, real path) of every file to search, sorted."""
        shown_base = path if path else ""
        target = resolve_path(path if path else ".", self.workspace)
        if target.is_file():
            return [(shown_base, str(target))]
        if not target.is_dir():
            raise ToolError(f"path does not exist: {path if path else target}")
        by_name = include is not None and "/" not in include
        name_filter = include_rx.match if include_rx is not None and by_name else None
        rels = walk_files(target, name_filter=name_filter)
        if include_rx is not None and not by_name:
            rels = [rel for rel in rels if include_rx.match(rel)]
        ordered = sorted(rels, key=sort_key)
        root = os.path.abspath(target)
        inside = os.path.realpath(self.workspace if self.workspace is not None else os.getcwd())
        return [
            (os.path.join(shown_base, rel) if shown_base else rel, os.path.join(root, rel))
            for rel in ordered
            if searchable(os.path.join(root, rel), inside)
        ]

    def _format(self, found: list[Match], shown: list[str]) -> Iterable[str]:
        found.sort(key=lambda m: (m[0], m[1]))
        for index, number, raw in found:
            text = raw.decode("utf-8", errors="replace").removesuffix("\r")
            if len(text) > self.max_line_chars:
                text = text[: self.max_line_chars] + "…"
            yield f"{shown[index]}:{number}: {text}"
