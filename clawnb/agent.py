"""The agentic loops (book ch3, ch5b, ch7).

* :func:`single_turn` — one prompt, at most one round of tools (ch3).
* :class:`SimpleAgent` — loop until the model stops; ``chat`` appends to the caller's history,
  ``run_with_history`` reports :class:`~clawnb.events.AgentEvent` s instead of raising (ch7).
* :class:`StreamingAgent` — the same loop over a streaming provider, forwarding text deltas
  while the model generates (ch5b).

The loop body is the book's: ask the model; if it wants tools, run them, append the assistant
turn and one ``ToolResult`` per call, and go round again; otherwise append the turn and return
its text. A turn that carries tool calls is always answered with their results, so the history
invariant holds whatever the server's ``finish_reason`` said — also on cancellation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import TYPE_CHECKING, Self

from .errors import ContextOverflowError, MaxTurnsExceeded
from .events import (
    AgentEvent,
    AgentEventCallback,
    AnyStreamEvent,
    StreamEvent,
    StreamEventCallback,
    emit,
)
from .executor import Gate, ResultLimit, ToolExecutor, ToolsInterrupted, tool_summary
from .types import (
    AnyProvider,
    Assistant,
    AssistantTurn,
    Message,
    Provider,
    StreamProvider,
    Tool,
    ToolDefinition,
    ToolResult,
    ToolSet,
    complete,
)

if TYPE_CHECKING:  # context.py is loaded only by those who compact
    from .context import ContextManager

__all__ = [
    "INTERRUPTED_REPLY_NOTE",
    "AgentEvent",
    "Phase",
    "SimpleAgent",
    "StreamingAgent",
    "single_turn",
    "tool_summary",
]


INTERRUPTED_REPLY_NOTE = "[interrupted: the turn was stopped while this reply was being written]"
"""What ends the text of a reply that was cancelled mid-stream (Ctrl-C, a cell's interrupt, a
task's ``cancel()``): the words already streamed stay in the history as the assistant's
message, as a ``kill -9`` recovery keeps them (:data:`clawnb.session.log.INTERRUPTED_TEXT_NOTE`)."""


async def single_turn(provider: Provider, tools: ToolSet, prompt: str) -> str:
    """Ask once; if the model calls tools, run them and ask once more (ch3)."""
    messages: list[Message] = [Message.User(prompt)]
    defs = tools.definitions()
    turn = await provider.chat(messages, defs)
    if not turn.tool_calls:
        return turn.text or ""
    results = await ToolExecutor(tools).run(turn.tool_calls)
    _append_round(messages, turn, results)
    final = await provider.chat(messages, defs)
    return final.text or ""


def _append_round(messages: list[Message], turn: AssistantTurn, results: list[str]) -> None:
    """Append the assistant turn and one result per call, in call order (the invariant).

    One ``extend``: a persisted history (SessionLog) writes the round as one record, so a crash
    can never leave a tool call on disk without its results.
    """
    calls = turn.tool_calls
    if len(calls) != len(results):  # pragma: no cover - the executor guarantees this
        raise AssertionError("one result per tool call")
    messages.extend(
        [Assistant(turn), *(ToolResult(c.id, r) for c, r in zip(calls, results, strict=True))]
    )


def _last_user_text(messages: list[Message]) -> str:
    for msg in reversed(messages):
        if isinstance(msg, Message.User):
            return msg.content
    return ""


class Phase:
    """What one run of the loop works with: the tools it offers and runs, the gate in front of
    them, and whether to stop after a round of tool calls. An agent's ordinary phase is its own
    tools and gate and ends when the model stops calling tools; plan mode's planning phase
    (:class:`clawnb.planning.PlanPhase`) offers read-only tools and ends at ``exit_plan``."""

    def __init__(self, tools: ToolSet, gate: Gate | None) -> None:
        self.tools = tools
        self.gate = gate

    def over(self) -> bool:
        return False


class _Loop:
    """What SimpleAgent, StreamingAgent and PlanAgent share: tools, gate, limits, the loop."""

    streams = False  # ask a StreamProvider for a streamed turn (StreamingAgent)
    max_concurrency = 10  # concurrency-safe calls of one turn that run at once

    def __init__(
        self,
        provider: AnyProvider,
        *,
        tools: Iterable[Tool] = (),
        gate: Gate | None = None,
        max_turns: int | None = None,
        system_prompt: str | None = None,
        context: ContextManager | None = None,
        result_limit: ResultLimit | None = None,
    ) -> None:
        self.provider = provider
        self.tools = ToolSet(tools)
        self.gate = gate
        self.max_turns = max_turns
        self.system_prompt = system_prompt
        self.context = context
        self.result_limit = result_limit

    def tool(self, tool: Tool) -> Self:
        """Register a tool (builder style; a duplicate name replaces the earlier tool)."""
        self.tools.push(tool)
        return self

    async def _loop(
        self,
        messages: list[Message],
        on_event: AgentEventCallback | None,
        phase: Phase | None = None,
    ) -> str:
        """The book's loop: ask the model; run the tools it calls and append the round; stop
        when it answers without tools (or the phase is over) and return its text."""
        phase = phase or Phase(self.tools, self.gate)
        executor = ToolExecutor(
            phase.tools,
            gate=phase.gate,
            max_concurrency=self.max_concurrency,
            result_limit=self.result_limit,
        )
        self._prepare(messages)
        if phase.gate is not None:
            await phase.gate.agent_start(_last_user_text(messages))
        turns = 0
        while True:
            turns += 1
            if self.max_turns is not None and turns > self.max_turns:
                raise MaxTurnsExceeded(self.max_turns)
            turn = await self._ask_fitting(messages, phase.tools.active_definitions(), on_event)
            await emit(on_event, AgentEvent.TurnEnd(turn))
            if not turn.tool_calls:
                messages.append(Assistant(turn))
            else:
                try:
                    results = await executor.run(turn.tool_calls, on_event)
                except ToolsInterrupted as interrupted:
                    _append_round(messages, turn, interrupted.results)  # valid, even now
                    raise
                _append_round(messages, turn, self._fit_round(turn, results))
            await self._after_turn(turn, messages)
            if not turn.tool_calls or phase.over():
                text = turn.text or ""
                await emit(on_event, AgentEvent.Done(text))
                if phase.gate is not None:
                    await phase.gate.agent_end(text)
                return text

    def _fit_round(self, turn: AssistantTurn, results: list[str]) -> list[str]:
        """One turn's results within the result limit's per-turn budget, when it has one
        (:meth:`clawnb.tools.results.ResultLimiter.limit_round`: the largest are persisted
        first, so ten parallel big reads cannot fill the window in one step)."""
        limit_round = getattr(self.result_limit, "limit_round", None)
        if limit_round is None:
            return results
        fitted: list[str] = limit_round(turn.tool_calls, results)
        return fitted

    def _prepare(self, messages: list[Message]) -> None:
        if self.system_prompt is not None and not (
            messages and isinstance(messages[0], Message.System)
        ):
            messages.insert(0, Message.System(self.system_prompt))

    async def _ask(
        self,
        messages: list[Message],
        definitions: list[ToolDefinition],
        on_event: AgentEventCallback | None,
    ) -> AssistantTurn:
        """One model turn; streamed when this agent streams and the provider can (text deltas
        reach ``on_event`` as they arrive), else asked for whole."""
        if self.streams and isinstance(self.provider, StreamProvider):
            shown: list[str] = []
            try:
                return await self.provider.stream_chat(
                    messages, definitions, stream_forwarder(on_event, shown)
                )
            except asyncio.CancelledError:
                # The person saw these words: they stay, as the assistant's (unfinished)
                # reply, so the history says what was answered and the next message does
                # not follow this one's question directly.
                text = "".join(shown).rstrip()
                if text:
                    turn = AssistantTurn(text=f"{text}\n\n{INTERRUPTED_REPLY_NOTE}")
                    messages.append(Assistant(turn))
                raise
        return await complete(self.provider, messages, definitions)

    async def _ask_fitting(
        self,
        messages: list[Message],
        definitions: list[ToolDefinition],
        on_event: AgentEventCallback | None,
    ) -> AssistantTurn:
        """:meth:`_ask`; if the server says the conversation no longer fits its context
        window, the context manager makes it fit (a summary, or the oldest turns dropped),
        the front end is told, and the request goes out once more."""
        try:
            return await self._ask(messages, definitions, on_event)
        except ContextOverflowError as exc:
            if self.context is None:
                raise
            note = await self.context.recover(self.provider, messages, exc)
            if note is None:
                raise  # only the current request is left, and it alone is too long
            await emit(on_event, AgentEvent.ContextRecovered(note))
            return await self._ask(messages, definitions, on_event)

    async def _after_turn(self, turn: AssistantTurn, messages: list[Message]) -> None:
        if self.context is None:
            return
        if turn.usage is not None:
            self.context.record(turn.usage)
        await self.context.maybe_compact(self.provider, messages)


class SimpleAgent(_Loop):
    """The book's agent over a non-streaming :class:`~clawnb.types.Provider`."""

    async def run(self, prompt: str) -> str:
        return await self.chat([Message.User(prompt)])

    async def chat(
        self, messages: list[Message], on_event: AgentEventCallback | None = None
    ) -> str:
        """Continue ``messages`` (appended to in place) until the model stops; return its text.
        Provider errors propagate."""
        return await self._loop(messages, on_event)

    async def run_with_events(self, prompt: str, on_event: AgentEventCallback) -> list[Message]:
        return await self.run_with_history([Message.User(prompt)], on_event)

    async def run_with_history(
        self, messages: list[Message], on_event: AgentEventCallback
    ) -> list[Message]:
        """Like :meth:`chat` but reports failures as ``AgentEvent.Error`` and returns the
        (appended) history instead of raising."""
        try:
            await self._loop(messages, on_event)
        except Exception as exc:
            await emit(on_event, AgentEvent.Error(str(exc)))
        return messages


class StreamingAgent(_Loop):
    """The loop over a :class:`~clawnb.types.StreamProvider`: text deltas reach ``on_event``
    while the model is still generating (a plain :class:`~clawnb.types.Provider` works too,
    one whole turn at a time)."""

    streams = True

    async def run(self, prompt: str, on_event: AgentEventCallback | None = None) -> str:
        return await self.chat([Message.User(prompt)], on_event)

    async def chat(
        self, messages: list[Message], on_event: AgentEventCallback | None = None
    ) -> str:
        """Stream until the model stops; a provider error is reported as ``AgentEvent.Error``
        and then raised."""
        return await self._reporting_loop(messages, on_event)

    async def _reporting_loop(
        self,
        messages: list[Message],
        on_event: AgentEventCallback | None,
        phase: Phase | None = None,
    ) -> str:
        try:
            return await self._loop(messages, on_event, phase)
        except Exception as exc:
            await emit(on_event, AgentEvent.Error(str(exc)))
            raise


def stream_forwarder(
    on_event: AgentEventCallback | None, shown: list[str] | None = None
) -> StreamEventCallback | None:
    """A ``StreamEvent`` callback that passes text and reasoning on to ``on_event`` as
    ``AgentEvent`` s, and keeps each text delta in ``shown`` when given (``None`` when nobody
    listens and nothing is kept, so providers skip the calls)."""
    if on_event is None and shown is None:
        return None

    async def forward(event: AnyStreamEvent) -> None:
        match event:
            case StreamEvent.TextDelta(text=text):
                if shown is not None:
                    shown.append(text)
                await emit(on_event, AgentEvent.TextDelta(text))
            case StreamEvent.ReasoningDelta(text=text):
                await emit(on_event, AgentEvent.ReasoningDelta(text))

    return forward
