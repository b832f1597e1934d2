"""Plan mode: think before acting (book ch16).

:class:`PlanAgent` runs the streaming loop in two phases on **one** history:

* :meth:`PlanAgent.plan` runs the loop in a :class:`PlanPhase`: the model is shown only the
  read-only tools (by default ``bash``, ``read`` and ``ask_user``, as in the book;
  :meth:`~PlanAgent.read_only` replaces the set — production passes the tools that declare
  ``read_only``) plus an ``exit_plan`` tool. The planning prompt is put at position 0 unless
  the history already starts with a System message. A call to any other registered tool is
  answered with ``error: tool '{name}' is not available in planning mode`` and never runs;
  ``exit_plan`` is answered with ``Plan submitted for review.`` and ends the phase after that
  round, returning the turn's text (the plan). Unlike the book, refused calls and
  ``exit_plan`` are reported as ordinary tool events, so front ends show them.
* :meth:`PlanAgent.execute` continues the same history with every tool visible; ``exit_plan``
  is then an unknown tool.

Events stream as in :class:`~clawnb.agent.StreamingAgent` (``TextDelta``, ``ToolCall``,
``Done``; a provider failure is reported as ``Error`` and raised). A ``gate=`` (for example a
:class:`~clawnb.gates.GatePipeline`) still guards every call that runs, in both phases — so
``bash`` during planning still needs approval in the default permission mode.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from .agent import Phase, StreamingAgent
from .events import AgentEventCallback
from .executor import Gate, Refusal
from .types import JSON, Message, Tool, ToolCall, ToolDefinition, ToolSet, ToolTraits, traits_of

__all__ = [
    "DEFAULT_PLAN_PROMPT",
    "DEFAULT_READ_ONLY",
    "EXIT_PLAN",
    "PLAN_SUBMITTED",
    "PlanAgent",
    "PlanPhase",
    "PlanReview",
    "PlanVerdict",
    "exit_plan_definition",
    "read_only_tool_names",
]

DEFAULT_PLAN_PROMPT = (
    "You are in PLANNING MODE. Explore the codebase using the available tools and create a "
    "plan. You can read files, run shell commands, and ask the user questions \u2014 but you "
    "CANNOT write, edit, or create files.\n\nWhen your plan is ready, call the `exit_plan` tool "
    "to submit it for review."
)
DEFAULT_READ_ONLY: frozenset[str] = frozenset({"bash", "read", "ask_user"})
EXIT_PLAN = "exit_plan"
PLAN_SUBMITTED = "Plan submitted for review."


@dataclass(frozen=True)
class PlanVerdict:
    """What the person decided about a plan: ``execute`` it, ``revise`` it with
    ``feedback``, or ``stop`` (keep the plan, run nothing)."""

    action: Literal["execute", "revise", "stop"]
    feedback: str = ""

    @classmethod
    def execute(cls) -> PlanVerdict:
        return cls("execute")

    @classmethod
    def revise(cls, feedback: str) -> PlanVerdict:
        return cls("revise", feedback)

    @classmethod
    def stop(cls) -> PlanVerdict:
        return cls("stop")


# A front end's plan reviewer: gets the plan text, returns the person's verdict.
PlanReview = Callable[[str], Awaitable[PlanVerdict]]


def read_only_tool_names(tools: Iterable[Tool]) -> list[str]:
    """The names of the tools that declare ``read_only`` — what production planning offers
    (the book's default set includes ``bash``, which can change anything)."""
    return sorted(t.definition.name for t in tools if traits_of(t).read_only)


def exit_plan_definition() -> ToolDefinition:
    """The virtual tool the model calls to hand its plan in (no parameters)."""
    return ToolDefinition(
        EXIT_PLAN,
        "Signal that your plan is complete and ready for user review. Call this when you "
        "have finished exploring and are ready to present your plan.",
    )


class PlanPhase(Phase):
    """The planning phase as the loop sees it: every tool stays registered, but the model is
    offered only the read-only ones plus ``exit_plan``; a call to any other tool is refused
    with ``error: tool '{name}' is not available in planning mode`` before the session's gate
    is asked anything, and ``exit_plan`` ends the phase after its round."""

    def __init__(self, tools: ToolSet, gate: Gate | None, allowed: Iterable[str]) -> None:
        self.allowed = frozenset(allowed)
        self.submitted = False
        planning = ToolSet(tools)
        planning.push(_ExitPlanTool(self))
        super().__init__(planning, _PlanningGate(gate, self))

    def over(self) -> bool:
        return self.submitted


class _ExitPlanTool:
    """``exit_plan``: hands the plan in. It also decides what the model sees while planning
    (:meth:`ToolSet.active_definitions` asks it)."""

    traits = ToolTraits(read_only=True)

    def __init__(self, phase: PlanPhase) -> None:
        self.phase = phase
        self.definition = exit_plan_definition()

    def hides(self, tool: Tool, tools: ToolSet) -> bool:
        return tool is not self and tool.definition.name not in self.phase.allowed

    async def call(self, args: JSON) -> str:
        self.phase.submitted = True
        return PLAN_SUBMITTED


class _PlanningGate(Gate):
    """The session's gate while planning, behind the planning rule."""

    def __init__(self, inner: Gate | None, phase: PlanPhase) -> None:
        self.inner = inner
        self.phase = phase

    async def agent_start(self, prompt: str) -> None:
        if self.inner is not None:
            await self.inner.agent_start(prompt)

    async def agent_end(self, response: str) -> None:
        if self.inner is not None:
            await self.inner.agent_end(response)

    async def before_tool(self, call: ToolCall, tool: Tool) -> ToolCall | Refusal:
        if call.name == EXIT_PLAN:
            return call
        if call.name not in self.phase.allowed:
            return Refusal(
                f"error: tool '{call.name}' is not available in planning mode", "blocked"
            )
        return call if self.inner is None else await self.inner.before_tool(call, tool)

    async def after_tool(self, call: ToolCall, result: str) -> str:
        if call.name == EXIT_PLAN or self.inner is None:
            return result
        return await self.inner.after_tool(call, result)


class PlanAgent(StreamingAgent):
    """A streaming agent with a read-only planning phase and an executing phase."""

    # the book's defaults; the builder methods below replace them for one agent
    _read_only: frozenset[str] = frozenset(DEFAULT_READ_ONLY)
    _plan_prompt: str = DEFAULT_PLAN_PROMPT

    # -- builder ------------------------------------------------------------------------------
    def read_only(self, names: Iterable[str]) -> PlanAgent:
        """Replace the set of tools allowed while planning."""
        if isinstance(names, str):
            raise TypeError("read_only() takes a list of tool names, not a single string")
        self._read_only = frozenset(names)
        return self

    def plan_prompt(self, prompt: str) -> PlanAgent:
        """Use ``prompt`` instead of :data:`DEFAULT_PLAN_PROMPT` as the planning instructions."""
        self._plan_prompt = prompt
        return self

    @property
    def read_only_tools(self) -> frozenset[str]:
        return self._read_only

    # -- phases -------------------------------------------------------------------------------
    async def plan(
        self, messages: list[Message], on_event: AgentEventCallback | None = None
    ) -> str:
        """Explore read-only until the model stops or calls ``exit_plan``; return the plan text.
        ``messages`` is appended to in place."""
        if not messages or not isinstance(messages[0], Message.System):
            messages.insert(0, Message.System(self._plan_prompt))
        phase = PlanPhase(self.tools, self.gate, self._read_only)
        return await self._reporting_loop(messages, on_event, phase)

    async def execute(
        self, messages: list[Message], on_event: AgentEventCallback | None = None
    ) -> str:
        """Carry out the (approved) plan with every tool; return the final text."""
        return await self._reporting_loop(messages, on_event)
