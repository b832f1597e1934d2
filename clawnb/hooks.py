"""The user's own policy: hooks around the agent (book ch15, with seed 001's configurable hooks).

A hook receives a :class:`HookEvent` — ``AgentStart``, ``PreToolCall``, ``PostToolCall``,
``AgentEnd`` — and answers a :class:`HookAction`: ``Continue``, ``Block(reason)`` or
``ModifyArgs(args)``. :class:`HookRegistry` asks its hooks in registration order; the first
``Block`` wins at once (later hooks are not asked), and if several hooks modify the arguments
the last one wins.

Built in: :class:`LoggingHook` (records ``pre:bash``, ``post:write``, ``agent:start``,
``agent:end``), :class:`BlockingHook` (refuses listed tools) and :class:`ShellHook`, which runs a
command of yours through ``sh -c`` so that real hooks can be written in any language:

* the event arrives as JSON on stdin (``{"event": "pre_tool_call", "tool_name": "bash",
  "args": {...}}``; ``result`` for post events, ``prompt``/``response`` for agent events) and
  as environment variables ``CLAWNB_HOOK_EVENT``, ``CLAWNB_TOOL_NAME``, ``CLAWNB_TOOL_ARGS``
  (left out, with ``CLAWNB_TOOL_ARGS_TRUNCATED=1``, when the arguments exceed 32 KiB);
* exit status 0 continues; any other status blocks the call, with stderr as the reason
  (``hook failed: {stderr}``);
* to change the arguments, print a JSON object ``{"args": {...}}`` on stdout (pre events);
  ``{"block": "reason"}`` on stdout blocks too;
* a hook that runs longer than its timeout is killed — its whole process group — and blocks.

:func:`hooks_from_config` turns ``[[hooks.pre_tool]]`` / ``[[hooks.post_tool]]`` config entries
(``command``, ``tool_pattern``, ``timeout_ms``) into ShellHooks.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import json
import os
from collections.abc import Awaitable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

from .control.secrets import redact, redactor
from .control.shell import glob_match
from .errors import ClawError
from .types import JSON, Variant

if TYPE_CHECKING:
    from .control.sandbox import SandboxPolicy, SandboxStatus

_MAX_ENV_ARGS = 32 * 1024

__all__ = [
    "BlockingHook",
    "Hook",
    "HookAction",
    "HookEvent",
    "HookRegistry",
    "AnyHookAction",
    "AnyHookEvent",
    "LoggingHook",
    "ShellHook",
    "hooks_from_config",
]


class HookEvent:
    """Namespace of hook events: ``HookEvent.PreToolCall("bash", {"command": "ls"})`` …"""

    class PreToolCall(Variant):
        tool_name: str
        args: JSON

    class PostToolCall(Variant):
        tool_name: str
        args: JSON
        result: str

    class AgentStart(Variant):
        prompt: str

    class AgentEnd(Variant):
        response: str


class HookAction:
    """Namespace of hook answers: ``HookAction.Continue()``, ``HookAction.Block(reason)``,
    ``HookAction.ModifyArgs(args)``. They compare by value."""

    class Continue(Variant):
        pass

    class Block(Variant):
        reason: str

    class ModifyArgs(Variant):
        args: JSON


# The namespaces above group the variants; these unions are what signatures name.
AnyHookEvent: TypeAlias = (
    HookEvent.PreToolCall | HookEvent.PostToolCall | HookEvent.AgentStart | HookEvent.AgentEnd
)
AnyHookAction: TypeAlias = HookAction.Continue | HookAction.Block | HookAction.ModifyArgs


@runtime_checkable
class Hook(Protocol):
    """Anything with ``on_event(event) -> HookAction`` (a coroutine or a plain function;
    ``None`` counts as ``Continue``)."""

    def on_event(
        self, event: AnyHookEvent
    ) -> AnyHookAction | None | Awaitable[AnyHookAction | None]: ...


def _event_name(event: AnyHookEvent) -> str:
    match event:
        case HookEvent.PreToolCall():
            return "pre_tool_call"
        case HookEvent.PostToolCall():
            return "post_tool_call"
        case HookEvent.AgentStart():
            return "agent_start"
        case HookEvent.AgentEnd():
            return "agent_end"
    raise TypeError(f"not a hook event: {event!r}")


class HookRegistry:
    """Hooks in registration order."""

    def __init__(self, hooks: Iterable[Hook] = ()) -> None:
        self._hooks: list[Hook] = list(hooks)

    def register(self, hook: Hook) -> None:
        self._hooks.append(hook)

    def with_(self, hook: Hook) -> HookRegistry:
        """Builder form of :meth:`register` (the book's ``with``)."""
        self.register(hook)
        return self

    with_hook = with_

    def is_empty(self) -> bool:
        return not self._hooks

    @property
    def hooks(self) -> list[Hook]:
        return list(self._hooks)

    def __len__(self) -> int:
        return len(self._hooks)

    async def dispatch(self, event: AnyHookEvent) -> AnyHookAction:
        """Ask every hook; return the first ``Block``, else the last ``ModifyArgs``, else
        ``Continue``. A hook that raises blocks the call (a broken policy must not let
        everything through)."""
        modified: HookAction.ModifyArgs | None = None
        for hook in self._hooks:
            try:
                action = hook.on_event(event)
                if inspect.isawaitable(action):
                    action = await action
            except (asyncio.CancelledError, KeyboardInterrupt):
                raise
            except Exception as exc:
                return HookAction.Block(f"hook error: {type(exc).__name__}: {exc}")
            match action:
                case HookAction.Block():
                    return action
                case HookAction.ModifyArgs():
                    modified = action
                case HookAction.Continue() | None:
                    pass
                case _:
                    return HookAction.Block(f"hook error: unexpected action {action!r}")
        return modified if modified is not None else HookAction.Continue()

    def __repr__(self) -> str:
        return f"HookRegistry({self._hooks!r})"


class LoggingHook:
    """Records a short tag per event; always continues. Handy in tests and notebooks."""

    def __init__(self) -> None:
        self._log: list[str] = []

    def messages(self) -> list[str]:
        return list(self._log)

    async def on_event(self, event: AnyHookEvent) -> AnyHookAction:
        match event:
            case HookEvent.PreToolCall(tool_name=name):
                self._log.append(f"pre:{name}")
            case HookEvent.PostToolCall(tool_name=name):
                self._log.append(f"post:{name}")
            case HookEvent.AgentStart():
                self._log.append("agent:start")
            case HookEvent.AgentEnd():
                self._log.append("agent:end")
        return HookAction.Continue()


class BlockingHook:
    """Blocks calls of the listed tools (before they run) with ``reason``."""

    def __init__(self, blocked_tools: Iterable[str], reason: str) -> None:
        self.blocked_tools = list(blocked_tools)
        self.reason = reason

    async def on_event(self, event: AnyHookEvent) -> AnyHookAction:
        if isinstance(event, HookEvent.PreToolCall) and event.tool_name in self.blocked_tools:
            return HookAction.Block(self.reason)
        return HookAction.Continue()


class ShellHook:
    """Runs ``sh -c command`` on tool events (see the module docstring for the protocol).

    ``stage`` limits it to ``"pre"`` or ``"post"`` events (``None``: both, like the book);
    ``tool_pattern`` (or :meth:`for_tool`) is a glob on the tool name; ``timeout_ms`` bounds
    the run (the config default, 5000).
    """

    def __init__(
        self,
        command: str,
        *,
        tool_pattern: str | None = None,
        timeout_ms: int | None = 5000,
        stage: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        sandbox: SandboxStatus | SandboxPolicy | None = None,
    ) -> None:
        if stage not in (None, "pre", "post"):
            raise ValueError(f"stage must be 'pre', 'post' or None, got {stage!r}")
        if timeout_ms is not None and timeout_ms <= 0:
            raise ValueError(f"timeout_ms must be positive, got {timeout_ms}")
        self.command = command
        self.tool_pattern = tool_pattern
        self.timeout_ms = timeout_ms
        self.stage = stage
        self.env = dict(env or {})
        self.cwd = cwd
        # a SandboxStatus or SandboxPolicy (clawnb.control.sandbox): hooks run confined like bash
        self.sandbox = sandbox

    def _policy(self) -> SandboxPolicy | None:
        from .control.sandbox import SandboxStatus

        if isinstance(self.sandbox, SandboxStatus):
            return self.sandbox.require()
        return self.sandbox

    def for_tool(self, pattern: str) -> ShellHook:
        """Only run for tools whose name matches the glob ``pattern`` (builder style)."""
        self.tool_pattern = pattern
        return self

    def matches_tool(self, tool_name: str) -> bool:
        pattern = self.tool_pattern
        return pattern is None or glob_match(pattern, tool_name)

    async def on_event(self, event: AnyHookEvent) -> AnyHookAction:
        if isinstance(event, HookEvent.PreToolCall):
            stage = "pre"
        elif isinstance(event, HookEvent.PostToolCall):
            stage = "post"
        else:
            return HookAction.Continue()
        if self.stage is not None and self.stage != stage:
            return HookAction.Continue()
        if not self.matches_tool(event.tool_name):
            return HookAction.Continue()
        try:
            sandboxed = self._policy() is not None
        except ClawError:
            sandboxed = True  # refused: _run says why, and nothing starts
        if sandboxed:
            return await self._run(event, stage)
        # Unsandboxed, nothing mounts the control files read-only: what the hook did to them
        # is undone after it (a hook is never approved as a control-file change), as for bash.
        from .control.trust import ControlSnapshot, undone_message

        workspace = self.cwd if self.cwd is not None else os.getcwd()
        guard = ControlSnapshot.take(workspace)
        try:
            action = await self._run(event, stage)
        finally:
            undone = guard.undo()
        if undone:
            return HookAction.Block(
                undone_message(f"the hook `{self.command}`", undone, workspace, guard.not_restored)
            )
        return action

    def _payload(self, event: HookEvent.PreToolCall | HookEvent.PostToolCall) -> dict[str, Any]:
        payload: dict[str, Any] = {"event": _event_name(event)}
        payload.update({f.name: getattr(event, f.name) for f in dataclasses.fields(event)})
        return payload

    async def _run(
        self, event: HookEvent.PreToolCall | HookEvent.PostToolCall, stage: str
    ) -> AnyHookAction:
        # A hook is another program, often one that logs: it sees the call and the result with
        # every known key replaced (clawnb.control.secrets), as the model and the screen do.
        payload = redactor.redact_data(self._payload(event))
        data = json.dumps(payload, ensure_ascii=False, default=str).encode()
        from .control.process import child_env, spawn

        # The agent's own API keys stay out of hook processes, as out of bash commands; a
        # hook that needs a key gets it explicitly through ``env``.
        env = child_env()
        env.update(self.env)
        env["CLAWNB_HOOK_EVENT"] = payload["event"]
        env["CLAWNB_TOOL_NAME"] = event.tool_name
        args_json = json.dumps(payload.get("args"), ensure_ascii=False, default=str)
        # One environment string may not exceed 128 KiB (Linux MAX_ARG_STRLEN): a big write
        # would make the hook fail to start. stdin always carries the whole event.
        if len(args_json.encode()) <= _MAX_ENV_ARGS:
            env["CLAWNB_TOOL_ARGS"] = args_json
        else:
            env.pop("CLAWNB_TOOL_ARGS", None)
            env["CLAWNB_TOOL_ARGS_TRUNCATED"] = "1"
        try:
            policy = self._policy()
        except ClawError as exc:
            return HookAction.Block(f"hook not run: {exc}")
        try:
            proc = await spawn(
                ["sh", "-c", self.command],
                stdin=asyncio.subprocess.PIPE,
                env=env,
                cwd=self.cwd,
                sandbox=policy,
            )
        except OSError as exc:
            return HookAction.Block(f"hook error: {exc}")
        timeout = self.timeout_ms / 1000 if self.timeout_ms is not None else None
        try:
            stdout, stderr = await asyncio.wait_for(proc.communicate(data), timeout)
        except TimeoutError:
            await _kill_group(proc)
            return HookAction.Block(f"hook timed out after {self.timeout_ms} ms: {self.command}")
        except BaseException:
            await _kill_group(proc)
            raise
        # Finished: whatever it left running in its group goes too (and the watchdog stops
        # watching the group, whose id the system may hand out again).
        from .control.process import kill_group

        await kill_group(proc.pid, 0.5)
        # What a hook prints reaches the model (a block reason) or the tool (new arguments):
        # a hook that read a key from somewhere must not pass it on.
        err = redact(stderr.decode("utf-8", errors="replace").strip())
        if proc.returncode != 0:
            return HookAction.Block(f"hook failed: {err or f'exit status {proc.returncode}'}")
        return _parse_stdout(redact(stdout.decode("utf-8", errors="replace")), stage)

    def __repr__(self) -> str:
        return f"ShellHook({self.command!r}, tool_pattern={self.tool_pattern!r})"


def _parse_stdout(text: str, stage: str) -> AnyHookAction:
    """A hook may answer with a JSON object on stdout; anything else is just output."""
    text = text.strip()
    if not text.startswith("{"):
        return HookAction.Continue()
    try:
        answer = json.loads(text)
    except json.JSONDecodeError:
        return HookAction.Continue()
    if not isinstance(answer, dict):
        return HookAction.Continue()
    if isinstance(answer.get("block"), str):
        return HookAction.Block(answer["block"])
    if "args" in answer and stage == "pre":
        if not isinstance(answer["args"], dict):
            return HookAction.Block("hook error: 'args' on stdout must be a JSON object")
        return HookAction.ModifyArgs(answer["args"])
    return HookAction.Continue()


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """TERM, then KILL, the hook's whole process group, and reap it.

    The group is killed even when the hook's shell has already exited: a ``cmd &`` job it
    left behind still holds the output pipes (that is why the hook "timed out") and would
    otherwise live on. Cancelled meanwhile, the group gets SIGKILL at once.
    """
    from .control.process import kill_group

    await kill_group(proc.pid, 0.5)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(proc.wait()), 2.0)


def _field(entry: Any, name: str, default: Any = None) -> Any:
    if isinstance(entry, Mapping):
        return entry.get(name, default)
    return getattr(entry, name, default)


def hooks_from_config(
    config: Any,
    *,
    cwd: str | os.PathLike[str] | None = None,
    sandbox: SandboxStatus | SandboxPolicy | None = None,
) -> HookRegistry:
    """A registry of ShellHooks from config: a ``Config`` (with ``.hooks``), a hooks section
    (``pre_tool``/``post_tool`` lists) or the same as plain dicts. Each entry needs
    ``command``; ``tool_pattern`` and ``timeout_ms`` (default 5000) are optional."""
    section = _field(config, "hooks", None)
    if section is None:
        section = config
    registry = HookRegistry()
    for key, stage in (("pre_tool", "pre"), ("post_tool", "post")):
        entries = _field(section, key, None) or []
        for i, entry in enumerate(entries):
            command = _field(entry, "command")
            if not isinstance(command, str) or not command.strip():
                raise ValueError(f"hooks.{key}[{i}]: 'command' must be a non-empty string")
            timeout_ms = _field(entry, "timeout_ms", 5000)
            if timeout_ms is not None and (
                isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or timeout_ms <= 0
            ):
                raise ValueError(f"hooks.{key}[{i}]: 'timeout_ms' must be a positive integer")
            registry.register(
                ShellHook(
                    command,
                    tool_pattern=_field(entry, "tool_pattern"),
                    timeout_ms=timeout_ms,
                    stage=stage,
                    cwd=cwd,
                    sandbox=sandbox,
                )
            )
    return registry
