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
  with ``allowed_hosts = ["pypi.org", "*.github.com"]`` the namespace stays private and the
  one way out is a filtering proxy on the host that lets only those hosts through
  (:mod:`clawnb.control.proxy`: tinyproxy and socat, bridged in through a unix socket; the
  proxy variables point at it). Without tinyproxy or socat it stays no network, and the
  status says why;
* its **own PID namespace** (``--unshare-pid``) and ``--die-with-parent``: when the command
  ends, or the agent dies, every process it started dies too — ``setsid`` and double forks
  included — and the agent's own process (``/proc/$PPID/environ``) is not visible;
* **no capabilities** (``--cap-drop ALL``): under root, a process could otherwise remount
  the file system read-write;
* ``.git`` **its own mount point**: it cannot be renamed or replaced (``mv .git .git2 && cp -r
  .git2 .git`` with a new config fails with "Device or resource busy"); ``.git/config``,
  ``.git/hooks`` and ``.git/commondir`` are read-only, and a ``.git/commondir`` or hooks folder
  a command creates is removed after the call (git would follow it to another repository's
  config, outside the sandbox, at the next ``git status``);
* **no host sockets**: ``/run`` (``/var/run``), ``$XDG_RUNTIME_DIR`` and Jupyter's runtime
  folders (the kernels' connection files, the server's token) are empty, the sockets named
  by ``SSH_AUTH_SOCK``, ``DBUS_*_BUS_ADDRESS`` and ``DOCKER_HOST`` and the kernel connection
  file named on our own command line are replaced by an empty file — with ``network = "on"``
  too (:func:`hidden_paths`);
* **limits** (:class:`SandboxPolicy` ``max_processes``, ``max_memory_mb``,
  ``max_file_size_mb``): private writable memory per process (``RLIMIT_DATA``, not
  ``RLIMIT_AS``: Chromium, V8, Go and the JVM reserve far more address space than they use,
  and refuse to start under an address-space limit) and the size of any file written
  (``RLIMIT_FSIZE``), set in the child before bubblewrap starts; the number of processes by
  a ``pids`` cgroup when we are root (the kernel exempts uid 0 from ``RLIMIT_NPROC``), else
  by ``RLIMIT_NPROC`` inside bubblewrap's user namespace (``prlimit``; per namespace, so the
  user's other processes do not count). A fork bomb or a memory bomb meets the limit, and the
  result says which limit it was (:func:`limit_note`);
* **secret files masked** when nobody approved the call (:attr:`SandboxPolicy.mask_secrets`:
  plan mode's read-only bash, ``auto_allow``, allow rules, bypass mode): the workspace's secret
  files and the well-known credential files of the home folder (:data:`HOME_CREDENTIALS`) read
  as empty, so no transformation of their content (``rev .env``, ``rot13``, spacing) can
  leave with the output. A call a person approved sees them read-only, as before.

``[sandbox] mode``: ``"auto"`` (default) uses bubblewrap when it is installed and works, and
says which way bash runs; ``"required"`` refuses to run bash or shell hooks without it;
``"off"`` runs them as before (application-layer checks only). ``auto_allow = true`` lets
sandboxed bash calls run without asking (explicit deny and ask rules still apply).
bubblewrap itself is :func:`clawnb.control.executables.trusted_executable`'s: never one from
the workspace (a planted ``.venv/bin/bwrap`` would run commands unsandboxed while the status
says "sandboxed").

On macOS the same file and network rules are a ``sandbox-exec`` (Seatbelt) profile
(:func:`seatbelt_profile`), used when ``sandbox-exec`` is on PATH. It is written, documented
and unit-checked as text, but has never run: this project's CI is Linux.
"""

from __future__ import annotations

import atexit
import functools
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import SandboxUnavailable
from ..instructions import DEFAULT_INSTRUCTION_FILES as _INSTRUCTION_FILES
from .dirs import AddedDirectories
from .executables import resolve, trusted_executable
from .proxy import HostProxy, bridge_prefix, proxy_env, proxy_programs

__all__ = [
    "CONTROL_DIRS",
    "HOME_CREDENTIALS",
    "SandboxPolicy",
    "SandboxUnavailable",
    "SandboxStatus",
    "approved_call",
    "bwrap_path",
    "hidden_paths",
    "jupyter_runtime_dirs",
    "limit_note",
    "policy_for",
    "seatbelt_profile",
    "working_bwrap",
]

# Inside the workspace, relative paths that stay read-only for sandboxed commands.
CONTROL_DIRS = (".claw",)
# commondir: a main repository has none; one pointing elsewhere makes git read that config
GIT_CONTROL = (".git/config", ".git/hooks", ".git/commondir")

# Credential files and folders of the home folder, masked when the sandbox masks secrets.
HOME_CREDENTIALS = (
    ".ssh", ".aws", ".gnupg", ".kube", ".azure", ".docker/config.json", ".netrc",
    ".git-credentials", ".pgpass", ".npmrc", ".pypirc", ".config/gcloud", ".config/gh",
    ".config/hub", ".cargo/credentials", ".cargo/credentials.toml",
    ".terraform.d/credentials.tfrc.json",
)  # fmt: skip

# Limits for sandboxed processes (``[sandbox]`` max_processes, max_memory_mb,
# max_file_size_mb; 0 = none). Generous for builds and test runs, far below what would
# trouble the machine.
DEFAULT_MAX_PROCESSES = 1024
DEFAULT_MAX_MEMORY_MB = 8192
DEFAULT_MAX_FILE_SIZE_MB = 4096

# Set by the gate when a person approved this very call (the tool runs in the same context).
# A sandboxed bash call nobody approved — plan mode, auto_allow, an allow rule, bypass mode,
# an earlier "always" — sees the secret files masked.
approved_call: ContextVar[bool] = ContextVar("clawnb_sandbox_approved_call", default=False)
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


def bwrap_path(workspace: str | os.PathLike[str] | None = None) -> str | None:
    """Where a trusted ``bwrap`` is on the current ``PATH`` — never in ``workspace`` (default:
    the current directory), see :mod:`clawnb.control.executables`; looked up each time (PATH
    may change)."""
    return trusted_executable("bwrap", workspace=workspace)


def working_bwrap(workspace: str | os.PathLike[str] | None = None) -> str | None:
    """A trusted ``bwrap`` that can build a sandbox here, or ``None``."""
    path = bwrap_path(workspace)
    return path if path is not None and _bwrap_works(path) is None else None


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


def jupyter_runtime_dirs() -> list[str]:
    """Where Jupyter keeps kernel connection files (their HMAC key drives the kernel) and the
    server's ``jpserver-*.json`` (its token): ``jupyter_core.paths.jupyter_runtime_dir()``,
    computed without importing Jupyter — every place it can be for this environment
    (``JUPYTER_RUNTIME_DIR``, ``JUPYTER_DATA_DIR``, ``XDG_DATA_HOME``, the home defaults)."""
    env = os.environ
    home = os.path.expanduser("~")
    found = [env.get("JUPYTER_RUNTIME_DIR", "")]
    if env.get("JUPYTER_DATA_DIR"):
        found.append(os.path.join(env["JUPYTER_DATA_DIR"], "runtime"))
    if env.get("XDG_DATA_HOME"):
        found.append(os.path.join(env["XDG_DATA_HOME"], "jupyter", "runtime"))
    found.append(os.path.join(home, ".local", "share", "jupyter", "runtime"))
    if sys.platform == "darwin":
        found.append(os.path.join(home, "Library", "Jupyter", "runtime"))
        found.append(os.path.join(home, "Library", "Application Support", "jupyter", "runtime"))
    out: list[str] = []
    for path in found:
        if path and os.path.isabs(path) and path not in out:
            out.append(path)
    return out


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def hidden_paths() -> list[str]:
    """Folders every sandbox replaces with an empty tmpfs, network or not: where a host's
    unix sockets and Jupyter's connection files live — ``/run`` (and ``/var/run`` when it is
    not a link to it), ``$XDG_RUNTIME_DIR`` (D-Bus, Wayland, PulseAudio, often ssh-agent),
    :func:`jupyter_runtime_dirs`. (``/tmp``, with ``/tmp/.X11-unix``, is private anyway.)
    A connect() needs no write access to the folder, so read-only is not enough."""
    out: list[str] = []
    for path in [
        "/run",
        "/var/run",
        os.environ.get("XDG_RUNTIME_DIR", ""),
        *jupyter_runtime_dirs(),
    ]:
        if not path or not os.path.isabs(path) or os.path.islink(path) or not os.path.isdir(path):
            continue
        real = os.path.realpath(path)
        if real in ("/", os.path.realpath(os.path.expanduser("~"))):
            continue  # a runtime "folder" that is the whole disk or the home: not hidden
        if _inside(real, "/tmp") or any(_inside(real, seen) for seen in out):
            continue
        out = [seen for seen in out if not _inside(seen, real)] + [real]
    return out


def _named_sockets() -> list[str]:
    """The sockets the environment names (an ssh agent, a D-Bus bus, a Docker daemon)."""
    env = os.environ
    paths = [env.get("SSH_AUTH_SOCK", "")]
    for name in ("DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS"):
        for part in env.get(name, "").split(";"):
            for item in part.partition(":")[2].split(","):
                if item.startswith("path="):
                    paths.append(item.removeprefix("path="))
    docker = env.get("DOCKER_HOST", "")
    if docker.startswith("unix://"):
        paths.append(docker.removeprefix("unix://"))
    return [p for p in paths if p and os.path.isabs(p) and os.path.exists(p)]


def _kernel_connection_files() -> list[str]:
    """The Jupyter connection file on our own command line (``-f …/kernel-ID.json``): an
    agent inside a kernel knows where its key is even when it is not in a runtime folder."""
    return [
        arg
        for arg in sys.argv[1:]
        if arg.endswith(".json")
        and os.path.basename(arg).startswith("kernel-")
        and os.path.isabs(arg)
        and os.path.isfile(arg)
    ]


class _EmptyFile:
    """The empty, read-only file a masked file is bound to (a bind needs a source, and
    ``/dev/null`` would accept writes): ``clawnb-empty-UID`` in the temp folder, shared by our
    processes and used only once checked (a regular file of ours, empty, read-only, one link
    — in a sticky temp folder nobody else can replace it); if that name is taken by anything
    else, a private one for this process. Sandboxed commands never see the host's temp
    folder, so none of them can write to it."""

    def __init__(self) -> None:
        self._path: str | None = None
        self._lock = threading.Lock()

    @staticmethod
    def _usable(path: str) -> bool:
        try:
            st = os.lstat(path)
        except OSError:
            return False
        return (
            stat.S_ISREG(st.st_mode)
            and st.st_uid == os.geteuid()
            and st.st_size == 0
            and st.st_nlink == 1
            and not st.st_mode & 0o222
        )

    def path(self) -> str:
        with self._lock:
            if self._path is not None and self._usable(self._path):
                return self._path
            import tempfile  # on first use: `import clawnb` stays cheap

            shared = os.path.join(tempfile.gettempdir(), f"clawnb-empty-{os.geteuid()}")
            try:
                os.close(
                    os.open(shared, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o444)
                )
            except OSError:
                pass  # there already (ours from before, or something to leave alone)
            if self._usable(shared):
                self._path = shared
            else:
                fd, private = tempfile.mkstemp(prefix="clawnb-empty-")
                os.close(fd)
                os.chmod(private, 0o444)
                atexit.register(_remove_quietly, private)
                self._path = private
            return self._path


def _remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


_empty = _EmptyFile()


def _setuid(path: str) -> bool:
    try:
        return bool(os.stat(path).st_mode & 0o4000)
    except OSError:
        return False


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
    # secret files read as empty instead of read-only (a call nobody approved; plan mode)
    mask_secrets: bool = False
    # limits per sandboxed command (0: none); see the module docstring for how each is set
    max_processes: int = DEFAULT_MAX_PROCESSES
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB
    max_file_size_mb: int = DEFAULT_MAX_FILE_SIZE_MB
    # folders outside the workspace the person added (additional_directories, add-dir):
    # bound like the workspace, their control and secret files protected as its own. Shared
    # with the session's gate, so a folder added while it runs counts at the next command.
    directories: AddedDirectories = field(default_factory=AddedDirectories, compare=False)
    # [sandbox] allowed_hosts (with network off): the only hosts reachable, through
    # :attr:`proxy`, which starts at the first command and is shared by the copies
    # (masked(), a subagent's) — stopped by :meth:`close`
    allowed_hosts: tuple[str, ...] = ()
    proxy: HostProxy | None = field(default=None, compare=False, repr=False)
    socat: str = "socat"
    # why the allowlist is not in force (tinyproxy or socat missing): shown by describe()
    network_note: str = ""

    # -- description ----------------------------------------------------------------------
    @property
    def access(self) -> str:
        return "workspace-write" if self.writable else "read-only"

    def describe(self) -> str:
        """``"sandboxed: workspace-write, no network"`` — for the status, banner and cards."""
        net = "network" if self.network else "no network"
        if self.proxied:
            net = f"network only to {', '.join(self.allowed_hosts)} (through a proxy)"
        elif self.network_note:
            net = f"no network ({self.network_note})"
        how = " (Seatbelt)" if self.kind == "seatbelt" else ""
        return f"sandboxed{how}: {self.access}, {net}"

    def read_only(self) -> SandboxPolicy:
        """The same policy with the workspace read-only too and the secret files masked (plan
        mode looks, never touches, and runs bash without asking)."""
        return replace(
            self,
            writable=False,
            network=False,
            auto_allow=False,
            mask_secrets=True,
            allowed_hosts=(),
        )

    @property
    def proxied(self) -> bool:
        """Whether commands reach :attr:`allowed_hosts` through the proxy (bubblewrap only)."""
        return (
            bool(self.allowed_hosts)
            and not self.network
            and self.proxy is not None
            and self.kind == "bwrap"
        )

    def proxy_mark(self) -> int:
        """Before a command: where the proxy's log is now (for :meth:`proxy_note`)."""
        return self.proxy.log_mark() if self.proxied and self.proxy is not None else 0

    def proxy_note(self, mark: int) -> str | None:
        """After a command: a line naming what the proxy refused it since ``mark``, and the
        key that allows a host (an HTTPS client shows only ``403 Filtered``), or ``None``."""
        if not self.proxied or self.proxy is None:
            return None
        refused = self.proxy.refused_since(mark)
        if not refused:
            return None
        return (
            f"[sandbox: the proxy refused {', '.join(refused)}: only [sandbox] allowed_hosts "
            f"({', '.join(self.allowed_hosts)}) are reached, HTTPS on ports 443 and 80; add a "
            "host there in the user config (~/.config/clawnb/config.toml)]"
        )

    def close(self) -> None:
        """Stop the allowlist's proxy, if it was started (the session ends)."""
        if self.proxy is not None:
            self.proxy.stop()

    def masked(self) -> SandboxPolicy:
        """The same policy with the secret files reading as empty (a call nobody approved)."""
        return self if self.mask_secrets else replace(self, mask_secrets=True)

    # -- protected paths ------------------------------------------------------------------
    def control_paths(self) -> list[Path]:
        """Control files and folders (existing or not): :func:`clawnb.control.trust.control_paths`
        (``.claw/``, the instruction files, the user config directory) plus, in a git
        repository, ``.git/config`` and ``.git/hooks`` (a fresh ``git init`` is fine)."""
        from .trust import control_paths

        paths: list[Path] = []
        for root in self.roots():
            for path in control_paths(
                root, instruction_files=self.instruction_files, existing_only=False
            ):
                if path not in paths:
                    paths.append(path)
            dot_git = root / ".git"
            if os.path.isdir(dot_git) and not os.path.islink(dot_git):
                paths += [root / name for name in GIT_CONTROL]
            elif os.path.isfile(dot_git) and not os.path.islink(dot_git):
                paths.append(dot_git)  # a worktree's "gitdir: …" line: where git reads config
        return paths

    def roots(self) -> list[Path]:
        """The workspace, then each added folder (:attr:`directories`)."""
        return [self.workspace, *(d for d in self.directories if d != self.workspace)]

    def home_credentials(self) -> list[Path]:
        """The credential files and folders of the home folder that exist
        (:data:`HOME_CREDENTIALS`): masked with the workspace's secret files."""
        home = Path(os.path.expanduser("~"))
        if not home.is_absolute() or home == Path("/"):
            return []
        return [home / name for name in HOME_CREDENTIALS if os.path.lexists(home / name)]

    def secret_paths(self) -> list[Path]:
        """The workspace's secret files that exist (:func:`clawnb.control.secrets.is_secret_file`):
        all of those at the root, and those up to :data:`SECRET_SCAN_DEPTH` folders below it
        (hidden and dependency folders skipped; at most :data:`SECRET_SCAN_LIMIT` entries
        read, so a huge tree costs little). Mounted read-only inside the sandbox."""
        from .secrets import is_secret_file

        found: list[Path] = []
        budget = SECRET_SCAN_LIMIT
        level = [str(root) for root in self.roots()]  # the added folders' secrets too
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
        roots = self.roots()
        return [
            p
            for p in self.control_paths()
            if not os.path.lexists(p)
            and any(p.is_relative_to(root) for root in roots)
            and p != ws / CONTROL_DIRS[0]
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
        hidden = hidden_paths()
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
        # a hidden folder that holds the workspace is emptied before the workspace is bound
        # back into it; the others after, so one inside the workspace is hidden too
        holding = [h for h in hidden if _inside(ws, h)]
        for folder in holding:
            args += ["--tmpfs", folder]
        # the workspace may live under /tmp, which the private tmpfs hides
        args += ["--bind" if self.writable else "--ro-bind", ws, ws]
        # the person's added folders: writable like the workspace (bound read-only too in a
        # read-only sandbox, where one under /tmp would be hidden otherwise)
        added = [str(d) for d in self.directories if os.path.isdir(d)]
        for folder in added:
            args += ["--bind" if self.writable else "--ro-bind", folder, folder]
        for folder in hidden:
            if folder not in holding:
                args += ["--tmpfs", folder]
        for root in (ws, *added):
            dot_git = os.path.join(root, ".git")
            if self.writable and os.path.isdir(dot_git) and not os.path.islink(dot_git):
                # .git its own mount point: it cannot be renamed or replaced (EBUSY), so no
                # command can swap in a copy with another config ("mv .git x && cp -r x .git")
                args += ["--bind", dot_git, dot_git]
        if self.network and os.path.islink("/etc/resolv.conf"):
            # systemd-resolved keeps it under /run: bind the one file back, or no DNS
            real = os.path.realpath("/etc/resolv.conf")
            if os.path.isfile(real) and any(_inside(real, h) for h in hidden):
                args += ["--ro-bind", real, real]
        # in a read-only workspace every read-only bind would change nothing (and finding
        # the control files reads the configuration): only masks are worth their cost there
        read_only = [*self.control_paths(), *self.extra_read_only] if self.writable else []
        masked: list[Path] = []
        if self.mask_secrets:
            masked = [*self.secret_paths(), *self.home_credentials()]
        elif self.writable:
            read_only += self.secret_paths()
            # a credential store inside an added folder (~/.config/gh when ~/.config is
            # added) is read-only, as the secret files are
            read_only += [
                c for c in self.home_credentials() if any(_inside(str(c), d) for d in added)
            ]
        for path in read_only:
            if os.path.islink(path):
                # a control file that is a link (CLAUDE.md -> docs/guide.md): its target is
                # what the agent reads, so that is what is bound read-only
                path = Path(os.path.realpath(path))
            if not os.path.exists(path):
                continue
            p = str(path)
            args += ["--ro-bind", p, p]

        def invisible(path: str) -> bool:  # already behind a private tmpfs
            return not any(_inside(path, root) for root in (ws, *added)) and any(
                _inside(path, h) for h in ("/tmp", "/var/tmp", *hidden)
            )

        for path in masked:
            p = os.path.realpath(path)
            if not os.path.exists(p) or _inside(ws, p) or invisible(p):
                continue
            if os.path.isdir(p):
                args += ["--tmpfs", p, "--remount-ro", p]
            else:
                args += ["--ro-bind", _empty.path(), p]
        for sock in [*_named_sockets(), *_kernel_connection_files()]:
            p = os.path.realpath(sock)
            if not invisible(p) and not os.path.isdir(p):
                args += ["--ro-bind", _empty.path(), p]
        bridge: list[str] = []
        if self.proxied and self.proxy is not None:
            # the allowlist: the host proxy's socket, and a bridge to it on the private
            # loopback that the proxy variables name (ProxyUnavailable, an OSError, if the
            # proxy cannot start: the command does not run)
            from .proxy import SOCKET_IN_SANDBOX

            args += ["--ro-bind", self.proxy.start(), SOCKET_IN_SANDBOX, *proxy_env()]
            bridge = bridge_prefix(self.socat)
        args += ["--chdir", os.fspath(cwd) if cwd is not None else ws]
        # the home folder is read-only: tools that cache there (pip, uv, pre-commit …) follow
        # XDG_CACHE_HOME into the private /tmp instead of failing
        args += ["--setenv", "TMPDIR", "/tmp", "--setenv", "XDG_CACHE_HOME", "/tmp/.cache", "--"]
        args += bridge
        args += self._nproc_prefix()
        args += list(argv)
        return args

    # -- limits ---------------------------------------------------------------------------
    def _nproc_prefix(self) -> list[str]:
        """``prlimit --nproc=N:N --`` run inside the sandbox, where bubblewrap's user
        namespace makes ``RLIMIT_NPROC`` count this command's processes only (set before
        bubblewrap, it would count all of the user's processes). Not for root: the kernel
        exempts uid 0, so :meth:`pids_limit` (a cgroup) does it."""
        if self.max_processes <= 0 or os.geteuid() == 0 or _setuid(self.bwrap):
            return []
        prlimit = trusted_executable("prlimit", workspace=self.workspace)
        if prlimit is None:
            return []
        n = self.max_processes
        return [prlimit, f"--nproc={n}:{n}", "--"]

    def pids_limit(self) -> int:
        """The ``pids`` cgroup limit :func:`clawnb.control.process.spawn` puts the command
        under (0: none) — for root, whom ``RLIMIT_NPROC`` does not bind."""
        if self.kind != "bwrap" or os.geteuid() != 0:
            return 0
        return max(self.max_processes, 0)

    def rlimits(self) -> list[tuple[int, int]]:
        """``(resource, bytes)`` set in the child before bubblewrap starts (inherited by
        everything inside): private writable memory per process (``RLIMIT_DATA``) and the
        size of a file written (``RLIMIT_FSIZE``)."""
        if self.kind != "bwrap":
            return []
        out: list[tuple[int, int]] = []
        if self.max_memory_mb > 0:
            out.append((resource.RLIMIT_DATA, self.max_memory_mb * 1024 * 1024))
        if self.max_file_size_mb > 0:
            out.append((resource.RLIMIT_FSIZE, self.max_file_size_mb * 1024 * 1024))
        return out

    def limits_description(self) -> str:
        """``"at most 1024 processes, 8192 MiB of memory per process, 4096 MiB per file"``."""
        parts = []
        if self.max_processes > 0:
            parts.append(f"at most {self.max_processes} processes")
        if self.max_memory_mb > 0:
            parts.append(f"{self.max_memory_mb} MiB of memory per process")
        if self.max_file_size_mb > 0:
            parts.append(f"{self.max_file_size_mb} MiB per file")
        return ", ".join(parts) or "no limits"


# What programs write to stderr when a limit stops them (EAGAIN from fork, ENOMEM from malloc).
_MEMORY_SIGNS = ("Cannot allocate memory", "cannot allocate memory", "MemoryError",
                 "out of memory", "Out of memory", "std::bad_alloc", "memory exhausted")  # fmt: skip


def limit_note(policy: SandboxPolicy, returncode: int | None, stderr: str) -> str | None:
    """A line for a sandboxed result that ran into a limit (``None``: none seen): which one,
    and the ``[sandbox]`` key that sets it, so the model and the person know why. Read from
    the exit status and stderr only (a ``grep MemoryError`` of the sources is not a limit)."""
    hit: list[str] = []
    lines = stderr.splitlines()
    if policy.max_file_size_mb > 0 and (
        returncode in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ)
        or any("File size limit exceeded" in line for line in lines)
    ):
        hit.append(f"a file reached {policy.max_file_size_mb} MiB (max_file_size_mb)")
    if policy.max_processes > 0 and any(
        "fork" in line and "Resource temporarily unavailable" in line for line in lines
    ):
        hit.append(f"at most {policy.max_processes} processes (max_processes)")
    if (
        policy.max_memory_mb > 0
        and returncode != 0
        and any(sign in line for line in lines for sign in _MEMORY_SIGNS)
    ):
        hit.append(f"{policy.max_memory_mb} MiB of memory per process (max_memory_mb)")
    if not hit:
        return None
    return f"[sandbox: limit reached: {'; '.join(hit)}; see [sandbox] in the config]"


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
    max_processes: int = DEFAULT_MAX_PROCESSES,
    max_memory_mb: int = DEFAULT_MAX_MEMORY_MB,
    max_file_size_mb: int = DEFAULT_MAX_FILE_SIZE_MB,
    directories: AddedDirectories | None = None,
    allowed_hosts: Iterable[str] = (),
) -> SandboxStatus:
    """Resolve ``[sandbox]`` settings against this machine: a :class:`SandboxStatus` with the
    policy to use (``None`` when processes run unsandboxed or are refused). The sandbox
    program is looked up outside ``workspace`` only (:mod:`clawnb.control.executables`).
    ``directories``: the added folders outside the workspace, bound like it.
    ``allowed_hosts``: with the network off, the hosts reachable through the proxy
    (:mod:`clawnb.control.proxy`; not started until the first command)."""
    directories = directories if directories is not None else AddedDirectories()
    hosts = tuple(dict.fromkeys(allowed_hosts))
    if mode not in MODES:
        raise ValueError(f"[sandbox] mode must be one of {', '.join(MODES)}, got {mode!r}")
    if mode == "off":
        return SandboxStatus(mode, None)
    net = network in (True, "on")
    if sys.platform == "darwin":
        found = resolve("sandbox-exec", workspace=workspace)
        if found.path is None:
            return SandboxStatus(mode, None, _not_found("sandbox-exec", found.why_not()))
        # Seatbelt matches real paths (/tmp is /private/tmp): the profile names the real one
        policy = SandboxPolicy(
            Path(os.path.realpath(workspace)),
            network=net,
            auto_allow=auto_allow,
            instruction_files=tuple(instruction_files),
            bwrap=found.path,
            kind="seatbelt",
            max_processes=max_processes,
            max_memory_mb=max_memory_mb,
            max_file_size_mb=max_file_size_mb,
            directories=directories,
        )
        return SandboxStatus(mode, policy)
    if not sys.platform.startswith("linux"):
        return SandboxStatus(mode, None, f"no OS sandbox for {sys.platform}")
    found = resolve("bwrap", workspace=workspace)
    if found.path is None:
        return SandboxStatus(mode, None, _not_found("bubblewrap (bwrap)", found.why_not()))
    problem = _bwrap_works(found.path)
    if problem is not None:
        return SandboxStatus(mode, None, f"bubblewrap does not work here: {problem}")
    proxy: HostProxy | None = None
    socat = "socat"
    note = ""
    if hosts and not net:
        tinyproxy, socat_path = proxy_programs()
        missing = [n for n, p in (("tinyproxy", tinyproxy), ("socat", socat_path)) if p is None]
        if missing:
            note = f"allowed_hosts needs {' and '.join(missing)}: apt-get install tinyproxy socat"
        else:
            proxy = HostProxy(hosts, tinyproxy=tinyproxy, socat=socat_path)
            socat = socat_path or socat
    policy = SandboxPolicy(
        Path(workspace).absolute(),
        network=net,
        auto_allow=auto_allow,
        instruction_files=tuple(instruction_files),
        bwrap=found.path,
        max_processes=max_processes,
        max_memory_mb=max_memory_mb,
        max_file_size_mb=max_file_size_mb,
        directories=directories,
        allowed_hosts=hosts if not net else (),
        proxy=proxy,
        socat=socat,
        network_note=note,
    )
    return SandboxStatus(mode, policy)


def _not_found(what: str, passed_over: str) -> str:
    if not passed_over:
        return f"{what} is not on PATH"
    # a candidate from the workspace (or writable by others) is never run: say which
    return f"{what} is not on PATH outside the workspace (not used: {passed_over})"


def status_from_config(config: Any, workspace: str | os.PathLike[str]) -> SandboxStatus:
    """:func:`policy_for` from a ``Config`` (its ``[sandbox]`` section, instruction files and
    ``additional_directories``, relative ones read from ``workspace``)."""
    section = getattr(config, "sandbox", None)
    directories = AddedDirectories.from_config(
        getattr(config, "additional_directories", None), workspace
    )
    return policy_for(
        workspace,
        mode=getattr(section, "mode", "auto"),
        network=getattr(section, "network", "off"),
        auto_allow=getattr(section, "auto_allow", False),
        instruction_files=getattr(config, "instruction_files", DEFAULT_INSTRUCTION_FILES),
        max_processes=getattr(section, "max_processes", DEFAULT_MAX_PROCESSES),
        max_memory_mb=getattr(section, "max_memory_mb", DEFAULT_MAX_MEMORY_MB),
        max_file_size_mb=getattr(section, "max_file_size_mb", DEFAULT_MAX_FILE_SIZE_MB),
        directories=directories,
        allowed_hosts=getattr(section, "allowed_hosts", ()) or (),
    )


def _seatbelt_reads(policy: SandboxPolicy, lit: Any) -> str:
    """Reads everywhere — but for a call nobody approved, not the secret files (excluded with
    ``require-not``, like the control files from writes, so no rule order matters)."""
    if not policy.mask_secrets:
        return "(allow file-read*)"
    excluded = ""
    for path in [*policy.secret_paths(), *policy.home_credentials()]:
        real = os.path.realpath(path)
        kind = "subpath" if os.path.isdir(real) else "literal"
        excluded += f" (require-not ({kind} {lit(real)}))"
    return f'(allow file-read* (require-all (subpath "/"){excluded}))'


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
        _seatbelt_reads(policy, lit),
        '(allow file-write* (literal "/dev/null") (literal "/dev/tty") (literal "/dev/dtracehelper"))',
        '(allow file-write* (subpath "/private/tmp") (subpath "/private/var/folders"))',
    ]
    if policy.writable:
        # one rule that excludes the control paths (require-not), rather than a deny after
        # the allow, so nothing depends on which of two matching rules Seatbelt prefers
        excluded = "".join(
            f" (require-not (subpath {lit(path)}))" for path in policy.control_paths()
        )
        for root in policy.roots():
            lines.append(f"(allow file-write* (require-all (subpath {lit(root)}){excluded}))")
    if policy.network:
        lines.append("(allow network*)")
    else:
        lines.append("(allow network* (local unix-socket))")
    return "\n".join(lines) + "\n"
