"""BashTool (book ch10): run a shell command and return what it printed.

The book's contract: ``bash -c <command>``; the result is stdout, then ``stderr: …`` when
stderr is not empty, or ``(no output)`` when the command printed nothing; a non-zero exit is
*not* an error (the model reads the output and decides).

What makes it safe to run inside a notebook:

* the command runs in **its own process group** (see :mod:`clawnb.control.process`). When it times
  out, when the task is cancelled (kernel interrupt, Stop button), and also after it exits,
  the whole group gets SIGTERM and then SIGKILL — so ``sleep 1000 &`` or a forgotten server
  cannot outlive the tool call;
* with bubblewrap (``[sandbox]``, :mod:`clawnb.control.sandbox`) it runs in the OS sandbox: the file
  system read-only except the workspace and a private /tmp, control files read-only, no
  network, its own PID namespace — so even ``setsid`` jobs die with the call, and with the
  agent. Without the sandbox a watchdog kills the group if the agent dies. A sandboxed call
  no person approved (plan mode's read-only variant, ``auto_allow``, an allow rule, bypass
  mode) sees the **secret files masked** — empty, not merely read-only — so ``rev .env`` or
  any other spelling of their content has nothing to print; processes, memory per process and
  file size are limited (``[sandbox] max_*``), and the result names a limit it ran into;
* stdout and stderr are drained concurrently while the command runs, so a command printing
  megabytes never deadlocks on a full pipe; capture is capped (the rest is counted, not kept);
* stdin is ``/dev/null`` (an interactive prompt gets EOF instead of hanging) and pagers are
  set to ``cat``; the agent's API-key variables and every variable whose name looks secret
  (``*KEY*``, ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*CREDENTIAL*``; see
  :func:`clawnb.control.secrets.scrubbed_env`) are removed from the command's environment
  (``hide_env=False`` keeps them, a tuple removes only the names in it);
* ``timeout`` (seconds, default 120) gives ``error: command timed out after {n}s`` with
  whatever was printed so far; a non-zero exit adds ``exit code: N`` to the output;
* the working directory is the agent's workspace.
"""

from __future__ import annotations

import asyncio
import copy
import os
import signal

from ..control.process import (
    KILL_GRACE_S,
    child_env,
    end_group,
    kill_group,
    signal_group,
    spawn,
    wait_exit,
)
from ..control.sandbox import (
    SandboxPolicy,
    SandboxStatus,
    SandboxUnavailable,
    approved_call,
    limit_note,
)
from ..control.trust import ControlSnapshot, control_change_approved, undone_message
from ..types import JSON, ToolDefinition, ToolTraits
from .base import BaseTool, ToolError, optional_int, report_output, require_str

__all__ = ["BashTool"]

# Kept importable from here: older code and the course import them from the bash tool.
__all__ += ["kill_group", "wait_exit"]


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
            report_output(chunk.decode("utf-8", errors="replace"))  # a live view, if any
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

    _read_only = False  # the plan-mode variant's sandbox makes the file system read-only

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
        sandbox: SandboxStatus | SandboxPolicy | None = None,
    ) -> None:
        self.workspace = workspace
        self.sandbox = sandbox
        self.timeout = timeout
        self.max_timeout = max_timeout
        self.max_output_bytes = max_output_bytes
        self.env = env
        self.hide_env = hide_env
        self.kill_grace = kill_grace
        self.definition = (
            ToolDefinition("bash", "Run a bash command and return its output.")
            .param("command", "string", "The bash command to run", required=True)
            .param("timeout", "integer", f"Timeout in seconds (default: {timeout})")
        )

    # -- sandbox --------------------------------------------------------------------------
    def policy(self) -> SandboxPolicy | None:
        """The sandbox this tool's commands run in (``None``: unsandboxed); raises
        :class:`~clawnb.control.sandbox.SandboxUnavailable` when the sandbox is required but missing."""
        if isinstance(self.sandbox, SandboxStatus):
            return self.sandbox.require()
        return self.sandbox

    @property
    def sandbox_description(self) -> str:
        """``"sandboxed: workspace-write, no network"``, or why commands run unsandboxed."""
        if isinstance(self.sandbox, SandboxStatus):
            return self.sandbox.describe()
        if self.sandbox is not None:
            return self.sandbox.describe()
        return "not sandboxed"

    @property  # computed: what bash may do depends on the sandbox it runs in
    def traits(self) -> ToolTraits:  # type: ignore[override]
        """One command at a time, the read-only variant too: it keeps the workspace unchanged,
        but commands still write temporary files (a shared /tmp under Seatbelt) and share the
        machine. ``auto_allowed``: sandboxed with ``auto_allow``, calls need no approval (deny
        and ask rules still apply; the gate decides)."""
        try:
            policy = self.policy()
        except SandboxUnavailable:
            policy = None
        return ToolTraits(
            read_only=self._read_only,
            concurrency_safe=False,
            destructive=not self._read_only,
            open_world=policy is None or policy.network,
            auto_allowed=policy is not None and policy.auto_allow,
        )

    def read_only_variant(self) -> BashTool | None:
        """A bash tool whose commands see the workspace read-only, the secret files masked
        and have no network (for plan mode, where it runs without asking), or ``None``
        without a working sandbox — then plan mode keeps bash off."""
        try:
            policy = self.policy()
        except SandboxUnavailable:
            return None
        if policy is None:
            return None
        tool = copy.copy(self)  # the same limits and environment, another sandbox
        tool.sandbox = policy.read_only()
        tool._read_only = True
        return tool

    def _environment(self) -> dict[str, str]:
        # the agent's own API keys never reach the model via `env`
        env = child_env(self.env, hide=self.hide_env)
        # Pagers and editors would wait on a terminal that is not there.
        env.setdefault("PAGER", "cat")
        env.setdefault("GIT_PAGER", "cat")
        env.setdefault("GIT_TERMINAL_PROMPT", "0")
        return env

    async def call(self, args: JSON) -> str:
        command = require_str(args, "command")
        timeout = optional_int(args, "timeout", minimum=1)
        if timeout is None:
            timeout = self.timeout
        if timeout > self.max_timeout:
            raise ToolError(f"'timeout' must be at most {self.max_timeout} seconds, got {timeout}")
        try:
            policy = self.policy()
        except SandboxUnavailable as exc:
            raise ToolError(str(exc)) from None
        if policy is not None and not approved_call.get():
            # nobody approved this very command: the secret files read as empty inside
            policy = policy.masked()
        if policy is not None or control_change_approved.get():
            return await self._run(command, timeout, policy)
        # No sandbox mounts the control files read-only: judge the effect instead. Whatever
        # the command did to them without a person's approval of this very call is undone.
        workspace = self.workspace if self.workspace is not None else os.getcwd()
        guard = ControlSnapshot.take(workspace)
        try:
            result = await self._run(command, timeout, policy)
        except ToolError as exc:
            undone = guard.undo()
            if undone:
                raise ToolError(
                    f"{exc}\n[{undone_message('bash', undone, workspace, guard.not_restored)}]"
                ) from None
            raise
        except BaseException:
            guard.undo()  # interrupted: the processes are gone, their changes go too
            raise
        undone = guard.undo()
        if undone:
            result += f"\n[{undone_message('bash', undone, workspace, guard.not_restored)}]"
        return result

    async def _run(self, command: str, timeout: int, policy: SandboxPolicy | None) -> str:
        missing = policy.prepare() if policy is not None else []
        secrets_before = policy.root_secret_names() if policy is not None else None
        proxy_mark = policy.proxy_mark() if policy is not None else 0
        try:
            proc = await spawn(
                ["bash", "-c", command],
                cwd=self.workspace,
                env=self._environment(),
                sandbox=policy,
            )
        except OSError as exc:
            raise ToolError(f"failed to run bash command: {exc}") from exc
        pgid = proc.pid  # the session leader's pid is the group id
        assert proc.stdout is not None and proc.stderr is not None
        out = _Capture(proc.stdout, self.max_output_bytes)
        err = _Capture(proc.stderr, self.max_output_bytes)
        timed_out = False
        try:
            try:
                async with asyncio.timeout(timeout):
                    await wait_exit(proc)
            except TimeoutError:
                timed_out = True
            # Exited or timed out: nothing of this call may keep running. Background jobs
            # die here too, which also closes the pipes they inherited.
            if policy is not None and not timed_out:
                # bwrap exited, so its PID namespace is gone: every process in it was killed
                # by the kernel. No TERM grace to wait out (it costs ~15 ms a call).
                end_group(pgid)
            else:
                await kill_group(pgid, self.kill_grace)
            await wait_exit(proc)
            await self._finish_reading(out, err)
        except BaseException:
            # Cancelled (or something broke): kill the group before the error propagates.
            await self._shielded_cleanup(proc, pgid, out, err)
            raise
        stdout, stderr = out.text("stdout"), err.text("stderr")
        if policy is not None:
            removed = policy.sweep(missing, secrets_before)
            if removed:
                names = ", ".join(os.path.relpath(p, policy.workspace) for p in removed)
                stderr += (
                    f"\n[sandbox: removed {names}: control files and secret files cannot be "
                    "created from inside the sandbox]"
                )
        note = limit_note(policy, proc.returncode, stderr) if policy else None
        if note is not None:
            stderr += f"\n{note}" if stderr else note
        refused = policy.proxy_note(proxy_mark) if policy is not None else None
        if refused is not None:  # [sandbox] allowed_hosts: what the proxy turned away
            stderr += f"\n{refused}" if stderr else refused
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
            signal_group(pgid, signal.SIGKILL)
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
