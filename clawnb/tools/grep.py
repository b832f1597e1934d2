"""GrepTool (book ch11): search file contents with a regular expression.

The book's contract: ``pattern`` (regex, required), ``path`` (file or directory, optional) and
``include`` (a glob on the file *name*, e.g. ``*.rs``); each match is ``{path}:{line}: {text}``
(1-based, a space after the second colon); nothing found gives ``no matches found``; a missing
path gives ``path does not exist: …``; a bad regex ``invalid regex pattern: …``.

How it searches — which files (the selection) and how they are searched (the backend) are kept
apart, so every rule about which files a search may open lives in one place:

1. Selection: the same walk as :class:`~clawnb.tools.glob.GlobTool` — hidden directories
   skipped, ``.gitignore`` honoured, symlinks not followed (a symlinked file is searched only
   when named directly, as ripgrep and ``git grep`` do) — sorted by path, so the output order
   never depends on the file system. A directory search never answers from a secret file
   (``.env``, keys) or a file with several hard links (:func:`searchable`): no match/no-match
   oracle, no escape.
2. Backend: ripgrep (``rg -P``) when it is installed, else the system ``grep -P`` (several
   processes in parallel), else a pure-Python scanner. Every backend reads bytes, treats
   files containing NUL as binary (skipped), uses Perl-style regex semantics with ASCII
   ``\\d \\w \\s``, and feeds the same formatter, so the output is identical whichever engine
   ran (tested on all three). Search processes are killed if the call is cancelled.
   ripgrep walks the tree itself (that is where its speed comes from), with flags that make
   its walk a superset of the selection; each file it reports is then put through the
   selection's rules (:meth:`GrepTool._selected`) before anything is shown.
3. Output is capped (default 200 lines, long lines cut at 500 characters) with a final
   ``… and N more matches`` line.

Known edge: a file whose first NUL byte lies far into it (past a tool's first buffer) may show
its early matches with rg or grep and none with the Python scanner.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
import subprocess
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..control.secrets import is_secret_file
from ..types import JSON, ToolDefinition
from .base import ToolError, optional_str, require_str, resolve_path
from .glob import (
    FileSearchTool,
    GitIgnore,
    GlobError,
    cap_lines,
    compile_glob,
    iter_files,
    sort_key,
)

__all__ = ["GrepTool", "rg_search", "searchable", "system_grep", "system_rg"]

# Lookarounds and absolute anchors behave differently on a whole file than on one line, so
# for those patterns the Python scanner skips its whole-file pre-check.
_LINE_SENSITIVE = re.compile(rb"\(\?<|\(\?!|\(\?=|\\[AZzG]")

# A matching line is kept up to this many bytes (the output shows 500 characters of it): a
# match in a minified or single-line multi-GB file must not hold the whole line in memory.
_MAX_RECORD_BYTES = 8 * 1024
# Files up to this size are read whole (one fast C-level scan); bigger ones are streamed.
_WHOLE_FILE_BYTES = 16 * 1024 * 1024

# Bytes of file names per grep invocation (well under the kernel's argument limit).
_BATCH_ARG_BYTES = 256 * 1024


def _search_env() -> dict[str, str]:
    """The environment of every search process: the scrubbed one (no keys, nothing
    secret-looking — :func:`clawnb.control.process.child_env`), in the C locale."""
    from ..control.process import child_env

    return {**child_env(), "LC_ALL": "C"}


# (path, size, mtime) -> does it run -P
_pcre_probes: dict[tuple[str, int, int], bool] = {}


def _with_pcre(
    name: str, *flags: str, workspace: str | os.PathLike[str] | None = None
) -> str | None:
    """Path of the ``name`` program if it runs ``-P`` (Perl-style regexes), else ``None`` —
    found in a trusted place only, never in ``workspace`` (a planted ``.venv/bin/rg`` is not
    run: :func:`clawnb.control.executables.trusted_executable`); the probe is cached per
    file version."""
    from ..control.executables import trusted_executable

    exe = trusted_executable(name, workspace=workspace)
    if exe is None:
        return None
    try:
        st = os.stat(exe)
    except OSError:
        return None
    key = (exe, st.st_size, st.st_mtime_ns)
    if key not in _pcre_probes:
        try:
            probe = subprocess.run(
                [exe, *flags, "-P", "-e", r"\d", os.devnull],
                capture_output=True,
                env=_search_env(),
                stdin=subprocess.DEVNULL,
                timeout=5,
            )
            _pcre_probes[key] = probe.returncode == 1  # 1 = ran fine, found nothing
        except (OSError, subprocess.SubprocessError):
            _pcre_probes[key] = False
    return exe if _pcre_probes[key] else None


def system_grep(workspace: str | os.PathLike[str] | None = None) -> str | None:
    """Path of a trusted ``grep`` that supports ``-P`` (PCRE), or ``None``."""
    return _with_pcre("grep", workspace=workspace)


def system_rg(workspace: str | os.PathLike[str] | None = None) -> str | None:
    """Path of a trusted ripgrep that supports ``-P`` (PCRE2), or ``None``."""
    return _with_pcre("rg", "--no-config", workspace=workspace)


Match = tuple[int, int, bytes]  # (file index, line number, raw line)


def _is_binary(data: bytes) -> bool:
    return b"\x00" in data


def python_search(regex: re.Pattern[bytes], files: list[str]) -> list[Match]:
    """Search ``files`` line by line, in order, skipping unreadable and binary files. A file
    over ``_WHOLE_FILE_BYTES`` is streamed line by line (long lines kept up to
    ``_MAX_RECORD_BYTES``), so memory stays bounded whatever the file."""
    whole_file_check = not _LINE_SENSITIVE.search(regex.pattern)
    found: list[Match] = []
    for index, path in enumerate(files):
        try:
            with open(path, "rb") as fh:
                data = fh.read(_WHOLE_FILE_BYTES + 1)
                if len(data) > _WHOLE_FILE_BYTES:
                    if not _is_binary(data[:8192]):
                        fh.seek(0)
                        found.extend((index, n, line) for n, line in _stream_matches(regex, fh))
                    continue
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
                found.append((index, number, line[:_MAX_RECORD_BYTES]))
    return found


def _stream_matches(regex: re.Pattern[bytes], fh: Any) -> Iterable[tuple[int, bytes]]:
    """Matching lines of a big file, read one bounded line at a time (a line longer than
    ``_MAX_RECORD_BYTES`` is matched and kept by its first part only)."""
    number = 0
    while True:
        line = fh.readline(_MAX_RECORD_BYTES)
        if not line:
            return
        number += 1
        if not line.endswith(b"\n"):
            while True:  # skip the rest of an over-long line
                rest = fh.readline(_MAX_RECORD_BYTES)
                if not rest or rest.endswith(b"\n"):
                    break
        line = line.rstrip(b"\n")
        if b"\x00" in line:
            return  # binary after all: the other engines skip such files too
        if regex.search(line) is not None:
            yield number, line


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
    env = _search_env()

    async def run(offset: int, batch: list[str]) -> list[Match] | None:
        async with limit:
            argv = [exe, "-P", "-n", "-H", "-Z", "-I", "-s", "-e", pattern, "--", *batch]
            returncode, out = await _run_search(argv, env)
        if returncode == 2 and not _pattern_ok(exe, pattern, "-P"):
            return None
        index = {path: offset + k for k, path in enumerate(batch)}
        return [
            (index[name], number, line)
            for name, number, line in _parse_records(out)
            if name in index
        ]

    results = await asyncio.gather(*(run(offset, batch) for offset, batch in batches))
    if any(r is None for r in results):
        return None
    return [m for r in results for m in r]  # type: ignore[union-attr]


async def _run_search(
    argv: list[str], env: dict[str, str], cwd: str | None = None
) -> tuple[int, bytes]:
    """Run one search process to the end: its exit status and output. The output is read as
    it comes and each record (one matching line) is cut to ``_MAX_RECORD_BYTES``, so a
    match in a huge single-line file costs no more memory than a short one. Cancelling the
    call kills the process."""
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    assert proc.stdout is not None
    out = bytearray()
    kept = 0  # bytes of the current record kept so far
    try:
        while True:
            chunk = await proc.stdout.read(1 << 16)
            if not chunk:
                break
            for piece in chunk.splitlines(keepends=True):
                ends = piece.endswith(b"\n")
                body = piece[:-1] if ends else piece
                room = _MAX_RECORD_BYTES - kept
                if room > 0:
                    out += body[:room]
                    kept += min(room, len(body))
                if ends:  # the record is complete (cut or not): terminate it once
                    out += b"\n"
                    kept = 0
        await proc.wait()
    except BaseException:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        raise
    return proc.returncode if proc.returncode is not None else 2, bytes(out)


def _parse_records(out: bytes) -> Iterable[tuple[str, int, bytes]]:
    """``name NUL number : line`` records (grep ``-Z``, rg ``--null``) → (name, number, line)."""
    for record in out.split(b"\n"):
        name, nul, rest = record.partition(b"\x00")
        number, _, line = rest.partition(b":")
        if nul and number.isdigit():
            yield os.fsdecode(name), int(number), line


@lru_cache(maxsize=64)
def _pattern_ok(exe: str, pattern: str, *flags: str) -> bool:
    probe = subprocess.run(
        [exe, *flags, "-e", pattern, os.devnull],
        capture_output=True,
        env=_search_env(),
        stdin=subprocess.DEVNULL,
        timeout=5,
    )
    return probe.returncode != 2


_REGEX_SYNTAX = re.compile(r"[.^$*+?{}\[\]\\|()]")

# Regexes built only from these pieces select the same lines in ripgrep's own engine as in
# Python's (ASCII classes, no lookaround, no backreferences, no inline flags, no nested or
# set-operation classes): plain characters, escaped punctuation, the \d \w \s \b classes and
# their negations, . | ( (?: ) * + ? and {m} {m,} {m,n}, and simple [...] classes; ^ and $
# only where the whole pattern starts and ends (elsewhere, as in ``$^``, the engines differ on
# empty lines).
_PORTABLE_REGEX = re.compile(
    r"""(?:
        [^\\\[\](){}.^$*+?|]          # a plain character
      | \\[dDwWsSbB.^$*+?{}()\[\]|\\-]  # an escape every engine reads alike
      | [.|*+?]
      | \(\?:  | \((?!\?)  | \)         # groups, but no (?flags), lookaround or names
      | \{\d+(?:,\d*)?\}
      | \[\^?(?:[^\\\[\]&~-]|\\[dDwWsS.\\\]\[-]|(?<=[^\[^])-(?=[^\]]))+\]
    )*""",
    re.VERBOSE,
)


def _rg_engine(pattern: str) -> tuple[str, ...]:
    """ripgrep's flags for ``pattern``: its own engine when the answer cannot differ (a plain
    string, or an ASCII regex of portable pieces — most searches, and several times faster),
    else PCRE2, whose semantics are grep -P's and close to Python's."""
    core = pattern.removeprefix("^")
    if core.endswith("$") and not core.endswith("\\$"):
        core = core[:-1]
    if pattern.isascii() and _PORTABLE_REGEX.fullmatch(core):
        if not _REGEX_SYNTAX.search(pattern):
            return ("--fixed-strings",)
        return ()
    return ("--pcre2",)


# ripgrep, set up to walk a superset of the selection and to read bytes the way the other
# engines do. What it cannot be told (ignore files above the search root, the repository's
# info/exclude, secret files) :class:`_Selection` applies to each file it reports.
_RG_FLAGS = (
    "--no-config",  # a user's ripgreprc must not change what the model sees
    "--no-unicode",  # byte semantics, ASCII classes: like grep -P in the C locale and Python
    "--encoding=none",  # no BOM sniffing or transcoding
    "--null",
    "--line-number",
    "--with-filename",
    "--no-heading",
    "--color=never",
    "--no-messages",
    "--hidden",  # hidden files are searched …
    "--glob=!.*/",  # … hidden directories (.git included) are not
    "--no-require-git",  # .gitignore counts outside a repository too
    "--no-ignore-parent",
    "--no-ignore-global",
    "--no-ignore-dot",
    "--no-ignore-exclude",
)


async def rg_search(exe: str, pattern: str, root: str) -> dict[str, list[tuple[int, bytes]]] | None:
    """Search the tree under ``root`` with ripgrep: ``{relative path: [(line number, line)]}``.

    Returns ``None`` when ripgrep rejected the pattern, so the caller can use another engine.
    The paths are everything ripgrep's walk found; put them through the selection rules.
    """
    flags = (*_RG_FLAGS, *_rg_engine(pattern))
    env = _search_env()
    returncode, out = await _run_search([exe, *flags, "-e", pattern, "./"], env, root)
    if returncode == 2 and not _pattern_ok(exe, pattern, *flags):
        return None
    found: dict[str, list[tuple[int, bytes]]] = {}
    for name, number, line in _parse_records(out):
        found.setdefault(name.removeprefix("./"), []).append((number, line))
    return found


class _Selection:
    """The walk's rules (:func:`~clawnb.tools.glob.iter_files` plus :func:`searchable`) for one
    relative path at a time — for a backend that walked the tree by itself. Ignore files are
    loaded in the same order the walk loads them, so a path passes exactly when the walk
    would have listed it."""

    def __init__(
        self,
        root: str,
        include_rx: re.Pattern[str] | None,
        by_name: bool,
        workspace: str,
    ) -> None:
        self.root = root
        self.include_rx = include_rx
        self.by_name = by_name
        self.workspace = workspace
        self.ignore = GitIgnore(Path(root))
        self._loaded: set[str] = set()

    def _enter(self, directory: str) -> None:
        if directory not in self._loaded:
            self._loaded.add(directory)
            self.ignore.add_dir(directory)

    def __call__(self, rel: str) -> bool:
        parts = rel.split("/")
        if any(not part or part[0] == "." for part in parts[:-1]):
            return False
        if self.include_rx is not None:
            if not self.include_rx.match(parts[-1] if self.by_name else rel):
                return False
        directory = self.root
        self._enter(directory)
        for part in parts[:-1]:
            directory = os.path.join(directory, part)
            if self.ignore.ignored(directory, True):
                return False
            self._enter(directory)
        path = os.path.join(self.root, rel)
        if self.ignore.ignored(path, False) or os.path.islink(path):
            return False
        return searchable(path, self.workspace)


def searchable(path: str, workspace: str) -> bool:
    """May a directory search answer from ``path``? Not a secret file (``.env``, keys: a
    match/no-match answer would leak them bit by bit), not a symlink that leads out of
    ``workspace``, and not a file with several hard links (it may be a file outside). This is
    the file-selection rule every search engine shares (a directory search follows no
    symlink at all, see the module doc); a secret file named directly goes through the gate
    instead."""
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


_ENGINES = ("auto", "rg", "grep", "python")


class GrepTool(FileSearchTool):
    """Search file contents with a regex; ``engine`` is ``"auto"`` (ripgrep when installed,
    else the system grep when it can, else Python), ``"rg"``, ``"grep"`` or ``"python"``."""

    definition = (
        ToolDefinition("grep", "Search file contents using a regex pattern")
        .param("pattern", "string", "Regex pattern to search for", required=True)
        .param("path", "string", "File or directory to search in (default: current directory)")
        .param("include", "string", 'Glob pattern to filter files (e.g. "*.rs")')
    )

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None = None,
        *,
        max_results: int | None = 200,
        max_line_chars: int = 500,
        engine: str = "auto",
    ) -> None:
        if engine not in _ENGINES:
            raise ValueError(f"engine must be one of {', '.join(_ENGINES)}, not {engine!r}")
        super().__init__(workspace, max_results=max_results)
        self.max_line_chars = max_line_chars
        self.engine = engine
        self.last_engine: str | None = None  # which engine answered the last call

    async def call(self, args: JSON) -> str:
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
        inside = self._inside()
        if self.engine == "rg" and system_rg(inside) is None:
            raise ToolError("ripgrep (rg) with -P support is not installed")
        if self.engine == "grep" and system_grep(inside) is None:
            raise ToolError("no grep with -P support found on PATH")
        target = resolve_path(path if path else ".", self.workspace)
        rg = system_rg(inside) if self.engine in ("auto", "rg") else None
        if rg is not None and target.is_dir():
            lines = await self._rg_matches(
                rg, pattern, str(target), path or "", include, include_rx
            )
            if lines is not None:
                return lines
        shown_files = await asyncio.to_thread(self._files, path, include, include_rx)
        real = [real for _, real in shown_files]
        found: list[Match] | None = None
        exe = system_grep(inside) if self.engine != "python" else None
        if exe is not None and real:
            found = await grep_search(exe, pattern, real)
            self.last_engine = "grep"
        if found is None:
            found = await asyncio.to_thread(python_search, regex, real)
            self.last_engine = "python"
        return list(self._format(found, [shown for shown, _ in shown_files]))

    async def _rg_matches(
        self,
        exe: str,
        pattern: str,
        target: str,
        shown_base: str,
        include: str | None,
        include_rx: re.Pattern[str] | None,
    ) -> list[str] | None:
        """ripgrep walks and searches; its files go through the selection rules, then the
        same ordering and formatter as the other engines. ``None``: rg refused the pattern."""
        found = await rg_search(exe, pattern, target)
        if found is None:
            return None
        root = os.path.abspath(target)
        by_name = include is not None and "/" not in include
        selected = _Selection(root, include_rx, by_name, self._inside())
        rels = sorted((rel for rel in found if selected(rel)), key=sort_key)
        shown = [os.path.join(shown_base, rel) if shown_base else rel for rel in rels]
        matches = [(i, number, line) for i, rel in enumerate(rels) for number, line in found[rel]]
        self.last_engine = "rg"
        return list(self._format(matches, shown))

    def _inside(self) -> str:
        return os.path.realpath(self.workspace if self.workspace is not None else os.getcwd())

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
        rels = list(iter_files(target, name_filter=name_filter))
        if include_rx is not None and not by_name:
            rels = [rel for rel in rels if include_rx.match(rel)]
        ordered = sorted(rels, key=sort_key)
        root = os.path.abspath(target)
        inside = self._inside()
        return [
            (os.path.join(shown_base, rel) if shown_base else rel, os.path.join(root, rel))
            for rel in ordered
            if not os.path.islink(os.path.join(root, rel))
            and searchable(os.path.join(root, rel), inside)
        ]

    def _format(self, found: list[Match], shown: list[str]) -> Iterable[str]:
        found.sort(key=lambda m: (m[0], m[1]))
        for index, number, raw in found:
            text = raw.decode("utf-8", errors="replace").removesuffix("\r")
            if len(text) > self.max_line_chars:
                text = text[: self.max_line_chars] + "…"
            yield f"{shown[index]}:{number}: {text}"
