"""What one ``%%claw`` cell showed, as data: the :class:`Transcript` of answer text,
reasoning, tool cards and notes that every view draws (:mod:`.widgets` live in a frontend,
:mod:`.text` on a terminal or headless; :mod:`.html` renders the saved copy).

:class:`View` is what the views share: it turns each :class:`~clawnb.events.AgentEvent` into a
change of the transcript and tells the view which block changed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..events import AgentEvent
from ..planning import EXIT_PLAN

__all__ = ["Block", "Card", "PromptCells", "Transcript", "View", "code_argument", "preview"]

# Card statuses, as shown to the user (and found by the browser tests).

# Card statuses, as shown to the user (and found by the browser tests).
PENDING = "pending"


WAITING = "waiting for approval"


ANSWERING = "waiting for your answer"  # ask_user: the question box is open


RUNNING = "running"


DONE = "done"


DENIED = "denied"


BLOCKED = "blocked"


ERROR = "error"


INTERRUPTED = "interrupted"


OUTCOME_STATUS = {
    "ok": DONE,
    "error": ERROR,
    "denied": DENIED,
    "blocked": BLOCKED,
    "interrupted": INTERRUPTED,
}


FINISHED = (DONE, DENIED, BLOCKED, ERROR, INTERRUPTED)

# the note the approval sets when the person clicked Deny (with ": what to do instead")
_DENIED_BY_PERSON = "denied by the user"


LIVE_OUTPUT_CAP = 64 * 1024  # characters of a running call's output kept for its tail


def preview(text: str, *, lines: int = 12, width: int = 160) -> str:
    """The first ``lines`` lines of ``text``, each cut to ``width`` characters."""
    rows = text.splitlines() or [""]
    shown = [r if len(r) <= width else r[: width - 1] + "…" for r in rows[:lines]]
    if len(rows) > lines:
        shown.append(f"… ({len(rows) - lines} more lines)")
    return "\n".join(shown)


def args_text(arguments: Any) -> tuple[str, str]:
    """``(text, fence language)`` for a card's arguments: JSON, except that when a string
    argument spans lines (a file's ``content``) every argument is listed as ``name: value``
    with multi-line values shown as they are, indented, rather than as one JSON line full of
    ``\\n`` that nobody can review before clicking Approve."""
    if isinstance(arguments, dict) and any(
        isinstance(v, str) and "\n" in v.strip("\n") for v in arguments.values()
    ):
        rows: list[str] = []
        for key, value in arguments.items():
            if isinstance(value, str) and "\n" in value:
                rows.append(f"{key}:")
                rows.extend(f"    {line}" for line in value.rstrip("\n").split("\n"))
            else:
                shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                rows.append(f"{key}: {shown}")
        return "\n".join(rows), "text"
    return args_json(arguments), "json"


def args_json(arguments: Any) -> str:
    try:
        return json.dumps(arguments, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(arguments)


def code_argument(arguments: Any) -> tuple[str, Any] | None:
    """``(code, other arguments)`` for a call that runs code (``run_python``'s ``code``):
    the code is what the user approves, so the card shows it as code instead of hiding it,
    JSON-escaped, in the collapsed arguments."""
    if not isinstance(arguments, dict):
        return None
    code = arguments.get("code")
    if not isinstance(code, str) or not code.strip():
        return None
    rest = {k: v for k, v in arguments.items() if k != "code"}
    return code, rest


_TITLE_KEYS = ("pattern", "url", "query", "name", "cell_id")


@dataclass
class Card:
    """One tool call as the user sees it."""

    id: str
    name: str
    summary: str
    arguments: Any = None
    status: str = PENDING
    result: str = ""
    note: str = ""
    started: float | None = None
    ended: float | None = None
    # the exact change a mutating call will make (a ChangePreview), shown before approval
    preview: Any = None
    # only "Approve" or "Deny" make sense (a change to the agent's own configuration)
    once_only: bool = False
    # what the person typed next to Deny: sent to the model with the denial
    deny_reason: str = ""
    # the scoped "always" the gate offered (details["always"]) and the one chosen with how
    # long it lasts: (rule, "session" | "project" | "user")
    always: list[Any] = field(default_factory=list)
    always_choice: tuple[str, str] | None = None
    # a running call's output so far (bash), its tail shown live; capped
    output: str = ""
    parent: str = ""  # the call a subagent made this one for ("" for the agent's own calls)
    parent_name: str = ""  # that call's tool: "subagent", or "skill" for a forked skill's calls
    # images the call returned (an MCP tool's: mime_type, data in base64, label)
    images: list[Any] = field(default_factory=list)

    @property
    def title(self) -> str:
        summary = self.summary.strip()
        if summary.startswith("[") and summary.endswith("]"):
            summary = summary[1:-1]
        prefix = f"{self.name}: "
        if summary.startswith(prefix):
            return summary[len(prefix) :]
        # the engine's summary only knows command/path/question; glob and grep have a
        # pattern, web_fetch a url: an empty title says nothing about what runs
        if isinstance(self.arguments, dict):
            for key in _TITLE_KEYS:
                value = self.arguments.get(key)
                if isinstance(value, str) and value.strip():
                    first = value.strip().splitlines()[0]
                    return first if len(first) <= 80 else first[:79] + "…"
        return ""

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def shown_result(self) -> str:
        """The result as the person reads it. The ``error:`` in front of a refusal is for the
        model (it reads results, not statuses): the card's status already says denied or
        blocked. A call the front end denied (the person's click, a policy) shows no result
        at all — it would only repeat, in the gate's words, what the label says ("denied:
        REASON", "denied by policy: …")."""
        result = self.result
        if self.status in (DENIED, BLOCKED):
            if self.status == DENIED and self.note.startswith(DENIED):
                return ""
            if result.startswith("error: "):
                result = result[len("error: ") :]
        return result

    def hint(self) -> str:
        """A few words about the outcome for the collapsed one-line card."""
        if self.preview is not None and self.status in (DONE, WAITING, PENDING):
            return str(self.preview.summary)
        result = self.shown_result.strip()
        if not result:
            return ""
        rows = result.splitlines()
        if self.status == DONE and len(rows) > 1:
            return f"{len(rows)} lines"
        first = rows[0]
        return first if len(first) <= 90 else first[:89] + "…"

    def elapsed(self, now: float | None = None) -> float | None:
        if self.started is None:
            return None
        end = self.ended if self.ended is not None else (now or time.monotonic())
        return end - self.started

    def status_line(self) -> str:
        elapsed = self.elapsed()
        if self.status == RUNNING and elapsed is not None:
            return f"running {elapsed:.0f}s"
        if self.status in (DONE, ERROR) and elapsed is not None:
            return f"{self.status} in {elapsed:.1f}s"
        return self.status

    def label(self) -> str:
        """The status line with the note that says who decided, without saying a word twice
        ("denied by the user", not "denied (denied by the user)")."""
        line = self.status_line()
        if not self.note:
            return line
        if self.status == DENIED and self.note.startswith(_DENIED_BY_PERSON + ": "):
            return f"{DENIED}: {self.note[len(_DENIED_BY_PERSON) + 2 :]}"  # "denied: use rg"
        if line == self.status and self.note.split(" ", 1)[0] == self.status:
            return self.note
        return f"{line} ({self.note})"


@dataclass
class Block:
    kind: str  # "text" | "reasoning" | "card" | "note"
    text: str = ""
    card: Card | None = None
    widget: Any = None
    dirty: bool = True
    closed: bool = False  # the turn that wrote it has ended


@dataclass
class Transcript:
    """Everything one ``%%claw`` cell showed, in order."""

    blocks: list[Block] = field(default_factory=list)
    cards: dict[str, Card] = field(default_factory=dict)
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: str = ""
    # the model is answering a turn that has not ended yet (text or reasoning arrived since
    # the last TurnEnd): the footer counts it, so a first streaming answer is "1 turn", not 0
    in_turn: bool = False

    def _tail(self, kind: str) -> Block:
        # a new turn's text never continues the previous turn's block (that glued "…done"
        # and "## Plan v2" into "done## Plan v2", breaking the Markdown)
        if not self.blocks or self.blocks[-1].kind != kind or self.blocks[-1].closed:
            self.blocks.append(Block(kind))
        return self.blocks[-1]

    def apply(self, event: Any) -> Block | None:
        """Record ``event``; return the block that changed (``None`` for footer-only changes)."""
        if isinstance(event, AgentEvent.Nested):
            return self._apply_nested(event)
        match event:
            case AgentEvent.TextDelta(text=text):
                self.in_turn = True
                block = self._tail("text")
                block.text += text
                return block
            case AgentEvent.ReasoningDelta(text=text):
                self.in_turn = True
                block = self._tail("reasoning")
                block.text += text
                return block
            case AgentEvent.ToolCall(name=name) | AgentEvent.ToolResult(name=name) if (
                name == EXIT_PLAN
            ):
                # plan mode's hand-in: the plan's own box (text, Execute / Revise / Cancel)
                # is what it is about; a generic card next to it only repeats "submitted"
                return None
            case AgentEvent.ToolCall(name=name, summary=summary, id=call_id, arguments=args):
                card = Card(call_id, name, summary, args)
                self.cards[call_id] = card
                block = Block("card", card=card)
                self.blocks.append(block)
                return block
            case AgentEvent.ToolOutput(id=call_id, text=text):
                live = self.cards.get(call_id)
                if live is not None and live.status == RUNNING:
                    live.output = (live.output + text)[-LIVE_OUTPUT_CAP:]
                    return self.block_of(live)
            case AgentEvent.ToolRunning(id=call_id, note=note):
                running = self.cards.get(call_id)
                if running is not None:
                    if note:  # how it runs (bash: "sandboxed: workspace-write, no network")
                        running.note = f"{running.note}; {note}" if running.note else note
                    running.status = RUNNING
                    running.started = time.monotonic()
                    return self.block_of(running)
            case AgentEvent.ToolResult(id=call_id, name=name, content=content, outcome=outcome):
                known = self.cards.get(call_id)
                card = known if known is not None else Card(call_id, name, f"[{name}]")
                if known is None:
                    self.cards[call_id] = card
                    self.blocks.append(Block("card", card=card))
                card.status = OUTCOME_STATUS.get(outcome, outcome)
                card.result = content
                if card.started is not None:
                    card.ended = time.monotonic()
                return self.block_of(card)
            case AgentEvent.TurnEnd(turn=turn):
                self.in_turn = False
                self.turns += 1
                for block in self.blocks:
                    block.closed = True
                if turn.usage is not None:
                    self.input_tokens += turn.usage.input_tokens
                    self.output_tokens += turn.usage.output_tokens
                cut = turn.cut_off_note()  # a reply the output cap cut short looks finished
                if cut is not None:
                    return self.note(f"({cut})")
            case AgentEvent.Error(message=message):
                return self.note(f"error: {message}")
            case AgentEvent.ContextRecovered(note=note):
                return self.note(
                    f"the conversation was too long for the model's context: {note}; asking again"
                )
        return None

    def _apply_nested(self, event: Any) -> Block | None:
        """A subagent's tool calls become cards marked with the call they work for (so their
        approvals get buttons too); its text is the parent call's result, not shown twice."""
        inner = event.event
        if not isinstance(
            inner, (AgentEvent.ToolCall, AgentEvent.ToolRunning, AgentEvent.ToolResult)
        ):
            return None
        block = self.apply(inner)
        card = self.cards.get(inner.id)
        if card is not None:
            card.parent = event.parent_id
            above = self.cards.get(event.parent_id)
            card.parent_name = above.name if above is not None else "subagent"
        return block

    def note(self, text: str) -> Block:
        block = Block("note", text)
        self.blocks.append(block)
        return block

    def block_of(self, card: Card) -> Block | None:
        for block in self.blocks:
            if block.card is card:
                return block
        return None

    @property
    def answer(self) -> str:
        return "".join(b.text for b in self.blocks if b.kind == "text")

    def quiet_text(self) -> str:
        """What ``--quiet`` shows: the answer, plus any error or interruption (a quiet cell
        that failed must not look like an empty answer); the footer when there is neither."""
        parts = [self.answer.strip()]
        parts += [
            b.text
            for b in self.blocks
            if b.kind == "note" and b.text.startswith(("error:", "interrupted"))
        ]
        text = "\n\n".join(p for p in parts if p)
        return text or f"[{self.footer()}]"

    def footer(self) -> str:
        """``N turns · tokens · cost``; N includes a turn still streaming (or cut short by an
        error or an interrupt after it showed something)."""
        turns = self.turns + (1 if self.in_turn else 0)
        parts = [f"{turns} turn{'s' if turns != 1 else ''}"]
        if self.input_tokens or self.output_tokens:
            parts.append(f"{self.input_tokens:,} in / {self.output_tokens:,} out tokens")
        if self.cost:
            parts.append(self.cost)
        return " · ".join(parts)

    # -- static renderings -------------------------------------------------------------------

    def ordered_blocks(self) -> list[Block]:
        """The blocks in reading order: a subagent's cards right under the card of the call
        they work for (they arrive interleaved with nothing else, but after other blocks)."""
        nested: dict[str, list[Block]] = {}
        top: list[Block] = []
        for block in self.blocks:
            parent = block.card.parent if block.card is not None else ""
            if parent and parent in self.cards:
                nested.setdefault(parent, []).append(block)
            else:
                top.append(block)
        ordered: list[Block] = []

        def add(block: Block) -> None:
            ordered.append(block)
            if block.card is not None:
                for child in nested.pop(block.card.id, []):
                    add(child)

        for block in top:
            add(block)
        for rest in nested.values():  # a parent we never saw: keep them anyway
            ordered.extend(rest)
        return ordered


def nested_mark(card: Card) -> str:
    """Cards of a subagent's (or a forked skill's) calls start with an arrow: they belong to
    the card above."""
    if not card.parent:
        return ""
    return "↳ fork: " if card.parent_name == "skill" else "↳ subagent: "


class View:
    """What both views share: the transcript and the event entry point."""

    live = False

    def __init__(self, *, quiet: bool = False) -> None:
        self.transcript = Transcript()
        self.quiet = quiet

    def __call__(self, event: Any) -> None:
        block = self.transcript.apply(event)
        if isinstance(event, AgentEvent.Nested):  # a subagent's call: drawn like any card
            if block is None:
                return
            event = event.event
        self._changed(block, event)

    def _changed(self, block: Block | None, event: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def card(self, call_id: str) -> Card | None:
        return self.transcript.cards.get(call_id)

    def set_status(self, card: Card, status: str, note: str = "") -> None:
        card.status = status
        card.note = note
        block = self.transcript.block_of(card)
        self._changed(block, None)

    def attach_images(self, call_id: str, images: Any) -> None:
        """Show the images a call returned on its card (an MCP tool's screenshot, a chart)."""
        card = self.card(call_id)
        if card is not None and images:
            card.images = list(images)
            self._changed(self.transcript.block_of(card), None)

    def set_preview(self, card: Card, change: Any) -> None:
        """Attach the exact change a call will make (a ChangePreview) to its card."""
        card.preview = change
        self._changed(self.transcript.block_of(card), None)

    def note(self, text: str) -> None:
        block = self.transcript.note(text)
        self._changed(block, None)

    def start(self) -> None:
        return None

    def finish(self) -> None:
        return None


class PromptCells:
    """Which cell (its ``In [n]``) sent each of the person's messages, for ``%claw history``.

    Kept by the kernel beside the conversation, not in it: a message is looked up by identity,
    so a conversation resumed in another kernel (whose cell numbers mean nothing here) is
    numbered ``[1]``, ``[2]`` … as the chat numbers it."""

    def __init__(self) -> None:
        self._cells: dict[int, tuple[Any, int]] = {}

    @contextmanager
    def cell(self, number: int, agent: Any) -> Iterator[None]:
        """Every user message ``agent``'s history gains while this is open came from cell
        ``number`` (the prompt, and a plan's approval or revision the cell's box sent)."""
        from ..types import Message

        def users() -> list[Any]:
            return [m for m in getattr(agent, "history", []) if isinstance(m, Message.User)]

        before = {id(m) for m in users()}
        try:
            yield
        finally:
            for message in users():
                if id(message) not in before:
                    self._cells[id(message)] = (message, number)

    def number_of(self, message: Any) -> int | None:
        """The cell that sent ``message``, or ``None`` when this kernel did not see it sent."""
        entry = self._cells.get(id(message))
        return entry[1] if entry is not None and entry[0] is message else None
