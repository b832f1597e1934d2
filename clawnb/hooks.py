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

Beyond the book, seed 001's configured hooks (docs/hooks.md): :func:`hooks_from_config` turns
every ``[[hooks.EVENT]]`` table into a :class:`ConfiguredHook` — a ShellHook that also knows its
event (:data:`clawnb.control.hook_rules.HOOK_EVENTS`), its ``if`` condition, its action
(``command``, ``prompt``, ``http``, ``agent``), ``once``, ``async`` and its last runs — inside a
:class:`HookEngine`, the registry the gate dispatches tool events through and the session fires
every other event on (:meth:`HookEngine.fire`). A hook on any event but ``pre_tool`` and
``post_tool`` that fails is recorded and logged, never raised.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import dataclasses
import inspect
import json
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar, runtime_checkable

from .control.secrets import redact, redactor
from .control.shell import glob_match
from .errors import ClawError
from .types import JSON, Variant

if TYPE_CHECKING:
    from .control.sandbox import SandboxPolicy, SandboxStatus

_MAX_ENV_ARGS = 32 * 1024
_T = TypeVar("_T")

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
        return await self._confined(lambda: self._run(event, stage))

    async def _confined(self, run: Callable[[], Awaitable[_T]]) -> _T | HookAction.Block:
        """``run()`` as a hook runs: sandboxed when there is a policy; unsandboxed, with the
        control files snapshotted around it and put back after."""
        try:
            sandboxed = self._policy() is not None
        except ClawError:
            sandboxed = True  # refused: the run says why, and nothing starts
        if sandboxed:
            return await run()
        # Unsandboxed, nothing mounts the control files read-only: what the hook did to them
        # is undone after it (a hook is never approved as a control-file change), as for bash.
        from .control.trust import ControlSnapshot, undone_message

        workspace = self.cwd if self.cwd is not None else os.getcwd()
        guard = ControlSnapshot.take(workspace)
        try:
            result = await run()
        finally:
            undone = guard.undo()
        if undone:
            return HookAction.Block(
                undone_message(f"the hook `{self.command}`", undone, workspace, guard.not_restored)
            )
        return result

    def _payload(self, event: HookEvent.PreToolCall | HookEvent.PostToolCall) -> dict[str, Any]:
        payload: dict[str, Any] = {"event": _event_name(event)}
        payload.update({f.name: getattr(event, f.name) for f in dataclasses.fields(event)})
        return payload

    async def _run(
        self, event: HookEvent.PreToolCall | HookEvent.PostToolCall, stage: str
    ) -> AnyHookAction:
        action, _status = await self._execute(
            self._payload(event), stage, event.tool_name, self.command
        )
        return action

    async def _execute(
        self, payload: dict[str, Any], stage: str, tool_name: str | None, command: str
    ) -> tuple[AnyHookAction, str]:
        """Run ``command`` with the event ``payload`` on stdin; the answer and how the run
        ended (``exit 0``, ``exit 2``, ``timed out``, ``not run: …``)."""
        # A hook is another program, often one that logs: it sees the call and the result with
        # every known key replaced (clawnb.control.secrets), as the model and the screen do.
        payload = redactor.redact_data(payload)
        data = json.dumps(payload, ensure_ascii=False, default=str).encode()
        from .control.process import child_env, spawn

        # The agent's own API keys stay out of hook processes, as out of bash commands; a
        # hook that needs a key gets it explicitly through ``env``.
        env = child_env()
        env.update(self.env)
        env["CLAWNB_HOOK_EVENT"] = str(payload["event"])
        if tool_name is not None:
            env["CLAWNB_TOOL_NAME"] = tool_name
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
            return HookAction.Block(f"hook not run: {exc}"), f"not run: {exc}"
        try:
            proc = await spawn(
                ["sh", "-c", command],
                stdin=asyncio.subprocess.PIPE,
                env=env,
                cwd=self.cwd,
                sandbox=policy,
            )
        except OSError as exc:
            return HookAction.Block(f"hook error: {exc}"), f"not run: {exc}"
        timeout = self.timeout_ms / 1000 if self.timeout_ms is not None else None
        try:
            stdout, stderr = await asyncio.wait_for(proc.communicate(data), timeout)
        except TimeoutError:
            await _kill_group(proc)
            return (
                HookAction.Block(f"hook timed out after {self.timeout_ms} ms: {self.command}"),
                "timed out",
            )
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
        status = f"exit {proc.returncode}"
        if proc.returncode != 0:
            said = err.splitlines()[-1][:160] if err else ""
            status = f"{status}: {said}" if said else status
            return HookAction.Block(
                f"hook failed: {err or f'exit status {proc.returncode}'}"
            ), status
        return _parse_stdout(redact(stdout.decode("utf-8", errors="replace")), stage), status

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


@dataclasses.dataclass(frozen=True)
class HookRun:
    """One run of a configured hook, as ``/hooks`` shows it: when (``time.time()``), for
    which event, how it ended (``exit 0``, ``exit 2``, ``http 200``, ``allow``, ``block:
    reason``, ``reminder``, ``timed out``, ``refused: …``) and whether that was a success."""

    at: float
    event: str
    status: str
    ok: bool


# Set while an ``agent`` hook's child session runs: its own tool calls pass the other hooks,
# but never start another agent hook (no hook agent asks a hook agent, forever).
_in_hook_agent: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "clawnb_in_hook_agent", default=False
)

_PATH_KEYS = ("path", "file_path", "notebook_path")
_log = logging.getLogger("clawnb.hooks")


def _file_path(args: Any) -> str | None:
    if isinstance(args, Mapping):
        for key in _PATH_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value:
                return value
    return None


@dataclasses.dataclass
class HookContext:
    """What one event knows: the values the context variables and the JSON payload carry."""

    event: str
    tool: str | None = None
    args: JSON = None
    result: str | None = None
    message: str | None = None
    error: str | None = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def file_path(self) -> str | None:
        return self.extra.get("file_path") or _file_path(self.args)

    def values(self) -> dict[str, Any]:
        """``$TOOL_NAME`` … as :func:`clawnb.control.hook_rules.expand_command` reads them,
        every known key replaced (a command line is as public as the payload)."""
        values: dict[str, Any] = redactor.redact_data(self._values())
        return values

    def _values(self) -> dict[str, Any]:
        return {
            "EVENT": self.event,
            "TOOL_NAME": self.tool,
            "TOOL_ARGS": self.args if isinstance(self.args, Mapping) else {},
            "FILE_PATH": self.file_path,
            "MESSAGE": self.message,
            "ERROR": self.error,
        }

    def payload(self) -> dict[str, Any]:
        """The event as JSON (stdin of a command, the body of an http POST). Tool events keep
        the book's names (``pre_tool_call``, ``post_tool_call``); ``hook`` is the config's."""
        names = {"pre_tool": "pre_tool_call", "post_tool": "post_tool_call"}
        data: dict[str, Any] = {"event": names.get(self.event, self.event), "hook": self.event}
        for key in ("tool", "args", "result", "message", "error"):
            value = getattr(self, key)
            if value is not None:
                data["tool_name" if key == "tool" else key] = value
        if self.file_path is not None:
            data["file_path"] = self.file_path
        data.update({k: v for k, v in self.extra.items() if k != "file_path"})
        return data


class ConfiguredHook(ShellHook):
    """One ``[[hooks.EVENT]]`` entry (:class:`clawnb.config.ShellHookConfig`): its event,
    condition, action and run controls, and its last runs. Tool events reach it through the
    book's ``on_event``; every event through :meth:`HookEngine.fire`."""

    def __init__(
        self,
        spec: Any,
        event: str,
        *,
        source: str = "",
        index: int = 0,
        cwd: str | os.PathLike[str] | None = None,
        sandbox: SandboxStatus | SandboxPolicy | None = None,
        engine: HookEngine | None = None,
    ) -> None:
        from .control.hook_rules import parse_condition

        stage = {"pre_tool": "pre", "post_tool": "post"}.get(event)
        seconds = spec.timeout_seconds
        if spec.action == "agent" and not {"timeout", "timeout_ms"} & spec.model_fields_set:
            seconds = 120.0  # a model's review takes longer than a script
        super().__init__(
            spec.command or spec.prompt or spec.url or "",
            tool_pattern=spec.tool_pattern,
            timeout_ms=max(1, round(seconds * 1000)),
            stage=stage,
            cwd=cwd,
            sandbox=sandbox,
        )
        self.event = event
        self.action: str = spec.action
        self.prompt: str | None = spec.prompt
        self.url: str | None = spec.url
        self.condition = parse_condition(spec.if_) if spec.if_ else None
        self.once: bool = spec.once
        self.run_async: bool = spec.async_
        self.source = source
        self.index = index
        self.engine = engine
        self.fired = False
        self.runs: collections.deque[HookRun] = collections.deque(maxlen=5)

    @property
    def _seconds(self) -> float:
        return (self.timeout_ms or 5000) / 1000

    # -- matching -----------------------------------------------------------------------------
    def applies(self, tool: str | None, args: Any) -> bool:
        """Whether the tool filter and the ``if`` hold for this event (cheap: no I/O)."""
        if self.tool_pattern is not None and (
            tool is None or not glob_match(self.tool_pattern, tool)
        ):
            return False
        if self.condition is not None and not self.condition.holds(tool, args):
            return False
        if self.once and self.fired:
            return False
        return not (self.action == "agent" and _in_hook_agent.get())

    def on_event(self, event: AnyHookEvent) -> Awaitable[AnyHookAction] | None:  # type: ignore[override]
        # Not a coroutine: a hook whose event or condition does not match costs a few
        # comparisons, and the registry awaits only what matched.
        if isinstance(event, HookEvent.PreToolCall):
            name = "pre_tool"
        elif isinstance(event, HookEvent.PostToolCall):
            name = "post_tool"
        else:
            return None
        if name != self.event or not self.applies(event.tool_name, event.args):
            return None
        result = event.result if isinstance(event, HookEvent.PostToolCall) else None
        return self.fire(HookContext(name, event.tool_name, event.args, result=result))

    # -- running --------------------------------------------------------------------------------
    async def fire(self, ctx: HookContext) -> AnyHookAction:
        """Run the action for ``ctx`` (matched already): in the background when ``async``."""
        self.fired = True
        if self.run_async:
            task = asyncio.ensure_future(self._guarded(ctx))
            if self.engine is not None:
                self.engine._track(task)
            return HookAction.Continue()
        return await self._guarded(ctx)

    async def _guarded(self, ctx: HookContext) -> AnyHookAction:
        try:
            action, status = await self._act(ctx)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:  # a broken hook: logged; a pre_tool one refuses the call
            action = HookAction.Block(f"hook error: {type(exc).__name__}: {exc}")
            status = f"error: {type(exc).__name__}: {exc}"
        ok = not isinstance(action, HookAction.Block) and not status.startswith(
            ("error", "refused", "not run", "timed out")
        )
        self.runs.append(HookRun(time.time(), ctx.event, redact(status), ok))
        if not ok:
            _log.warning("hook %s (%s) on %s: %s", self.index, self.action, ctx.event, status)
        if ctx.event not in ("pre_tool", "post_tool"):
            return HookAction.Continue()  # a notice: a failing hook never stops the agent
        return action

    async def _act(self, ctx: HookContext) -> tuple[AnyHookAction, str]:
        from .control.hook_rules import expand_command, expand_text

        stage = self.stage or "event"
        if self.action == "command":
            command = expand_command(self.command, ctx.values())
            runner = self._execute(ctx.payload(), stage, ctx.tool, command)
            done = await self._confined(lambda: runner)
            if isinstance(done, HookAction.Block):
                return done, "blocked: control files put back"
            return done
        if self.action == "prompt":
            text = expand_text(self.prompt or "", ctx.values())
            remind = self.engine.remind if self.engine is not None else None
            if remind is None:
                return HookAction.Continue(), "refused: no session to leave a reminder in"
            remind(f"hook:{self.event}:{self.index}", text)
            return HookAction.Continue(), "reminder"
        if self.action == "http":
            return await self._post(ctx)
        return await self._ask_agent(expand_text(self.prompt or "", ctx.values()))

    async def _post(self, ctx: HookContext) -> tuple[AnyHookAction, str]:
        from urllib.parse import urlsplit

        url = self.url or ""
        host = (urlsplit(url).hostname or "").lower()
        allowed = self.engine.http_hosts if self.engine is not None else ()
        if not any(glob_match(pattern.lower(), host) for pattern in allowed):
            reason = (
                f"refused: {host} is not in the user config's [hooks] http_hosts "
                "(or [sandbox] allowed_hosts)"
            )
            return HookAction.Block(f"hook not run: {reason[9:]}"), reason
        import httpx

        body = json.dumps(redactor.redact_data(ctx.payload()), ensure_ascii=False, default=str)
        try:
            async with httpx.AsyncClient(timeout=self._seconds, trust_env=False) as client:
                reply = await client.post(
                    url, content=body.encode(), headers={"content-type": "application/json"}
                )
        except httpx.TimeoutException:
            return HookAction.Block(
                f"hook timed out after {self.timeout_ms} ms: {url}"
            ), "timed out"
        except httpx.HTTPError as exc:
            return HookAction.Block(f"hook error: {exc}"), f"error: {exc}"
        status = f"http {reply.status_code}"
        if not reply.is_success:
            return HookAction.Block(f"hook failed: {url} answered {reply.status_code}"), status
        return _parse_stdout(redact(reply.text), self.stage or "event"), status

    async def _ask_agent(self, prompt: str) -> tuple[AnyHookAction, str]:
        ask = self.engine.agent_runner if self.engine is not None else None
        if ask is None:
            return HookAction.Block("hook not run: no session to start an agent in"), (
                "refused: no session to start an agent in"
            )
        token = _in_hook_agent.set(True)
        try:
            answer = await ask(prompt, self._seconds)
        except TimeoutError:
            return HookAction.Block(f"hook agent timed out after {self.timeout_ms} ms"), "timed out"
        finally:
            _in_hook_agent.reset(token)
        first = next((line.strip() for line in redact(answer).splitlines() if line.strip()), "")
        word = first.lower()
        if word.rstrip(".!") == "allow":
            return HookAction.Continue(), "allow"
        if word.startswith("block"):
            reason = first[5:].lstrip(" :-").strip() or "the hook agent said block"
            return HookAction.Block(reason), f"block: {reason}"
        # no verdict: a policy that cannot be read refuses rather than waving through
        return HookAction.Block(f"the hook agent gave no verdict: {first[:200]!r}"), (
            f"block: no verdict ({first[:60]!r})"
        )

    def describe(self) -> str:
        """One line: the event, the action and its target, the filters and controls."""
        target = {"command": self.command, "prompt": self.prompt, "http": self.url}.get(
            self.action, self.prompt
        )
        parts = [f"{self.event}: {self.action} {target!r}"]
        if self.tool_pattern is not None:
            parts.append(f"tool_pattern={self.tool_pattern!r}")
        if self.condition is not None:
            parts.append(f"if {self.condition.text!r}")
        parts += [word for word, on in (("once", self.once), ("async", self.run_async)) if on]
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"ConfiguredHook({self.describe()})"


class HookEngine(HookRegistry):
    """The hooks of a configuration, for every event (a :class:`HookRegistry`, so the book's
    gate and its own hooks work as before). :meth:`fire` runs an event's hooks in config
    order; on ``pre_tool`` the first ``Block`` wins and later hooks do not run. ``remind``
    (``AgentSession.remind``) receives the ``prompt`` action's text, ``agent_runner`` runs
    the ``agent`` action's child session; the session sets both."""

    def __init__(self, hooks: Iterable[Hook] = (), *, http_hosts: Iterable[str] = ()) -> None:
        super().__init__(hooks)
        self.http_hosts = tuple(http_hosts)
        self.remind: Callable[[str, str], None] | None = None
        self.agent_runner: Callable[[str, float], Awaitable[str]] | None = None
        self._tasks: set[asyncio.Future[Any]] = set()
        self._by_event: dict[str, list[ConfiguredHook]] | None = None
        self.session_started = False

    def register(self, hook: Hook) -> None:
        super().register(hook)
        if isinstance(hook, ConfiguredHook) and hook.engine is None:
            hook.engine = self
        self._by_event = None

    def configured(self, event: str | None = None) -> list[ConfiguredHook]:
        """The configured hooks (of ``event``), in config order."""
        if self._by_event is None:
            table: dict[str, list[ConfiguredHook]] = {}
            for hook in self._hooks:
                if isinstance(hook, ConfiguredHook):
                    table.setdefault(hook.event, []).append(hook)
            self._by_event = table
        if event is None:
            return [h for h in self._hooks if isinstance(h, ConfiguredHook)]
        return self._by_event.get(event, [])

    def wants(self, event: str) -> bool:
        return bool(self.configured(event))

    async def fire(
        self,
        event: str,
        *,
        tool: str | None = None,
        args: JSON = None,
        result: str | None = None,
        message: str | None = None,
        error: str | None = None,
        **extra: Any,
    ) -> AnyHookAction:
        """Run ``event``'s matching hooks. Tool events go through :meth:`dispatch` (the book
        hooks hear them too); for the others a failing hook is logged and recorded, never
        raised, and the answer is always ``Continue``."""
        if event == "pre_tool":
            return await self.dispatch(HookEvent.PreToolCall(tool or "", args))
        if event == "post_tool":
            return await self.dispatch(HookEvent.PostToolCall(tool or "", args, result or ""))
        hooks = self.configured(event)
        if not hooks:
            return HookAction.Continue()
        ctx = HookContext(event, tool, args, result, message, error, extra)
        for hook in hooks:
            if hook.applies(tool, args):
                await hook.fire(ctx)
        return HookAction.Continue()

    def fire_soon(self, event: str, **values: Any) -> None:
        """:meth:`fire` from a plain function: a task on the running loop, or — with no loop
        running — at once on a loop of its own."""
        if not self.wants(event):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.fire_now(event, **values)
            return
        self._track(loop.create_task(self.fire(event, **values)))

    def fire_now(self, event: str, *, wait: float = 30.0, **values: Any) -> None:
        """:meth:`fire` to the end from a plain function (``session_end`` in ``close()``),
        on a thread with a loop of its own, so it works with or without a running loop."""
        if not self.wants(event):
            return

        def run() -> None:
            asyncio.run(self.fire(event, **values))

        thread = threading.Thread(target=run, name=f"clawnb-hook-{event}", daemon=True)
        thread.start()
        thread.join(wait)

    def _track(self, task: asyncio.Future[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait for the ``async`` hooks still running (tests; a clean shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def report(self) -> list[str]:
        """``/hooks``: one line per hook (its source layer), then its last runs."""
        hooks = self.configured()
        if not hooks:
            return ["no hooks configured (see docs/hooks.md)"]
        lines: list[str] = []
        for n, hook in enumerate(hooks, 1):
            lines.append(f"{n}. {hook.describe()}  — {hook.source or 'built in'}")
            if not hook.runs:
                lines.append(
                    "     not run yet" if not (hook.once and hook.fired) else "     ran once"
                )
            for run in reversed(hook.runs):
                when = time.strftime("%H:%M:%S", time.localtime(run.at))
                lines.append(f"     {when} {run.event}: {run.status}")
        if self.http_hosts:
            lines.append(f"http hosts (user config): {', '.join(self.http_hosts)}")
        return [redact(line) for line in lines]  # a command line may hold a key


def _spec(entry: Any, where: str) -> Any:
    """A config entry (a ShellHookConfig, a dict or an object with the same fields) as a
    validated ShellHookConfig; a ValueError naming ``where`` otherwise."""
    from pydantic import ValidationError

    from .config import ShellHookConfig

    if isinstance(entry, ShellHookConfig):
        return entry
    if isinstance(entry, Mapping):
        data = dict(entry)
    else:
        data = {}
        for name, field in ShellHookConfig.model_fields.items():
            value = getattr(entry, name, getattr(entry, field.alias or name, None))
            if value is not None:
                data[field.alias or name] = value
    try:
        return ShellHookConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'entry'}: {e['msg'].removeprefix('Value error, ')}"
            for e in exc.errors()
        )
        raise ValueError(f"{where}: {problems}") from None


def hooks_from_config(
    config: Any,
    *,
    cwd: str | os.PathLike[str] | None = None,
    sandbox: SandboxStatus | SandboxPolicy | None = None,
) -> HookEngine:
    """The hooks of ``config`` — a ``Config`` (with ``.hooks``), a hooks section or the same
    as plain dicts — as a :class:`HookEngine` of :class:`ConfiguredHook`, one per
    ``[[hooks.EVENT]]`` entry, in event then config order. A bad entry is a ValueError naming
    it (``hooks.pre_tool[0]: …``); ``async`` on pre_tool is refused."""
    from .control.hook_rules import HOOK_EVENTS

    section = _field(config, "hooks", None)
    if section is None:
        section = config
    origins: Mapping[str, Any] = getattr(config, "_origins", None) or {}
    hosts = list(_field(section, "http_hosts", None) or ())
    # the hosts the user lets the sandbox reach may receive hooks' POSTs too (user config only)
    hosts += _field(_field(config, "sandbox", None), "allowed_hosts", None) or ()
    engine = HookEngine(http_hosts=[h for h in dict.fromkeys(hosts) if isinstance(h, str)])
    for key in HOOK_EVENTS:
        entries = _field(section, key, None) or []
        table = origins.get(f"hooks.{key}", {})
        for i, entry in enumerate(entries):
            spec = _spec(entry, f"hooks.{key}[{i}]")
            if key == "pre_tool" and spec.async_:
                raise ValueError(f"hooks.{key}[{i}]: async = true is refused on pre_tool")
            layers = table.get(spec.model_dump_json(), ()) if entry is spec else ()
            source = ", ".join(str(o) for o in layers) or "config"
            engine.register(
                ConfiguredHook(
                    spec, key, source=source, index=i, cwd=cwd, sandbox=sandbox, engine=engine
                )
            )
    return engine


def kernel_restarted(store: str | os.PathLike[str], notebook: str, pid: int | None = None) -> bool:
    """Record that this kernel (``pid``, default this process) runs clawnb for ``notebook``
    (its path) and say whether an earlier kernel did — a restart, for the ``kernel_restart``
    event. The record is ``kernels.json`` in the workspace's session store ``store``."""
    pid = os.getpid() if pid is None else pid
    path = Path(store) / "kernels.json"
    try:
        seen = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        seen = {}
    if not isinstance(seen, dict):
        seen = {}
    before = seen.get(notebook)
    if before == pid:
        return False
    seen[notebook] = pid
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".kernels.{pid}.json")
        partial.write_text(json.dumps(seen), encoding="utf-8")
        os.replace(partial, path)
    return isinstance(before, int)
