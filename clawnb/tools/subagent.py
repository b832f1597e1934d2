"""SubagentTool (book extra): hand a subtask to a child agent with its own history.

The parent model calls ``subagent`` with a ``task``. A fresh child agent — its own message
list, its own tool set (built by a factory, optionally filtered to named or read-only tools),
an optional system prompt and a turn limit — works on the task. The parent only ever sees
the child's final answer as one tool result; the child's messages never enter the parent's
history, which keeps the parent's context small.

Semantics follow the book's starter-era reference: a missing ``task`` and a failing child
provider raise (the parent's loop turns that into an ``error: …`` result); running out of
turns *returns* ``error: max turns exceeded``.

The child inherits the parent's control plane when it is given one: its tool calls pass
through ``gate`` (give it the parent's gate — same mode, rules, approvals, checkpoints — so a
child cannot do what the parent would have to ask about) and its results through
``result_limit`` (the parent's redactor and size limit). Its events reach the front end of
the ``subagent`` call as :class:`~clawnb.events.AgentEvent.Nested`, so its calls show under
that call's card.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..events import AgentEvent, AnyAgentEvent, emit
from ..executor import Gate, Refusal, ResultLimit, current_call
from ..types import (
    JSON,
    AnyProvider,
    Message,
    TokenUsage,
    Tool,
    ToolCall,
    ToolDefinition,
    ToolSet,
    traits_of,
)
from .base import BaseTool, ToolError

__all__ = ["MAX_TURNS_EXCEEDED", "SubagentTool", "ToolCallsOnly"]

MAX_TURNS_EXCEEDED = "error: max turns exceeded"

ToolsFactory = Callable[[], "ToolSet | Iterable[Tool]"]
Spawn = Callable[..., Any]
"""Makes the child for one task: ``spawn(tools=, read_only=, max_turns=, system_prompt=)``
returns a child session (:meth:`clawnb.session.assemble.AgentSession.child`) whose ``agent``
runs it. Without one the child is built from ``tools_factory`` and ``gate``, as the book does."""


class SubagentTool(BaseTool):
    """``SubagentTool(provider, lambda: ToolSet([ReadTool()])).system_prompt(...).max_turns(5)``"""

    def __init__(
        self,
        provider: AnyProvider,
        tools_factory: ToolsFactory,
        *,
        allowed_tools: Iterable[str] | None = None,
        read_only_tools: bool = False,
        gate: Gate | None = None,
        on_usage: Callable[[TokenUsage | None], object] | None = None,
        result_limit: ResultLimit | None = None,
        name: str = "subagent",
        spawn: Spawn | None = None,
    ) -> None:
        self.provider = provider
        self.spawn = spawn
        self.tools_factory = tools_factory
        self.allowed_tools = set(allowed_tools) if allowed_tools is not None else None
        self.read_only_tools = read_only_tools
        self.gate = gate
        self.on_usage = on_usage
        self.result_limit = result_limit
        self._system_prompt: str | None = None
        self._max_turns = 10
        self.definition = ToolDefinition(
            name,
            "Spawn a child agent to handle a subtask independently. "
            "The child has its own message history and tools.",
        ).param(
            "task",
            "string",
            "A clear description of the subtask for the child agent to complete.",
            required=True,
        )

    def system_prompt(self, prompt: str) -> SubagentTool:
        """Builder: the child's system prompt."""
        self._system_prompt = prompt
        return self

    def max_turns(self, n: int) -> SubagentTool:
        """Builder: how many model turns the child gets (default 10)."""
        if n < 1:
            raise ValueError("max_turns must be at least 1")
        self._max_turns = n
        return self

    def child_tools(self) -> ToolSet:
        """A fresh tool set from the factory, filtered by name and/or read-only flag."""
        made = self.tools_factory()
        tools = made if isinstance(made, ToolSet) else ToolSet(made)
        kept = ToolSet()
        for tool in tools:
            name = tool.definition.name
            if name == self.definition.name:
                continue  # no recursive subagents: depth stays one
            if self.allowed_tools is not None and name not in self.allowed_tools:
                continue
            if self.read_only_tools and not traits_of(tool).read_only:
                continue
            kept.push(tool)
        return kept

    async def call(self, args: JSON) -> str:
        task = args.get("task") if isinstance(args, dict) else None
        if not isinstance(task, str):
            raise ToolError("missing required parameter: task")
        from ..agent import SimpleAgent
        from ..errors import MaxTurnsExceeded

        agent: SimpleAgent
        if self.spawn is not None:
            # a child session: fresh tools, its own approvals, the parent's rules
            agent = self.spawn(
                tools=self.allowed_tools,
                read_only=self.read_only_tools,
                max_turns=self._max_turns,
                system_prompt=self._system_prompt,
            ).agent
        else:
            agent = SimpleAgent(
                self.provider,
                tools=self.child_tools(),
                gate=ToolCallsOnly(self.gate) if self.gate is not None else None,
                max_turns=self._max_turns,
                system_prompt=self._system_prompt,
                result_limit=self.result_limit,
            )
        messages: list[Message] = [Message.User(task)]
        parent = current_call.get()

        async def forward(event: AnyAgentEvent) -> None:
            if isinstance(event, AgentEvent.TurnEnd) and self.on_usage is not None:
                self.on_usage(event.turn.usage)
            if parent is not None and parent.on_event is not None:
                nested = AgentEvent.Nested(parent.call_id, event, parent.depth + 1)
                await emit(parent.on_event, nested)

        try:
            return await agent.chat(messages, forward)
        except MaxTurnsExceeded:
            return MAX_TURNS_EXCEEDED


class ToolCallsOnly(Gate):
    """The parent's gate for the child's tool calls only: the child's start and end are not
    the parent agent's start and end, so those hooks are not fired twice."""

    def __init__(self, inner: Gate) -> None:
        self.inner = inner

    async def before_tool(self, call: ToolCall, tool: Tool) -> ToolCall | Refusal:
        return await self.inner.before_tool(call, tool)

    async def after_tool(self, call: ToolCall, result: str) -> str:
        return await self.inner.after_tool(call, result)
