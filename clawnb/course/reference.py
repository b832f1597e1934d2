"""The course's reference for the small pieces the notebooks build that clawnb's production
code does in a larger form (the gate pipeline, the tool executor, the prompt builder).

``check()`` falls back to these when a learner passes nothing for them, and pytest checks them
like everything else, so every piece a notebook builds has tests and a working answer. Each is
the notebook's solution, kept short on purpose; production's counterpart is named in its
docstring for the curious.
"""

from __future__ import annotations

import asyncio
import platform
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ..hooks import HookAction, HookEvent
from ..permissions import Permission
from ..types import Message, ToolCall, ToolSet
from ._ref_commands import (
    Command,
    CommandRegistry,
    Skill,
    SkillIndex,
    SkillTool,
    add_skill_commands,
    parse_frontmatter,
    substitute,
)
from ._ref_hooks import (
    Condition,
    HookRunner,
    expand_command,
    expand_text,
    glob_to_regex,
    parse_condition,
)
from ._ref_mcp import McpError, McpToolAdapter, StdioClient, mcp_tools
from ._ref_results import SUMMARY_PREFIX, Compactor, ResultStore

__all__ = [
    "BOUNDARY",
    "Condition",
    "Command",
    "CommandRegistry",
    "Compactor",
    "CourseSession",
    "HookRunner",
    "McpError",
    "McpToolAdapter",
    "ResultStore",
    "SUMMARY_PREFIX",
    "Skill",
    "SkillIndex",
    "SkillTool",
    "StdioClient",
    "add_skill_commands",
    "batches",
    "build_system_prompt",
    "execute_calls",
    "expand_command",
    "expand_text",
    "gate",
    "glob_to_regex",
    "history_is_valid",
    "hooked_call",
    "make_session",
    "mcp_tools",
    "parse_condition",
    "parse_frontmatter",
    "run_call",
    "substitute",
]


def history_is_valid(messages: list[Message]) -> bool:
    """Every assistant turn that asks for tools is followed at once by one result per call,
    in the calls' order, and no result appears without its call (chapter 4).
    Production: the loop keeps this by construction (``agent._append_round``)."""
    i = 0
    while i < len(messages):
        message = messages[i]
        if isinstance(message, Message.ToolResult):
            return False
        if isinstance(message, Message.Assistant) and message.turn.tool_calls:
            wanted = [call.id for call in message.turn.tool_calls]
            following = messages[i + 1 : i + 1 + len(wanted)]
            got = [m.id for m in following if isinstance(m, Message.ToolResult)]
            if got != wanted:
                return False
            i += 1 + len(wanted)
            continue
        i += 1
    return True


BOUNDARY = "# ---- dynamic context below ----"


def build_system_prompt(tools: Iterable[Any], cwd: Any, instructions: str | None = None) -> str:
    """The static sections (identity, safety, tools) first, then the boundary, then what
    changes from run to run (environment, project instructions), so the prefix can be cached
    (chapter 8). Production: ``prompt.SystemPromptBuilder``."""

    def render(sections: list[tuple[str, str]]) -> str:
        return "\n\n".join(f"# {name}\n{text}" for name, text in sections)

    tool_lines = "\n".join(f"- {t.definition.name}: {t.definition.description}" for t in tools)
    static = [
        ("identity", "You are a coding agent working with the tools below."),
        ("safety", "Stay inside the working directory and ask before changing the system."),
        ("tools", tool_lines or "(no tools)"),
    ]
    dynamic = [("environment", f"Working directory: {cwd}\nPlatform: {platform.system()}")]
    if instructions:
        dynamic.append(("instructions", instructions))
    return f"{render(static)}\n\n{BOUNDARY}\n\n{render(dynamic)}"


async def run_call(tools: ToolSet, call: ToolCall) -> str:
    """Run one call; an unknown tool or a failure becomes an ``error: …`` result."""
    tool = tools.get(call.name)
    if tool is None:
        return f"error: unknown tool `{call.name}`"
    try:
        return await tool.call(call.arguments)
    except Exception as exc:
        return f"error: {exc}"


def batches(tools: ToolSet, calls: list[ToolCall]) -> list[list[int]]:
    """Indices of ``calls`` grouped into runs: consecutive concurrency-safe calls share a
    run, any other call runs alone (chapter 12). Production: ``executor.ToolExecutor``."""
    groups: list[tuple[bool, list[int]]] = []
    for i, call in enumerate(calls):
        safe = bool(getattr(tools.get(call.name), "concurrency_safe", False))
        if safe and groups and groups[-1][0]:
            groups[-1][1].append(i)
        else:
            groups.append((safe, [i]))
    return [indices for _, indices in groups]


async def execute_calls(tools: ToolSet, calls: list[ToolCall]) -> list[str]:
    """Run the batches one after another, the calls inside a batch together; results come
    back in the calls' order."""
    results: list[str] = [""] * len(calls)
    for group in batches(tools, calls):
        outputs = await asyncio.gather(*(run_call(tools, calls[i]) for i in group))
        for i, output in zip(group, outputs, strict=True):
            results[i] = output
    return results


async def gate(
    engine: Any, call: ToolCall, ask: Callable[[ToolCall], Awaitable[str]]
) -> str | None:
    """``None`` when the call may run, else the refusal text the model will read. ``ask``
    answers ``"yes"``, ``"always"`` (allow this tool for the session) or ``"no"`` (chapter
    13). Production: ``gates.GatePipeline``."""
    decision = engine.evaluate(call.name, call.arguments)
    if decision == Permission.Ask:
        answer = await ask(call)
        if answer == "always":
            engine.record_session_allow(call.name)
            decision = Permission.Allow
        else:
            decision = Permission.Allow if answer == "yes" else Permission.Deny
    if decision == Permission.Deny:
        return f"error: permission denied: the user did not allow `{call.name}`"
    return None


async def hooked_call(registry: Any, tool: Any, args: Any) -> str:
    """A tool call wrapped in its hooks: a pre-call hook may block it or change its
    arguments; the post-call hooks see the result, errors included (chapter 15).
    Production: ``executor.ToolExecutor`` with ``hooks.HookRegistry``."""
    name = tool.definition.name
    action = await registry.dispatch(HookEvent.PreToolCall(name, args))
    if isinstance(action, HookAction.Block):
        return f"error: blocked by hook: {action.reason}"
    if isinstance(action, HookAction.ModifyArgs):
        args = action.args
    try:
        result = await tool.call(args)
    except Exception as exc:
        result = f"error: {exc}"
    await registry.dispatch(HookEvent.PostToolCall(name, args, result))
    return result


class CourseSession:
    """The capstone's agent: the course's pieces behind clawnb's front ends. It follows
    :class:`clawnb.session.protocol.Session` (``history``, ``mode``, ``send``, ``handlers``,
    ``configure``), so ``%%claw --agent`` and ``chat --agent`` drive it like clawnb's own.

    Reading and searching run without asking; anything else goes through the gate, which asks
    the front end's approver (a card's buttons, a terminal prompt, a policy). From the
    workspace's ``.claw/``: ``agent.toml`` (hooks, ``max_result_chars``,
    ``max_context_tokens``, ``[mcp.NAME]`` servers, a ``[provider]`` to talk to through
    chapter 5b's provider instead of the front end's) and ``skills/NAME/SKILL.md``."""

    SAFE = ("read", "glob", "grep", "skill")

    def __init__(self, provider: Any, workspace: Any, history: list[Message], parts: Any) -> None:
        import tomllib
        from pathlib import Path

        self.provider = provider
        self.workspace = str(workspace)
        self.history = history
        self.mode = "default"
        self.max_turns = 20
        guards = parts.guards(workspace)  # chapter 14's checks around every tool
        self.tools = ToolSet([parts.SafeToolWrapper(cls(), guards) for cls in parts.tools])
        P, Rule = parts.Permission, parts.PermissionRule
        self.engine = parts.PermissionEngine([Rule(name, P.Allow) for name in self.SAFE], P.Ask)
        self.gate = parts.gate
        self._approve: Any = None
        claw = Path(workspace) / ".claw"
        file = claw / "agent.toml"
        settings = tomllib.loads(file.read_text(encoding="utf-8")) if file.is_file() else {}
        if "provider" in settings:  # the workspace names a server: talk to it with chapter 5b's
            provider = self.provider = _own_provider(parts, settings["provider"])
        self.hooks = HookRunner(settings.get("hooks", {}), cwd=self.workspace)
        self.results = ResultStore(
            claw / "results", max_chars=settings.get("max_result_chars", 4000)
        )
        self.compactor = Compactor(provider, max_tokens=settings.get("max_context_tokens", 100_000))
        self.skills = SkillIndex(claw / "skills")
        if self.skills.skills:
            self.tools.push(SkillTool(self.skills))
        self.mcp_servers: dict[str, Any] = settings.get("mcp", {})
        self.clients: list[StdioClient] = []
        self.started = False

    def handlers(self, *, approve: Any = None, ask: Any = None) -> Any:
        return _Routed(self, approve)

    def configure(
        self, *, mode: Any = None, max_turns: int | None = None, model: str | None = None
    ) -> None:
        if mode is not None:
            self.mode = str(getattr(mode, "value", mode))
        if max_turns:
            self.max_turns = max_turns

    async def _ask(self, call: ToolCall) -> str:
        from ..events import ApprovalDecision, ApprovalRequest
        from ..executor import tool_summary

        if self._approve is None:
            return "no"  # nobody attached to ask: nothing runs unasked
        answer = await self._approve(ApprovalRequest(call, tool_summary(call)))
        if not answer.allowed:
            return "no"
        return "always" if answer.decision == ApprovalDecision.ALLOW_SESSION else "yes"

    async def _start(self, prompt: str, on_event: Any) -> None:
        """Once, at the first request: the MCP servers' tools, the session_start hooks."""
        from ..events import AgentEvent, emit

        self.started = True
        for name, server in self.mcp_servers.items():
            client = StdioClient(server["command"], timeout=server.get("timeout", 20))
            try:
                await client.start()
                for tool in await mcp_tools(client, name):
                    self.tools.push(tool)
                self.clients.append(client)
            except (OSError, McpError) as exc:
                note = f"[mcp server {name} did not start: {exc}]\n"
                await emit(on_event, AgentEvent.TextDelta(note))
        await self.hooks.fire("session_start", message=prompt)

    def _system_prompt(self) -> str:
        extra = [self.skills.listing(), *self.hooks.reminders]
        instructions = "\n\n".join(t for t in extra if t) or None
        return build_system_prompt(self.tools, self.workspace, instructions)

    async def _refusal(self, call: ToolCall) -> str | None:
        """Why the call may not run (plan mode, a hook, the gate), or None."""
        if self.mode == "plan" and call.name not in self.SAFE:
            # Not offered, and refused when asked for anyway: plan mode only looks.
            return f"error: tool '{call.name}' is not available in planning mode"
        blocked = await self.hooks.fire("pre_tool", tool=call.name, args=call.arguments)
        if blocked is not None:
            return f"error: blocked by a hook: {blocked}"
        refusal: str | None = await self.gate(self.engine, call, self._ask)
        return refusal

    async def _execute(self, call: ToolCall) -> str:
        result = await run_call(self.tools, call)
        await self.hooks.fire("post_tool", tool=call.name, args=call.arguments)
        return result if result.startswith("error:") else self.results.fit(call.id, result)

    async def send(self, prompt: str, on_event: Any = None, *, review: Any = None) -> str:
        from ..events import AgentEvent, StreamEvent, emit
        from ..executor import tool_summary

        async def forward(event: Any) -> None:
            if isinstance(event, StreamEvent.TextDelta):
                await emit(on_event, AgentEvent.TextDelta(event.text))

        if not self.started:
            await self._start(prompt, on_event)
        self.history.append(Message.User(prompt))
        for _ in range(self.max_turns):
            definitions = [
                d for d in self.tools.definitions() if self.mode != "plan" or d.name in self.SAFE
            ]
            messages = [Message.System(self._system_prompt()), *self.history]
            if hasattr(self.provider, "stream_chat"):
                turn = await self.provider.stream_chat(messages, definitions, forward)
            else:
                turn = await self.provider.chat(messages, definitions)
            await emit(on_event, AgentEvent.TurnEnd(turn))
            self.history.append(Message.Assistant(turn))
            if not turn.tool_calls:
                text = turn.text or ""
                await self._compact(on_event)
                await emit(on_event, AgentEvent.Done(text))
                return text
            for call in turn.tool_calls:
                await emit(
                    on_event,
                    AgentEvent.ToolCall(call.name, tool_summary(call), call.id, call.arguments),
                )
                refusal = await self._refusal(call)
                if refusal is None:
                    await emit(on_event, AgentEvent.ToolRunning(call.id, call.name))
                    result = await self._execute(call)
                    outcome = "error" if result.startswith("error:") else "ok"
                else:
                    result, outcome = refusal, "denied"
                await emit(on_event, AgentEvent.ToolResult(call.id, call.name, result, outcome))
                self.history.append(Message.ToolResult(call.id, result))
        text = "error: stopped after the turn limit"
        await emit(on_event, AgentEvent.Done(text))
        return text

    async def _compact(self, on_event: Any) -> None:
        """After an answered request: a summary when the history is too long (chapter 24)."""
        from ..events import AgentEvent, emit

        told = len(self.compactor.notes)
        await self.compactor.after_turn(self.history)
        for note in self.compactor.notes[told:]:
            await emit(on_event, AgentEvent.TextDelta(f"\n[{note}]\n"))


class _Routed:
    """``with session.handlers(approve=...)``: the approver for one turn, then the old one."""

    def __init__(self, session: CourseSession, approve: Any) -> None:
        self.session, self.approve, self.previous = session, approve, None

    def __enter__(self) -> None:
        self.previous, self.session._approve = self.session._approve, self.approve

    def __exit__(self, *exc: object) -> None:
        self.session._approve = self.previous


class _ReferenceParts:
    """clawnb's versions of the pieces the capstone assembles."""

    def __init__(self) -> None:
        from ..permissions import PermissionEngine, PermissionRule
        from ..safety import SafeToolWrapper
        from ..tools import BashTool, EditTool, GlobTool, GrepTool, ReadTool, WriteTool

        self.tools = [ReadTool, WriteTool, EditTool, BashTool, GlobTool, GrepTool]
        self.Permission, self.PermissionRule, self.PermissionEngine = (
            Permission,
            PermissionRule,
            PermissionEngine,
        )
        self.gate = gate
        self.SafeToolWrapper = SafeToolWrapper
        from ..providers.openai import OpenRouterProvider

        self.OpenRouterProvider = OpenRouterProvider

    @staticmethod
    def guards(workspace: Any) -> list[Any]:
        from ..safety import CommandFilter, PathValidator, ProtectedFileCheck

        return [
            PathValidator(workspace),
            CommandFilter.default_filters(),
            ProtectedFileCheck([".env", ".env.*"]),
        ]


def _own_provider(parts: Any, table: dict[str, Any]) -> Any:
    """Chapter 5b's provider for ``[provider]`` of ``.claw/agent.toml``: ``base_url``,
    ``model``, and the environment variable holding the key (``api_key_env``, default
    ``OPENROUTER_API_KEY``; the key itself never goes in the file)."""
    import os

    key = os.environ.get(table.get("api_key_env", "OPENROUTER_API_KEY"), "")
    return parts.OpenRouterProvider(api_key=key, model=table["model"]).base_url(table["base_url"])


def make_session(provider: Any, workspace: Any, history: list[Message]) -> CourseSession:
    """The factory ``%%claw --agent`` calls (see :mod:`clawnb.session.custom`)."""
    return CourseSession(provider, workspace, history, _ReferenceParts())
