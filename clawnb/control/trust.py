"""Trust: which files steer the agent, and which folders the user has trusted.

**Workspace trust** (as Claude Code's trust dialog, VS Code's Workspace Trust and git's
``safe.directory``): a project's ``.claw/config.toml`` comes with the repository, so whoever
wrote the repository wrote it. Until the user trusts the folder, that file may only *restrict*
(:func:`clawnb.config.restrict_untrusted`); :class:`TrustStore` remembers which folders are
trusted, keyed by the folder's real path and a hash of its config file, so a changed file must
be trusted again.

**Control files** are the files that decide what the agent may do and what it is told: the
project's ``.claw/`` directory (config, hooks' scripts, instructions, the session store), the
user config directory (``~/.config/clawnb/``, which also holds the trust store), and the
instruction files that become the system prompt (``CLAUDE.md``, ``AGENTS.md``,
``.claw/instructions.md``). A model that could write them could rewrite its own rules for the
next session, so the gate asks before every write to one, in every mode
(:func:`is_control_file`, :func:`command_mentions_control_file`), and the sandbox mounts them
read-only (:func:`control_paths`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import time
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from ..instructions import DEFAULT_INSTRUCTION_FILES

__all__ = [
    "CONTROL_DIR",
    "CONTROL_FILE_REASON",
    "ControlSnapshot",
    "control_change_approved",
    "undone_message",
    "command_mentions_control_file",
    "control_paths",
    "is_control_file",
    "TrustStore",
    "user_config_dir",
]

# The project's control directory: everything in it is a control file.
CONTROL_DIR = ".claw"


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


def is_control_file(
    path: str | os.PathLike[str],
    workspace: str | os.PathLike[str] | None = None,
    *,
    config_home: str | os.PathLike[str] | None = None,
    instruction_files: Iterable[str] = DEFAULT_INSTRUCTION_FILES,
) -> bool:
    """Is ``path`` (relative paths are joined to ``workspace``, default the current directory)
    a control file: inside a ``.claw`` directory, inside the user config directory, or an
    instruction file (``CLAUDE.md``, ``AGENTS.md``, any case)?

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
    names = _instruction_names(instruction_files)
    # A control file that is a link (CLAUDE.md -> docs/guide.md, .claw -> cfg) makes what it
    # points to a control file too: writing docs/guide.md rewrites the system prompt.
    linked = _link_targets(ws, config_home, instruction_files)
    config_dirs = {Path(os.path.normpath(user_config_dir(config_home).absolute()))}
    try:
        config_dirs.add(Path(os.path.realpath(user_config_dir(config_home))))
    except (OSError, ValueError):
        pass
    for spelled in spellings:
        # any case: on macOS and Windows `.CLAW/config.toml` is `.claw/config.toml`
        if any(part.casefold() == CONTROL_DIR for part in spelled.parts):
            return True
        if spelled.name.casefold() in names:
            return True
        if any(_is_within(spelled, d) for d in config_dirs):
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
    mount read-only: ``<workspace>/.claw``, the instruction files in the workspace and the
    user config directory (``existing_only=False`` also lists those that do not exist yet,
    which a sandbox may want to block from being created)."""
    ws = Path(workspace).absolute()
    paths = [ws / CONTROL_DIR, user_config_dir(config_home).absolute()]
    paths += [ws / name for name in instruction_files]
    unique: list[Path] = []
    for p in paths:
        if p not in unique and (not existing_only or p.exists() or p.is_symlink()):
            unique.append(p)
    return unique


# A token of a shell command that names a control file: a `.claw` path component, an
# instruction file name, or the user config directory however it is spelled. Best effort (a
# shell can spell a path endless ways): it makes the card say what the command touches; the
# sandbox's read-only mounts are the boundary.
_CONTROL_WORDS = re.compile(
    r"""
    (?:^|[\s/'"=<>|;&(`:])\.claw(?:$|[\s/'"<>|;&)`*?])   # .claw, ./.claw/x, "$D/.claw"
    | (?:claude|agents)\.md\b                          # instruction files
    | \bclawnb/config\.toml\b | \.config/clawnb\b       # the user config directory
    | XDG_CONFIG_HOME
    """,
    re.IGNORECASE | re.VERBOSE,
)


def command_mentions_control_file(
    command: str, *, config_home: str | os.PathLike[str] | None = None
) -> bool:
    """Does a shell command name a control file (``.claw/…``, ``CLAUDE.md``, ``AGENTS.md``,
    the user config directory)? Used to flag the approval card, never to allow anything."""
    if _CONTROL_WORDS.search(command):
        return True
    config_dir = str(user_config_dir(config_home).absolute())
    return config_dir in command


# ---------------------------------------------------------------------------------------------
# Undoing what an unsandboxed command did to the control files
# ---------------------------------------------------------------------------------------------

# Set by the gate for the tool call it is letting through: True only when a person approved
# this very call as a change to a control file (the "asked every time" question). Without the
# sandbox, bash and shell hooks undo every other change to a control file (ControlSnapshot).
control_change_approved: ContextVar[bool] = ContextVar(
    "clawnb_control_change_approved", default=False
)

# Control files are small: a bigger one is compared by size and time only (and cannot be put
# back), and a control directory holding more entries than this is not cleaned of new ones.
SNAPSHOT_MAX_BYTES = 1 << 20
SNAPSHOT_MAX_ENTRIES = 500
# The session store (.claw/sessions) is written by the agent itself while a call runs.
_SNAPSHOT_SKIP = frozenset({"sessions"})

# one path's state: ("dir",), ("link", target), ("file", content or None when too big, stamp)
_State = tuple[Any, ...]


class ControlSnapshot:
    """What the control files look like now, to undo a change made behind the gate's back.

    Without the OS sandbox nothing stops ``cp evil.toml .cl''aw/config.toml`` — the command
    text check cannot read names a shell builds. This checks the *effect*: :meth:`take`
    before the command records which control files exist and their content (the files are
    small; the session store is skipped), :meth:`undo` after it puts back what changed and
    removes what was created, and returns those paths so the result can say so.
    """

    def __init__(self, roots: Iterable[Path]) -> None:
        self.roots = list(dict.fromkeys(roots))
        self.complete = True
        self.before = self._scan()
        self.not_restored: list[Path] = []

    @classmethod
    def take(
        cls,
        workspace: str | os.PathLike[str],
        *,
        config_home: str | os.PathLike[str] | None = None,
        instruction_files: Iterable[str] = DEFAULT_INSTRUCTION_FILES,
    ) -> ControlSnapshot:
        """Record the control files of ``workspace`` and of the user (existing or not)."""
        roots = control_paths(
            workspace,
            config_home=config_home,
            instruction_files=instruction_files,
            existing_only=False,
        )
        # a control file that is a link: what it points to is read as the control file
        roots += [target for target in _link_targets(Path(workspace).absolute(), config_home,
                                                     instruction_files)]  # fmt: skip
        return cls(roots)

    # -- recording --------------------------------------------------------------------------
    def _scan(self) -> dict[Path, _State]:
        state: dict[Path, _State] = {}
        for root in self.roots:
            self._record(root, state)
            if os.path.isdir(root) and not os.path.islink(root):
                for folder, dirs, files in os.walk(root):
                    if Path(folder) == root:
                        dirs[:] = [d for d in dirs if d not in _SNAPSHOT_SKIP]
                    for name in [*dirs, *files]:
                        if len(state) >= SNAPSHOT_MAX_ENTRIES:
                            self.complete = False
                            return state
                        self._record(Path(folder) / name, state)
        return state

    @staticmethod
    def _record(path: Path, state: dict[Path, _State]) -> None:
        try:
            info = os.lstat(path)
        except OSError:
            return
        if stat.S_ISLNK(info.st_mode):
            state[path] = ("link", os.readlink(path))
        elif stat.S_ISDIR(info.st_mode):
            state[path] = ("dir",)
        elif info.st_size <= SNAPSHOT_MAX_BYTES:
            try:
                state[path] = ("file", path.read_bytes(), stat.S_IMODE(info.st_mode))
            except OSError:
                state[path] = ("file", None, (info.st_size, info.st_mtime_ns))
        else:
            state[path] = ("file", None, (info.st_size, info.st_mtime_ns))

    # -- undoing ----------------------------------------------------------------------------
    def undo(self) -> list[Path]:
        """Put the control files back as :meth:`take` found them; returns the paths that had
        changed (created, changed or removed). A file too big to have been kept is listed in
        :attr:`not_restored` instead of being put back."""
        now = self._scan()
        changed: set[Path] = set()
        if self.complete:
            # created: files and links first, then folders that are empty now (a folder the
            # agent itself filled meanwhile — the session store — stays)
            for path in sorted(set(now) - set(self.before), key=lambda p: -len(p.parts)):
                if now[path][0] == "dir":
                    try:
                        os.rmdir(path)
                    except OSError:
                        continue  # holds what the agent wrote (or what could not go)
                else:
                    try:
                        os.unlink(path)
                    except OSError:
                        self.not_restored.append(path)
                changed.add(path)
        for path in sorted(self.before, key=lambda p: len(p.parts)):
            was = self.before[path]
            if now.get(path) == was:
                continue
            changed.add(path)
            try:
                self._restore(path, was, now.get(path))
            except OSError:
                self.not_restored.append(path)
        return sorted(changed)

    def _restore(self, path: Path, was: _State, now: _State | None) -> None:
        if was[0] == "file" and was[1] is None:
            self.not_restored.append(path)
            return
        if now is not None and (now[0] != was[0] or was[0] == "link"):
            if now[0] == "dir":
                shutil.rmtree(path)
            else:
                os.unlink(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        if was[0] == "dir":
            path.mkdir(exist_ok=True)
        elif was[0] == "link":
            os.symlink(was[1], path)
        else:
            path.write_bytes(was[1])
            os.chmod(path, was[2])


def undone_message(
    actor: str,
    paths: Iterable[Path],
    workspace: str | os.PathLike[str],
    not_restored: Iterable[Path] = (),
) -> str:
    """What the tool result says after :meth:`ControlSnapshot.undo` put something back."""
    ws = Path(workspace).absolute()

    def show(items: Iterable[Path]) -> str:
        return ", ".join(str(p.relative_to(ws)) if _is_within(p, ws) else str(p) for p in items)

    message = (
        f"{actor} changed the agent's own configuration ({show(paths)}); the change was "
        "undone — control files change only with an explicit approval"
    )
    left = list(not_restored)
    if left:
        message += f" (could not be put back: {show(left)})"
    return message


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
