"""The OS sandbox for processes the agent starts: a policy, and the argv that enforces it.

Permission rules decide *whether to ask* before a command runs; they read the command's text,
and no reading of shell text is complete. The sandbox decides *what the command can do*,
whatever its spelling: on Linux every ``bash`` call and every shell hook runs under
bubblewrap (``bwrap``) with

* the whole file system **read-only**, except the workspace and a private, empty ``/tmp``
  (``workspace-write``; the plan-mode variant leaves the workspace read-only too);
* the **control files read-only even inside the workspace**: ``.claw/`` (config, permission
  rules, sessions, hooks), the instruction files (``CLAUDE.md``, ``AGENTS.md`` …), and git's
  ``.git/config`` and ``.git/hooks`` (both can name a program that git later runs outside the
  sandbox). An instruction file that did not exist yet cannot be mounted; if a command
  creates one, :meth:`SandboxPolicy.sweep` removes it after the call and says so;
* the workspace's **secret files read-only** (``.env``, ``.env.local``, ``id_rsa`` … —
  :func:`clawnb.control.secrets.is_secret_file`), which write and edit refuse too: those at the
  workspace root and, up to :data:`SECRET_SCAN_DEPTH` folders down (a bounded scan, see
  :meth:`SandboxPolicy.secret_paths`), below it. A secret file created at the root by a
  command (``.env`` included) is removed after the call, and the result says so;
* **no network** (``--unshare-net``: only a private loopback) unless ``network = "on"``;
* its **own PID namespace** (``--unshare-pid``) and ``--die-with-parent``: when the command
  ends, or the agent dies, every process it started dies too — ``setsid`` and double forks
  included — and the agent's own process (``/proc/$PPID/environ``) is not visible;
* **no capabilities** (``--cap-drop ALL``): under root, a process could otherwise remount
  the file system read-write.

``[sandbox] mode``: ``"auto"`` (default) uses bubblewrap when it is installed and works, and
says which way bash runs; ``"required"`` refuses to run bash or shell hooks without it;
``"off"`` runs them as before (application-layer checks only). ``auto_allow = true`` lets
sandboxed bash calls run without asking (explicit deny and ask rules still apply).

On macOS the same file and network rules are a ``sandbox-exec`` (Seatbelt) profile
(:func:`seatbelt_profile`), used when ``sandbox-exec`` is on PATH. It is written, documented
and unit-checked as text, but has never run: this project's CI is Linux.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import SandboxUnavailable
from ..instructions import DEFAULT_INSTRUCTION_FILES as _INSTRUCTION_FILES

__all__ = [
    "CONTROL_DIRS",
    "SandboxPolicy",
    "SandboxUnavailable",
    "SandboxStatus",
    "bwrap_path",
    "policy_for",
    "seatbelt_profile",
]

# Inside the workspace, relative paths that stay read-only for sandboxed commands.
CONTROL_DIRS = (".claw",)
GIT_CONTROL = (".git/config", ".git/hooks")
# the instruction files the system prompt loads (one list, in clawnb.instructions)
DEFAULT_INSTRUCTION_FILES = tuple(_INSTRUCTION_FILES)

MODES = ("auto", "required", "off")

# How far below the workspace root existing secret files are looked for (and how many entries
# the scan may read at most): every sandboxed call scans, so a huge tree must not cost much.
SECRET_SCAN_DEPTH = 2
SECRET_SCAN_LIMIT = 5000
# Folders that hold installed or generated files, not the project's own keys.
_SCAN_SKIP = frozenset(
    {".git", ".claw", "node_modules", ".venv", "venv", "__pycache__", "site-packages",
     ".tox", ".nox", ".mypy_cache", ".ruff_cache", ".pytest_cache", "build", "dist"}
)  # fmt: skip


def bwrap_path() -> str | None:
    """Where ``bwrap`` is on the current ``PATH`` (looked up each time: PATH may change)."""
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=8)
def _bwrap_works(path: str) -> str | None:
    """``None`` if ``path`` can build a minimal sandbox here, else why not (cached per
    binary: some containers forbid the namespaces bubblewrap needs)."""
    try:
        proc = subprocess.run(
            [
                path,
                "--ro-bind",
                "/",
                "/",
                "--unshare-net",
                "--unshare-pid",
                "--as-pid-1",
                "--cap-drop",
                "ALL",
                "--die-with-parent",
                "--",
                "true",
            ],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if proc.returncode != 0:
        return proc.stderr.decode("utf-8", "replace").strip() or f"exit status {proc.returncode}"
    return None


@dataclass(frozen=True)
class SandboxPolicy:
    """What a sandboxed process may do. :meth:`wrap` turns a command into the bwrap argv."""

    workspace: Path
    writable: bool = True
    network: bool = False
    auto_allow: bool = False
    instruction_files: tuple[str, ...] = DEFAULT_INSTRUCTION_FILES
    bwrap: str = "bwrap"
    extra_read_only: tuple[Path, ...] = field(default=())
    # "bwrap" (Linux) or "seatbelt" (macOS sandbox-exec: same file and network rules, but no
    # PID namespace — the process group and the watchdog end what a command leaves behind)
    kind: str = "bwrap"

    # -- description ----------------------------------------------------------------------
    @property
    def access(self) -> str:
        return "workspace-write" if self.writable else "read-only"

    def describe(self) -> str:
        """``"sandboxed: workspace-write, no network"`` — for the status, banner and cards."""
        net = "network" if self.network else "no network"
        how = " (Seatbelt)" if self.kind == "seatbelt" else ""
        return f"sandboxed{how}: {self.access}, {net}"

    def read_only(self) -> SandboxPolicy:
        """The same policy with the workspace read-only too (plan mode looks, never touches)."""
        return replace(self, writable=False, network=False, auto_allow=False)

    # -- protected paths ------------------------------------------------------------------
    def control_paths(self) -> list[Path]:
        """Control files and folders (existing or not): :func:`clawnb.control.trust.control_paths`
        (``.claw/``, the instruction files, the user config directory) plus, in a git
        repository, ``.git/config`` and ``.git/hooks`` (a fresh ``git init`` is fine)."""
        from .trust import control_paths

        ws = self.workspace
        paths = control_paths(ws, instruction_files=self.instruction_files, existing_only=False)
        if os.path.isdir(ws / ".git"):
            paths += [ws / name for name in GIT_CONTROL]
        return paths

    def secret_paths(self) -> list[Path]:
        """The workspace's secret files that exist (:func:`clawnb.control.secrets.is_secret_file`):
        all of those at the root, and those up to :data:`SECRET_SCAN_DEPTH` folders below it
        (hidden and dependency folders skipped; at most :data:`SECRET_SCAN_LIMIT` entries
        read, so a huge tree costs little). Mounted read-only inside the sandbox."""
        from .secrets import is_secret_file

        found: list[Path] = []
        budget = SECRET_SCAN_LIMIT
        level = [str(self.workspace)]
        for depth in range(SECRET_SCAN_DEPTH + 1):
            below: list[str] = []
            for folder in level:
                try:
                    with os.scandir(folder) as entries:
                        for entry in entries:
                            budget -= 1
                            if budget < 0:
                                return found
                            if is_secret_file(entry.name):
                                found.append(Path(entry.path))
                            elif (
                                depth < SECRET_SCAN_DEPTH
                                and entry.name not in _SCAN_SKIP
                                and not entry.name.startswith(".")
                                and entry.is_dir(follow_symlinks=False)
                            ):
                                below.append(entry.path)
                except OSError:
                    continue
            level = below
        return found

    def root_secret_names(self) -> set[str]:
        """The names of the secret files at the workspace root now (for :meth:`sweep`: one
        created by a command could not be mounted read-only before it existed)."""
        from .secrets import is_secret_file

        try:
            with os.scandir(self.workspace) as entries:
                return {e.name for e in entries if is_secret_file(e.name)}
        except OSError:
            return set()

    def prepare(self) -> list[Path]:
        """Before a sandboxed run: make sure ``.claw/`` exists (so it can be mounted
        read-only — a command must not create the config it will be judged by), and return
        the control files that are missing, for :meth:`sweep` after the run."""
        for name in CONTROL_DIRS:
            try:
                (self.workspace / name).mkdir(exist_ok=True)
            except OSError:
                pass
        ws = self.workspace
        return [
            p
            for p in self.control_paths()
            if not os.path.lexists(p) and p.is_relative_to(ws) and p != ws / CONTROL_DIRS[0]
        ]

    def sweep(
        self, missing_before: Iterable[Path], secrets_before: set[str] | None = None
    ) -> list[Path]:
        """Remove control files a sandboxed command created although they were missing
        before it ran (a path that does not exist cannot be mounted read-only) and, given
        ``secrets_before`` (:meth:`root_secret_names` before the run), secret files it created
        at the workspace root; returns what was removed, so the result can say so."""
        removed = []
        candidates = list(missing_before)
        if secrets_before is not None:
            candidates += [
                self.workspace / name for name in sorted(self.root_secret_names() - secrets_before)
            ]
        for path in candidates:
            if os.path.islink(path) or os.path.isfile(path):
                try:
                    os.unlink(path)
                except OSError:
                    continue
                removed.append(path)
            elif os.path.isdir(path):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
        return removed

    # -- the argv -------------------------------------------------------------------------
    def wrap(self, argv: Sequence[str], *, cwd: str | os.PathLike[str] | None = None) -> list[str]:
        """``bwrap <policy> -- argv`` (or ``sandbox-exec -p <profile> argv`` on macOS). The
        working directory is kept (``--chdir``)."""
        if self.kind == "seatbelt":
            return [self.bwrap, "-p", seatbelt_profile(self), *argv]
        ws = str(self.workspace)
        args = [
            self.bwrap,
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
            "--tmpfs", "/tmp",
            "--tmpfs", "/var/tmp",
            "--unshare-pid",
            # the command itself is PID 1 of the namespace: no bwrap reaper process, which
            # would be orphaned at every call and linger as a zombie where the container's
            # init does not reap (docker without --init); when the command ends, the
            # namespace ends, and everything it started with it
            "--as-pid-1",
            "--unshare-ipc",
            "--unshare-uts",
            "--die-with-parent",
            "--cap-drop", "ALL",
        ]  # fmt: skip
        if not self.network:
            args.append("--unshare-net")
        if self.writable:
            args += ["--bind", ws, ws]
        else:
            # the workspace may live under /tmp, which the private tmpfs hides
            args += ["--ro-bind", ws, ws]
        for path in [*self.control_paths(), *self.secret_paths(), *self.extra_read_only]:
            if os.path.islink(path):
                # a control file that is a link (CLAUDE.md -> docs/guide.md): its target is
                # what the agent reads, so that is what is bound read-only
                path = Path(os.path.realpath(path))
            if not os.path.exists(path):
                continue
            p = str(path)
            args += ["--ro-bind", p, p]
        args += ["--chdir", os.fspath(cwd) if cwd is not None else ws]
        # the home folder is read-only: tools that cache there (pip, uv, pre-commit …) follow
        # XDG_CACHE_HOME into the private /tmp instead of failing
        args += ["--setenv", "TMPDIR", "/tmp", "--setenv", "XDG_CACHE_HOME", "/tmp/.cache", "--"]
        args += list(argv)
        return args


@dataclass(frozen=True)
class SandboxStatus:
    """Which way processes run, in words a person reads once (status, banner, cards)."""

    mode: str
    policy: SandboxPolicy | None
    reason: str = ""

    def describe(self) -> str:
        if self.policy is not None:
            return self.policy.describe()
        if self.mode == "off":
            return "not sandboxed (sandbox mode off)"
        if self.mode == "required":
            return f"bash refused: sandbox required but unavailable ({self.reason})"
        return f"not sandboxed ({self.reason})"

    @property
    def refused(self) -> bool:
        """``mode = "required"`` without a working sandbox: processes must not start."""
        return self.mode == "required" and self.policy is None

    def require(self) -> SandboxPolicy | None:
        """The policy to run under; raises :class:`SandboxUnavailable` when refused."""
        if self.refused:
            raise SandboxUnavailable(
                f'the sandbox is required ([sandbox] mode = "required") but {self.reason}; '
                "install bubblewrap (apt-get install bubblewrap) or set "
                '[sandbox] mode = "auto" or "off"'
            )
        return self.policy


def policy_for(
    workspace: str | os.PathLike[str],
    *,
    mode: str = "auto",
    network: str | bool = "off",
    auto_allow: bool = False,
    instruction_files: Iterable[str] = DEFAULT_INSTRUCTION_FILES,
) -> SandboxStatus:
    """Resolve ``[sandbox]`` settings against this machine: a :class:`SandboxStatus` with the
    policy to use (``None`` when processes run unsandboxed or are refused)."""
    if mode not in MODES:
        raise ValueError(f"[sandbox] mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "off":
        return SandboxStatus(mode, None)
    net = network in (True, "on")
    if sys.platform == "darwin":
        exe = shutil.which("sandbox-exec")
        if exe is None:
            return SandboxStatus(mode, None, "sandbox-exec is not on PATH")
        # Seatbelt matches real paths (/tmp is /private/tmp): the profile names the real one
        policy = SandboxPolicy(
            Path(os.path.realpath(workspace)),
            network=net,
            auto_allow=auto_allow,
            instruction_files=tuple(instruction_files),
            bwrap=exe,
            kind="seatbelt",
        )
        return SandboxStatus(mode, policy)
    if not sys.platform.startswith("linux"):
        return SandboxStatus(mode, None, f"no OS sandbox for {sys.platform}")
    path = bwrap_path()
    if path is None:
        return SandboxStatus(mode, None, "bubblewrap (bwrap) is not on PATH")
    problem = _bwrap_works(path)
    if problem is not None:
        return SandboxStatus(mode, None, f"bubblewrap does not work here: {problem}")
    policy = SandboxPolicy(
        Path(workspace).absolute(),
        network=net,
        auto_allow=auto_allow,
        instruction_files=tuple(instruction_files),
        bwrap=path,
    )
    return SandboxStatus(mode, policy)


def status_from_config(config: Any, workspace: str | os.PathLike[str]) -> SandboxStatus:
    """:func:`policy_for` from a ``Config`` (its ``[sandbox]`` section and instruction files)."""
    section = getattr(config, "sandbox", None)
    return policy_for(
        workspace,
        mode=getattr(section, "mode", "auto"),
        network=getattr(section, "network", "off"),
        auto_allow=getattr(section, "auto_allow", False),
        instruction_files=getattr(config, "instruction_files", DEFAULT_INSTRUCTION_FILES),
    )


def seatbelt_profile(policy: SandboxPolicy) -> str:
    """The macOS ``sandbox-exec -p PROFILE`` equivalent of ``policy`` (untested here: the
    project's CI is Linux). Reads everywhere; writes only in the workspace and temp dirs,
    never to the control files; network only when the policy allows it."""

    def lit(path: Path | str) -> str:
        return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = [
        "(version 1)",
        "(deny default)",
        "(allow process-exec)",
        "(allow process-fork)",
        "(allow signal (target same-sandbox))",
        "(allow sysctl-read)",
        "(allow mach-lookup)",
        "(allow file-read*)",
        '(allow file-write* (literal "/dev/null") (literal "/dev/tty") (literal "/dev/dtracehelper"))',
        '(allow file-write* (subpath "/private/tmp") (subpath "/private/var/folders"))',
    ]
    if policy.writable:
        # one rule that excludes the control paths (require-not), rather than a deny after
        # the allow, so nothing depends on which of two matching rules Seatbelt prefers
        excluded = "".join(
            f" (require-not (subpath {lit(path)}))" for path in policy.control_paths()
        )
        lines.append(
            f"(allow file-write* (require-all (subpath {lit(policy.workspace)}){excluded}))"
        )
    if policy.network:
        lines.append("(allow network*)")
    else:
        lines.append("(allow network* (local unix-socket))")
    return "\n".join(lines) + "\n"
