"""Plan mode: think before acting (book ch16).

:class:`PlanAgent` runs the streaming loop in two phases on **one** history:

* :meth:`PlanAgent.plan` shows the model only the read-only tools (by default ``bash``,
  ``read`` and ``ask_user``, as in the book; :meth:`~PlanAgent.read_only` replaces the set) plus
  a virtual ``exit_plan`` tool. The planning prompt is put at position 0 unless the history
  already starts with a System message. A call to any other tool is answered with
  ``error: tool '{name}' is not available in planning mode`` and never runs; ``exit_plan`` is
  answered with ``Plan submitted for review.`` and ends the phase after that round, returning
  the turn's text (the plan).
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
from typing import Any, Literal

from .agent import StreamingAgent, stream_forwarder
from .events import EventCallback
from .types import AssistantTurn, Message, ToolCall, ToolDefinition

__all__ = [
    "DEFAULT_PLAN_PROMPT",
    "DEFAULT_READ_ONLY",
    "EXIT_PLAN",
    "PLAN_SUBMITTED",
    "PlanAgent",
    "PlanReview",
    "PlanVerdict",
    "exit_plan_definition",
    "plan_title",
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


def plan_title(prompt: str) -> str:
    """How a first prompt reads in a list of sessions: a planning request (the instructions,
    then ``Task: …``) shows as ``/plan <task>``; whitespace runs become one space."""
    prompt = " ".join(prompt.split())
    instructions = " ".join(DEFAULT_PLAN_PROMPT.split())
    if not prompt.startswith(instructions):
        return prompt
    return "/plan " + prompt[len(instructions) :].strip().removeprefix("Task:").strip()


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


def read_only_tool_names(tools: Iterable[Any]) -> list[str]:
    """The names of the tools that declare ``read_only`` — what production planning offers
    (the book's default set includes ``bash``, which can change anything)."""
    return sorted(t.definition.name for t in tools if getattr(t, "read_only", False) is True)


def exit_plan_definition() -> ToolDefinition:
    """The virtual tool the model calls to hand its plan in (no parameters)."""
    return ToolDefinition(
        EXIT_PLAN,
        "Signal that your plan is complete and ready for user review. Call this when you "
        "have finished exploring and are ready to present your plan.",
    )


class PlanAgent(StreamingAgent):
    """A streaming agent with a read-only planning phase and an executing phase."""

    def __init__(self, provider: Any, **options: Any) -> None:
        super().__init__(provider, **options)
        self._read_only: set[str] = set(DEFAULT_READ_ONLY)
        self._plan_prompt = DEFAULT_PLAN_PROMPT
        self._planning = False

    # -- builder ------------------------------------------------------------------------------
    def read_only(self, names: Iterable[str]) -> PlanAgent:
        """Replace the set of tools allowed while planning."""
        if isinstance(names, str):
            raise TypeError("read_only() takes a list of tool names, not a single string")
        self._read_only = set(names)
        return self

    def plan_prompt(self, prompt: str) -> PlanAgent:
        """Use ``prompt`` instead of :data:`DEFAULT_PLAN_PROMPT` as the planning instructions."""
        self._plan_prompt = prompt
        return self

    @property
    def read_only_tools(self) -> frozenset[str]:
        return frozenset(self._read_only)

    # -- phases -------------------------------------------------------------------------------
    async def plan(self, messages: list[Message], on_event: EventCallback | None = None) -> str:
        """Explore read-only until the model stops or calls ``exit_plan``; return the plan text.
        ``messages`` is appended to in place."""
        if not messages or not isinstance(messages[0], Message.System):
            messages.insert(0, Message.System(self._plan_prompt))
        allowed = set(self._read_only)
        submitted = False

        def intercept(call: ToolCall) -> str | None:
            nonlocal submitted
            if call.name == EXIT_PLAN:
                submitted = True
                return PLAN_SUBMITTED
            if call.name not in allowed:
                return f"error: tool '{call.name}' is not available in planning mode"
            return None

        self._planning = True
        try:
            return await self._reporting_loop(
                messages,
                on_event,
                visible=sorted(allowed),
                intercept=intercept,
                stop_when=lambda: submitted,
            )
        finally:
            self._planning = False

    async def execute(self, messages: list[Message], on_event: EventCallback | None = None) -> str:
        """Carry out the (approved) plan with every tool; return the final text."""
        return await self._reporting_loop(messages, on_event)

    def _asker(self, on_event: EventCallback | None) -> Any:
        planning = self._planning
        provider = self.provider
        forward = stream_forwarder(on_event)

        async def ask(messages: list[Message], tools: list[Any]) -> AssistantTurn:
            if planning:
                tools = [*tools, exit_plan_definition()]
            if not hasattr(provider, "stream_chat"):  # a plain Provider works too
                return await provider.chat(messages, tools)
            return await provider.stream_chat(messages, tools, forward)

        return ask
