"""What a front end drives: the :class:`Session` protocol and the per-turn proxies.

Every front end — the terminal chat, ``%%claw`` cells, the claw kernel, a script — holds one
object that follows :class:`Session` and talks to nothing else. :func:`clawnb.build_agent`
returns the production one (:class:`clawnb.session.assemble.AgentSession`); a learner's own agent
that offers the same methods can be driven by the same front ends.

Approvals and questions need a person, and which person (buttons on this cell, a terminal
prompt, a policy) changes from turn to turn while the gate and the tools live for the whole
session. So the gate asks an :class:`ApprovalProxy` and the ``ask_user`` tool asks an
:class:`InputProxy`; the front end points both at its own handlers for one turn with
:meth:`Session.handlers`::

    with session.handlers(approve=my_approver, ask=my_input):
        await session.send("fix the failing test", on_event=render)

Nested loops (subagents, the planning phase) share the proxies, so their questions reach the
same person.

This module is engine-only and cheap to import.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..events import AgentEventCallback, Approval, ApprovalCallback, ApprovalRequest

if TYPE_CHECKING:
    from ..planning import PlanReview
    from ..tools.ask import InputHandler
    from ..tools.base import ChangePreview
    from ..types import Message, ToolCall

__all__ = ["ApprovalProxy", "InputProxy", "Session"]


@runtime_checkable
class Session(Protocol):
    """The interface front ends drive (the notebook, the chat, the claw kernel).

    Required of any agent a front end can run:

    * ``history`` — the conversation, a list of :class:`~clawnb.types.Message` that the session
      appends to (the front end reads it, e.g. for ``%claw history``, and never edits it);
    * ``mode`` — the permission mode in force (``default``, ``accept_edits``, ``plan``,
      ``bypass``); in ``plan`` mode :meth:`send` plans, has the plan reviewed, then executes;
    * :meth:`send` — one user prompt, run until the model answers; events go to ``on_event``;
    * :meth:`handlers` — point approvals and ``ask_user`` questions at the front end for the
      duration of a ``with`` block;
    * :meth:`configure` — change mode, turn limit or model between turns.

    A minimal agent that cannot ask anyone may return a no-op context manager from
    :meth:`handlers` (then every call that needs approval must be refused). An agent that
    works in some modes only may say which in an optional ``modes`` attribute; a front end
    refuses any other (:func:`clawnb.session.custom.set_mode`), as it refuses a mode that
    :meth:`configure` does not take.
    """

    history: list[Message]
    mode: str

    async def send(
        self, prompt: str, on_event: AgentEventCallback | None, *, review: PlanReview | None
    ) -> str:
        """Append ``prompt`` as a user message, run the agent until it answers, return its
        text. ``review`` (plan mode only) decides what happens to a plan: see
        :class:`clawnb.planning.PlanReview`. Front ends pass both; an implementation may give
        them defaults (:class:`~clawnb.session.assemble.AgentSession` does: ``None``)."""
        ...

    def handlers(
        self, *, approve: ApprovalCallback | None = None, ask: InputHandler | None = None
    ) -> AbstractContextManager[object]:
        """Route approval requests to ``approve`` and questions to ``ask`` (an object with
        ``async ask(question, options) -> str``) until the ``with`` block ends."""
        ...

    def configure(
        self, *, mode: str | None = None, max_turns: int | None = None, model: str | None = None
    ) -> None:
        """Change the permission mode, the turn limit or the model for later turns."""
        ...


class ApprovalProxy:
    """The gate's approval callback for the whole session; forwards each request to the
    current ``target`` (set per turn by the front end). Without a target a request is denied
    with a reason the model can read — nothing runs unasked."""

    def __init__(self, target: ApprovalCallback | None = None) -> None:
        self.target = target

    async def __call__(self, request: ApprovalRequest) -> Approval:
        if self.target is None:
            return Approval.deny("nobody is there to approve it (no front end is attached)")
        return await self.target(request)

    def allowed(self, call: ToolCall, reason: str, change: ChangePreview | None = None) -> None:
        """A call ran without a question (see ``GatePipeline``): tell the target, if it
        wants to know (``change``: the tool's preview of what it does, or ``None``)."""
        tell = getattr(self.target, "allowed", None)
        if callable(tell):
            tell(call, reason, change)

    def routed(self, target: ApprovalCallback | None) -> AbstractContextManager[None]:
        return _swap(self, target)


class InputProxy:
    """The ``ask_user`` tool's handler for the whole session; forwards to the current
    ``target`` (the tools outlive a turn, a cell's buttons do not)."""

    def __init__(self, target: InputHandler | None = None) -> None:
        self.target = target

    async def ask(self, question: str, options: list[str]) -> str:
        if self.target is None:
            from ..tools.base import ToolError

            raise ToolError("nobody is there to answer questions (no front end is attached)")
        answer: str = await self.target.ask(question, options)
        return answer

    def routed(self, target: InputHandler | None) -> AbstractContextManager[None]:
        return _swap(self, target)


class _swap(AbstractContextManager[None]):
    """Set ``proxy.target`` for a ``with`` block, then put the previous one back."""

    def __init__(self, proxy: Any, target: Any) -> None:
        self.proxy = proxy
        self.target = target
        self.saved: Any = None

    def __enter__(self) -> None:
        self.saved = self.proxy.target
        self.proxy.target = self.target

    def __exit__(self, *exc: object) -> None:
        self.proxy.target = self.saved
