"""The plain-text view: :class:`TextView` prints a ``%%claw`` turn as lines, for terminals
and headless runs (nbclient and nbval ignore display updates, so nothing here relies on them),
and :func:`transcript_plain` is the ``text/plain`` copy of a finished cell."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from ..control.secrets import StreamRedactor
from ..events import AgentEvent
from .scrub import scrub
from .transcript import WAITING, Block, Card, Transcript, View, code_argument, nested_mark, preview

__all__ = ["TextView", "transcript_plain"]


def card_plain(card: Card) -> str:
    head = (
        f"{nested_mark(card)}[{card.name}{': ' + card.title if card.title else ''}] {card.label()}"
    )
    if card.shown_result:
        body = "\n".join("    " + row for row in preview(card.shown_result, lines=6).splitlines())
        return head + "\n" + body
    return head


class TextView(View):
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
                    self._write(f"{nested_mark(card)}[{title}]\n")
                    code = code_argument(card.arguments)
                    if code is not None:  # what an input() approval is about to allow
                        self._write("".join(f"    | {row}\n" for row in code[0].splitlines()))
                elif card is not None:
                    self._write(card_plain(card) + "\n")
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


def transcript_plain(transcript: Transcript) -> str:
    """The finished cell as plain text (``text/plain`` next to the Markdown)."""
    out: list[str] = []
    for block in transcript.blocks:
        if block.kind in ("text",) and block.text.strip():
            out.append(block.text.strip())
        elif block.kind == "reasoning" and block.text.strip():
            out.append("(reasoning) " + block.text.strip())
        elif block.kind == "note":
            out.append(block.text)
        elif block.card is not None:
            out.append(card_plain(block.card))
    if transcript.turns or transcript.in_turn or transcript.input_tokens:
        out.append(f"[{transcript.footer()}]")  # nothing to count when no turn came back
    return scrub("\n".join(out))
