"""The live view: :class:`WidgetView` draws a ``%%claw`` turn with ipywidgets while it
runs — text streams in, each tool call is a card with its status, arguments, result preview and
the Approve/Deny/Always-allow buttons — coalescing frontend updates with a
:class:`~clawnb.notebook.throttle.Throttle`. When the cell ends the widgets are closed and
replaced by the static rendering (:func:`~clawnb.notebook.html.transcript_markdown`): saved
notebooks hold no widget state.
"""

from __future__ import annotations

import asyncio
import html
import time
import warnings
from collections.abc import Callable
from typing import Any

from ..control.secrets import Redactor, redactor
from ..events import AgentEvent
from .html import (
    STATUS_CLASS,
    STYLE,
    answer_markdown,
    card_body_html,
    card_head_html,
    card_head_inner,
    card_html,
    error_html,
    is_error_note,
    pre,
    transcript_markdown,
)
from .sanitize import sanitize_markdown
from .scrub import scrub
from .text import transcript_plain
from .throttle import Throttle
from .transcript import ANSWERING, RUNNING, WAITING, Block, Card, View

__all__ = ["WidgetView", "shown_while_streaming"]


class WidgetView(View):
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
                if block.kind == "text" and not block.closed and block.text.strip():
                    return "writing"  # the answer's words are arriving
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
            scrub(sanitize_markdown(text))
            if text is not None
            else transcript_markdown(self.transcript)
        )
        plain = scrub(text) if text is not None else transcript_plain(self.transcript)
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
            # in the status line, after Stop: its "Notify me" offer is one short item on the
            # line that already says what waits, once per cell, not a block of its own that
            # pushed the cell down under every waiting card (issue 26)
            self.status_bar.children = (*self.status_bar.children, beacon)
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
        self.status_bar.children = tuple(c for c in self.status_bar.children if c is not beacon)
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
        markdown = transcript_markdown(self.transcript)
        # the marker lets the stylesheet hide this copy while the live widgets show, and the
        # widget's "model not found" placeholder once the notebook is reopened without them
        return {
            "text/markdown": f"<div class='clawnb-snapshot'></div>\n\n{note}\n\n{markdown}",
            "text/plain": transcript_plain(self.transcript),
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
        # the status line first: the front end applies updates one message at a time, and a
        # footer sent after the text it counts was seen lagging it ("One" above "0 turns")
        footer = (
            "<div class='clawnb-muted' style='font-size:small'>"
            f"{html.escape(self.status_line())}</div>"
        )
        if self.footer.value != footer:
            self.footer.value = footer
            self.updates += 1
            self._sent += len(footer)
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
                inner = card_body_html(card)
                if card.finished and inner:
                    # done: one line that opens to the details (head hidden, not emptied: an
                    # empty HTML widget still takes a line)
                    head.layout.display = "none"
                    folded = f"<details><summary>{card_head_inner(card)}</summary>{inner}</details>"
                    pairs = [(body, folded)]
                else:
                    head.layout.display = None
                    pairs = [(head, card_head_html(card)), (body, inner)]
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
        wanted = f"clawnb-s-{STATUS_CLASS.get(block.card.status, 'pending')}"
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
                return pre(block.text)
            # while the turn streams, a trailing word that may be a key in the making waits
            # for the next update: a key must not reach the widget state half-scrubbed
            return pre(shown_while_streaming(block.text))
        if block.kind == "reasoning":
            text = block.text if block.closed else shown_while_streaming(block.text)
            return pre(text, "clawnb-muted")
        if block.kind == "note" and is_error_note(block.text):
            return error_html(block.text)
        if block.kind == "note":
            return f"<i>{html.escape(scrub(block.text))}</i>"
        assert block.card is not None
        return card_html(block.card)

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
        extra: list[Any] = []  # the scoped "always": what it covers and how long it lasts
        if not card.once_only and card.always:
            label, tip, extra = self._always_controls(card)
            choices.append((label, "always", tip))
        elif not card.once_only:
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

        answer_on_enter(instead, answer, "deny")
        bar = self._bar([*buttons, *extra, instead])
        bar.add_class("clawnb-approval")
        self._buttons[card.id] = bar
        self.set_status(card, WAITING, card.note)  # keep why it is asked
        # what is asked about (the diff, the command) reaches the browser before the buttons
        self.throttle.flush_now()
        block = self.transcript.block_of(card)
        if block is not None and block.widget is not None:
            block.widget.children = (*block.widget.children[:2], bar)
        self.attention("approval")
        try:
            choice = await answer
            if choice == "deny":
                card.deny_reason = instead.value
            if choice == "always" and extra:
                rule = extra[0].value if len(extra) == 2 else str(card.always[0]["rule"])
                card.always_choice = (rule, extra[-1].value)
            return choice
        finally:
            self.attention("")
            instead.disabled = True
            instead.close()
            for control in extra:
                control.close()
            for button in buttons:
                button.disabled = True
            if block is not None and block.widget is not None and not self._closed:
                block.widget.children = tuple(block.widget.children[:2])
            self._buttons.pop(card.id, None)
            bar.close()
            for button in buttons:
                button.close()

    def _always_controls(self, card: Card) -> tuple[str, str, list[Any]]:
        """The scoped "always" button's label and tooltip, and its dropdowns: which offer
        (when the gate offered more than one: an MCP tool or its whole server) and how long
        (this session, saved for this project, saved for you; a command only allowed as
        itself is for this session). The last control is always the duration."""
        w = self._w
        offers = card.always
        controls: list[Any] = []
        if len(offers) > 1:
            scope = w.Dropdown(
                options=[(str(o["label"]), str(o["rule"])) for o in offers],
                value=str(offers[0]["rule"]),
                description="",
                layout=w.Layout(width="auto"),
            )
            scope.add_class("clawnb-always-scope")
            scope.tooltip = "which calls the 'always' covers"
            controls.append(scope)
            label = "Always allow"
        else:
            label = f"Always allow {offers[0]['label']}"
        places = [("for this session", "session")]
        if any(o.get("saveable") for o in offers):
            places += [("saved for this project", "project"), ("saved for you", "user")]
        duration = w.Dropdown(
            options=places, value="session", description="", layout=w.Layout(width="auto")
        )
        duration.add_class("clawnb-always-for")
        duration.tooltip = "how long the 'always' lasts: this session, or saved as a rule"
        duration.disabled = len(places) == 1
        controls.append(duration)
        tip = (
            "allow the calls this covers without asking again: for this session, or saved as "
            "a rule (.claw/rules.local.toml or your rules.toml; /rules forget removes it) "
            "(key: A)"
        )
        return label, tip, controls

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

            submit.on_click(answer_on_enter(text, answer))  # the button sends, like Enter
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

        answer_on_enter(feedback, answer, "revise")
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


def answer_on_enter(
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
