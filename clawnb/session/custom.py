"""Run someone else's agent behind clawnb's front ends: ``%%claw --agent my_agent`` and
``python -m clawnb chat --agent my_agent``.

``--agent MODULE[:FACTORY]`` imports ``MODULE`` from the current folder (the notebook's folder
in a kernel) and calls ``FACTORY`` (default ``make_session``) as
``FACTORY(provider=..., workspace=..., history=...)``. What it returns must follow
:class:`clawnb.session.protocol.Session` (``history``, ``mode``, ``send``, ``handlers``,
``configure``); the front end then drives it exactly as it drives clawnb's own session. This is
how the course's capstone runs the learner's agent.

The module is imported afresh each time a session is built, so a re-exported package is
picked up without restarting the kernel.

The front ends' commands that need only the protocol work with such a session too: ``/mode``
and ``--mode`` (:func:`set_mode`, refused in one line when the agent does not take the mode),
``/plan`` (:func:`plan_turn`), ``/model``, ``/history`` and ``/cost`` (the tokens
of the agent's own ``TurnEnd`` events, counted by :func:`counted`). What needs clawnb's own
machinery or edits the history (``/compact``, ``/undo``, ``/clear``, ``/sessions``,
``/resume`` …) says so.
"""

from __future__ import annotations

import importlib
import os
import sys
import weakref
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from ..errors import ClawError
from .protocol import Session

if TYPE_CHECKING:
    from ..events import AgentEventCallback
    from ..planning import PlanReview
    from ..types import AnyProvider, Message
    from ..usage import CostTracker

__all__ = ["counted", "load_session", "plan_turn", "set_mode", "usage_of"]

_REQUIRED = ("history", "mode", "send", "handlers", "configure")


def load_session(
    spec: str, *, provider: AnyProvider, workspace: str, history: list[Message]
) -> Session:
    """Build the session that ``spec`` (``module`` or ``module:factory``) names."""
    module_name, _, factory_name = spec.partition(":")
    factory_name = factory_name or "make_session"
    if not module_name.replace(".", "").replace("_", "").isalnum():
        raise ClawError(f"--agent {spec}: expected MODULE or MODULE:FACTORY")
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    root = module_name.split(".")[0]
    for name in [n for n in sys.modules if n == root or n.startswith(root + ".")]:
        del sys.modules[name]  # a fresh import: pick up what was exported since
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ClawError(
            f"--agent {spec}: cannot import {module_name!r} from {here} ({exc})"
        ) from exc
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        raise ClawError(f"--agent {spec}: {module_name} has no function {factory_name}()")
    session = factory(provider=provider, workspace=workspace, history=history)
    missing = [name for name in _REQUIRED if not hasattr(session, name)]
    if missing or not isinstance(session, Session):
        raise ClawError(
            f"--agent {spec}: {type(session).__name__} is not a session; it lacks "
            f"{', '.join(missing) or 'the Session methods'} (see clawnb.session.protocol.Session)"
        )
    return session


def set_mode(session: Session, mode: str, who: str = "your agent") -> None:
    """``configure(mode=mode)``, refused with one line when the agent does not take it: a
    ``modes`` attribute that leaves it out, an error from ``configure``, or a ``mode`` that
    stays what it was (an agent that cannot plan must not be run as if it did)."""
    modes = getattr(session, "modes", None)
    if modes is not None and mode not in modes:
        raise ClawError(
            f"{who} cannot work in {mode} mode (it offers {', '.join(map(str, modes))})"
        )
    try:
        session.configure(mode=mode)
    except (ValueError, TypeError, NotImplementedError) as exc:
        raise ClawError(f"{who} cannot work in {mode} mode ({exc})") from None
    if str(session.mode) != mode:
        raise ClawError(
            f"{who} cannot work in {mode} mode: its mode stayed {str(session.mode)!r} "
            "(its configure() ignores mode=)"
        )


async def plan_turn(
    session: Session,
    prompt: str,
    on_event: AgentEventCallback | None,
    review: PlanReview | None,
    who: str = "your agent",
) -> str:
    """``/plan`` for any session: one turn in plan mode (the session plans, has the plan
    reviewed, then executes), then the mode it had before."""
    before = str(session.mode)
    set_mode(session, "plan", who)
    try:
        return await session.send(prompt, on_event, review=review)
    finally:
        if str(session.mode) == "plan" and before != "plan":
            session.configure(mode=before)


_USAGE: weakref.WeakKeyDictionary[Any, CostTracker] = weakref.WeakKeyDictionary()


def usage_of(session: Any) -> CostTracker:
    """What a session of the user's own used, as far as its ``TurnEnd`` events said (one per
    reply of its model): the tracker ``/cost`` reports for it, never priced."""
    from ..usage import CostTracker

    tracker = _USAGE.get(session)
    if tracker is None:
        tracker = _USAGE[session] = CostTracker(priced=False)
    return tracker


def counted(session: Any, on_event: AgentEventCallback | None) -> AgentEventCallback:
    """``on_event`` with each ``TurnEnd``'s usage added to :func:`usage_of` first. A plain
    function returning what ``on_event`` returns, so an agent that calls it without
    awaiting loses nothing it did not lose before."""
    from ..events import AgentEvent

    tracker = usage_of(session)

    def forward(event: Any) -> Awaitable[None] | None:
        if isinstance(event, AgentEvent.TurnEnd):
            tracker.record(getattr(event.turn, "usage", None))
        return on_event(event) if on_event is not None else None

    return forward
