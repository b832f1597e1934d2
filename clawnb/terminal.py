"""Plain-terminal rendering of :class:`~clawnb.events.AgentEvent` s.

Used by ``python -m clawnb demo`` and the terminal chat. It only consumes events: answer text
streams as it arrives, each tool call gets a header line, a short preview of its result and its
outcome.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from typing import Any, TextIO

from .events import AgentEvent

__all__ = ["TerminalRenderer", "preview", "printable"]

# C0/C1 control characters (tab and newline excepted) and the bidi overrides: written raw,
# they let a command, a file or the model's text move the cursor, erase a line or reorder it,
# e.g. hide `rm -rf ~` behind a harmless-looking command in an approval question.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` safe to write to a terminal: control characters are shown as ``\\xNN``."""
    text = text.replace("\r\n", "\n")
    return _UNSAFE.sub(lambda m: ascii(m.group())[1:-1], text)


def preview(text: str, *, lines: int = 6, width: int = 100) -> list[str]:
    """The first ``lines`` lines of ``text``, each cut to ``width`` characters."""
    rows = text.splitlines() or [""]
    shown = [r if len(r) <= width else r[: width - 1] + "…" for r in rows[:lines]]
    if len(rows) > lines:
        shown.append(f"… ({len(rows) - lines} more lines)")
    return shown


class TerminalRenderer:
    """Print agent events to a text stream. Pass the instance as ``on_event``."""

    def __init__(self, out: TextIO | None = None, *, color: bool | None = None) -> None:
        self.out = out or sys.stdout
        self.color = self.out.isatty() if color is None else color
        self._in_text = False
        self._in_reasoning = False
        self._summaries: dict[str, str] = {}  # calls announced, waiting for their result
        self._last_call: str | None = None

    def _style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def _end_text(self) -> None:
        if self._in_text:
            self.out.write("\n")
            self._in_text = False
        self._in_reasoning = False

    def __call__(self, event: Any) -> None:
        # every string an event carries comes from the model, a tool or a file: neutralise it
        if isinstance(event, AgentEvent.ToolResult) and "\r" in event.content:
            # progress bars redraw a line with bare CRs: show their frames as lines
            content = event.content.replace("\r\n", "\n").replace("\r", "\n")
            event = dataclasses.replace(event, content=content)
        for field in ("text", "summary", "content", "message"):
            value = getattr(event, field, None)
            if isinstance(value, str) and _UNSAFE.search(value):
                event = dataclasses.replace(event, **{field: printable(value)})
        match event:
            case AgentEvent.TextDelta(text=text):
                if self._in_reasoning:  # the answer starts on its own line, not glued to it
                    self._end_text()
                self._in_reasoning = False
                self.out.write(text)
                self._in_text = True
            case AgentEvent.ReasoningDelta(text=text):
                if self._in_text and not self._in_reasoning:
                    self._end_text()
                self.out.write(self._style(text, "2"))
                self._in_text = self._in_reasoning = True
            case AgentEvent.ToolCall(summary=summary, id=call_id):
                self._end_text()
                self.out.write(self._style("⏺" + summary.removeprefix("   "), "1;36") + "\n")
                self._summaries[call_id] = summary
                self._last_call = call_id
            case AgentEvent.ToolResult(id=call_id, content=content, outcome=outcome):
                self._end_text()
                if call_id != self._last_call and call_id in self._summaries:
                    # several calls were announced (or ran concurrently) before this result:
                    # repeat which call it belongs to
                    header = "⏺" + self._summaries[call_id].removeprefix("   ")
                    self.out.write(self._style(header, "1;36") + "\n")
                self._summaries.pop(call_id, None)
                self._last_call = None
                mark = {
                    "ok": "⎿ ",
                    "error": "⎿ ✗ ",
                    "denied": "⎿ ⊘ ",
                    "blocked": "⎿ ⊘ ",
                    "interrupted": "⎿ ✗ ",
                }.get(outcome, "⎿ ")
                for i, row in enumerate(preview(content)):
                    prefix = "    " + (mark if i == 0 else "  ")
                    self.out.write(self._style(prefix + row, "2") + "\n")
            case AgentEvent.Done():
                self._end_text()
            case AgentEvent.Error(message=message):
                self._end_text()
                self.out.write(self._style(f"error: {message}", "31") + "\n")
        self.out.flush()
