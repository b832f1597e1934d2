"""Running the tool calls of one assistant turn.

Every loop (SimpleAgent, StreamingAgent, PlanAgent, subagents) hands its calls to a
:class:`ToolExecutor`, so every call goes through the same pipeline::

    unknown tool? ─► bad JSON arguments? ─► gate.before_tool ─► tool.call
              ─► gate.after_tool ─► result limit ─► result (in the original call order)

Refusals are results, never exceptions: an unknown tool, invalid arguments, a denied approval
or a hook block all become text the model can read. Consecutive calls to tools that declare
``concurrency_safe = True`` run concurrently (bounded); every other call runs alone, in order.

If the task is cancelled (kernel interrupt, Ctrl-C) while tools run, the executor cancels the
running tools (which kill their process groups), fills every missing result with
``error: interrupted by user`` and raises :class:`ToolsInterrupted` carrying the complete
result list, so the loop can keep the history valid before re-raising.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

from .control.secrets import redact
from .events import AgentEvent, AgentEventCallback, AnyAgentEvent, emit
from .types import Sandboxed, Tool, ToolCall, ToolSet, traits_of

__all__ = [
    "INTERRUPTED_RESULT",
    "CallContext",
    "Gate",
    "Refusal",
    "ToolExecutor",
    "ToolsInterrupted",
    "current_call",
    "tool_summary",
]

INTERRUPTED_RESULT = "error: interrupted by user"

# Keys whose value summarises a call, in the book's order (first key *present* wins).
_SUMMARY_KEYS = ("command", "path", "question")


def tool_summary(call: ToolCall) -> str:
    """The book's one-line summary: ``"    [bash: ls -la]"`` or ``"    [name]"``."""
    args = call.arguments if isinstance(call.arguments, dict) else {}
    for key in _SUMMARY_KEYS:
        if key in args:
            value = args[key]
            if isinstance(value, str):
                return f"    [{call.name}: {value}]"
            break
    return f"    [{call.name}]"


@dataclass(frozen=True)
class Refusal:
    """A gate's "no": ``content`` becomes the tool result; ``outcome`` is ``denied`` or
    ``blocked`` (for front ends)."""

    content: str
    outcome: str = "denied"


class Gate:
    """Callbacks around every tool call. The default lets everything through.

    The safety layer's pipeline (hooks → safety checks → permissions/approval) subclasses this.
    """

    async def agent_start(self, prompt: str) -> None:
        return None

    async def before_tool(self, call: ToolCall, tool: Tool) -> ToolCall | Refusal:
        """Return the call to run (possibly with modified arguments) or a :class:`Refusal`."""
        return call

    async def after_tool(self, call: ToolCall, result: str) -> str:
        return result

    async def agent_end(self, response: str) -> None:
        return None


@dataclass(frozen=True)
class CallContext:
    """The tool call that is running, as its tool sees it through :data:`current_call`: a
    subagent sends its own events to ``on_event`` wrapped in
    :class:`~clawnb.events.AgentEvent.Nested` with ``call_id`` as the parent."""

    call_id: str
    on_event: AgentEventCallback | None
    depth: int = 0


# Set by the executor while a tool runs; tools are called with their arguments only, so this
# is how a nested loop finds the front end of the call it works for.
current_call: ContextVar[CallContext | None] = ContextVar("clawnb_current_call", default=None)


class ToolsInterrupted(asyncio.CancelledError):
    """Cancellation while tools ran; ``results`` has one entry per call (missing ones filled)."""

    def __init__(self, results: list[str]):
        super().__init__("interrupted by user")
        self.results = results


ResultLimit = Callable[[ToolCall, str], str]


class ToolExecutor:
    """Runs one turn's calls against a :class:`ToolSet`."""

    def __init__(
        self,
        tools: ToolSet,
        *,
        gate: Gate | None = None,
        max_concurrency: int = 10,
        result_limit: ResultLimit | None = None,
    ) -> None:
        self.tools = tools
        self.gate = gate
        self.max_concurrency = max_concurrency
        self.result_limit = result_limit

    async def run(
        self, calls: list[ToolCall], on_event: AgentEventCallback | None = None
    ) -> list[str]:
        """Run ``calls`` and return their results in call order."""
        if len(calls) == 1:
            return [await self.run_call(calls[0], on_event)]
        results: list[str | None] = [None] * len(calls)
        pending = list(range(len(calls)))
        if on_event is not None:
            for i in pending:
                call = calls[i]
                await emit(
                    on_event,
                    AgentEvent.ToolCall(call.name, tool_summary(call), call.id, call.arguments),
                )
        started: set[int] = set()  # a started call reports its own interruption
        try:
            for group in self._groups(calls, pending):
                if len(group) == 1:
                    i = group[0]
                    started.add(i)
                    results[i] = await self.run_call(calls[i], on_event, announce=False)
                else:
                    await self._run_concurrently(calls, group, results, started, on_event)
        except asyncio.CancelledError:
            filled = [r if r is not None else INTERRUPTED_RESULT for r in results]
            for i in pending:
                if results[i] is None and i not in started:
                    call = calls[i]
                    await _emit_quietly(
                        on_event,
                        AgentEvent.ToolResult(
                            call.id, call.name, INTERRUPTED_RESULT, "interrupted"
                        ),
                    )
            raise ToolsInterrupted(filled) from None
        return [r if r is not None else INTERRUPTED_RESULT for r in results]

    def _is_concurrent(self, call: ToolCall) -> bool:
        tool = self.tools.get(call.name)
        return tool is not None and traits_of(tool).parallel

    def _groups(self, calls: list[ToolCall], pending: list[int]) -> list[list[int]]:
        groups: list[list[int]] = []
        for i in pending:
            if (
                groups
                and self._is_concurrent(calls[i])
                and self._is_concurrent(calls[groups[-1][-1]])
            ):
                groups[-1].append(i)
            else:
                groups.append([i])
        return groups

    async def _run_concurrently(
        self,
        calls: list[ToolCall],
        group: list[int],
        results: list[str | None],
        started: set[int],
        on_event: AgentEventCallback | None,
    ) -> None:
        limit = asyncio.Semaphore(max(1, self.max_concurrency))

        async def one(i: int) -> None:
            async with limit:
                started.add(i)
                results[i] = await self.run_call(calls[i], on_event, announce=False)

        async with asyncio.TaskGroup() as tg:
            for i in group:
                tg.create_task(one(i))

    async def run_call(
        self, call: ToolCall, on_event: AgentEventCallback | None = None, *, announce: bool = True
    ) -> str:
        """Run one call through the whole pipeline and return its result.

        On cancellation the call reports ``interrupted`` and :class:`ToolsInterrupted` is raised
        with its (filled) result, so a caller can keep the history valid."""
        if announce and on_event is not None:
            await emit(
                on_event,
                AgentEvent.ToolCall(call.name, tool_summary(call), call.id, call.arguments),
            )
        try:
            tool = self.tools.get(call.name)
            gate = self.gate
            outcome = "error"
            if tool is None:
                content = f"error: unknown tool `{call.name}`"
            elif call.invalid_arguments is not None:
                content = (
                    f"error: the arguments for `{call.name}` were not valid JSON "
                    f"({_preview(call.invalid_arguments)}); send a JSON object"
                )
            else:
                refusal = None
                if gate is not None:
                    decision = await gate.before_tool(call, tool)
                    if isinstance(decision, Refusal):
                        refusal = decision
                    else:
                        call = decision
                if refusal is not None:
                    content, outcome = refusal.content, refusal.outcome
                else:
                    if on_event is not None:
                        note = tool.sandbox_description if isinstance(tool, Sandboxed) else ""
                        await emit(
                            on_event,
                            AgentEvent.ToolRunning(call.id, call.name, note),
                        )
                    parent = current_call.get()
                    depth = parent.depth + 1 if parent is not None else 0
                    token = current_call.set(CallContext(call.id, on_event, depth))
                    try:
                        content = await tool.call(call.arguments)
                        outcome = "ok"
                    except (asyncio.CancelledError, KeyboardInterrupt):
                        raise
                    except Exception as exc:  # a tool's failure is a value for the model
                        content = f"error: {exc}"
                    finally:
                        current_call.reset(token)
                    if type(content) is not str:
                        content = str(content)
                    # Every known key becomes *** here, before post hooks, the result limit,
                    # the screen, the session and the model see it — in every loop, nested
                    # ones (subagents) included (clawnb.control.secrets).
                    content = redact(content)
                    if gate is not None:
                        content = await gate.after_tool(call, content)
            shown = content
            if self.result_limit is not None:
                content = self.result_limit(call, content)
                # the card shows the output itself; only the model's copy is a preview
                card = getattr(self.result_limit, "card", None)
                shown = card(call, shown) if card is not None else content
            if on_event is not None:
                await emit(on_event, AgentEvent.ToolResult(call.id, call.name, shown, outcome))
            return content
        except asyncio.CancelledError:
            await _emit_quietly(
                on_event,
                AgentEvent.ToolResult(call.id, call.name, INTERRUPTED_RESULT, "interrupted"),
            )
            raise ToolsInterrupted([INTERRUPTED_RESULT]) from None


def _preview(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


async def _emit_quietly(on_event: AgentEventCallback | None, event: AnyAgentEvent) -> None:
    try:
        await emit(on_event, event)
    except Exception:  # a broken front end must not hide the interrupt
        pass
