"""Child processes: one home for starting, confining and killing them.

Every process the agent starts on the model's or the user's behalf — a ``bash`` tool call, a
shell hook — goes through :func:`spawn`, which

* starts it in **its own process group** (``start_new_session``), so :func:`kill_group` can
  end the command *and* everything it started (``cmd &``, a forgotten server);
* wraps it in the OS sandbox when a :class:`~clawnb.control.sandbox.SandboxPolicy` is given
  (bubblewrap: its own PID namespace and ``--die-with-parent``, so nothing — ``setsid``
  included — outlives the call or the agent);
* arms ``PR_SET_PDEATHSIG`` in the child and registers its group with a small **watchdog**
  process (from the child, before it execs), so that even a ``kill -9`` of the agent (or a
  kernel crash) takes the group down: the watchdog notices its pipe from us closing and
  kills every group still registered. (``PR_SET_PDEATHSIG`` alone would only reach the
  direct child, not the jobs it started; a ``setsid`` job escapes the group, and only the
  sandbox's PID namespace catches it.)

* runs a bare program name (``bash``, ``sh``) **from a trusted place only**
  (:func:`clawnb.control.executables.trusted_executable`): a ``.venv/bin/bash`` planted in
  the workspace must not be what an approved ``ls`` runs;
* for a sandboxed command, sets its **limits** in the child before bubblewrap starts
  (:meth:`~clawnb.control.sandbox.SandboxPolicy.rlimits`: memory per process, file size) and,
  when we are root — whom the kernel exempts from ``RLIMIT_NPROC`` — puts it in a ``pids``
  cgroup of its own (:func:`pids_cgroup`), where the kernel offers one we may create.

:func:`kill_group` is the one TERM → grace → KILL sequence; :func:`child_env` is the
environment children get (the agent's own keys and secret-looking variables removed).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import errno
import os
import resource
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .sandbox import SandboxPolicy

__all__ = [
    "KILL_GRACE_S",
    "child_env",
    "end_group",
    "group_alive",
    "kill_group",
    "pids_cgroup",
    "signal_group",
    "spawn",
    "wait_exit",
]

# How long a group gets between SIGTERM and SIGKILL.
KILL_GRACE_S = 1.0


def child_env(
    base: Mapping[str, str] | None = None, *, hide: bool | Sequence[str] = True
) -> dict[str, str]:
    """The environment for a child process: ``base`` (default ``os.environ``) without the
    agent's secrets. ``hide=True`` removes the key variables and every secret-looking name
    (:func:`clawnb.control.secrets.scrubbed_env`), a sequence removes only those names, ``False``
    keeps everything."""
    if hide is True:
        from .secrets import scrubbed_env

        return scrubbed_env(base)
    env = dict(os.environ if base is None else base)
    for name in hide or ():
        env.pop(name, None)
    return env


# -- process groups --------------------------------------------------------------------------


def group_alive(pgid: int) -> bool:
    """Does the group still have a member that is not a zombie?

    ``killpg(pgid, 0)`` alone says yes for zombies too, and an orphaned zombie may never be
    reaped when PID 1 is not a real init (containers); /proc tells them apart.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the group; ``False`` when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a member changed uid; nothing we can do
        return True
    return True


async def kill_group(pgid: int, grace: float = KILL_GRACE_S) -> None:
    """SIGTERM the process group, give it ``grace`` seconds, then SIGKILL what is left.

    Safe to call from a cancelled task: if it is cancelled again while waiting, the group is
    killed at once before the cancellation propagates. Returns once nothing of the group is
    running any more (or after a short bound, for a process stuck in the kernel).
    """
    try:
        if not signal_group(pgid, signal.SIGTERM):
            return
        loop = asyncio.get_running_loop()
        try:
            deadline = loop.time() + grace
            while loop.time() < deadline and group_alive(pgid):
                await asyncio.sleep(0.02)
        finally:
            signal_group(pgid, signal.SIGKILL)
        # SIGKILL is delivered asynchronously: wait (briefly) until the group is really gone,
        # so that "the call returned" means "nothing of it is still running".
        deadline = loop.time() + 2.0
        while loop.time() < deadline and group_alive(pgid):
            await asyncio.sleep(0.01)
    finally:
        _watchdog.forget(pgid)


def end_group(pgid: int) -> None:
    """SIGKILL whatever is left of a group, without waiting, and stop watching it: for a
    group whose processes are known to be dying already (a sandbox whose PID namespace ended
    with its bwrap)."""
    signal_group(pgid, signal.SIGKILL)
    _watchdog.forget(pgid)


async def wait_exit(proc: asyncio.subprocess.Process) -> int:
    """Wait until the child itself has exited.

    Not ``proc.wait()``: on Python 3.11 that also waits for the pipes to close, which never
    happens while a background job (``cmd &``) still holds them.
    """
    # Poll often while the command is young (most are short: their latency is the figure a
    # person feels), then back off to 50 ms so a long command costs next to nothing.
    loop = asyncio.get_running_loop()
    start = loop.time()
    delay = 0.001
    while proc.returncode is None:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.004 if loop.time() - start < 0.5 else 0.05)
    return proc.returncode


# -- the watchdog ----------------------------------------------------------------------------

# Reads "+PGID" / "-PGID" lines; at EOF (we exited, however) it kills what is registered.
# (dash's kill takes "-PGID" but not "-- -PGID".)
_WATCHDOG_SCRIPT = r"""
groups=" "
while IFS= read -r line; do
  case "$line" in
    +*) groups="$groups${line#+} " ;;
    -*) groups=$(printf '%s' "$groups" | sed "s/ ${line#-} / /") ;;
  esac
done
for g in $groups; do kill -TERM "-$g" 2>/dev/null; done
sleep 0.5
for g in $groups; do kill -KILL "-$g" 2>/dev/null; done
"""


class _Watchdog:
    """One ``sh`` per agent process that outlives us just long enough to kill our groups."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._pid: int | None = None
        self._owner = 0

    def _start(self) -> int | None:
        from .executables import trusted_executable

        read_end, write_end = os.pipe()
        try:
            proc = subprocess.Popen(
                [trusted_executable("sh") or "/bin/sh", "-c", _WATCHDOG_SCRIPT],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C to our group must not stop it
                close_fds=True,
            )
        except OSError:
            os.close(write_end)
            return None
        finally:
            os.close(read_end)
        self._pid = proc.pid
        # The Popen object is dropped on purpose: the watchdog must not be reaped and killed
        # with it; a thread reaps it if it ever exits while we live.
        threading.Thread(target=proc.wait, daemon=True).start()
        return write_end

    def fd(self) -> int | None:
        """The pipe to the watchdog (started on first use; ``None`` if it cannot start)."""
        with self._lock:
            if self._fd is None or self._owner != os.getpid():  # after a fork: our own one
                self._fd = self._start()
                self._owner = os.getpid()
            return self._fd

    def _send(self, line: str) -> None:
        fd = self.fd()
        if fd is None:
            return
        try:
            os.write(fd, line.encode())
        except OSError:
            with self._lock:
                self._fd = None

    def forget(self, pgid: int) -> None:
        if self._fd is not None:
            self._send(f"-{pgid}\n")

    @property
    def pid(self) -> int | None:
        return self._pid


_watchdog = _Watchdog()


# -- limits ----------------------------------------------------------------------------------


class _PidsCgroups:
    """One ``pids`` cgroup per process limit, made under our own cgroup (v1 ``pids``
    hierarchy, or v2 where our cgroup hands ``pids`` down), named after our pid; removed when
    we exit, and those of agents that are gone when we make ours."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made: dict[int, str | None] = {}
        self._base: tuple[str, str] | None | bool = False  # False: not looked for yet

    @staticmethod
    def _find_base() -> tuple[str, str] | None:
        """Our own ``pids`` cgroup folder, and the file a child joins a cgroup by: v1's
        ``tasks`` — a thread moving itself (``0``) skips the global threadgroup lock that a
        ``cgroup.procs`` write takes, measured 0.5 ms against 12 ms a call; the child is
        single-threaded between fork and exec, so the thread is the process — or v2's
        ``cgroup.procs``."""
        try:
            with open("/proc/self/cgroup") as fh:
                own = [line.rstrip("\n").split(":", 2) for line in fh]
            with open("/proc/self/mountinfo") as fh:
                mounts = [line.split() for line in fh]
        except OSError:
            return None
        for fields in mounts:
            if "-" not in fields:
                continue
            tail = fields[fields.index("-") + 1 :]
            if len(tail) < 3:
                continue
            root, point, fstype, options = fields[3], fields[4], tail[0], tail[2].split(",")
            for entry in own:
                if len(entry) != 3:
                    continue
                v1 = fstype == "cgroup" and "pids" in options and "pids" in entry[1].split(",")
                v2 = fstype == "cgroup2" and entry[0] == "0" and entry[1] == ""
                if not (v1 or v2) or not entry[2].startswith(root):
                    continue
                rel = entry[2][len(root) :].lstrip("/")
                base = os.path.join(point, rel)
                if v2:
                    try:
                        with open(os.path.join(base, "cgroup.subtree_control")) as fh:
                            if "pids" not in fh.read().split():
                                continue
                    except OSError:
                        continue
                if os.access(base, os.W_OK):
                    return base, "cgroup.procs" if v2 else "tasks"
        return None

    def _sweep(self, base: str) -> None:
        """Remove the cgroups of agents that are gone (best effort: one still busy stays)."""
        try:
            names = os.listdir(base)
        except OSError:
            return
        for name in names:
            parts = name.split("-")
            if len(parts) == 3 and parts[0] == "clawnb" and parts[1].isdigit():
                pid = int(parts[1])
                if pid != os.getpid() and not os.path.exists(f"/proc/{pid}"):
                    with contextlib.suppress(OSError):
                        os.rmdir(os.path.join(base, name))

    def procs_file(self, limit: int) -> str | None:
        """The file a child writes ``0`` into to join a cgroup with ``pids.max = limit``
        (``None``: none can be made here)."""
        with self._lock:
            if self._base is False:
                self._base = self._find_base()
                if isinstance(self._base, tuple):
                    self._sweep(self._base[0])
                    atexit.register(self._remove_all)
            if not isinstance(self._base, tuple):
                return None
            base, join = self._base
            if limit not in self._made:
                folder = os.path.join(base, f"clawnb-{os.getpid()}-{limit}")
                try:
                    os.makedirs(folder, exist_ok=True)
                    with open(os.path.join(folder, "pids.max"), "w") as fh:
                        fh.write(str(limit))
                    self._made[limit] = folder
                except OSError:
                    self._made[limit] = None
            made = self._made[limit]
            return None if made is None else os.path.join(made, join)

    def _remove_all(self) -> None:
        for folder in self._made.values():
            if folder is not None:
                with contextlib.suppress(OSError):
                    os.rmdir(folder)


_pids_cgroups = _PidsCgroups()


def pids_cgroup(limit: int) -> str | None:
    """The file a child writes ``0`` into (itself) to run under ``pids.max = limit``
    (tasks: processes and threads), or ``None`` where no such cgroup can be made here
    (not root, no ``pids`` controller, a read-only cgroup file system)."""
    return _pids_cgroups.procs_file(limit) if limit > 0 else None


def _child_limits(sandbox: SandboxPolicy | None) -> tuple[list[tuple[int, int]], str | None]:
    """The resource limits and the cgroup a sandboxed child takes on (computed here, in the
    parent: the child only applies them)."""
    if sandbox is None:
        return [], None
    limits = []
    for which, value in sandbox.rlimits():
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)  # a limit can be lowered, never raised
        limits.append((which, value))
    return limits, pids_cgroup(sandbox.pids_limit())


def _die_with_parent_hook(
    limits: Sequence[tuple[int, int]] = (), cgroup_procs: str | None = None
) -> Any:
    """A ``preexec_fn`` run in the child between fork and exec. It

    * registers the child's new group with the watchdog — from the child itself, so there is
      no moment in which the group runs unregistered;
    * sets ``PR_SET_PDEATHSIG`` (SIGKILL when we die) on Linux, then exits at once if we are
      already gone: that closes the race in which bubblewrap's own ``--die-with-parent``
      arms itself too late;
    * applies a sandboxed command's ``limits`` (soft and hard: nothing inside can raise them)
      and joins its ``pids`` cgroup, so everything it starts is counted from the first fork.
    """
    fd = _watchdog.fd()
    prctl: Any = None
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError):
            prctl = None
    parent = os.getpid()

    def arm() -> None:
        if fd is not None:
            try:
                os.write(fd, b"+%d\n" % os.getpid())  # after setsid: our pid is the group id
            except OSError:
                pass
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)
        for which, value in limits:
            try:
                resource.setrlimit(which, (value, value))
            except (OSError, ValueError):
                pass
        if cgroup_procs is not None:
            try:
                with open(cgroup_procs, "w") as fh:
                    fh.write("0")  # "the writer": this child, before it execs
            except OSError:
                pass

    return arm


def _program(argv: Sequence[str], cwd: str | os.PathLike[str] | None) -> list[str]:
    """``argv`` with a bare program name replaced by its trusted path (never one from the
    workspace, ``cwd``); raises ``FileNotFoundError`` when there is none."""
    from .executables import resolve

    full = list(argv)
    if full and os.sep not in full[0]:
        found = resolve(full[0], workspace=cwd)
        if found.path is None:
            why = f" (not used: {found.why_not()})" if found.passed_over else ""
            raise FileNotFoundError(
                errno.ENOENT, f"{full[0]} is not on PATH outside the workspace{why}"
            )
        full[0] = found.path
    return full


_PR_SET_PDEATHSIG = 1


async def spawn(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    sandbox: SandboxPolicy | None = None,
    stdin: Any = asyncio.subprocess.DEVNULL,
    stdout: Any = asyncio.subprocess.PIPE,
    stderr: Any = asyncio.subprocess.PIPE,
) -> asyncio.subprocess.Process:
    """Start ``argv`` in its own process group — inside ``sandbox`` when given, else watched
    by the watchdog — and return the process (its pid is the group id). A bare program name
    is run from a trusted place only (``FileNotFoundError`` when there is none).

    Cancelling the caller while the child starts kills the group before re-raising, so a
    half-started command never lingers.
    """
    program = _program(argv, cwd)
    full = list(sandbox.wrap(program, cwd=cwd)) if sandbox is not None else program
    limits, cgroup_procs = _child_limits(sandbox)
    task = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *full,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
            preexec_fn=_die_with_parent_hook(limits, cgroup_procs),
        )
    )
    # The child may already run (and start `cmd &` jobs) before the spawn coroutine returns.
    # Cancelling the spawn itself would make asyncio kill only the direct child and then wait
    # for pipes the jobs still hold (forever, on 3.11); so the spawn is shielded and a
    # cancellation that arrives meanwhile is handled once the process object exists.
    cancelled = False
    while True:
        try:
            proc = await asyncio.shield(task)
            break
        except asyncio.CancelledError:
            if not task.done():
                cancelled = True
                continue
            if task.cancelled() or task.exception() is not None:
                raise
            proc = task.result()
            cancelled = True
            break
    if cancelled:
        await asyncio.shield(_end_half_started(proc))
        raise asyncio.CancelledError
    return proc


async def _end_half_started(proc: asyncio.subprocess.Process) -> None:
    """Kill the group of a spawn that was cancelled, and reap its child. Unreaped, the
    process object is dropped with its transport still open: asyncio warns about both when
    they are collected (a ResourceWarning, an error under ``-W error``, that surfaced in
    whichever test ran next) and the child stays a zombie until the watcher gets to it."""
    await kill_group(proc.pid, 0.0)
    with contextlib.suppress(TimeoutError):  # a child stuck in the kernel: do not hang on it
        await asyncio.wait_for(wait_exit(proc), 5)
