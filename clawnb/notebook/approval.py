"""Answering the engine's approval requests from a notebook cell.

:class:`Approver` is the cell's :data:`~clawnb.events.ApprovalCallback`. How it answers depends
on ``--approve``:

* ``widget`` — Approve / Deny / Always-allow buttons on the tool's card (the cell awaits the
  click on the kernel's own event loop; ipykernel >= 7.4 delivers it, ARCHITECTURE §4.1);
* ``stdin`` — ``input()``, when the kernel allows stdin (a console, not nbclient);
* ``allow`` / ``deny`` — a fixed policy;
* ``auto`` (default) — the buttons if a frontend rendered the cell's widgets (the view's
  ``_view_count`` went up, §4.5), else ``input()`` if stdin is allowed, else the policy in
  ``CLAWNB_APPROVAL`` (``allow`` or ``deny``; unset means deny — nothing runs unasked).

Whatever answered is written on the card, so a saved notebook says why a tool ran. An approval
that never comes is cancelled by interrupting the kernel (the wait raises ``CancelledError``).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..events import Approval, ApprovalRequest
from ..planning import PlanVerdict
from .scrub import scrub
from .transcript import ANSWERING, PENDING, RUNNING, WAITING, Card
from .widgets import WidgetView

if TYPE_CHECKING:
    from ..tools.base import ChangePreview
    from ..types import ToolCall

__all__ = [
    "APPROVE_CHOICES",
    "Approver",
    "NotebookInputHandler",
    "PlanReviewer",
    "env_policy",
    "sandbox_note",
]

APPROVE_CHOICES = ("auto", "widget", "stdin", "allow", "deny")
DENIED_BY_USER = "they clicked Deny in the notebook"
DENIED_BY_POLICY = "no one was asked; the notebook's approval policy denies tool calls ({why})"


def env_policy() -> tuple[str, str]:
    """``(policy, why)`` from ``CLAWNB_APPROVAL``: ``allow`` or ``deny`` (the default)."""
    raw = os.environ.get("CLAWNB_APPROVAL", "").strip().lower()
    if raw in ("allow", "yes", "approve", "always"):
        return "allow", "CLAWNB_APPROVAL=allow"
    if raw in ("", "deny", "no"):
        return "deny", "CLAWNB_APPROVAL=deny" if raw else "no frontend and CLAWNB_APPROVAL unset"
    return "deny", f"unknown CLAWNB_APPROVAL={raw!r}; denying"


def sandbox_note(reason: str) -> str:
    """The sandbox a call runs in, from the question's reason — the gate appends a sandboxed
    tool's description (``"…; sandboxed: workspace-write, no network"``) — or ``""``."""
    last = reason.rpartition("; ")[2]
    return last if last.startswith("sandboxed") else ""


class Approver:
    """The approval callback for one ``%%claw`` cell."""

    def __init__(
        self,
        view: Any,
        *,
        how: str = "auto",
        stdin_allowed: bool = False,
        frontend_timeout: float | None = None,
        input_fn: Callable[[str], str] = input,
    ) -> None:
        if how not in APPROVE_CHOICES:
            raise ValueError(f"--approve must be one of {', '.join(APPROVE_CHOICES)}, got {how!r}")
        self.view = view
        self.how = how
        self.stdin_allowed = stdin_allowed
        if frontend_timeout is None:
            frontend_timeout = float(os.environ.get("CLAWNB_FRONTEND_TIMEOUT", "3"))
        self.frontend_timeout = frontend_timeout
        self.input_fn = input_fn
        self._channel: tuple[str, str] | None = None

    async def channel(self) -> tuple[str, str]:
        """``(how, why)``: which way this cell's approvals are answered (decided once)."""
        if self._channel is not None:
            return self._channel
        how, why = self.how, f"--approve {self.how}"
        if how == "auto":
            if isinstance(self.view, WidgetView) and await self.view.wait_rendered(
                self.frontend_timeout
            ):
                how, why = "widget", "buttons"
            elif self.stdin_allowed:
                how, why = "stdin", "input()"
            else:
                how, why = env_policy()
        elif how == "widget" and not isinstance(self.view, WidgetView):
            how, why = env_policy()
            why = f"no widgets here; {why}"
        self._channel = (how, why)
        return self._channel

    async def __call__(self, request: ApprovalRequest) -> Approval:
        card = self.view.card(request.call.id)
        change = request.details.get("preview") if request.details else None
        if card is not None and change is not None:
            self.view.set_preview(card, change)  # the exact diff, before any button
        # a call that changes the agent's own configuration needs a person's own answer:
        # neither an earlier "always" nor an allow policy settles it
        explicit = bool(request.details.get("explicit_only"))
        # the scoped "always" the gate offers (a bash prefix, a folder, an MCP tool/server)
        offers = [] if explicit else list(request.details.get("always") or [])
        if card is not None:
            card.once_only = explicit  # no "Always allow" button for it
            card.always = offers
        # "Always allow" answers are the session's (its gate asks nobody about them again)
        how, why = await self.channel()
        if how == "allow" and explicit:
            # the gate refuses what a policy answers for a control file (the rule is the
            # engine's); the card says so before the result arrives
            what = (
                "a read outside the workspace"
                if request.details.get("outside")
                else "opening a secret file"
                if "opens a secret file" in request.reason
                else "a change to the agent's own configuration"
            )
            self._mark(card, f"denied: {why} cannot approve {what}")
            return Approval.allow_by_policy(why)
        if how == "allow":
            self._mark(card, f"approved by policy: {why}")
            return Approval.allow_by_policy(why)
        if how == "deny":
            self._mark(card, f"denied by policy: {why}")
            return Approval.deny(DENIED_BY_POLICY.format(why=why))
        if explicit and card is not None:
            # the card says why this call is asked although the mode or an "always" would
            # have let it through: "write changes the agent's own configuration …"
            self.view.set_status(card, card.status, request.reason.replace("`", ""))
        elif card is not None and sandbox_note(request.reason):
            # the person decides knowing what the command can reach, as the chat says it
            self.view.set_status(card, card.status, sandbox_note(request.reason))
        if how == "widget" and card is not None:
            answer = await self.view.ask_approval(card)
        else:
            answer = await self._ask_stdin(request, card)
        chosen = card.always_choice if card is not None else None
        if answer.startswith("always:") and not explicit:
            rule, _, save = answer.removeprefix("always:").rpartition(":")
            chosen = (rule, save)
        if answer.startswith("always") and not explicit and offers and chosen is not None:
            rule, save = chosen
            self._mark(card, f"always allowed: {_always_note(offers, rule, save)}")
            return Approval.allow_always(rule, save)
        if answer == "always" and not explicit and not offers:
            self._mark(card, "always allowed this session")
            return Approval.allow_session()
        if answer == "approve":
            self._mark(card, "approved")
            return Approval.allow_once()
        instead = card.deny_reason.strip() if card is not None else ""
        if instead:
            # "No, and tell it what to do instead": the model reads the person's words
            self._mark(card, f"denied by the user: {instead}")
            return Approval.deny(f"{DENIED_BY_USER}, saying: {instead}")
        self._mark(card, "denied by the user")
        return Approval.deny(DENIED_BY_USER)

    def allowed(self, call: ToolCall, reason: str, change: ChangePreview | None = None) -> None:
        """The gate let ``call`` run without asking anyone: say so on its card, with the
        change it makes (a write's content, an edit's diff) when the tool previewed it."""
        card = self.view.card(call.id)
        if card is None:
            return
        if change is not None:
            self.view.set_preview(card, change)
        if card.note:
            return
        if "allowed for this session" in reason:
            note = "always allowed this session"
        else:
            note = f"auto-approved: {reason.replace('`', '')}"
        self.view.set_status(card, card.status, note)

    async def _ask_stdin(self, request: ApprovalRequest, card: Card | None) -> str:
        if card is not None:
            self.view.set_status(card, WAITING, card.note)
        # escaped and redacted as on a card: what is approved is what runs
        summary = scrub(request.summary.strip() or request.call.name)
        reason = f" ({request.reason})" if request.reason else ""
        explicit = bool(request.details.get("explicit_only"))
        offers = [] if explicit else list(request.details.get("always") or [])
        always = "" if explicit else " / [a]lways"
        from ..control.saved_rules import always_rows

        rows = always_rows(offers)
        if rows:
            # the scoped choices, numbered: "a" is the first (the narrowest, this session)
            menu = "; ".join(f"a {n}: {text}" for n, (_r, _s, text) in enumerate(rows, 1))
            always = f" / [a]lways ({menu})"
        question = f"Allow {summary}{reason}? [y]es / [n]o{always}: "
        try:
            reply = (await self.ask_line(question)).strip().lower()
        except (EOFError, OSError, RuntimeError):
            return "deny"
        word, _, pick = reply.partition(" ")
        if word in ("a", "always") and rows:
            pick = pick.strip() or "1"
            if not pick.isdigit() or not 1 <= int(pick) <= len(rows):
                return "deny"
            rule, save, _text = rows[int(pick) - 1]
            return f"always:{rule}:{save}"
        if reply in ("a", "always"):
            return "always"
        if reply in ("y", "yes", "approve", "ok"):
            return "approve"
        return "deny"

    async def ask_line(self, prompt: str) -> str:
        """``input(prompt)`` on a worker thread. In an async cell ipykernel turns SIGINT into a
        cancellation of the cell, which a blocking ``input()`` on the loop thread would never
        see (measured: the cell hangs); awaiting a thread keeps the interrupt working. An
        interrupted prompt is abandoned (the thread ends when the prompt is answered)."""
        try:
            return await asyncio.to_thread(self.input_fn, prompt)
        except KeyboardInterrupt:
            raise asyncio.CancelledError("interrupted while waiting for input") from None

    def _mark(self, card: Card | None, note: str) -> None:
        if card is not None:
            self.view.set_status(card, PENDING if card.status == WAITING else card.status, note)


def _always_note(offers: list[dict[str, Any]], rule: str, save: str) -> str:
    """What the card says after a scoped "always": ``git status* for this session``."""
    offer = next((o for o in offers if o.get("rule") == rule), {})
    label = str(offer.get("label", rule))
    if save == "session" or not offer.get("saveable"):
        return f"{label} for this session"
    return f"{label}, saved in {(offer.get('files') or {}).get(save, save)}"


class NotebookInputHandler:
    """The AskTool's :class:`~clawnb.tools.ask.InputHandler` in a notebook: option buttons or a
    text box on the cell when a frontend is there, ``input()`` when stdin is allowed, and a
    clear error for the model when nobody can answer (headless runs)."""

    def __init__(self, view: Any, approver: Approver) -> None:
        self.view = view
        self.approver = approver

    async def ask(self, question: str, options: list[str]) -> str:
        how, _why = await self.approver.channel()
        if how == "widget" and isinstance(self.view, WidgetView):
            card = self._asking_card()
            if card is not None:  # not "running 12s" while the tool waits for the user
                self.view.set_status(card, ANSWERING)
            try:
                return await self.view.choose(question, list(options))
            finally:
                if card is not None and card.status == ANSWERING:
                    self.view.set_status(card, RUNNING)
        if how == "stdin":
            hint = f" ({' / '.join(options)})" if options else ""
            return await self.approver.ask_line(f"{question}{hint}: ")
        from ..tools.base import ToolError

        raise ToolError(
            "nobody can answer questions here (the notebook runs without a frontend); "
            "make a reasonable assumption, say which, and continue"
        )

    def _asking_card(self) -> Card | None:
        """The running ``ask_user`` card (the handler is not told which call it serves)."""
        for card in reversed(list(self.view.transcript.cards.values())):
            if card.name == "ask_user" and card.status == RUNNING:
                return card
        return None


class PlanReviewer:
    """The notebook's :data:`~clawnb.planning.PlanReview`: Execute / Revise buttons under the
    plan, a ``[y]es / [r]evise / [n]o`` line on stdin, or the approval policy (``allow``
    executes, ``deny`` keeps the plan and runs nothing). Each choice is written into the
    transcript, so a saved notebook says who decided."""

    def __init__(self, view: Any, approver: Approver) -> None:
        self.view = view
        self.approver = approver
        self.executed = False  # the person (or the policy) chose Execute in this cell

    async def __call__(self, plan: str) -> PlanVerdict:
        verdict = await self._review(plan)
        self.executed = self.executed or verdict.action == "execute"
        return verdict

    async def _review(self, plan: str) -> PlanVerdict:
        view = self.view
        how, why = await self.approver.channel()
        if how == "widget" and isinstance(view, WidgetView):
            # the plan framed, Execute / Revise / Cancel, Enter in the box revises
            action, feedback = await view.review_plan(plan)
            if action == "execute":
                view.note("plan approved: executing it")
                return PlanVerdict.execute()
            if action == "cancel":
                view.note("plan cancelled: nothing was run")
                return PlanVerdict.stop()
            view.note(f"revise the plan: {feedback}")
            return PlanVerdict.revise(feedback)
        if how == "stdin":
            prompt = "Execute the plan? [y]es / [r]evise / [n]o: "
            reply = (await self.approver.ask_line(prompt)).strip().lower()
            choice = (
                "Execute"
                if reply in ("y", "yes")
                else "Revise"
                if reply.startswith("r")
                else "Stop"
            )
        else:
            choice = "Execute" if how == "allow" else "Stop"
            view.note(f"plan {'executed' if how == 'allow' else 'not executed'} ({why})")
        if choice == "Execute":
            if how == "stdin":
                view.note("plan approved: executing it")
            return PlanVerdict.execute()
        if choice == "Stop":
            if how == "stdin":
                view.note("plan not executed")
            return PlanVerdict.stop()
        feedback = await self.approver.ask_line("What should change? ")
        view.note(f"revise the plan: {feedback}")
        return PlanVerdict.revise(feedback)
