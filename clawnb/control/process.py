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

:func:`kill_group` is the one TERM → grace → KILL sequence; :func:`child_env` is the
environment children get (the agent's own keys and secret-looking variables removed).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
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
        read_end, write_end = os.pipe()
        try:
            proc = subprocess.Popen(
                ["sh", "-c", _WATCHDOG_SCRIPT],
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


def _die_with_parent_hook() -> Any:
    """A ``preexec_fn`` run in the child between fork and exec. It

    * registers the child's new group with the watchdog — from the child itself, so there is
      no moment in which the group runs unregistered;
    * sets ``PR_SET_PDEATHSIG`` (SIGKILL when we die) on Linux, then exits at once if we are
      already gone: that closes the race in which bubblewrap's own ``--die-with-parent``
      arms itself too late.
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

    return arm


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
    by the watchdog — and return the process (its pid is the group id).

    Cancelling the caller while the child starts kills the group before re-raising, so a
    half-started command never lingers.
    """
    full = list(sandbox.wrap(argv, cwd=cwd)) if sandbox is not None else list(argv)
    task = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *full,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,
            preexec_fn=_die_with_parent_hook(),
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
