"""BashTool (book ch10): run a shell command and return what it printed.

The book's contract: ``bash -c <command>``; the result is stdout, then ``stderr: …`` when
stderr is not empty, or ``(no output)`` when the command printed nothing; a non-zero exit is
*not* an error (the model reads the output and decides).

What makes it safe to run inside a notebook:

* the command runs in **its own process group** (``start_new_session=True``). When it times
  out, when the task is cancelled (kernel interrupt, Stop button), and also after it exits,
  the whole group gets SIGTERM and then SIGKILL — so ``sleep 1000 &`` or a forgotten server
  cannot outlive the tool call (a process that calls ``setsid`` itself escapes any group and
  is out of reach; that is documented, not hidden);
* stdout and stderr are drained concurrently while the command runs, so a command printing
  megabytes never deadlocks on a full pipe; capture is capped (the rest is counted, not kept);
* stdin is ``/dev/null`` (an interactive prompt gets EOF instead of hanging) and pagers are
  set to ``cat``; the agent's API-key variables and every variable whose name looks secret
  (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*CREDENTIAL*``; see
  :func:`clawnb.secrets.scrubbed_env`) are removed from the command's environment
  (``hide_env=False`` keeps them, a tuple removes only the names in it);
* ``timeout`` (seconds, default 120) gives ``error: command timed out after {n}s`` with
  whatever was printed so far; a non-zero exit adds ``exit code: N`` to the output;
* the working directory is the agent's workspace.
"""

from __future__ import annotations

import asyncio
import os
import signal
from typing import Any

from ..secrets import scrubbed_env
from ..types import ToolDefinition
from .base import BaseTool, ToolError, optional_int, require_str

__all__ = ["BashTool"]

# How long the group gets between SIGTERM and SIGKILL.
KILL_GRACE_S = 1.0


def _group_alive(pgid: int) -> bool:
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


def _signal_group(pgid: int, sig: int) -> bool:
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
    killed at once before the cancellation propagates.
    """
    if not _signal_group(pgid, signal.SIGTERM):
        return
    loop = asyncio.get_running_loop()
    try:
        deadline = loop.time() + grace
        while loop.time() < deadline and _group_alive(pgid):
            await asyncio.sleep(0.02)
    finally:
        _signal_group(pgid, signal.SIGKILL)
    # SIGKILL is delivered asynchronously: wait (briefly) until the group is really gone, so
    # that "the call returned" means "nothing of it is still running".
    deadline = loop.time() + 2.0
    while loop.time() < deadline and _group_alive(pgid):
        await asyncio.sleep(0.01)


async def wait_exit(proc: asyncio.subprocess.Process) -> int:
    """Wait until the child itself has exited.

    Not ``proc.wait()``: on Python 3.11 that also waits for the pipes to close, which never
    happens while a background job (``cmd &``) still holds them.
    """
    delay = 0.002
    while proc.returncode is None:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)
    return proc.returncode


class _Capture:
    """Drains one pipe to EOF, keeping at most ``limit`` bytes and counting the rest."""

    def __init__(self, stream: asyncio.StreamReader, limit: int) -> None:
        self.chunks: list[bytes] = []
        self.kept = 0
        self.dropped = 0
        self.limit = limit
        self.task = asyncio.ensure_future(self._drain(stream))

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                return
            room = self.limit - self.kept
            if room > 0:
                self.chunks.append(chunk[:room])
                self.kept += min(room, len(chunk))
            self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self, name: str) -> str:
        text = b"".join(self.chunks).decode("utf-8", errors="replace")
        if self.dropped:
            text += f"\n[... {self.dropped} more bytes of {name} not captured ...]"
        return text


def format_output(stdout: str, stderr: str, returncode: int | None) -> str:
    """The book's layout: stdout, ``stderr: …``, ``exit code: N``, or ``(no output)``."""
    result = stdout
    if stderr:
        if result:
            result += "\n"
        result += "stderr: " + stderr
    if returncode:
        if result:
            result += "\n"
        if returncode < 0:
            try:
                name = signal.Signals(-returncode).name
            except ValueError:
                name = f"signal {-returncode}"
            result += f"exit code: {128 - returncode} (killed by {name})"
        else:
            result += f"exit code: {returncode}"
    return result or "(no output)"


class BashTool(BaseTool):
    """Run ``bash -c <command>`` in ``workspace`` with a timeout, killing the whole process
    group when the call ends."""

    read_only = False
    concurrency_safe = False

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None = None,
        *,
        timeout: int = 120,
        max_timeout: int = 600,
        max_output_bytes: int = 8 * 1024 * 1024,
        env: dict[str, str] | None = None,
        kill_grace: float = KILL_GRACE_S,
        hide_env: bool | tuple[str, ...] = True,
    ) -> None:
        self.workspace = workspace
        self.timeout = timeout
        self.max_timeout = max_timeout
        self.max_output_bytes = max_output_bytes
        self.env = env
        self.hide_env = hide_env
        self.kill_grace = kill_grace
        self.definition = (
            ToolDefinition("bash", "Run a bash command and return its output.")
            .param("command", "string", "The bash command to run", True)
            .param("timeout", "integer", f"Timeout in seconds (default: {timeout})", False)
        )

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ if self.env is None else self.env)
        if self.hide_env is True:
            # the agent's keys and every secret-looking variable (clawnb.secrets) never reach
            # the model via `env`
            env = scrubbed_env(env)
        else:
            for name in self.hide_env or ():
                env.pop(name, None)
        # Pagers and editors would wait on a terminal that is not there.
        env.setdefault("PAGER", "cat")
        env.setdefault("GIT_PAGER", "cat")
        env.setdefault("GIT_TERMINAL_PROMPT", "0")
        return env

    async def call(self, args: Any) -> str:
        command = require_str(args, "command")
        timeout = optional_int(args, "timeout", minimum=1)
        if timeout is None:
            timeout = self.timeout
        if timeout > self.max_timeout:
            raise ToolError(f"'timeout' must be at most {self.max_timeout} seconds, got {timeout}")
        # The child may already run (and start `cmd &` jobs) before the spawn coroutine
        # returns. Cancelling the spawn itself would make asyncio kill only bash and then wait
        # for pipes the jobs still hold (forever, on 3.11); so the spawn is shielded and a
        # cancellation that arrives meanwhile is handled once the process object exists.
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                "bash",
                "-c",
                command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.workspace,
                env=self._environment(),
                start_new_session=True,
            )
        )
        cancelled = False
        while True:
            try:
                proc = await asyncio.shield(spawn)
                break
            except asyncio.CancelledError:
                if not spawn.done():
                    cancelled = True
                    continue
                if spawn.cancelled() or spawn.exception() is not None:
                    raise
                cancelled = True
                proc = spawn.result()
                break
            except OSError as exc:
                if cancelled:
                    raise asyncio.CancelledError from None
                raise ToolError(f"failed to run bash command: {exc}") from exc
        pgid = proc.pid  # the session leader's pid is the group id
        assert proc.stdout is not None and proc.stderr is not None
        out = _Capture(proc.stdout, self.max_output_bytes)
        err = _Capture(proc.stderr, self.max_output_bytes)
        if cancelled:
            await self._shielded_cleanup(proc, pgid, out, err)
            raise asyncio.CancelledError
        timed_out = False
        try:
            try:
                async with asyncio.timeout(timeout):
                    await wait_exit(proc)
            except TimeoutError:
                timed_out = True
            # Exited or timed out: nothing of this call may keep running. Background jobs
            # die here too, which also closes the pipes they inherited.
            await kill_group(pgid, self.kill_grace)
            await wait_exit(proc)
            await self._finish_reading(out, err)
        except BaseException:
            # Cancelled (or something broke): kill the group before the error propagates.
            await self._shielded_cleanup(proc, pgid, out, err)
            raise
        stdout, stderr = out.text("stdout"), err.text("stderr")
        if timed_out:
            partial = format_output(stdout, stderr, None)
            message = f"command timed out after {timeout}s"
            if partial != "(no output)":
                message += f"; output so far:\n{partial}"
            raise ToolError(message)
        return format_output(stdout, stderr, proc.returncode)

    async def _finish_reading(self, out: _Capture, err: _Capture) -> None:
        """Wait for both pipes to reach EOF. A process that escaped the group (``setsid``)
        could hold them open forever, so give up after a moment."""
        done, pending = await asyncio.wait({out.task, err.task}, timeout=2.0)
        for task in pending:
            task.cancel()
        for task in pending:
            try:
                await task
            except asyncio.CancelledError:
                pass
        for task in done:
            task.result()

    async def _shielded_cleanup(
        self, proc: asyncio.subprocess.Process, pgid: int, out: _Capture, err: _Capture
    ) -> None:
        """Run :meth:`_cleanup` to the end even if we are cancelled meanwhile. Cancelled again
        (a second Ctrl-C during the TERM grace period), the group gets SIGKILL at once: the
        caller may stop the event loop right after, and a cleanup task still waiting out the
        grace period would then never send it."""
        cleanup = asyncio.ensure_future(self._cleanup(proc, pgid, out, err))
        try:
            await asyncio.shield(cleanup)
        except asyncio.CancelledError:
            _signal_group(pgid, signal.SIGKILL)
            raise

    async def _cleanup(
        self, proc: asyncio.subprocess.Process, pgid: int, out: _Capture, err: _Capture
    ) -> None:
        try:
            await kill_group(pgid, self.kill_grace)
            await wait_exit(proc)
        finally:
            for task in (out.task, err.task):
                task.cancel()
            await asyncio.gather(out.task, err.task, return_exceptions=True)
