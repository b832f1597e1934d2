"""GlobTool (book ch11): find files by name pattern.

The book's contract: ``pattern`` (required) and ``path`` (base directory, optional); a
relative pattern is searched under the base; matches are listed one per line; nothing found
gives ``no files matched``; a bad pattern gives ``invalid glob pattern: …``.

The walk (shared with :mod:`clawnb.tools.grep`) is what makes it usable on a real repository:

* hidden directories (``.git``, ``.venv``, ``.mypy_cache`` …) are skipped, unless the pattern
  itself names one (``.github/**/*.yml``);
* ``.gitignore`` files are honoured — the ones inside the tree and those of the enclosing
  repository above it, plus ``.git/info/exclude`` — with git's rules (via ``pathspec``);
* symlinked files are listed, symlinked directories are not entered (no loops, no escapes);
* results are sorted by path, component by component, so the same tree always gives the
  same answer; the list is capped (default 200) with a final ``… and N more files`` line.

Pattern syntax: ``*`` and ``?`` stay within one path component, ``**`` spans directories,
``[abc]`` classes, and ``{a,b}`` alternatives (``**/*.{py,pyi}``).
"""

from __future__ import annotations

import asyncio
import heapq
import os
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..types import JSON, ToolDefinition, ToolTraits
from .base import BaseTool, ToolError, optional_str, require_str, resolve_path

__all__ = ["FileSearchTool", "GitIgnore", "GlobTool", "compile_glob", "iter_files", "sort_key"]

_GLOB_CHARS = frozenset("*?[{")


class GlobError(ValueError):
    pass


def _translate_component(part: str) -> str:
    """Regex for one path component (no ``/``)."""
    out: list[str] = []
    i, n = 0, len(part)
    while i < n:
        c = part[i]
        if c == "*":
            while i + 1 < n and part[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and part[j] in "!^":
                j += 1
            if j < n and part[j] == "]":
                j += 1
            while j < n and part[j] != "]":
                j += 1
            if j >= n:
                raise GlobError(f"unclosed '[' in {part!r}")
            body = part[i + 1 : j]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            body = body.replace("\\", "\\\\")
            out.append(f"(?:(?!/)[{body}])")
            i = j
        elif c == "{":
            depth, j = 1, i + 1
            while j < n and depth:
                depth += {"{": 1, "}": -1}.get(part[j], 0)
                j += 1
            if depth:
                raise GlobError(f"unclosed '{{' in {part!r}")
            options = _split_top_level(part[i + 1 : j - 1])
            out.append("(?:" + "|".join(_translate_component(o) for o in options) + ")")
            i = j - 1
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _split_top_level(body: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for c in body:
        if c == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        current.append(c)
    parts.append("".join(current))
    return parts


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """Compile a ``/``-separated glob into a regex matched against a relative POSIX path."""
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if not parts:
        raise GlobError("empty pattern")
    regex = ""
    for k, part in enumerate(parts):
        last = k == len(parts) - 1
        if part == "**":
            regex += ".*" if last else "(?:[^/]+/)*"
        else:
            regex += _translate_component(part) + ("" if last else "/")
    try:
        return re.compile(rf"\A{regex}\Z", re.DOTALL)
    except re.error as exc:  # a character class like [z-a]
        raise GlobError(str(exc)) from None


def sort_key(rel: str) -> list[str]:
    """Component-wise order (``a/b`` before ``a-b``), like sorting ``Path`` objects."""
    return rel.split("/")


def _has_glob(part: str) -> bool:
    return any(c in _GLOB_CHARS for c in part)


class GitIgnore:
    """The ``.gitignore`` rules that apply under ``root``.

    Rules from the enclosing repository (the ``.gitignore`` files between the repository
    root and ``root``, and ``.git/info/exclude``) are loaded up front; rules found inside the
    tree are added while walking. The deepest file that has an opinion about a path wins,
    as in git. When ``root`` itself is ignored by the enclosing repository, only the rules
    found inside the tree apply.
    """

    def __init__(self, root: Path) -> None:
        self._specs: dict[str, Any] = {}
        self._order: list[str] | None = None  # spec directories, deepest first
        root = Path(os.path.abspath(root))
        repo = self._find_repo(root)
        if repo is not None:
            exclude = repo / ".git" / "info" / "exclude"
            if exclude.is_file():
                self._load(str(repo), exclude)
            chain = [root, *root.parents]
            for directory in reversed(chain[: chain.index(repo) + 1]):
                if directory != root:
                    self.add_dir(str(directory))
            if root != repo and self.ignored(str(root), True):
                # The caller pointed *into* an ignored directory (a venv, a build dir):
                # they mean to search it, so the enclosing repository's rules step aside.
                self._specs.clear()
                self._order = None

    @staticmethod
    def _find_repo(start: Path) -> Path | None:
        for directory in [start, *start.parents]:
            if (directory / ".git").exists():
                return directory
        return None

    def _load(self, directory: str, file: str | Path) -> None:
        # imported on first use (keeps `import clawnb` cheap), through the guard: never a
        # pathspec.py of the workspace (clawnb.control.imports)
        from ..control.imports import load

        load("pathspec")
        from pathspec import GitIgnoreSpec

        try:
            with open(file, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError:
            return
        spec = GitIgnoreSpec.from_lines(lines)
        previous = self._specs.get(directory)
        self._specs[directory] = spec if previous is None else previous + spec
        self._order = None

    def add_dir(self, directory: str) -> None:
        """Load ``directory/.gitignore`` if there is one."""
        file = os.path.join(directory, ".gitignore")
        if os.path.isfile(file):
            self._load(directory, file)

    def __bool__(self) -> bool:
        return bool(self._specs)

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Is the absolute ``path`` ignored? The nearest ``.gitignore`` with a verdict decides."""
        if self._order is None:
            self._order = sorted(self._specs, key=len, reverse=True)
        for directory in self._order:  # a handful of files, not every level of the path
            prefix = directory if directory.endswith("/") else directory + "/"
            if not path.startswith(prefix):
                continue
            rel = path[len(prefix) :].replace(os.sep, "/")
            result = self._specs[directory].check_file(rel + "/" if is_dir else rel)
            if result.include is not None:
                return bool(result.include)
        return False


def iter_files(
    root: Path,
    *,
    max_depth: int | None = None,
    hidden: bool = False,
    gitignore: bool = True,
    name_filter: Callable[[str], object] | None = None,
) -> Iterator[str]:
    """The relative POSIX paths of regular files (and symlinks to files) under ``root``.

    Hidden directories are skipped unless ``hidden`` (``.git`` always); gitignored entries are
    skipped when ``gitignore``; symlinked directories are never entered; ``name_filter(name)``
    may reject files early by name. Order is unspecified — sort with :func:`sort_key`.
    This loop is the hot path of glob and grep on big trees, hence its plain style.
    """
    ignore = GitIgnore(root) if gitignore else None
    stack: list[tuple[str, str, int]] = [(os.path.abspath(root), "", 0)]
    while stack:
        directory, rel_dir, depth = stack.pop()
        try:
            with os.scandir(directory) as scan:
                entries = list(scan)
        except OSError:
            continue
        if ignore is not None:
            for entry in entries:
                if entry.name == ".gitignore":
                    ignore.add_dir(directory)
                    break
        check = ignore is not None and bool(ignore)
        descend = max_depth is None or depth + 1 < max_depth
        for entry in entries:
            name = entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not descend or (name[0] == "." and (not hidden or name == ".git")):
                        continue
                    if check and ignore is not None and ignore.ignored(entry.path, True):
                        continue
                    stack.append((entry.path, f"{rel_dir}{name}/", depth + 1))
                elif (name_filter is None or name_filter(name)) and entry.is_file():
                    if check and ignore is not None and ignore.ignored(entry.path, False):
                        continue
                    yield rel_dir + name
            except OSError:
                continue


def split_pattern(pattern: str) -> tuple[str, str]:
    """Split ``src/**/*.py`` into the literal directory ``src`` and the glob ``**/*.py``."""
    absolute = pattern.startswith("/")
    parts = pattern.split("/")
    literal: list[str] = []
    for k, part in enumerate(parts):
        if _has_glob(part) or k == len(parts) - 1:
            rest = "/".join(parts[k:])
            break
        literal.append(part)
    else:  # pragma: no cover - the loop always breaks on the last part
        rest = ""
    prefix = "/".join(literal)
    if absolute and not prefix:
        prefix = "/"
    return prefix, rest


class FileSearchTool(BaseTool):
    """What glob and grep share: they only read, anchor relative paths at ``workspace``
    (default: the process cwd) and list at most ``max_results`` lines (``None``: all)."""

    traits = ToolTraits(read_only=True)

    def __init__(
        self, workspace: str | os.PathLike[str] | None = None, *, max_results: int | None = 200
    ) -> None:
        self.workspace = workspace
        self.max_results = max_results


class GlobTool(FileSearchTool):
    """List files whose path matches a glob pattern."""

    definition = (
        ToolDefinition("glob", "Find files matching a glob pattern")
        .param("pattern", "string", 'Glob pattern (e.g. "**/*.rs")', required=True)
        .param("path", "string", "Base directory to search in (default: current directory)")
    )

    async def call(self, args: JSON) -> str:
        pattern = require_str(args, "pattern")
        base = optional_str(args, "path")
        return await asyncio.to_thread(self.search, pattern, base)

    def matches(self, pattern: str, base: str | None = None) -> list[str]:
        """Every matching path (as shown to the model), sorted; no cap."""
        found, _ = self._matches(pattern, base, None)
        return found

    def _matches(self, pattern: str, base: str | None, keep: int | None) -> tuple[list[str], int]:
        """(the first ``keep`` matches in order, or all when ``None``; how many matched).
        With ``keep`` only that many paths are ever held, however big the tree."""
        if pattern.startswith("/") or base is None or base == "":
            shown_full = pattern
        else:
            shown_full = base.rstrip("/") + "/" + pattern if base != "/" else "/" + pattern
        prefix, rest = split_pattern(shown_full)
        if not rest.strip("/"):
            raise ToolError(f"invalid glob pattern: {pattern!r} names no file")
        try:
            regex = compile_glob(rest)
        except GlobError as exc:
            raise ToolError(f"invalid glob pattern: {exc}") from None
        root = resolve_path(prefix or ".", self.workspace)
        if not root.is_dir():
            return [], 0
        components = [p for p in rest.split("/") if p not in ("", ".")]
        max_depth = None if any("**" in p for p in components) else len(components)
        # Enter hidden directories only when the pattern names one (``**/.github/*.yml``).
        hidden = any(p.startswith(".") for p in components[:-1])
        last = components[-1]
        name_filter = None if "**" in last else compile_glob(last).match
        walk = iter_files(root, max_depth=max_depth, hidden=hidden, name_filter=name_filter)
        total = 0

        def matching() -> Iterator[str]:
            nonlocal total
            for rel in walk:
                if regex.match(rel):
                    total += 1
                    yield rel

        if keep is None:
            found = sorted(matching(), key=sort_key)
        else:
            found = heapq.nsmallest(keep, matching(), key=sort_key)
        if prefix:
            found = [os.path.join(prefix, rel) for rel in found]
        return found, total

    def search(self, pattern: str, base: str | None = None) -> str:
        found, total = self._matches(pattern, base, self.max_results)
        if not found:
            return "no files matched"
        text = "\n".join(found)
        if total > len(found):
            text += f"\n… and {total - len(found)} more files"
        return text


def cap_lines(lines: list[str], limit: int | None, noun: str) -> str:
    """Join ``lines``, keeping at most ``limit`` and saying how many were left out."""
    if limit is None or len(lines) <= limit:
        return "\n".join(lines)
    return "\n".join(lines[:limit]) + f"\n… and {len(lines) - limit} more {noun}"
