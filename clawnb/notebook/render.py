"""Showing a ``%%claw`` turn: live while it runs, static once it ends.

One :class:`Transcript` records what happened (answer text, reasoning, tool cards, notes,
usage). Two views draw it:

* :class:`WidgetView` — ipywidgets in a live frontend: text streams in, each tool call is a
  card with its status, arguments, result preview and the Approve/Deny/Always-allow buttons.
  Frontend updates are coalesced by a :class:`Throttle` (at most one per screen frame, and
  further apart as updates grow expensive), so a fast stream cannot flood the browser. When
  the cell ends the widgets are closed and replaced by a static Markdown rendering: saved
  notebooks hold no widget state.
* :class:`TextView` — plain lines, for terminals and headless runs (nbclient, nbval ignore
  display updates, so nothing here relies on them).

Everything shown goes through :func:`clawnb.notebook.scrub.scrub` first.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..control.secrets import Redactor, StreamRedactor, redactor
from ..events import AgentEvent
from .sanitize import sanitize_markdown
from .scrub import scrub

__all__ = ["Card", "TextView", "Throttle", "Transcript", "WidgetView", "preview"]

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
_OUTCOME_STATUS = {
    "ok": DONE,
    "error": ERROR,
    "denied": DENIED,
    "blocked": BLOCKED,
    "interrupted": INTERRUPTED,
}
_ICON = {
    PENDING: "○",
    WAITING: "⏸",
    ANSWERING: "⏸",
    RUNNING: "◐",
    DONE: "✓",
    DENIED: "⊘",
    BLOCKED: "⊘",
    ERROR: "✗",
    INTERRUPTED: "■",
}
# Each status as a CSS class: the colour lives in STYLE, taken from the JupyterLab theme.
_STATUS_CLASS = {
    PENDING: "pending",
    WAITING: "waiting",
    ANSWERING: "waiting",
    RUNNING: "running",
    DONE: "done",
    DENIED: "failed",
    BLOCKED: "failed",
    ERROR: "failed",
    INTERRUPTED: "failed",
}
_FINISHED = (DONE, DENIED, BLOCKED, ERROR, INTERRUPTED)

# Every colour comes from JupyterLab's theme variables, so light, dark and high-contrast themes
# all work; the fallback after each variable is for viewers without them (VS Code, nbviewer).
# Text keeps the theme's own foreground everywhere: a status is told by its icon, its words and
# a coloured left border, never by coloured text that one of the themes would make unreadable.
# Diff rows tint the theme's success/error colour over the background (color-mix), so the text
# on them is the theme's text on (almost) the theme's background. A viewer that strips <style>
# (an untrusted notebook) shows plain, readable text in its own colours.
STYLE = (
    "<style>"
    ".clawnb-card{border:1px solid var(--jp-border-color2,rgba(128,128,128,.35));"
    "border-left:4px solid var(--jp-border-color1,rgba(128,128,128,.6));border-radius:4px;"
    "padding:2px 8px;margin:3px 0;overflow:hidden}"
    ".clawnb-card.clawnb-s-running{border-left-color:var(--jp-brand-color1,#1976d2)}"
    ".clawnb-card.clawnb-s-done{border-left-color:var(--jp-success-color1,#388e3c)}"
    ".clawnb-card.clawnb-s-failed{border-left-color:var(--jp-error-color1,#d32f2f)}"
    ".clawnb-card.clawnb-s-waiting{border:2px solid var(--jp-warn-color1,#f57c00);"
    "border-left-width:6px;background:var(--jp-layout-color2,rgba(128,128,128,.12))}"
    ".clawnb-card.clawnb-s-waiting:focus{outline:2px solid var(--jp-brand-color1,#1976d2);"
    "outline-offset:2px}"
    ".clawnb-card summary{cursor:pointer;list-style-position:inside}"
    ".clawnb-card.clawnb-nested{margin-left:24px}"
    # a notebook saved mid-run: its live widgets' outputs are dead once reopened, the snapshot
    # next to them is the readable copy; while the widgets live, the snapshot stays hidden
    ".jp-OutputArea-child:has(+ .jp-OutputArea-child .clawnb-snapshot):not(:has(.clawnb-cell))"
    "{display:none}"
    ".jp-OutputArea-child:has(.clawnb-cell) + .jp-OutputArea-child:has(.clawnb-snapshot)"
    "{display:none}"
    ".clawnb-card code{background:transparent;color:inherit}"
    ".clawnb-diff{font-family:var(--jp-code-font-family,monospace);"
    "font-size:var(--jp-code-font-size,small);white-space:pre;line-height:1.4;"
    "overflow:auto;max-height:28em;margin:2px 0;"
    "border:1px solid var(--jp-border-color2,rgba(128,128,128,.35))}"
    ".clawnb-diff div{padding:0 4px;min-width:max-content}"
    ".clawnb-add{background:color-mix(in srgb,var(--jp-success-color1,#388e3c) 24%,transparent)}"
    ".clawnb-del{background:color-mix(in srgb,var(--jp-error-color1,#d32f2f) 24%,transparent)}"
    ".clawnb-hunk{background:var(--jp-layout-color2,rgba(128,128,128,.12))}"
    ".clawnb-code,.clawnb-result{font-family:var(--jp-code-font-family,monospace);"
    "font-size:var(--jp-code-font-size,small);white-space:pre-wrap;margin:2px 0;"
    "padding:4px 6px;background:var(--jp-cell-editor-background,transparent);"
    "color:var(--jp-content-font-color1,inherit);"
    "border:1px solid var(--jp-border-color2,rgba(128,128,128,.35))}"
    ".clawnb-result{max-height:16em;overflow:auto}"
    ".clawnb-muted{color:var(--jp-content-font-color2,inherit)}"
    # on a waiting card's highlight the secondary grey falls under 4.5:1 (axe, light theme)
    ".clawnb-s-waiting .clawnb-muted{color:var(--jp-content-font-color1,inherit)}"
    ".clawnb-change{font-weight:600}"
    ".clawnb-bar{flex-wrap:wrap;gap:4px;margin:4px 0}"
    # the beacon's offer of browser notifications: wraps rather than truncates when narrow
    ".clawnb-notify.jupyter-button{width:auto;max-width:100%;height:auto;white-space:normal;"
    "overflow:visible;line-height:1.4;margin:4px 0;padding:4px 12px}"
    ".clawnb-bar .jupyter-button,.clawnb-question .jupyter-button{width:auto;"
    "min-width:max-content;overflow:visible;white-space:nowrap;margin:0;padding:0 12px}"
    ".clawnb-bar .clawnb-approve{border:2px solid var(--jp-success-color1,#388e3c);"
    "font-weight:600}"
    ".clawnb-bar .clawnb-deny{border:2px solid var(--jp-error-color1,#d32f2f)}"
    ".clawnb-bar .clawnb-always{border:2px solid var(--jp-warn-color1,#f57c00)}"
    ".clawnb-bar .clawnb-plan-execute{border:2px solid var(--jp-success-color1,#388e3c);"
    "font-weight:600}"
    ".clawnb-bar .clawnb-plan-revise{border:2px solid var(--jp-brand-color1,#1976d2)}"
    ".clawnb-bar .clawnb-plan-cancel{border:2px solid var(--jp-error-color1,#d32f2f)}"
    "</style>"
)


def preview(text: str, *, lines: int = 12, width: int = 160) -> str:
    """The first ``lines`` lines of ``text``, each cut to ``width`` characters."""
    rows = text.splitlines() or [""]
    shown = [r if len(r) <= width else r[: width - 1] + "…" for r in rows[:lines]]
    if len(rows) > lines:
        shown.append(f"… ({len(rows) - lines} more lines)")
    return "\n".join(shown)


def _args_text(arguments: Any) -> tuple[str, str]:
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
    return _args_json(arguments), "json"


def _args_json(arguments: Any) -> str:
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
    # a running call's output so far (bash), its tail shown live; capped
    output: str = ""
    parent: str = ""  # the call a subagent made this one for ("" for the agent's own calls)

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
        return self.status in _FINISHED

    def hint(self) -> str:
        """A few words about the outcome for the collapsed one-line card."""
        if self.preview is not None and self.status in (DONE, WAITING, PENDING):
            return str(self.preview.summary)
        result = self.result.strip()
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
            case AgentEvent.ToolCall(name=name, summary=summary, id=call_id, arguments=args):
                card = Card(call_id, name, summary, args)
                self.cards[call_id] = card
                block = Block("card", card=card)
                self.blocks.append(block)
                return block
            case AgentEvent.ToolOutput(id=call_id, text=text):
                live = self.cards.get(call_id)
                if live is not None and live.status == RUNNING:
                    live.output = (live.output + text)[-_LIVE_OUTPUT_CAP:]
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
                card.status = _OUTCOME_STATUS.get(outcome, outcome)
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

    def to_markdown(self) -> str:
        out: list[str] = []
        for block in self.ordered_blocks():
            if block.kind == "text" and block.text.strip():
                # model text: no raw HTML, no images that load (clawnb.notebook.sanitize)
                out.append(answer_markdown(block.text))
            elif block.kind == "reasoning" and block.text.strip():
                body = _one_line(html.escape(block.text.strip()))
                out.append(
                    "<details class='clawnb-reasoning'><summary class='clawnb-muted'>reasoning"
                    f"</summary><pre class='clawnb-result'>{body}</pre></details>"
                )
            elif block.kind == "note":
                out.append(f"*{sanitize_markdown(block.text)}*")
            elif block.card is not None:
                out.append(_card_html(block.card))
        out.append(f"<sub class='clawnb-muted'>{html.escape(self.footer())}</sub>")
        # the stylesheet once, first: every class above takes its colours from the theme
        return scrub(STYLE + "\n\n" + "\n\n".join(out))

    def to_plain(self) -> str:
        out: list[str] = []
        for block in self.blocks:
            if block.kind in ("text",) and block.text.strip():
                out.append(block.text.strip())
            elif block.kind == "reasoning" and block.text.strip():
                out.append("(reasoning) " + block.text.strip())
            elif block.kind == "note":
                out.append(block.text)
            elif block.card is not None:
                out.append(_card_plain(block.card))
        out.append(f"[{self.footer()}]")
        return scrub("\n".join(out))


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def answer_markdown(text: str) -> str:
    """The model's text as Markdown, the same way live and in the saved rendering: raw HTML
    escaped and images made links (:func:`~clawnb.notebook.sanitize.sanitize_markdown`), an
    open code fence closed."""
    return close_fences(sanitize_markdown(text.strip()))


def close_fences(text: str) -> str:
    """``text`` with a code fence the model left open closed at its end, so whatever the
    rendering puts after it (the footer, the next card) is not swallowed into the code block."""
    opened: str | None = None
    for line in text.splitlines():
        match = _FENCE.match(line)
        if match is None:
            continue
        marker, rest = match.groups()
        if opened is None:
            if not (marker[0] == "`" and "`" in rest):  # a backtick fence's info has no `
                opened = marker
        elif marker[0] == opened[0] and len(marker) >= len(opened) and not rest.strip():
            opened = None
    return text if opened is None else f"{text}\n{opened}"


def _card_plain(card: Card) -> str:
    head = (
        f"{_nested_mark(card)}[{card.name}{': ' + card.title if card.title else ''}] {card.label()}"
    )
    if card.result:
        body = "\n".join("    " + row for row in preview(card.result, lines=6).splitlines())
        return head + "\n" + body
    return head


def _nested_mark(card: Card) -> str:
    """Cards of a subagent's calls start with an arrow: they belong to the card above."""
    return "↳ subagent: " if card.parent else ""


class Throttle:
    """Call ``flush`` soon after :meth:`poke`, coalescing the pokes that come in between.

    Two flushes are at least :attr:`gap` seconds apart. The gap is one screen frame
    (``interval``, 1/60 s by default: a faster update is never seen) unless updating is
    expensive: then it is what keeps updating within ``share`` of the time, ``cost / share``,
    where ``cost`` is the last flush's own run time plus what ``flush`` returns — the work it
    caused elsewhere (the browser re-rendering what was sent), in seconds. So a short answer
    streams at the frame rate, and a long one, re-sent and re-rendered whole on every update,
    coalesces more. The default ``share``, a fifth, leaves most of the time to the agent in
    the kernel and to the person scrolling and typing in the browser. The first poke after a
    quiet spell flushes at once (leading edge).

    Without a running event loop (plain scripts) every poke flushes at once.
    """

    #: one frame of a 60 Hz screen: the default (and shortest useful) gap between updates
    FRAME = 1 / 60

    def __init__(
        self,
        flush: Callable[[], float | None],
        interval: float = FRAME,
        clock: Callable[[], float] = time.monotonic,
        *,
        share: float = 0.2,
    ) -> None:
        self._flush = flush
        self.interval = interval
        self.share = share
        self.gap = interval
        self.cost = 0.0  # seconds the last flush cost, here and (by its estimate) elsewhere
        self._clock = clock
        self._last = float("-inf")
        self._handle: asyncio.TimerHandle | None = None

    def poke(self) -> None:
        if self._handle is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush_now()
            return
        wait = max(0.0, self._last + self.gap - self._clock())
        self._handle = loop.call_later(wait, self._run)

    def _run(self) -> None:
        self._handle = None
        self._last = start = self._clock()
        elsewhere = self._flush() or 0.0
        self.cost = self._clock() - start + elsewhere
        self.gap = max(self.interval, self.cost / self.share)

    def flush_now(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._run()

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


class _View:
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


class TextView(_View):
    """Plain lines on a text stream; headless runs and terminals."""

    def __init__(self, out: TextIO | None = None, *, quiet: bool = False) -> None:
        super().__init__(quiet=quiet)
        self._out = out
        self._in_text = False
        # a key the model echoes arrives in pieces, and the scrubber only recognises it whole:
        # the end of the streamed text that may be the start of a key is held back
        self._answer = StreamRedactor()

    @property
    def out(self) -> TextIO:
        # looked up late: in a kernel, sys.stdout routes to the running cell
        return self._out or sys.stdout

    def _write(self, text: str) -> None:
        self.out.write(scrub(text))

    def _end_text(self) -> None:
        if self._in_text:
            self._write(self._answer.flush() + "\n")
            self._in_text = False

    def _stream(self, text: str) -> None:
        ready = self._answer.feed(text)
        if ready:
            self._write(ready)

    def _changed(self, block: Block | None, event: Any) -> None:
        if self.quiet:
            return
        if block is not None and block.kind == "note":
            self._end_text()
            self._write(block.text + "\n")
            self.out.flush()
            return
        match event:
            case AgentEvent.TextDelta(text=text):
                self._stream(text)
                self._in_text = True
            case AgentEvent.ReasoningDelta():
                pass  # reasoning is not printed line by line; it is in the final transcript
            case AgentEvent.TurnEnd():
                self._end_text()  # the next turn's text starts on a line of its own
            case AgentEvent.ToolCall() | AgentEvent.ToolResult() if block is not None:
                self._end_text()
                card = block.card
                if card is not None and isinstance(event, AgentEvent.ToolCall):
                    title = f"{card.name}{': ' + card.title if card.title else ''}"
                    self._write(f"{_nested_mark(card)}[{title}]\n")
                    code = code_argument(card.arguments)
                    if code is not None:  # what an input() approval is about to allow
                        self._write("".join(f"    | {row}\n" for row in code[0].splitlines()))
                elif card is not None:
                    self._write(_card_plain(card) + "\n")
            case None if block is not None and block.card is not None:
                card = block.card
                if card.status == WAITING:
                    self._end_text()
                    if card.preview is not None:  # what an input() approval would allow
                        self._write(f"[{card.name}: {card.title}] {card.preview.summary}\n")
                        self._write(
                            "".join(f"    {row}\n" for row in card.preview.diff.splitlines())
                        )
                    self._write(f"[{card.name}] waiting for approval\n")
            case _:
                pass
        if not isinstance(event, AgentEvent.TextDelta) or self._tty():
            self.out.flush()  # headless: one stream output per block, not one per word

    def _tty(self) -> bool:
        try:
            return bool(self.out.isatty())
        except (AttributeError, ValueError):
            return False

    def finish(self) -> None:
        self._end_text()
        if self.quiet:
            self._write(self.transcript.quiet_text() + "\n")
        else:
            self._write(f"[{self.transcript.footer()}]\n")
        self.out.flush()


class WidgetView(_View):
    """Live ipywidgets rendering with approval buttons; static Markdown when finished.

    ``display`` and ``clear_output`` are injectable so the view works (and is tested) without a
    kernel. ``updates`` counts widget value changes sent to the frontend.
    """

    live = True

    def __init__(
        self,
        *,
        quiet: bool = False,
        interval: float = Throttle.FRAME,
        display: Callable[..., Any] | None = None,
        clear_output: Callable[..., Any] | None = None,
        snapshots: bool | None = None,
    ) -> None:
        super().__init__(quiet=quiet)
        import ipywidgets as widgets

        self._w = widgets
        # a readable copy of the transcript next to the live widgets, for a notebook saved
        # while the cell runs (on by default with IPython's own display; see _snapshot)
        self.snapshots = (display is None) if snapshots is None else snapshots
        self._snapshot_handle: Any = None
        self._snapshot_at = float("-inf")
        self._snapshot_version = -1
        self._version = 0
        if display is None or clear_output is None:
            from IPython.display import clear_output as _clear
            from IPython.display import display as _display

            display = display or _display
            clear_output = clear_output or _clear
        self._display = display
        self._clear_output = clear_output
        self.updates = 0  # widget messages sent
        self.flushes = 0  # rounds of updates (each sends the changed widgets together)
        self._sent = 0  # characters of HTML/Markdown sent in the current round
        self.throttle = Throttle(self._flush, interval)
        self.footer = widgets.HTML(value="")
        self.body = widgets.VBox([])
        # the cell's stylesheet (theme variables); a <style> in an HTML widget applies as is
        self.style = widgets.HTML(value=STYLE, layout=widgets.Layout(display="none"))
        # the live status line: what the agent does, for how long, tokens so far, and Stop
        # (JupyterLab's own status bar may say "Idle" while an async cell runs)
        self.stop = widgets.Button(
            description="■ Stop",
            tooltip="stop this turn, like the kernel's interrupt (the conversation is kept)",
            layout=widgets.Layout(width="auto"),
        )
        self.stop.add_class("clawnb-stop")
        self.stop.on_click(lambda _b: self._stop_clicked())
        self.on_stop: Callable[[], None] | None = None
        self.status_bar = widgets.HBox(
            [self.footer, self.stop],
            layout=widgets.Layout(flex_flow="row wrap", align_items="center"),
        )
        self.status_bar.add_class("clawnb-statusline")
        self._started = time.monotonic()
        self._spin = 0
        self.root = widgets.VBox([self.style, self.body, self.status_bar])
        self.root.add_class("clawnb-cell")
        # ARCHITECTURE §4.5: the frontend bumps _view_count when it renders a view.
        self.root._view_count = 0
        self._buttons: dict[str, Any] = {}
        self._tick: asyncio.TimerHandle | None = None
        self._closed = False
        # the anywidget that raises the tab title, scrolls to and focuses a waiting card and
        # takes a/d/A; made on first need, dropped when the front end cannot render it
        self._beacon: Any = None
        self._beacon_off = False
        self._spare_text: Any = None
        self._deciding = False  # a plan box waits for the person

    # -- frontend detection --------------------------------------------------------------------

    @property
    def rendered(self) -> bool:
        return bool(self.root._view_count)

    async def wait_rendered(self, timeout: float) -> bool:
        """True once a frontend has rendered the view; False if none did within ``timeout``."""
        deadline = time.monotonic() + timeout
        while not self.rendered:
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.02)
        return True

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        self._started = time.monotonic()
        # the first answer's text widget, made before the model answers: creating and
        # rendering a widget costs the front end a few hundred ms, which the first streamed
        # words would otherwise wait for (measured: benchmarks/bench_screen_latency.py)
        self._spare_text = self._make_widget(Block("text"))
        self.body.children = (self._spare_text,)
        self._display(self.root)
        if self.snapshots:
            self._snapshot_handle = self._display(
                self._snapshot_bundle(), raw=True, display_id=True
            )
            self._snapshot_at = time.monotonic()
        self.throttle.poke()

    def _stop_clicked(self) -> None:
        if self.on_stop is not None and not self.stop.disabled:
            self.stop.disabled = True
            self.stop.description = "stopping…"
            self.on_stop()

    def activity(self) -> str:
        """What the agent is doing now, in a few words, for the status line."""
        if self._deciding:
            return "waiting for your decision on the plan"
        for block in reversed(self.transcript.blocks):
            card = block.card
            if card is None:
                continue
            if card.status == WAITING:
                return "waiting for approval"
            if card.status == ANSWERING:
                return "waiting for your answer"
            if card.status == RUNNING:
                return f"running {card.name}"
        return "thinking"

    def status_line(self) -> str:
        elapsed = time.monotonic() - self._started
        spin = "◐◓◑◒"[self._spin % 4]
        return f"{spin} {self.activity()} {elapsed:.0f}s · {self.transcript.footer()}"

    def finish(self) -> None:
        """Flush, then replace the live widgets by a static rendering."""
        self.throttle.cancel()
        if self._tick is not None:
            self._tick.cancel()
        if self._closed:
            return
        self._closed = True
        self._clear_output()
        text = self.transcript.quiet_text() if self.quiet else None
        markdown = (
            scrub(sanitize_markdown(text)) if text is not None else self.transcript.to_markdown()
        )
        plain = scrub(text) if text is not None else self.transcript.to_plain()
        self._display({"text/markdown": markdown, "text/plain": plain}, raw=True)
        for widget in [*self._all_widgets()]:
            widget.close()

    # -- drawing attention ------------------------------------------------------------------

    #: how long a front end may take to render the beacon before it is taken out again
    BEACON_TIMEOUT = 5.0

    def attention(self, what: str) -> None:
        """Say that something waits for the person (``"approval"``, ``"answer"``,
        ``"plan"``), or that nothing does any more (``""``)."""
        if self._closed or self._beacon_off:
            return
        if self._beacon is None:
            if not what:
                return
            from .beacon import make_beacon

            beacon = make_beacon()
            if beacon is None:  # anywidget is not installed: the card's frame still shows it
                self._beacon_off = True
                return
            beacon._view_count = 0
            self._beacon = beacon
            self.root.children = (*self.root.children, beacon)
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                pass
            else:
                loop.call_later(self.BEACON_TIMEOUT, self._beacon_check)
        self._beacon.waiting = what

    def _beacon_check(self) -> None:
        beacon = self._beacon
        if beacon is None or self._closed or beacon._view_count:
            return
        # a front end without anywidget's extension: no error box left in the cell
        self._beacon_off = True
        self._beacon = None
        self.root.children = tuple(c for c in self.root.children if c is not beacon)
        beacon.close()

    def _all_widgets(self) -> list[Any]:
        found: list[Any] = []

        def walk(w: Any) -> None:
            found.append(w)
            for child in getattr(w, "children", ()) or ():
                walk(child)

        walk(self.root)
        for buttons in self._buttons.values():
            walk(buttons)
        return found

    # -- updates -------------------------------------------------------------------------------

    def _changed(self, block: Block | None, event: Any) -> None:
        self._version += 1
        if block is not None:
            block.dirty = True
            if block.widget is None:
                spare = self._spare_text
                if (
                    block.kind == "text"
                    and spare is not None
                    and self.body.children[-1:] == (spare,)
                ):
                    block.widget = spare  # made at start: the front end has it ready
                else:
                    block.widget = self._make_widget(block)
                    self._place(block)
                self._spare_text = None
                self.updates += 1
        if isinstance(event, AgentEvent.TurnEnd):
            for done in self.transcript.blocks:
                if done.kind in ("text", "reasoning"):
                    done.dirty = True  # show the word that was held back (see _html)
        self.throttle.poke()

    def _make_widget(self, block: Block) -> Any:
        w = self._w
        if block.kind == "card":
            # head (name, status: ticks every second while running) and body (code, diff,
            # arguments, result) are separate widgets: re-rendering the head does not replace
            # the body's HTML, so an "arguments" block the user opened stays open
            head = w.HTML(value="", layout=w.Layout(margin="0"))
            body = w.HTML(value="", layout=w.Layout(margin="0"))
            box = w.VBox([head, body])
            box.add_class("clawnb-card")
            return box
        if block.kind == "reasoning":
            # an Accordion keeps "open" in its own state: streaming more reasoning into it
            # does not snap it shut as a re-rendered <details> would
            inner = w.HTML(value="")
            box = w.Accordion(children=[inner], selected_index=None)
            box.set_title(0, "reasoning")
            box.add_class("clawnb-reasoning")
            return box
        if block.kind == "text":
            # an Output widget holding one text/markdown output: the front end renders it with
            # its own (sanitising) Markdown renderer, the one the saved rendering gets, so the
            # text does not jump from raw to rendered when the cell ends
            widget = w.Output()
            widget._clawnb_markdown = None
        else:
            widget = w.HTML(value="")
        widget.add_class(f"clawnb-{block.kind}")
        return widget

    #: what the browser takes to render one character of Markdown/HTML it is sent, in seconds
    #: (JupyterLab 4.6 in Chromium: 0.6-0.8 ms per 1,000 characters, measured on a loaded
    #: 2-core machine, rounded up); updates re-send and re-render a block whole
    FRONTEND_SECONDS_PER_CHAR = 1e-6

    def _flush(self) -> float:
        """Send what changed; returns the browser's estimated time to render it (the
        throttle spaces updates by their whole cost, see :class:`Throttle`)."""
        before = self.updates
        self._sent = 0
        self._flush_widgets()
        if self.updates != before:
            self.flushes += 1
        self._snapshot()
        return self._sent * self.FRONTEND_SECONDS_PER_CHAR

    #: seconds between two refreshes of the saved-while-running snapshot
    SNAPSHOT_EVERY = 2.0

    def _snapshot_bundle(self) -> dict[str, str]:
        note = "*saved while the cell was running: a snapshot of the transcript so far*"
        markdown = self.transcript.to_markdown()
        # the marker lets the stylesheet hide this copy while the live widgets show, and the
        # widget's "model not found" placeholder once the notebook is reopened without them
        return {
            "text/markdown": f"<div class='clawnb-snapshot'></div>\n\n{note}\n\n{markdown}",
            "text/plain": self.transcript.to_plain(),
        }

    def _snapshot(self) -> None:
        """Refresh the snapshot output (at most every SNAPSHOT_EVERY seconds, when something
        changed). JupyterLab saves the outputs it has: a notebook saved mid-run (autosave)
        keeps this readable copy, and the live widgets' outputs, whose models die with the
        kernel, are hidden by the snapshot's stylesheet when the notebook is reopened."""
        handle = self._snapshot_handle
        if handle is None or self._closed or self._version == self._snapshot_version:
            return
        now = time.monotonic()
        if now - self._snapshot_at < self.SNAPSHOT_EVERY:
            return
        self._snapshot_at = now
        self._snapshot_version = self._version
        bundle = self._snapshot_bundle()
        handle.update(bundle, raw=True)
        self._sent += len(bundle["text/markdown"])

    def _flush_widgets(self) -> None:
        running = False
        for block in self.transcript.blocks:
            if block.card is not None and block.card.status == RUNNING:
                running = True
                block.dirty = True  # elapsed time ticks
            if not block.dirty or block.widget is None:
                continue
            block.dirty = False
            if block.card is not None:
                head, body = block.widget.children[:2]
                self._card_classes(block)
                card = block.card
                inner = _card_body_html(card)
                if card.finished and inner:
                    # done: one line that opens to the details (head hidden, not emptied: an
                    # empty HTML widget still takes a line)
                    head.layout.display = "none"
                    folded = (
                        f"<details><summary>{_card_head_inner(card)}</summary>{inner}</details>"
                    )
                    pairs = [(body, folded)]
                else:
                    head.layout.display = None
                    pairs = [(head, _card_head_html(card)), (body, inner)]
            elif block.kind == "reasoning":
                pairs = [(block.widget.children[0], self._html(block))]
            elif block.kind == "text":
                markdown = self._markdown(block)
                if block.widget._clawnb_markdown != markdown:
                    block.widget._clawnb_markdown = markdown
                    block.widget.outputs = (
                        {
                            "output_type": "display_data",
                            "data": {"text/markdown": markdown, "text/plain": markdown},
                            "metadata": {},
                        },
                    )
                    self.updates += 1
                    self._sent += len(markdown)
                continue
            else:
                pairs = [(block.widget, self._html(block))]
            for target, value in pairs:
                if target.value != value:
                    target.value = value
                    self.updates += 1
                    self._sent += len(value)
        footer = (
            "<div class='clawnb-muted' style='font-size:small'>"
            f"{html.escape(self.status_line())}</div>"
        )
        if self.footer.value != footer:
            self.footer.value = footer
            self.updates += 1
            self._sent += len(footer)
        running = True  # the status line's clock ticks while the cell runs
        if running and self._tick is None and not self._closed:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return
            self._tick = loop.call_later(1.0, self._on_tick)

    def _place(self, block: Block) -> None:
        """Add a new block's widget: at the end, or, for a subagent's call, indented under
        the card of the call it works for (after that card's other nested cards)."""
        children = list(self.body.children)
        parent_id = block.card.parent if block.card is not None else ""
        parent = self.transcript.cards.get(parent_id) if parent_id else None
        parent_block = self.transcript.block_of(parent) if parent is not None else None
        if parent_block is None or parent_block.widget not in children:
            self.body.children = (*children, block.widget)
            return
        block.widget.add_class("clawnb-nested")
        at = children.index(parent_block.widget) + 1
        while at < len(children) and "clawnb-nested" in getattr(children[at], "_dom_classes", ()):
            at += 1
        children.insert(at, block.widget)
        self.body.children = tuple(children)

    def _card_classes(self, block: Block) -> None:
        """Keep the card box's status class (border colour, highlight) in step."""
        assert block.card is not None
        wanted = f"clawnb-s-{_STATUS_CLASS.get(block.card.status, 'pending')}"
        current = getattr(block.widget, "_clawnb_status", None)
        if current == wanted:
            return
        if current is not None:
            block.widget.remove_class(current)
        block.widget.add_class(wanted)
        block.widget._clawnb_status = wanted
        self.updates += 1

    def _on_tick(self) -> None:
        self._tick = None
        self._spin += 1
        self.throttle.poke()

    def _markdown(self, block: Block) -> str:
        # while the turn streams, a trailing word that may be a key in the making waits for
        # the next update: a key must not reach the widget state half-scrubbed
        text = block.text if block.closed else shown_while_streaming(block.text)
        return scrub(answer_markdown(text))

    def _html(self, block: Block) -> str:
        if block.kind == "text":
            if block.closed:
                return _pre(block.text)
            # while the turn streams, a trailing word that may be a key in the making waits
            # for the next update: a key must not reach the widget state half-scrubbed
            return _pre(shown_while_streaming(block.text))
        if block.kind == "reasoning":
            text = block.text if block.closed else shown_while_streaming(block.text)
            return _pre(text, "clawnb-muted")
        if block.kind == "note":
            return f"<i>{html.escape(scrub(block.text))}</i>"
        assert block.card is not None
        return _card_html(block.card)

    # -- approvals -----------------------------------------------------------------------------

    async def ask_approval(self, card: Card) -> str:
        """Show Approve / Deny / Always allow NAME on ``card``; return ``approve``, ``deny`` or
        ``always``. Handlers are attached before the buttons are displayed (§4.5)."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str] = loop.create_future()
        w = self._w
        buttons = []
        choices = [
            ("Approve", "approve", "run this call once (key: a)"),
            ("Deny", "deny", "do not run it; the model is told you said no (key: d)"),
        ]
        if not card.once_only:
            # by tool name, not by call: the label says so before the user clicks
            choices.append(
                (
                    f"Always allow {card.name}",
                    "always",
                    f"allow every {card.name} call for the rest of this session (key: A)",
                )
            )
        for label, value, tip in choices:
            # width auto + a wrapping bar: a narrow notebook wraps the buttons to a second
            # line instead of cutting "Always allow" down to "Al…"
            button = w.Button(description=label, tooltip=tip, layout=w.Layout(width="auto"))
            button.add_class(f"clawnb-{value}")

            def on_click(_b: Any, value: str = value) -> None:
                if not answer.done():
                    answer.set_result(value)

            button.on_click(on_click)
            buttons.append(button)
        # "No, and tell it what to do instead": Enter in the box denies with those words
        instead = w.Text(
            placeholder="or deny and tell it what to do instead",
            layout=w.Layout(width="auto", flex="1 1 16em"),
        )
        instead.add_class("clawnb-instead")

        _answer_on_enter(instead, answer, "deny")
        bar = self._bar([*buttons, instead])
        bar.add_class("clawnb-approval")
        self._buttons[card.id] = bar
        self.set_status(card, WAITING, card.note)  # keep why it is asked
        block = self.transcript.block_of(card)
        if block is not None and block.widget is not None:
            block.widget.children = (*block.widget.children[:2], bar)
        self.throttle.flush_now()
        self.attention("approval")
        try:
            choice = await answer
            if choice == "deny":
                card.deny_reason = instead.value
            return choice
        finally:
            self.attention("")
            instead.disabled = True
            instead.close()
            for button in buttons:
                button.disabled = True
            if block is not None and block.widget is not None and not self._closed:
                block.widget.children = tuple(block.widget.children[:2])
            self._buttons.pop(card.id, None)
            bar.close()
            for button in buttons:
                button.close()

    async def choose(self, question: str, options: list[str], *, label: str = "") -> str:
        """A question with option buttons and a free-text answer (a text box alone when there
        are no options). An ``ask_user`` card that waits for its answer gets the controls
        inside it, under the question it already shows; other questions (plan mode) get a
        box of their own."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str] = loop.create_future()
        w = self._w
        controls: list[Any] = []
        for option in options:
            button = w.Button(description=option, layout=w.Layout(width="auto"))

            def on_click(_b: Any, option: str = option) -> None:
                if not answer.done():
                    answer.set_result(option)

            button.on_click(on_click)
            controls.append(button)
        card_block = self._answering_block()
        if card_block is not None or not options:
            # the model's options are suggestions: a person may answer something else
            placeholder = label or ("or type another answer" if options else "your answer")
            text = w.Text(placeholder=placeholder, layout=w.Layout(width="auto", flex="1 1 14em"))
            submit = w.Button(description="Send", layout=w.Layout(width="auto"))

            submit.on_click(_answer_on_enter(text, answer))  # the button sends, like Enter
            controls += [text, submit]
        row = self._bar(controls)
        if card_block is not None:
            box = row
            box.add_class("clawnb-question")
            card_block.widget.children = (*card_block.widget.children[:2], box)
            parts: list[Any] = [row]
        else:
            prompt = w.HTML(value=f"<b>{html.escape(scrub(question))}</b>")
            box = w.VBox([prompt, row])
            box.add_class("clawnb-question")
            self.body.children = (*self.body.children, box)
            parts = [prompt, row, box]
        self.attention("answer")
        try:
            return await answer
        finally:
            self.attention("")
            if not self._closed:
                if card_block is not None:
                    card_block.widget.children = tuple(card_block.widget.children[:2])
                else:
                    self.body.children = tuple(c for c in self.body.children if c is not box)
            for c in (*controls, *parts):
                c.close()

    async def review_plan(self, plan: str) -> tuple[str, str]:
        """The plan in a framed box with **Execute** / **Revise** / **Cancel** and a box for
        what should change (Enter sends Revise). Returns ``(choice, feedback)`` with choice
        ``execute``, ``revise`` or ``cancel``. The plan's streamed text is folded into the box
        while it waits (not shown twice) and comes back after."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str] = loop.create_future()
        w = self._w
        shown = w.Output()
        markdown = scrub(answer_markdown(plan)) or "(the model submitted an empty plan)"
        shown.outputs = (
            {
                "output_type": "display_data",
                "data": {"text/markdown": markdown, "text/plain": markdown},
                "metadata": {},
            },
        )
        feedback = w.Text(
            placeholder="what should change? (Enter revises the plan)",
            layout=w.Layout(width="auto", flex="1 1 16em"),
        )
        controls: list[Any] = []
        for label, value, tip in (
            ("Execute", "execute", "carry the plan out; the mode returns to what it was"),
            ("Revise", "revise", "plan again, with what you wrote in the box"),
            ("Cancel", "cancel", "keep the plan, run nothing"),
        ):
            button = w.Button(description=label, tooltip=tip, layout=w.Layout(width="auto"))
            button.add_class(f"clawnb-plan-{value}")

            def on_click(_b: Any, value: str = value) -> None:
                if value == "revise" and not feedback.value.strip():
                    feedback.placeholder = "say what should change, then Revise (or Enter)"
                    return
                if not answer.done():
                    answer.set_result(value)

            button.on_click(on_click)
            controls.append(button)

        _answer_on_enter(feedback, answer, "revise")
        bar = self._bar([*controls, feedback])
        title = w.HTML(value="<b>Plan ready</b> — execute it, revise it, or cancel?")
        box = w.VBox([title, shown, bar])
        box.add_class("clawnb-card")
        box.add_class("clawnb-s-waiting")
        box.add_class("clawnb-plan")
        hidden = [
            b.widget
            for b in self.transcript.blocks
            if b.kind == "text" and b.widget is not None and b.text.strip() == plan.strip()
        ]
        for widget in hidden:
            widget.layout.display = "none"
        self.body.children = (*self.body.children, box)
        self.attention("plan")
        self._deciding = True
        self.throttle.poke()
        try:
            choice = await answer
            return choice, feedback.value.strip()
        finally:
            self._deciding = False
            self.attention("")
            if not self._closed:
                for widget in hidden:
                    widget.layout.display = None
                self.body.children = tuple(c for c in self.body.children if c is not box)
            for c in (*controls, feedback, bar, title, shown, box):
                c.close()

    def _bar(self, controls: list[Any]) -> Any:
        """A row of controls that wraps at narrow widths instead of cutting labels."""
        bar = self._w.HBox(controls, layout=self._w.Layout(flex_flow="row wrap", width="100%"))
        bar.add_class("clawnb-bar")
        return bar

    def _answering_block(self) -> Block | None:
        for block in reversed(self.transcript.blocks):
            card = block.card
            if card is not None and card.status == ANSWERING and block.widget is not None:
                return block
        return None


def _answer_on_enter(
    text: Any, answer: asyncio.Future[str], value: str | None = None
) -> Callable[[Any], None]:
    """Enter in ``text`` (an ipywidgets ``Text``) answers ``value``, or the typed words when
    ``value`` is None, once something is typed; returns that handler for a button to share."""

    def send(_source: Any) -> None:
        if text.value.strip() and not answer.done():
            answer.set_result(text.value if value is None else value)

    with warnings.catch_warnings():
        # deprecated in ipywidgets 8 but still the only way to hear Enter in a Text
        # (continuous_update=False also fires on blur, which would send a half answer)
        warnings.simplefilter("ignore", DeprecationWarning)
        text.on_submit(send)
    return send


_SHOWN_AT_ONCE = 1  # characters of a possible key's start the live view need not hold back


def shown_while_streaming(text: str, using: Redactor = redactor) -> str:
    """``text`` without a trailing word that may still be a key in the making (the rule the
    terminal's stream follows too: :meth:`clawnb.control.secrets.Redactor.settled`), except a single
    character.

    Unlike the terminal, which cannot take back what it printed, the live view re-renders and
    re-redacts the whole answer on every update: a character shown now that turns out to start
    a key is replaced with the rest of that key by the next update. One character of a key (or
    of its hex or base64) tells nothing, while holding it would make every word that ends like
    a known key's first character (the kernel's key starts with a hex digit, its hex with "3"
    or "6") wait for the next token.
    """
    ready, held = using.settled(text)
    return text if len(held) <= _SHOWN_AT_ONCE else ready


def _pre(text: str, css_class: str = "") -> str:
    cls = f" class='{css_class}'" if css_class else ""
    style = "white-space:pre-wrap;margin:0;font-family:inherit"
    return f"<div{cls} style='{style}'>{html.escape(scrub(text))}</div>"


def _one_line(escaped: str) -> str:
    """Escaped text with its line breaks as character references: the HTML stays on one
    physical line, so a blank line inside a ``<pre>`` cannot end the Markdown HTML block the
    static rendering puts it in (it would spill the rest out as Markdown)."""
    return escaped.replace("\r", "").replace("\n", "&#10;")


def _card_html(card: Card) -> str:
    """The whole card as one block of HTML, for the static rendering (a finished card is one
    line that opens to its details, as in the live view)."""
    status = _STATUS_CLASS.get(card.status, "pending")
    classes = f"clawnb-card clawnb-s-{status}" + (" clawnb-nested" if card.parent else "")
    body = _card_body_html(card)
    if card.finished and body:
        return (
            f"<details class='{classes}'>"
            f"<summary>{_card_head_inner(card)}</summary>{body}</details>"
        )
    return f"<div class='{classes}'><div>{_card_head_inner(card)}</div>{body}</div>"


_LIVE_OUTPUT_CAP = 64 * 1024  # characters of a running call's output kept for its tail
_LIVE_OUTPUT_LINES = 12


def _card_head_html(card: Card) -> str:
    live = ""
    if card.status == RUNNING and card.output.strip():
        # the tail of what the command printed so far (in the head, which re-renders every
        # second anyway: the body, with an "arguments" block the user may have opened, stays)
        rows = card.output.rstrip("\n").split("\n")[-_LIVE_OUTPUT_LINES:]
        tail = html.escape(scrub(preview("\n".join(rows), lines=_LIVE_OUTPUT_LINES)))
        live = f"<pre class='clawnb-result clawnb-live'>{_one_line(tail)}</pre>"
    return f"<div class='clawnb-head'>{_card_head_inner(card)}{live}</div>"


def _card_head_inner(card: Card) -> str:
    icon = _ICON.get(card.status, "•")
    title = html.escape(scrub(card.title))
    title_html = f" <code>{title}</code>" if title and card.name != "ask_user" else ""
    status = html.escape(scrub(card.label()))
    # the one-line card says what came of the call; an open card shows it in full below
    hint = html.escape(scrub(card.hint())) if card.finished else ""
    hint_html = f" <span class='clawnb-muted'>· {hint}</span>" if hint else ""
    return (
        f"{html.escape(_nested_mark(card))}"
        f"<span class='clawnb-icon' aria-hidden='true'>{icon}</span> "
        f"<b>{html.escape(card.name)}</b>{title_html} "
        f"<span class='clawnb-status'>{status}</span>{hint_html}"
    )


def _result_head_and_diff(result: str) -> tuple[str, str] | None:
    """``(first line, diff)`` for an edit-style result (``edited f.py`` + a numbered diff)."""
    head, sep, rest = result.partition("\n\n")
    if sep and rest.startswith("@@ -"):
        return head, rest
    return None


def _card_body_html(card: Card) -> str:
    parts: list[str] = []
    arguments = card.arguments
    if card.name == "ask_user" and isinstance(arguments, dict):
        question = arguments.get("question")
        if isinstance(question, str):
            parts.append(f"<div><b>{html.escape(scrub(question))}</b></div>")
            arguments = None
    code = code_argument(arguments)
    if code is not None:
        text = html.escape(scrub(code[0].rstrip("\n")))
        count = code[0].rstrip("\n").count("\n") + 1
        if count > 1:  # the whole command is below (it scrolls); say how much there is
            parts.append(f"<div class='clawnb-muted'>{count} lines</div>")
        parts.append(f"<pre class='clawnb-code'>{_one_line(text)}</pre>")
        arguments = code[1]
    change = card.preview
    result = card.result
    if change is not None:
        # the change that was (or will be) approved: the one diff this card shows
        if not card.finished:  # a finished card says it on its one line
            summary = html.escape(scrub(str(change.summary)))
            parts.append(f"<div class='clawnb-change'>{summary}</div>")
        if change.diff:
            parts.append(_diff_html(str(change.diff)))
        if card.status == DONE:
            split = _result_head_and_diff(result)
            result = split[0] if split is not None else result.split("\n", 1)[0]
    elif arguments not in (None, {}):
        text = html.escape(scrub(_args_text(arguments)[0]))
        parts.append(
            "<details><summary class='clawnb-muted'>arguments</summary>"
            f"<pre class='clawnb-result'>{_one_line(text)}</pre></details>"
        )
    if result:
        split = _result_head_and_diff(result) if change is None else None
        if split is not None:
            parts.append(f"<div>{html.escape(scrub(split[0]))}</div>")
            parts.append(_diff_html(split[1]))
        else:
            text = html.escape(scrub(preview(result)))
            parts.append(f"<pre class='clawnb-result'>{_one_line(text)}</pre>")
    return "".join(parts)


def _diff_html(diff: str) -> str:
    rows = []
    for line in scrub(diff).splitlines():
        cls = ""
        if line.startswith("+") and not line.startswith("+++"):
            cls = " class='clawnb-add'"
        elif line.startswith("-") and not line.startswith("---"):
            cls = " class='clawnb-del'"
        elif line.startswith("@@"):
            cls = " class='clawnb-hunk'"
        rows.append(f"<div{cls}>{html.escape(line) or '&nbsp;'}</div>")
    return "<div class='clawnb-diff'>" + "".join(rows) + "</div>"
