"""What the arguments do: safety checks run before a tool call (book ch14).

A :class:`SafetyCheck` looks at ``(tool_name, args)`` and raises :class:`SafetyViolation` with a
reason the model can read. The checks:

* :class:`PathValidator` — file paths must stay inside one directory (the workspace). Paths
  are resolved the way the kernel would: relative to the workspace, symlink by symlink, with
  ``..`` applied to the directory a link really points to. New files are judged by where they
  would land, so ``new/dir/file.txt`` is fine and ``link_to_outside/new.txt`` is not. Refused:
  NUL bytes, symlinks that lead out (also dangling ones), symlink loops, and look-alike
  prefixes (``/ws-evil`` is not inside ``/ws``); ``~`` is judged where it expands to, as the
  tools expand it. ``also=`` adds folders that count as inside (the person's added
  directories). An outside path is an :class:`OutsideWorkspace` (a ``SafetyViolation`` with the
  resolved path): the gate asks about a read of one (:meth:`PathValidator.outside_paths`) and
  refuses a write. Names are never Unicode-normalised: ``．．`` (U+FF0E) is an ordinary file
  name on Linux.
* :class:`CommandFilter` — glob patterns of shell commands to refuse (``sudo *``,
  ``rm -rf /``…). It is **best-effort and not a sandbox**: a shell has endless spellings for the
  same act. It checks the whole line and each simple command in it (``$'…'`` decoded,
  ``${IFS}`` read as a space, quotes, ``VAR=`` prefixes, ``if``/``then``/``do`` words,
  wrappers with their options — ``env -C .``, ``timeout 5``, ``nice``, ``command`` … — and
  ``/usr/bin/`` removed; ``bash -c`` scripts and ``eval`` text looked into:
  :func:`clawnb.control.shell.normalize_command`), which catches the common shapes;
  the real boundary is the permission engine asking before every bash call, plus approvals.
  ``benchmarks/command_filter_coverage.py`` measures what it catches.
* :class:`ProtectedFileCheck` — writes and edits to files like ``.env`` or ``.git/**`` are
  refused; a pattern is tried on the path as given, its file name, and every trailing part
  (so ``.git/**`` also protects ``/repo/.git/config``).

:class:`SafeToolWrapper` puts checks in front of one tool; a failed check becomes the result
``error: safety check failed: {reason}``, never an exception. In the agent loops the same checks
run inside :class:`clawnb.gates.GatePipeline`. A check verifies a path at the moment of the
call; a link swapped in between the check and the write is not covered (no check can be).
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Protocol, runtime_checkable

from .control.shell import glob_is_valid, normalize_command
from .errors import SafetyViolation
from .types import JSON, Tool, ToolDefinition

__all__ = [
    "MAX_COMMAND_BYTES",
    "OutsideWorkspace",
    "check_command_size",
    "command_display",
    "display_safe",
    "DEFAULT_BLOCKED_COMMANDS",
    "DEFAULT_PROTECTED_PATTERNS",
    "RECOMMENDED_BLOCKED_COMMANDS",
    "CommandFilter",
    "PathValidator",
    "ProtectedFileCheck",
    "SafeToolWrapper",
    "SafetyCheck",
    "SafetyViolation",
]

# The book's config defaults (``Config::blocked_commands`` / ``protected_patterns``).
DEFAULT_BLOCKED_COMMANDS: tuple[str, ...] = ("rm -rf /", "sudo *", "curl * | bash", "curl * | sh")
DEFAULT_PROTECTED_PATTERNS: tuple[str, ...] = (".env", ".env.*", ".git/**")

# The book's ``CommandFilter::default_filters()``.
_BOOK_FILTERS: tuple[str, ...] = (
    "rm -rf /",
    "rm -rf /*",
    "sudo *",
    "> /dev/sda*",
    "mkfs.*",
    "dd if=*of=/dev/*",
    ":(){:|:&};:",
)

_RM_RECURSIVE_FORCE = (
    "rm -rf",
    "rm -fr",
    "rm -Rf",
    "rm -fR",
    "rm -r -f",
    "rm -f -r",
    "rm --recursive --force",
    "rm --force --recursive",
)

# The list clawnb ships: the gate uses it unless the user's config replaces it
# (``blocked_commands_replace = true``); every config layer's ``blocked_commands`` add to it.
# It holds the book's filters and config defaults and a longer list of common shapes — still
# best-effort: with no sandbox (macOS, Windows, many containers) it is what stops ``mkfs`` or
# ``wget … | sh`` in ``bypass`` mode, so it errs on the side of refusing.
_RECOMMENDED: tuple[str, ...] = (
    *_BOOK_FILTERS,
    *DEFAULT_BLOCKED_COMMANDS,
    *(
        f"{rm} {target}"
        for rm in _RM_RECURSIVE_FORCE
        for target in ("/", "/*", "~", "~/*", "~*", ".", "./", "..", "../*", "[*]", "$HOME*")
    ),
    "rm *--no-preserve-root*",
    "find / *-delete*",
    "find / *-exec rm*",
    "sudo",
    "su",
    "su *",
    "doas *",
    "pkexec *",
    "mkfs*",
    "dd *of=/dev/*",
    "*> /dev/sd*",
    "*>/dev/sd*",
    "*> /dev/nvme*",
    "*>/dev/nvme*",
    "shred *",
    "wipefs *",
    "fdisk *",
    "parted *",
    "chmod -R 777 /*",
    "chmod 777 /*",
    "chmod -R * /",
    "chown -R * /",
    "chown -R * /*",
    "curl * | *sh*",
    "curl *|*sh*",
    "wget * | *sh*",
    "wget *|*sh*",
    "*| bash",
    "*| sh",
    "*|bash",
    "*|sh",
    "*sh -c *curl*",
    "*sh -c *wget*",
    "*sh <(curl*",
    "*sh <(wget*",
    "python* -c *exec(*",
    "python* -c *rmtree*",
    "perl -e *system*",
    "shutdown*",
    "reboot*",
    "halt*",
    "poweroff*",
    "init 0",
    "init 6",
    "kill -9 -1",
    "kill -9 1",
    "killall *",
    "pkill *",
    "git push --force*",
    "git push -f*",
    "git push * --force*",
    "git push * -f*",
    "git reset --hard*",
    "git clean -*f*",
    "crontab -r*",
    "history -c*",
    "nc -e *",
    "nc * -e *",
    "ncat -e *",
    "ncat * -e *",
    "*/dev/tcp/*",
    "python* -c *socket*",
    "mv * /dev/null",
    "> /etc/*",
    "*>> /etc/*",
    "*> /etc/*",
    ":(){ :|:& };:",
    ":(){ :|: & };:",
)
RECOMMENDED_BLOCKED_COMMANDS: tuple[str, ...] = tuple(dict.fromkeys(_RECOMMENDED))


@runtime_checkable
class SafetyCheck(Protocol):
    """Anything with ``check(tool_name, args)`` that raises :class:`SafetyViolation` to refuse."""

    def check(self, tool_name: str, args: JSON) -> None: ...


# ---------------------------------------------------------------------------------------------
# PathValidator


class PathValidator:
    """Keeps file tools inside ``allowed_dir`` (see the module docstring for the rules)."""

    # Tools whose ``path`` argument the book checks; ``tools=None`` checks every tool.
    BOOK_TOOLS: frozenset[str] = frozenset({"read", "write", "edit"})
    PATH_KEYS: tuple[str, ...] = ("path", "file_path", "notebook_path")

    def __init__(
        self,
        allowed_dir: str | os.PathLike[str],
        *,
        tools: Collection[str] | None = None,
        also: Iterable[str | os.PathLike[str]] = (),
    ) -> None:
        self.raw_dir = os.path.abspath(os.fspath(allowed_dir))
        try:
            self.allowed_dir = os.path.realpath(self.raw_dir, strict=True)
        except OSError:
            self.allowed_dir = self.raw_dir
        self.tools = frozenset(tools) if tools is not None else None
        # more folders that count as inside (the person's added directories): read at each
        # check, so a shared AddedDirectories that grows counts at once
        self.also = also

    def _inside(self, canonical: str) -> bool:
        if _is_within(canonical, self.allowed_dir):
            return True
        return any(_is_within(canonical, os.fspath(d)) for d in self.also)

    def validate_path(self, path: str | os.PathLike[str]) -> Path:
        """The canonical path ``path`` refers to, if it lies inside the allowed directory;
        :class:`SafetyViolation` otherwise."""
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str):
            raise SafetyViolation(f"invalid path: expected a string, got {type(path).__name__}")
        if "\x00" in path:
            raise SafetyViolation(f"invalid path {path!r}: it contains a NUL byte")
        if not path:
            raise SafetyViolation("invalid path: it is empty")
        home = ""
        if path.startswith("~"):
            # the tools expand it, so it is judged where it leads
            expanded = os.path.expanduser(path)
            if expanded.startswith("~") or not os.path.isabs(expanded):
                raise SafetyViolation(
                    f"path {path} starts with '~' (a home directory) that cannot be expanded; "
                    f"use a path inside {self.allowed_dir}"
                )
            home = f" ({path}: a home directory)"
            path = expanded
        full = path if os.path.isabs(path) else os.path.join(self.raw_dir, path)
        canonical = _resolve(full)
        if not self._inside(canonical):
            raise OutsideWorkspace(
                f"path {canonical}{home} is outside allowed directory {self.allowed_dir}",
                canonical,
            )
        return Path(canonical)

    def outside_paths(self, tool_name: str, args: JSON) -> list[str]:
        """For a call that only reads: the resolved paths it names outside the allowed
        directories (the gate asks about those instead of refusing); any other problem (a NUL
        byte, a link loop, a hard link inside) is still a :class:`SafetyViolation`."""
        if self.tools is not None and tool_name not in self.tools:
            return []
        found: list[str] = []
        for value in self._named(tool_name, args):
            try:
                canonical = self.validate_path(value)
            except OutsideWorkspace as exc:
                if exc.path not in found:
                    found.append(exc.path)
                continue
            _refuse_hard_link(canonical, value)
        return found

    def _named(self, tool_name: str, args: JSON) -> list[str]:
        """The path arguments of a call, and a glob's fixed prefix."""
        if not isinstance(args, dict):
            return []
        named = [v for key in self.PATH_KEYS if isinstance(v := args.get(key), str)]
        pattern = args.get("pattern")
        if tool_name == "glob" and isinstance(pattern, str):
            named.append(_glob_prefix(pattern))
        return named

    def check(self, tool_name: str, args: JSON) -> None:
        if self.tools is not None and tool_name not in self.tools:
            return
        if not isinstance(args, dict):
            return
        for key in self.PATH_KEYS:
            value = args.get(key)
            if isinstance(value, str):
                _refuse_hard_link(self.validate_path(value), value)
        if tool_name == "glob":
            pattern = args.get("pattern")
            if isinstance(pattern, str):
                self._check_glob(pattern)

    def _check_glob(self, pattern: str) -> None:
        """A glob's fixed prefix (before the first wildcard) must stay inside too."""
        # Always checked, also for a plain relative prefix: ``outlink/*`` where ``outlink`` is
        # a symlink to a directory outside would otherwise be walked.
        self.validate_path(_glob_prefix(pattern))

    def __repr__(self) -> str:
        return f"PathValidator({self.allowed_dir!r})"


class OutsideWorkspace(SafetyViolation):
    """A path outside the allowed directories; ``path`` is where it really leads. The gate
    asks about a read of one and refuses a write (:class:`clawnb.gates.GatePipeline`)."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


def _glob_prefix(pattern: str) -> str:
    """A glob's fixed part, before its first wildcard (``.`` when it starts with one)."""
    fixed: list[str] = []
    for part in pattern.split("/"):
        if any(ch in part for ch in "*?["):
            break
        fixed.append(part)
    return "/".join(fixed) or ("/" if pattern.startswith("/") else ".")


_MAX_LINKS = 40  # like the kernel's MAXSYMLINKS


def _refuse_hard_link(canonical: Path, shown: str) -> None:
    """A regular file with several hard links may be the same file as one outside the
    workspace (a hard link has no "target" to resolve), so no tool may read or write it."""
    try:
        st = os.stat(canonical)
    except OSError:
        return  # does not exist (yet): nothing to share
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise SafetyViolation(
            f"{shown} has {st.st_nlink} hard links, so it may also be a file outside "
            "the workspace; copy it into the workspace if it is meant to be here"
        )


def _resolve(path: str) -> str:
    """Resolve an absolute ``path`` component by component, like the kernel: symlinks are
    followed (also dangling ones, to where they point), ``..`` pops the *resolved* directory,
    components that do not exist yet are taken as written. Loops raise."""
    pending = path.split("/")
    pending.reverse()
    resolved = "/"
    links = 0
    while pending:
        part = pending.pop()
        if part in ("", "."):
            continue
        if part == "..":
            resolved = os.path.dirname(resolved)
            continue
        candidate = os.path.join(resolved, part)
        try:
            st = os.lstat(candidate)
        except FileNotFoundError:
            resolved = candidate
            continue
        except NotADirectoryError:
            raise SafetyViolation(f"cannot resolve path: {resolved} is not a directory") from None
        except OSError as exc:
            raise SafetyViolation(f"cannot resolve path: {exc.strerror or exc}") from None
        if stat.S_ISLNK(st.st_mode):
            links += 1
            if links > _MAX_LINKS:
                raise SafetyViolation(
                    f"cannot resolve path: too many levels of symbolic links at {candidate}"
                )
            try:
                target = os.readlink(candidate)
            except OSError as exc:
                raise SafetyViolation(f"cannot resolve path: {exc.strerror or exc}") from None
            if target.startswith("/"):
                resolved = "/"
            parts = target.split("/")
            parts.reverse()
            pending.extend(parts)
            continue
        resolved = candidate
    return resolved


def _is_within(path: str, directory: str) -> bool:
    if directory == "/":
        return path.startswith("/")
    return path == directory or path.startswith(directory.rstrip("/") + "/")


# ---------------------------------------------------------------------------------------------
# CommandFilter


class CommandFilter:
    """Refuses bash commands matching glob patterns (``*`` also matches ``/``; case-sensitive).

    Best-effort, **not a sandbox** — see the module docstring.
    """

    def __init__(self, patterns: Iterable[str], *, normalize: bool = True) -> None:
        # Like the book, patterns that are not valid globs are dropped.
        self.patterns: list[str] = [p for p in patterns if p.strip() and glob_is_valid(p)]
        self.normalize = normalize

    @classmethod
    def default_filters(cls, *, normalize: bool = True) -> CommandFilter:
        """The book's seven default patterns."""
        return cls(_BOOK_FILTERS, normalize=normalize)

    @classmethod
    def recommended(cls) -> CommandFilter:
        """The list clawnb ships (:data:`RECOMMENDED_BLOCKED_COMMANDS`): the book's defaults,
        the config defaults and a longer list of common shapes."""
        return cls(RECOMMENDED_BLOCKED_COMMANDS)

    def is_blocked(self, command: str) -> str | None:
        """The first pattern that ``command`` matches, or ``None``."""
        forms = normalize_command(command) if self.normalize else [command.strip()]
        for pattern in self.patterns:
            for form in forms:
                if fnmatch.fnmatchcase(form, pattern):
                    return pattern
        return None

    def check(self, tool_name: str, args: JSON) -> None:
        if tool_name != "bash" or not isinstance(args, dict):
            return
        command = args.get("command")
        if not isinstance(command, str):
            return
        check_command_size(command)  # before any parsing: shlex is quadratic on huge input
        pattern = self.is_blocked(command)
        if pattern is not None:
            raise SafetyViolation(f"blocked command matching pattern `{pattern}`")

    def __repr__(self) -> str:
        return f"CommandFilter({self.patterns!r})"


# ---------------------------------------------------------------------------------------------
# What a person approves is what runs: size limit and display escaping
# ---------------------------------------------------------------------------------------------

# A command longer than this is refused before anything parses it. Nobody reviews 100 KB of
# shell in an approval prompt, and splitting megabytes with shlex froze the loop for minutes
# (3 MB took ~130 s). Scripts that long belong in a file the command runs.
MAX_COMMAND_BYTES = 100_000


def check_command_size(command: str, limit: int = MAX_COMMAND_BYTES) -> None:
    """:class:`SafetyViolation` when ``command`` is over ``limit`` bytes (UTF-8)."""
    size = len(command.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise SafetyViolation(
            f"the command is {_size(size)}, over the {_size(limit)} limit for one command: "
            "nobody can review that in an approval; write the script to a file and run the file"
        )


def _size(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB" if n >= 1_000_000 else f"{n / 1000:.0f} KB"


# Characters that change how text *looks* without being visible themselves: C0/C1 controls
# (tab and newline excepted), bidi embeddings/overrides/isolates and marks, zero-width
# characters, invisible separators, Hangul fillers and Unicode tag characters (used to hide
# instructions). Written raw, they let `rm -rf ~` hide behind a harmless-looking command on an
# approval card; shown escaped (``\u202e``), they cannot.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufeff\uffa0"
    "\ufff9-\ufffb\U000e0000-\U000e007f]"
)


def display_safe(text: str) -> str:
    """``text`` as it may be shown to a person: every invisible or control character (see
    above) written as an escape (``\u202e``, ``\x1b``, ``\r``); newlines and tabs kept."""
    if not text:
        return text
    text = text.replace("\r\n", "\n")
    return _INVISIBLE.sub(lambda m: ascii(m.group())[1:-1], text)


def command_display(command: str, *, blank_run: int = 2) -> list[str]:
    """How an approval prompt shows a command: every line, escaped and numbered, runs of more
    than ``blank_run`` blank lines collapsed into one line that says how many, and a last line
    with the totals — so a harmful first line cannot scroll away above 60 blank ones."""
    lines = display_safe(command).split("\n")
    width = len(str(len(lines)))
    out: list[str] = []
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j - i > blank_run:
            out.append(f"{'':>{width}} ⋮ ({j - i} blank lines)")
            i = j
            continue
        out.append(f"{i + 1:>{width}} │ {lines[i]}")
        i += 1
    size = len(command.encode("utf-8", "surrogatepass"))
    out.append(f"({len(lines)} line{'s' if len(lines) != 1 else ''}, {size:,} bytes)")
    return out


# ---------------------------------------------------------------------------------------------
# ProtectedFileCheck


class ProtectedFileCheck:
    """Refuses writes and edits to protected files (``.env``, ``.env.*``, ``.git/**`` …)."""

    def __init__(
        self,
        patterns: Iterable[str] = DEFAULT_PROTECTED_PATTERNS,
        *,
        tools: Collection[str] = ("write", "edit", "multi_edit", "notebook_edit"),
        workspace: str | os.PathLike[str] | None = None,
    ) -> None:
        self.patterns = [p for p in patterns if p]
        self.tools = frozenset(tools)
        self.workspace = os.fspath(workspace) if workspace is not None else None

    def matching_pattern(self, path: str) -> str | None:
        """The first pattern protecting ``path``, or ``None``."""
        # Case-insensitively: on macOS and Windows `.GIT/hooks/x` and `.ENV` *are* `.git/hooks/x`
        # and `.env` (a hook there runs code at the next git command).
        forms = [f.casefold() for f in self._forms(path)]
        for pattern in self.patterns:
            folded = pattern.casefold()
            for form in forms:
                if fnmatch.fnmatchcase(form, folded):
                    return pattern
        return None

    def _forms(self, path: str) -> list[str]:
        forms = [path]
        for candidate in (os.path.normpath(path), self._real(path)):
            if candidate and candidate not in forms:
                forms.append(candidate)
        extra: list[str] = []
        for form in forms:
            parts = [p for p in form.split("/") if p]
            for i in range(len(parts)):
                tail = "/".join(parts[i:])
                if tail not in forms and tail not in extra:
                    extra.append(tail)
        return forms + extra

    def _real(self, path: str) -> str | None:
        """Where the path really lands (a symlink named ``config`` may point at ``.env``)."""
        base = self.workspace or os.getcwd()
        full = path if os.path.isabs(path) else os.path.join(base, path)
        try:
            return _resolve(full)
        except SafetyViolation:
            return None

    def check(self, tool_name: str, args: JSON) -> None:
        if tool_name not in self.tools or not isinstance(args, dict):
            return
        path = args.get("path")
        if not isinstance(path, str):
            return
        pattern = self.matching_pattern(path)
        if pattern is not None:
            raise SafetyViolation(f"file `{path}` is protected (matches pattern `{pattern}`)")

    def __repr__(self) -> str:
        return f"ProtectedFileCheck({self.patterns!r})"


# ---------------------------------------------------------------------------------------------
# SafeToolWrapper


class SafeToolWrapper:
    """A tool with safety checks in front: the first failing check's reason becomes the result
    ``error: safety check failed: {reason}``; otherwise the inner tool runs."""

    def __init__(self, tool: Tool, checks: Iterable[SafetyCheck] = ()) -> None:
        self.inner = tool
        self.checks: list[SafetyCheck] = list(checks)

    @classmethod
    def with_check(cls, tool: Tool, check: SafetyCheck) -> SafeToolWrapper:
        return cls(tool, [check])

    @property
    def definition(self) -> ToolDefinition:
        return self.inner.definition

    @property
    def read_only(self) -> bool:
        return getattr(self.inner, "read_only", False) is True

    @property
    def concurrency_safe(self) -> bool:
        return getattr(self.inner, "concurrency_safe", False) is True

    async def call(self, args: JSON) -> str:
        name = self.inner.definition.name
        for check in self.checks:
            try:
                check.check(name, args)
            except SafetyViolation as exc:
                return f"error: safety check failed: {exc}"
            except Exception as exc:  # a broken check refuses rather than waving through
                return f"error: safety check failed: {type(exc).__name__}: {exc}"
        return await self.inner.call(args)

    def __repr__(self) -> str:
        return f"SafeToolWrapper({self.inner!r}, {self.checks!r})"
