"""Trust: which files steer the agent, and which folders the user has trusted.

**Workspace trust** (as Claude Code's trust dialog, VS Code's Workspace Trust and git's
``safe.directory``): a project's ``.claw/config.toml`` comes with the repository, so whoever
wrote the repository wrote it. Until the user trusts the folder, that file may only *restrict*
(:func:`clawnb.config.restrict_untrusted`); :class:`TrustStore` remembers which folders are
trusted, keyed by the folder's real path and a hash of its config file, so a changed file must
be trusted again.

**Control files** are the files that decide what the agent may do and what it is told: the
project's ``.claw/`` directory (config, hooks' scripts, instructions), the user config
directory (``~/.config/clawnb/``, which also holds the trust store), clawnb's data directory
(``~/.local/share/clawnb/``: the session store and its undo checkpoints), the instruction files
that become the system prompt (``CLAUDE.md``, ``AGENTS.md``, ``.claw/instructions.md``, and
the ``instruction_files`` the user config or a trusted project config names), and every script
the hooks of the user config or a trusted project config run (``./scripts/check.sh``,
``python scripts/hook.py``: :func:`configured_controls`). A model that could write them could
rewrite its own rules for the next session, so the gate asks before every write to one, in
every mode (:func:`is_control_file`, :func:`command_mentions_control_file`), and the sandbox
mounts them read-only (:func:`control_paths`). Without the sandbox, :class:`ControlSnapshot`
undoes what a command did to them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import time
import tomllib
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SafetyViolation
from ..instructions import DEFAULT_INSTRUCTION_FILES
from .files import replace_file

__all__ = [
    "CONTROL_DIR",
    "CONTROL_FILE_REASON",
    "ConfiguredControls",
    "ControlSnapshot",
    "control_change_approved",
    "undone_message",
    "command_mentions_control_file",
    "configured_controls",
    "control_paths",
    "is_control_file",
    "project_config_path",
    "TrustStore",
    "user_config_dir",
    "user_data_dir",
]

# The project's control directory: everything in it is a control file.
CONTROL_DIR = ".claw"


# The skill and prompt-command folders of the conventions other agents use in the same
# repository (everything under `.claw`, `.claw/skills` and `.claw/commands` included, already
# is a control file): a skill is instructions to the model and its snippets are commands, so
# these folders and everything in them are control files too.
SKILL_CONTROL_DIRS = (".claude/skills", ".claude/commands", ".agents/skills")
_SKILL_PAIRS = frozenset(tuple(d.split("/")) for d in SKILL_CONTROL_DIRS)


def _in_skill_dir(path: Path) -> bool:
    parts = [part.casefold() for part in path.parts]
    return any(pair in _SKILL_PAIRS for pair in zip(parts, parts[1:], strict=False))


# What the card and the chat prompt say about a call that writes a control file.
CONTROL_FILE_REASON = "changes the agent's own configuration"


def user_config_dir(
    config_home: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """``{config_home}/clawnb``: user config and trust store. ``config_home`` defaults to
    ``$XDG_CONFIG_HOME`` or ``~/.config``."""
    env = os.environ if env is None else env
    if config_home is None:
        config_home = env.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(config_home) / "clawnb"


def user_data_dir(
    data_home: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path:
    """``{data_home}/clawnb``: clawnb's own records (the session store and its checkpoints),
    where no repository can put a file. ``data_home`` defaults to ``$XDG_DATA_HOME`` (an
    absolute path, as the XDG spec asks) or ``~/.local/share``."""
    env = os.environ if env is None else env
    if data_home is None:
        value = env.get("XDG_DATA_HOME") or ""
        if os.path.isabs(value):
            data_home = value
        else:
            data_home = Path(env.get("HOME") or Path.home()) / ".local" / "share"
    return Path(data_home) / "clawnb"


def _instruction_names(instruction_files: Iterable[str]) -> set[str]:
    # Only bare names (CLAUDE.md) count wherever they are; a name with a directory
    # (.claw/instructions.md) is covered by its directory already or matched as a suffix.
    return {Path(name).name.casefold() for name in instruction_files}


def _spellings(path: Path, workspace: Path) -> list[Path]:
    """The path as written (joined to the workspace) and where it really leads."""
    joined = path if path.is_absolute() else workspace / path
    out = [Path(os.path.normpath(joined))]
    try:
        real = Path(os.path.realpath(joined))
    except (OSError, ValueError):
        return out
    if real not in out:
        out.append(real)
    return out


def _is_within(path: Path, directory: Path) -> bool:
    try:
        path.relative_to(directory)
    except ValueError:
        return False
    return True


def project_config_path(project_dir: str | os.PathLike[str] | None = None) -> Path:
    """The project's ``.claw/config.toml``: in ``project_dir`` (default: the current directory)
    or, inside a git repository, in the nearest directory above it up to the repository root —
    so a notebook or chat started in a subdirectory still gets the project's rules and hooks.
    When there is none, the path where it would be in ``project_dir``."""
    start = Path(project_dir if project_dir is not None else os.getcwd()).absolute()
    for directory in (start, *start.parents):
        candidate = directory / ".claw" / "config.toml"
        if candidate.is_file():
            return candidate
        if (directory / ".git").exists():
            break  # the repository root: the project ends here
        if directory == start and not _inside_git_repo(start):
            break  # outside a repository only project_dir itself counts
    return start / ".claw" / "config.toml"


def _inside_git_repo(path: Path) -> bool:
    return any((d / ".git").exists() for d in (path, *path.parents))


# ---------------------------------------------------------------------------------------------
# Control files the configuration names
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfiguredControls:
    """What the user config and a trusted project config add to the control files:
    ``instruction_files`` (as written) and the workspace files their hooks run."""

    instruction_files: tuple[str, ...] = ()
    hook_scripts: tuple[Path, ...] = ()

    @property
    def names(self) -> set[str]:
        return _instruction_names(self.instruction_files)


_NO_CONTROLS = ConfiguredControls()
_configured_cache: dict[tuple[Any, ...], ConfiguredControls] = {}


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def _toml_table(path: Path) -> dict[str, Any]:
    """A config file's table, or ``{}``: unreadable, broken or not a regular file (a FIFO
    must not block the gate). The config loader reports a broken file; here it adds
    nothing, and its hooks do not run either."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return {}
        return tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return {}


def hook_script_paths(command: str, workspace: str | os.PathLike[str]) -> list[Path]:
    """The workspace files a hook's shell command runs or reads: every word (and the value of
    a ``--flag=value`` word) that names a file inside ``workspace`` — written as a path
    (``./scripts/check.sh``, ``scripts/hook.py``, existing or not) or an existing file's bare
    name (``python hook.py``). Folders do not count (``pytest tests/`` would make every test
    a control file); what a script imports is beyond this rule."""
    ws = Path(os.path.abspath(workspace))
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    # one level of `sh -c './a.sh x'`
    for word in list(words):
        if any(c.isspace() for c in word):
            try:
                words += shlex.split(word, comments=True)
            except ValueError:
                words += word.split()
    found: list[Path] = []
    for word in words:
        for candidate in (word, word.partition("=")[2] if word.startswith("-") else ""):
            if not candidate or candidate.startswith(("-", "$")) or "\x00" in candidate:
                continue
            joined = ws / os.path.expanduser(candidate)
            if "/" not in candidate and not os.path.isfile(joined):
                continue
            for path in (Path(os.path.normpath(joined)), Path(os.path.realpath(joined))):
                if _is_within(path, ws) and path != ws and not path.is_dir():
                    if path not in found:
                        found.append(path)
    return found


def configured_controls(
    workspace: str | os.PathLike[str], *, config_home: str | os.PathLike[str] | None = None
) -> ConfiguredControls:
    """The instruction files and hook scripts that the user config and — once the folder is
    trusted — the project config name, as control files of ``workspace``.

    Read from the config files themselves (a few ``stat`` calls when nothing changed: the
    answer is cached per file stamps), so every caller — the gate, the sandbox, the snapshot
    around an unsandboxed command — sees the configuration the next session will load."""
    ws = Path(os.path.abspath(workspace))
    user_file = user_config_dir(config_home) / "config.toml"
    try:
        project_file = project_config_path(ws)
    except OSError:
        return _NO_CONTROLS
    store = TrustStore(config_home=config_home)
    key = (
        ws,
        user_file,
        _stamp(user_file),
        project_file,
        _stamp(project_file),
        _stamp(store.path),
    )
    cached = _configured_cache.get(key)
    if cached is not None:
        return cached
    tables = [_toml_table(user_file)]
    if project_file.is_file() and store.is_trusted(project_file.parent.parent, project_file):
        tables.append(_toml_table(project_file))
    names: list[str] = []
    scripts: list[Path] = []
    for table in tables:
        files = table.get("instruction_files")
        if isinstance(files, list):
            names += [f for f in files if isinstance(f, str) and f and f not in names]
        hooks = table.get("hooks")
        # every event's [[hooks.EVENT]] list (http_hosts is a list of names, not of hooks)
        for entries in hooks.values() if isinstance(hooks, dict) else ():
            for entry in entries if isinstance(entries, list) else []:
                command = entry.get("command") if isinstance(entry, dict) else None
                if isinstance(command, str):
                    scripts += [p for p in hook_script_paths(command, ws) if p not in scripts]
    controls = ConfiguredControls(tuple(names), tuple(scripts))
    if len(_configured_cache) > 64:
        _configured_cache.clear()
    _configured_cache[key] = controls
    return controls


def _all_instruction_files(
    instruction_files: Iterable[str], configured: ConfiguredControls
) -> list[str]:
    return list(dict.fromkeys([*instruction_files, *configured.instruction_files]))


def is_control_file(
    path: str | os.PathLike[str],
    workspace: str | os.PathLike[str] | None = None,
    *,
    config_home: str | os.PathLike[str] | None = None,
    instruction_files: Iterable[str] = DEFAULT_INSTRUCTION_FILES,
) -> bool:
    """Is ``path`` (relative paths are joined to ``workspace``, default the current directory)
    a control file: inside a ``.claw`` directory, the user config directory or clawnb's data
    directory, an instruction file (``CLAUDE.md``, ``AGENTS.md``, any case, and those the
    configuration names), or a script a configured hook runs?

    Both the path as written and the file a symlink really points to are judged, so a link
    ``notes.md -> .claw/config.toml`` is a control file too. A path that cannot be judged (a
    NUL byte) counts as one: the caller asks, which is the safe answer.
    """
    try:
        candidate = Path(os.fspath(path))
        ws = Path(workspace if workspace is not None else os.getcwd()).absolute()
        spellings = _spellings(candidate, ws)
    except (TypeError, ValueError):
        return True
    configured = configured_controls(ws, config_home=config_home)
    names = _instruction_names(_all_instruction_files(instruction_files, configured))
    # A control file that is a link (CLAUDE.md -> docs/guide.md, .claw -> cfg) makes what it
    # points to a control file too: writing docs/guide.md rewrites the system prompt.
    linked = _link_targets(ws, config_home, instruction_files)
    control_dirs = set()
    for directory in (user_config_dir(config_home), user_data_dir()):
        control_dirs.add(Path(os.path.normpath(directory.absolute())))
        try:
            control_dirs.add(Path(os.path.realpath(directory)))
        except (OSError, ValueError):
            pass
    scripts = set(configured.hook_scripts)
    for spelled in spellings:
        # any case: on macOS and Windows `.CLAW/config.toml` is `.claw/config.toml`
        if any(part.casefold() == CONTROL_DIR for part in spelled.parts):
            return True
        if _in_skill_dir(spelled):
            return True
        if spelled.name.casefold() in names:
            return True
        if spelled in scripts:
            return True
        if any(_is_within(spelled, d) for d in control_dirs):
            return True
        if any(_is_within(spelled, target) for target in linked):
            return True
    return False


def _link_targets(
    workspace: Path,
    config_home: str | os.PathLike[str] | None,
    instruction_files: Iterable[str],
) -> list[Path]:
    """Where the workspace's control files that are symbolic links really lead."""
    targets = []
    for path in control_paths(
        workspace, config_home=config_home, instruction_files=instruction_files
    ):
        if path.is_symlink():
            try:
                targets.append(Path(os.path.realpath(path)))
            except (OSError, ValueError):
                continue
    return targets


def control_paths(
    workspace: str | os.PathLike[str],
    *,
    config_home: str | os.PathLike[str] | None = None,
    instruction_files: Iterable[str] = DEFAULT_INSTRUCTION_FILES,
    existing_only: bool = True,
) -> list[Path]:
    """The control files and directories of ``workspace`` and of the user, for a sandbox to
    mount read-only: ``<workspace>/.claw``, the instruction files in the workspace (those the
    configuration names too), the scripts configured hooks run, the user config directory and,
    when it lies inside the workspace, clawnb's data directory (``existing_only=False`` also
    lists those that do not exist yet, which a sandbox may want to block from being created)."""
    ws = Path(workspace).absolute()
    configured = configured_controls(ws, config_home=config_home)
    paths = [ws / CONTROL_DIR, user_config_dir(config_home).absolute()]
    paths += [ws / name for name in SKILL_CONTROL_DIRS]
    paths += [ws / name for name in _all_instruction_files(instruction_files, configured)]
    paths += configured.hook_scripts
    data = user_data_dir().absolute()
    if _is_within(data, ws):
        # elsewhere the sandbox sees it read-only anyway; inside a workspace bound read-write
        # (a home folder opened as the workspace) it must be mounted read-only explicitly
        paths.append(data)
    unique: list[Path] = []
    for p in paths:
        if p not in unique and (not existing_only or p.exists() or p.is_symlink()):
            unique.append(p)
    return unique


# A token of a shell command that names a control file: a `.claw` path component, an
# instruction file name, or the user config or data directory however it is spelled. Best
# effort (a shell can spell a path endless ways): it makes the card say what the command
# touches; the sandbox's read-only mounts are the boundary.
_CONTROL_WORDS = re.compile(
    r"""
    (?:^|[\s/'"=<>|;&(`:])\.claw(?:$|[\s/'"<>|;&)`*?])   # .claw, ./.claw/x, "$D/.claw"
    | (?:claude|agents)\.md\b                          # instruction files
    | \.claude/(?:skills|commands)\b | \.agents/skills\b  # other agents' skill folders
    | \bclawnb/config\.toml\b | \.config/clawnb\b       # the user config directory
    | \.local/share/clawnb\b                           # clawnb's data (sessions, checkpoints)
    | XDG_CONFIG_HOME | XDG_DATA_HOME
    """,
    re.IGNORECASE | re.VERBOSE,
)


def command_mentions_control_file(
    command: str,
    *,
    config_home: str | os.PathLike[str] | None = None,
    workspace: str | os.PathLike[str] | None = None,
) -> bool:
    """Does a shell command name a control file (``.claw/…``, ``CLAUDE.md``, ``AGENTS.md``,
    the user config or data directory, an instruction file or hook script the configuration
    of ``workspace`` — default the current directory — names)? Used to flag the approval
    card, never to allow anything."""
    if _CONTROL_WORDS.search(command):
        return True
    for directory in (user_config_dir(config_home), user_data_dir()):
        if str(directory.absolute()) in command:
            return True
    ws = workspace if workspace is not None else os.getcwd()
    configured = configured_controls(ws, config_home=config_home)
    words = {Path(name).name for name in configured.instruction_files}
    words |= {path.name for path in configured.hook_scripts}
    return any(
        re.search(rf"(?<![\w.-]){re.escape(word)}(?![\w.-])", command, re.IGNORECASE)
        for word in words
        if word
    )


# ---------------------------------------------------------------------------------------------
# Undoing what an unsandboxed command did to the control files
# ---------------------------------------------------------------------------------------------

# Set by the gate for the tool call it is letting through: True only when a person approved
# this very call as a change to a control file (the "asked every time" question). Without the
# sandbox, bash, run_python and shell hooks undo every other change to a control file
# (ControlSnapshot), and undo's checkpoints remember which files such a call wrote.
control_change_approved: ContextVar[bool] = ContextVar(
    "clawnb_control_change_approved", default=False
)

# What a snapshot may hold. Past these it is not taken and the command is not run: an undo
# that can only put back part of what changed must not be run as if it could.
SNAPSHOT_MAX_BYTES = 64 << 20  # the control files' content, all together
SNAPSHOT_MAX_ENTRIES = 20_000  # files, folders and links in the control folders
# Entries looked at when searching the workspace for nested instruction files and .claw
# folders (hidden, version-control and dependency folders are not searched: a session does
# not start inside them, so no instruction file there is ever loaded).
WORKSPACE_SCAN_MAX = 100_000
# Folders directly in a .claw folder that hold clawnb's own records, written by any session
# of the workspace at any moment (tool results; sessions where `sessions_dir` puts them): the
# folder itself is guarded — it cannot become a link or a file — its contents are not.
_SNAPSHOT_SHALLOW = frozenset({"sessions", "tool-results"})
_SCAN_PRUNE = frozenset(
    {"node_modules", "__pycache__", "site-packages", "venv", "env", "bower_components"}
)

# one path's state: ("dir",), ("link", target), ("file", content or None, mode), ("other",)
_State = tuple[Any, ...]


class _Incomplete(Exception):
    """A snapshot that cannot hold everything: the command is refused before it runs."""


class ControlSnapshot:
    """What the control files look like now, to undo a change made behind the gate's back.

    Without the OS sandbox nothing stops ``cp evil.toml .cl''aw/config.toml`` — the command
    text check cannot read names a shell builds. This checks the *effect*: :meth:`take`
    before the command records every control file and folder (their content, too), in the
    workspace, in its parent folders and in the user config; :meth:`undo` after it puts back
    what changed and removes what was created — a new ``.claw`` file, a new ``CLAUDE.md``
    anywhere in the workspace, a new trust-store entry — and returns those paths so the
    result can say so. There is no silent cap: a snapshot that cannot be complete (see
    :data:`SNAPSHOT_MAX_ENTRIES`) raises :class:`~clawnb.errors.SafetyViolation` from
    :meth:`take`, so the command is refused before it runs; whatever :meth:`undo` could not
    put back is listed in :attr:`not_restored`.
    """

    def __init__(
        self,
        roots: Iterable[Path],
        *,
        workspace: Path | None = None,
        names: Iterable[str] = (),
    ) -> None:
        self.roots = list(dict.fromkeys(roots))
        self.workspace = workspace
        self.names = {n.casefold() for n in names}
        self.complete = True
        self.not_restored: list[Path] = []
        self._limited = True
        try:
            self.before = self._scan()
        except _Incomplete as exc:
            self.complete = False
            self.before = {}
            self.reason = str(exc)
        self._limited = False

    @classmethod
    def take(
        cls,
        workspace: str | os.PathLike[str],
        *,
        config_home: str | os.PathLike[str] | None = None,
        instruction_files: Iterable[str] = DEFAULT_INSTRUCTION_FILES,
    ) -> ControlSnapshot:
        """Record the control files of ``workspace`` and of the user (existing or not).
        Raises :class:`~clawnb.errors.SafetyViolation` (one line saying why) when they cannot
        all be recorded: then nothing could undo what a command does, so it must not run."""
        ws = Path(workspace).absolute()
        configured = configured_controls(ws, config_home=config_home)
        files = _all_instruction_files(instruction_files, configured)
        roots = [ws / CONTROL_DIR, user_config_dir(config_home).absolute()]
        roots += [ws / name for name in files]
        roots += configured.hook_scripts
        # a control file that is a link: what it points to is read as the control file
        roots += _link_targets(ws, config_home, instruction_files)
        # the instruction loader reads every parent folder's files; the config loader a
        # parent's .claw/config.toml inside the same repository
        for parent in ws.parents:
            roots += [parent / name for name in files]
            roots.append(parent / CONTROL_DIR / "config.toml")
        snapshot = cls(roots, workspace=ws, names=_instruction_names(files))
        if not snapshot.complete:
            raise SafetyViolation(
                f"not run without the sandbox: {snapshot.reason}, so clawnb could not undo "
                "what the command does to the agent's own configuration — run it in the "
                "sandbox (bubblewrap)"
            )
        return snapshot

    # -- recording --------------------------------------------------------------------------
    def _scan(self) -> dict[Path, _State]:
        state: dict[Path, _State] = {}
        self._bytes = 0
        for root in self.roots:
            self._record_tree(root, state)
        if self.workspace is not None:
            self._scan_workspace(self.workspace, state)
        return state

    def _record_tree(self, root: Path, state: dict[Path, _State]) -> None:
        if root in state:
            return
        self._record(root, state)
        if state.get(root) != ("dir",):
            return
        pending = [root]
        while pending:
            folder = pending.pop()
            try:
                with os.scandir(folder) as entries:
                    children = [Path(e.path) for e in entries]
            except OSError:
                continue
            for child in children:
                self._record(child, state)
                if state.get(child) == ("dir",) and not (
                    child.name in _SNAPSHOT_SHALLOW and folder.name.casefold() == CONTROL_DIR
                ):
                    pending.append(child)

    def _scan_workspace(self, workspace: Path, state: dict[Path, _State]) -> None:
        """Nested instruction files and ``.claw`` folders anywhere in the workspace (a
        session started in a subfolder loads them). Plain strings until a name matches: this
        walk runs twice per unsandboxed call."""
        seen = 0
        pending = [str(workspace)]
        while pending:
            folder = pending.pop()
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        seen += 1
                        name = entry.name
                        folded = name.casefold()
                        if folded == CONTROL_DIR:
                            self._record_tree(Path(entry.path), state)
                        elif folded in self.names:
                            self._record(Path(entry.path), state)
                        elif (
                            name[0] != "."
                            and name not in _SCAN_PRUNE
                            and entry.is_dir(follow_symlinks=False)
                        ):
                            pending.append(entry.path)
            except OSError:
                continue
            if self._limited and seen > WORKSPACE_SCAN_MAX:
                raise _Incomplete(
                    f"the workspace is too large to search for planted instruction files "
                    f"and .claw folders (more than {WORKSPACE_SCAN_MAX} entries outside "
                    "hidden, version-control and dependency folders)"
                )

    def _record(self, path: Path, state: dict[Path, _State]) -> None:
        if path in state:
            return
        try:
            info = os.lstat(path)
        except OSError:
            return
        if self._limited and len(state) >= SNAPSHOT_MAX_ENTRIES:
            raise _Incomplete(f"the control files hold more than {SNAPSHOT_MAX_ENTRIES} entries")
        if stat.S_ISLNK(info.st_mode):
            try:
                state[path] = ("link", os.readlink(path))
            except OSError:
                state[path] = ("other",)
        elif stat.S_ISDIR(info.st_mode):
            state[path] = ("dir",)
        elif stat.S_ISREG(info.st_mode):
            mode = stat.S_IMODE(info.st_mode)
            if not self._limited and path not in self.before:
                state[path] = ("file", None, mode)  # new: it is removed, not compared
                return
            if self._limited:
                self._bytes += info.st_size
                if self._bytes > SNAPSHOT_MAX_BYTES:
                    raise _Incomplete(
                        f"the control files are too large to keep a copy of (over "
                        f"{SNAPSHOT_MAX_BYTES >> 20} MiB)"
                    )
            try:
                state[path] = ("file", _read_no_follow(path), mode)
            except OSError:
                state[path] = ("file", None, mode)  # unreadable: a change cannot be put back
        else:
            state[path] = ("other",)  # a FIFO, socket or device: never opened

    # -- undoing ----------------------------------------------------------------------------
    def undo(self) -> list[Path]:
        """Put the control files back as :meth:`take` found them; returns the paths that had
        changed (created, changed or removed). What could not be put back (unreadable
        before, or the file system refused) is listed in :attr:`not_restored` as well."""
        now = self._scan()
        changed: set[Path] = set()
        # what existed: parents first, so a folder swapped for a link is a folder again
        # before anything is written into it
        for path in sorted(self.before, key=lambda p: len(p.parts)):
            was, current = self.before[path], now.get(path)
            if current == was:
                continue
            changed.add(path)
            try:
                self._restore(path, was, current)
            except OSError:
                self.not_restored.append(path)
        # what was created: a new folder goes with everything in it
        gone: list[Path] = []
        for path in sorted(set(now) - set(self.before), key=lambda p: len(p.parts)):
            if any(_is_within(path, d) for d in gone):
                continue
            kind = now[path][0]
            if kind == "dir" and path.name in _SNAPSHOT_SHALLOW and path.parent in self.before:
                continue  # clawnb's own records folder, made by a session meanwhile
            changed.add(path)
            try:
                if kind == "dir":
                    shutil.rmtree(path)
                    gone.append(path)
                else:
                    os.unlink(path)
            except FileNotFoundError:
                continue
            except OSError:
                self.not_restored.append(path)
        return sorted(changed)

    def _restore(self, path: Path, was: _State, now: _State | None) -> None:
        if was[0] == "other" or (was[0] == "file" and was[1] is None):
            self.not_restored.append(path)  # never copied: cannot be put back
            return
        if now is not None and (now[0] != was[0] or was[0] == "link"):
            if now[0] == "dir":
                shutil.rmtree(path)
            else:
                os.unlink(path)
        if not os.path.lexists(path.parent):
            path.parent.mkdir(parents=True, exist_ok=True)
        if was[0] == "dir":
            path.mkdir(exist_ok=True)
        elif was[0] == "link":
            os.symlink(was[1], path)
        else:
            replace_file(path, was[1], was[2])


def _read_no_follow(path: Path) -> bytes:
    """A regular file's bytes, opened without following a link or blocking on a FIFO."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path}: not a regular file")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def undone_message(
    actor: str,
    paths: Iterable[Path],
    workspace: str | os.PathLike[str],
    not_restored: Iterable[Path] = (),
) -> str:
    """What the tool result says after :meth:`ControlSnapshot.undo` found a change: that it
    was undone — or, when anything could not be put back, plainly that it was not."""
    ws = Path(workspace).absolute()

    def show(items: Iterable[Path]) -> str:
        return ", ".join(str(p.relative_to(ws)) if _is_within(p, ws) else str(p) for p in items)

    changed = list(paths)
    left = list(dict.fromkeys(not_restored))
    if not left:
        return (
            f"{actor} changed the agent's own configuration ({show(changed)}); the change was "
            "undone — control files change only with an explicit approval"
        )
    back = [p for p in changed if p not in left]
    message = (
        f"{actor} changed the agent's own configuration ({show(changed)}) and NOT all of it "
        f"could be put back — still changed: {show(left)} (check before the next session"
    )
    if back:
        message += f"; put back: {show(back)}"
    return message + "); control files change only with an explicit approval"


# ---------------------------------------------------------------------------------------------
# The trust store
# ---------------------------------------------------------------------------------------------


def config_fingerprint(config_file: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of a config file's bytes (``sha256:none`` when there is none)."""
    try:
        data = Path(config_file).read_bytes()
    except FileNotFoundError:
        return "sha256:none"
    return "sha256:" + hashlib.sha256(data).hexdigest()


class TrustStore:
    """Trusted folders, in ``trusted.json`` in the user config directory.

    Each entry maps a folder's real path to the fingerprint of its ``.claw/config.toml`` when
    it was trusted. A folder is trusted while its file still has that fingerprint. The file is
    a control file (the agent cannot trust a folder for the user) and is written atomically.
    """

    FILE_NAME = "trusted.json"

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        config_home: str | os.PathLike[str] | None = None,
    ) -> None:
        self.path = (
            Path(path) if path is not None else user_config_dir(config_home) / self.FILE_NAME
        )

    def _load(self) -> dict[str, dict[str, str]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return {}  # unreadable store: nothing is trusted, which is the safe reading
        folders = data.get("folders") if isinstance(data, dict) else None
        return folders if isinstance(folders, dict) else {}

    def _save(self, folders: dict[str, dict[str, str]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"folders": folders}, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)

    @staticmethod
    def key(folder: str | os.PathLike[str]) -> str:
        return os.path.realpath(folder)

    def is_trusted(
        self, folder: str | os.PathLike[str], config_file: str | os.PathLike[str]
    ) -> bool:
        entry = self._load().get(self.key(folder))
        return isinstance(entry, dict) and entry.get("config") == config_fingerprint(config_file)

    def trust(self, folder: str | os.PathLike[str], config_file: str | os.PathLike[str]) -> str:
        """Trust ``folder`` with its config file as it is now; returns the fingerprint."""
        folders = self._load()
        fingerprint = config_fingerprint(config_file)
        folders[self.key(folder)] = {
            "config": fingerprint,
            "trusted_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        self._save(folders)
        return fingerprint

    def revoke(self, folder: str | os.PathLike[str]) -> bool:
        folders = self._load()
        if folders.pop(self.key(folder), None) is None:
            return False
        self._save(folders)
        return True

    def folders(self) -> dict[str, dict[str, str]]:
        return dict(self._load())
