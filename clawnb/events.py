"""Events the engine emits and the approval hand-shake front ends answer.

Two event families, both delivered through plain callbacks (``on_event(event)``; the callback
may be a function or a coroutine function):

* :class:`StreamEvent` — what a streaming provider sees on the wire (book ch5a).
* :class:`AgentEvent` — what a loop tells its front end (book ch3/ch7, plus tool lifecycle).

Front ends never reach into loops: they render these events and answer
:class:`ApprovalRequest` s through an :data:`ApprovalCallback`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeAlias, TypeVar

from .types import JSON, AssistantTurn, TokenUsage, ToolCall, Variant

__all__ = [
    "AgentEvent",
    "Approval",
    "ApprovalCallback",
    "ApprovalDecision",
    "ApprovalRequest",
    "AgentEventCallback",
    "AnyAgentEvent",
    "AnyStreamEvent",
    "EventCallback",
    "StreamEvent",
    "OnStreamEvent",
    "StreamEventCallback",
    "emit",
    "emit_turn",
]


class StreamEvent:
    """Namespace of stream events: ``StreamEvent.TextDelta("Hi")`` etc."""

    class TextDelta(Variant):
        text: str

    class ToolCallStart(Variant):
        index: int
        id: str
        name: str

    class ToolCallDelta(Variant):
        index: int
        arguments: str

    class Done(Variant):
        pass

    # Extensions beyond the book: real servers send these.
    class ReasoningDelta(Variant):
        text: str

    class Usage(Variant):
        usage: TokenUsage


class AgentEvent:
    """Namespace of agent events: ``AgentEvent.TextDelta``, ``AgentEvent.ToolCall`` … ."""

    class TextDelta(Variant):
        text: str

    class ToolCall(Variant):
        """A tool call was announced (before it is gated or run). ``summary`` is the book's
        ``tool_summary`` line."""

        name: str
        summary: str
        id: str = ""
        arguments: JSON = None

    class Done(Variant):
        text: str

    class Error(Variant):
        message: str

    # Extensions beyond the book, for rich front ends.
    class ReasoningDelta(Variant):
        text: str

    class ToolOutput(Variant):
        """Output a running call produced so far (bash's stdout/stderr as it arrives), for
        front ends that show it live. The call's result is still the whole story."""

        id: str
        text: str

    class ToolRunning(Variant):
        """The call passed every gate and is now running. ``note`` says how, where the tool
        knows (bash: ``"sandboxed: workspace-write, no network"`` or why not)."""

        id: str
        name: str
        note: str = ""

    class ToolResult(Variant):
        """A call finished. ``outcome`` is ``ok``, ``error``, ``denied``, ``blocked`` or
        ``interrupted``."""

        id: str
        name: str
        content: str
        outcome: str = "ok"

    class TurnEnd(Variant):
        """The model finished one reply (usage, if the server reported it, is on the turn)."""

        turn: AssistantTurn

    class ContextRecovered(Variant):
        """The server refused the conversation as longer than its context window; the context
        manager made it fit (``note`` says how) and the request is being sent again."""

        note: str

    class Nested(Variant):
        """An event of a nested loop (a subagent) working for the tool call ``parent_id``.
        ``depth`` is 1 for a subagent's own events. Front ends that do not know it may
        ignore it: the parent call's result still carries the subagent's answer."""

        parent_id: str
        event: AnyAgentEvent
        depth: int = 1


# The namespaces above only group the variants; these unions are the types a signature names.
AnyStreamEvent: TypeAlias = (
    StreamEvent.TextDelta
    | StreamEvent.ToolCallStart
    | StreamEvent.ToolCallDelta
    | StreamEvent.Done
    | StreamEvent.ReasoningDelta
    | StreamEvent.Usage
)
AnyAgentEvent: TypeAlias = (
    AgentEvent.TextDelta
    | AgentEvent.ToolCall
    | AgentEvent.Done
    | AgentEvent.Error
    | AgentEvent.ReasoningDelta
    | AgentEvent.ToolRunning
    | AgentEvent.ToolOutput
    | AgentEvent.ToolResult
    | AgentEvent.TurnEnd
    | AgentEvent.ContextRecovered
    | AgentEvent.Nested
)

StreamEventCallback: TypeAlias = Callable[[AnyStreamEvent], Awaitable[None] | None]
"""What a streaming provider calls with each event as it arrives (sync or async)."""
OnStreamEvent: TypeAlias = StreamEventCallback | None
"""``stream_chat``'s ``on_event``: the callback, or None when nobody listens."""
AgentEventCallback: TypeAlias = Callable[[AnyAgentEvent], Awaitable[None] | None]
"""What a loop calls with each event for its front end (sync or async)."""
EventT = TypeVar("EventT")
EventCallback: TypeAlias = Callable[[EventT], Awaitable[None] | None]
"""A callback for events of type ``EventT`` (``EventCallback[AnyAgentEvent]`` is
:data:`AgentEventCallback`): what :func:`emit` delivers to."""


async def emit(on_event: EventCallback[EventT] | None, event: EventT) -> None:
    """Deliver ``event`` to a sync or async callback (``None`` means nobody listens)."""
    if on_event is None:
        return
    result = on_event(event)
    if inspect.isawaitable(result):
        await result


def _whole(text: str) -> list[str]:
    return [text]


async def emit_turn(
    on_event: StreamEventCallback | None,
    turn: AssistantTurn,
    *,
    pieces: Callable[[str], list[str]] = _whole,
) -> None:
    """Deliver a finished ``turn`` as the events a server would have streamed for it.

    Reasoning first, then the text cut by ``pieces`` (whole by default), then per call one
    ``ToolCallStart`` and one ``ToolCallDelta`` with its arguments (the raw text when they were
    not valid JSON), then ``Usage`` when the turn has any, then ``Done``. The mock, scripted
    and HTTP providers (a server that answered a streaming request with plain JSON) share it.
    """
    if on_event is None:
        return
    from .types import compact_json

    if turn.reasoning:
        await emit(on_event, StreamEvent.ReasoningDelta(turn.reasoning))
    if turn.text:
        for piece in pieces(turn.text):
            await emit(on_event, StreamEvent.TextDelta(piece))
    for i, call in enumerate(turn.tool_calls):
        await emit(on_event, StreamEvent.ToolCallStart(i, call.id, call.name))
        arguments = call.invalid_arguments
        if arguments is None:
            arguments = compact_json(call.arguments)
        await emit(on_event, StreamEvent.ToolCallDelta(i, arguments))
    if turn.usage is not None:
        await emit(on_event, StreamEvent.Usage(turn.usage))
    await emit(on_event, StreamEvent.Done())


class ApprovalDecision(StrEnum):
    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"
    DENY = "deny"


@dataclass(frozen=True)
class Approval:
    """A front end's answer to an :class:`ApprovalRequest`.

    ``policy`` names the rule that answered when no person did (``"--approve allow"``,
    ``"CLAWNB_APPROVAL=allow"``): the gate decides what a policy may approve — never a change
    to the agent's own configuration (:class:`clawnb.gates.GatePipeline`) — so every front
    end, clawnb's or anyone's, gets the same rule by saying who answered.
    """

    decision: ApprovalDecision
    reason: str = ""
    policy: str = ""
    # a scoped "always": one of the request's ``details["always"]`` rules, and where it is
    # kept — "session", or saved as a rule for the "project" or the "user"
    scope: str = ""
    save: str = "session"

    @classmethod
    def allow_once(cls) -> Approval:
        return cls(ApprovalDecision.ALLOW_ONCE)

    @classmethod
    def allow_always(cls, scope: str, save: str = "session") -> Approval:
        """Allow this call and those ``scope`` (a rule the request offered) matches: for the
        session, or saved (``save="project"`` or ``"user"``)."""
        return cls(ApprovalDecision.ALLOW_SESSION, scope=scope, save=save)

    @classmethod
    def allow_by_policy(cls, policy: str) -> Approval:
        """Allowed by ``policy``, not by a person."""
        return cls(ApprovalDecision.ALLOW_ONCE, policy=policy)

    @classmethod
    def allow_session(cls) -> Approval:
        return cls(ApprovalDecision.ALLOW_SESSION)

    @classmethod
    def deny(cls, reason: str = "") -> Approval:
        return cls(ApprovalDecision.DENY, reason)

    @property
    def allowed(self) -> bool:
        return self.decision is not ApprovalDecision.DENY


@dataclass(frozen=True)
class ApprovalRequest:
    """The engine asks a person whether ``call`` may run."""

    call: ToolCall
    summary: str
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


ApprovalCallback = Callable[[ApprovalRequest], Awaitable[Approval]]
