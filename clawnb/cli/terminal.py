"""Plain-terminal rendering of :class:`~clawnb.events.AgentEvent` s.

Used by ``python -m clawnb demo`` and the terminal chat. It only consumes events: answer text
streams as it arrives, each tool call gets a header line, a short preview of its result and its
outcome.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any, TextIO

from ..control.secrets import StreamRedactor, redact
from ..events import AgentEvent
from ..safety import display_safe

__all__ = ["TerminalRenderer", "approval_view", "diff_colour", "preview", "printable"]

# Past these, the approval question shows a command's head and tail only: a 9,000-character or
# 60-line command would push its first line (often the dangerous one) off a 40-row screen.
APPROVAL_MAX_LINES = 12
APPROVAL_MAX_CHARS = 1500


def approval_view(
    command: str,
    *,
    max_lines: int = APPROVAL_MAX_LINES,
    max_chars: int = APPROVAL_MAX_CHARS,
    head: int = 6,
    tail: int = 4,
    width: int = 160,
) -> tuple[list[str], bool]:
    """How the chat's approval question shows ``command``: ``(rows, shortened)``.

    Up to ``max_lines`` lines and ``max_chars`` characters it is every line
    (:func:`clawnb.safety.command_display`: escaped, numbered, blank runs collapsed, totals
    last). Longer, it is the first ``head`` and the last ``tail`` lines, each cut to ``width``
    characters around a "characters hidden" mark, a row that counts the lines hidden between
    them, and the totals — and ``shortened`` is true: the question then offers ``v`` to page
    through the whole command before answering."""
    from ..safety import command_display

    rows = command_display(command)
    # what is counted is what the screen shows: blank runs are already one row each
    if len(rows) - 1 <= max_lines and len(command) <= max_chars:
        return rows, False
    lines = display_safe(command).split("\n")
    number = len(str(len(lines)))
    # (first line, last line) of each shown row: a collapsed blank run spans several
    spans: list[tuple[int, int, str]] = []
    i = 0
    while i < len(lines):
        j = i
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j - i > 2:  # command_display's blank_run
            spans.append((i, j - 1, f"{'':>{number}} ⋮ ({j - i} blank lines)"))
            i = j
            continue
        spans.append((i, i, f"{i + 1:>{number}} │ {_elide(lines[i], width)}"))
        i += 1
    if len(spans) <= head + tail:
        shown = [text for _, _, text in spans]
    else:
        first, last = spans[:head], spans[-tail:]
        hidden = last[0][0] - first[-1][1] - 1
        shown = [text for _, _, text in first]
        shown.append(f"{'':>{number}} ⋮ ({hidden} lines hidden here: v shows them)")
        shown += [text for _, _, text in last]
    shown.append(f"{rows[-1]} — shortened: v shows the whole command")
    return shown, True


def diff_colour(row: str) -> str:
    """The SGR code a row of a numbered diff (:func:`clawnb.tools.diff.render_diff`) is drawn
    in: additions green, removals red, hunk headers cyan, "… more lines" dim; context plain."""
    if row.startswith("@@"):
        return "36"
    if row.startswith("+"):
        return "32"
    if row.startswith("-"):
        return "31"
    if row.startswith("…"):
        return "2"
    return ""


def _elide(line: str, width: int) -> str:
    if len(line) <= width:
        return line
    keep_head, keep_tail = width * 2 // 3, width // 3
    hidden = len(line) - keep_head - keep_tail
    return f"{line[:keep_head]} … ({hidden:,} characters hidden) … {line[-keep_tail:]}"


def printable(text: str) -> str:
    """``text`` safe to write to a terminal: keys redacted, control and invisible characters
    shown as escapes (``\\x1b``, ``\\u202e``; :func:`clawnb.safety.display_safe`)."""
    return display_safe(redact(text))


def preview(text: str, *, lines: int = 6, width: int = 100) -> list[str]:
    """The first ``lines`` lines of ``text``, each cut to ``width`` characters."""
    rows = text.splitlines() or [""]
    shown = [r if len(r) <= width else r[: width - 1] + "…" for r in rows[:lines]]
    if len(rows) > lines:
        shown.append(f"… ({len(rows) - lines} more lines)")
    return shown


def _one_line(summary: str) -> str:
    """A multi-line call header as its first line and a count (the approval prompt, when
    there is one, shows every line; a header must not fill the screen with blank lines)."""
    lines = summary.split("\n")
    if len(lines) == 1:
        return _elide(summary, 300)  # a 9,000-character line would fill the screen too
    return f"{_elide(lines[0], 300)} … (+{len(lines) - 1} more lines)]"


class TerminalRenderer:
    """Print agent events to a text stream. Pass the instance as ``on_event``."""

    def __init__(
        self,
        out: TextIO | None = None,
        *,
        color: bool | None = None,
        previewed: set[str] | None = None,
    ) -> None:
        self.out = out or sys.stdout
        self.color = self.out.isatty() if color is None else color
        # calls whose change (an edit's diff, a write's content) the approval question showed
        # whole: their result is its one-line head ("edited f.py"), not the diff again
        self.previewed = previewed if previewed is not None else set()
        self._in_text = False
        self._in_reasoning = False
        self._summaries: dict[str, str] = {}  # calls announced, waiting for their result
        self._last_call: str | None = None
        self._indent = ""  # a subagent's calls are indented under the call they work for
        # Streamed text is redacted as a stream: a key the model echoes arrives in pieces that
        # each look harmless, so the end of the text that may be the start of a key is held
        # back until the next piece or the end of the text shows what it is.
        self._answer = StreamRedactor()
        self._thinking = StreamRedactor()

    def _style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def end_text(self) -> None:
        """Finish the streamed text (writing what was held back) and end its line."""
        held = self._answer.flush()
        if held:
            self.out.write(display_safe(held))
        held = self._thinking.flush()
        if held:
            self.out.write(self._style(display_safe(held), "2"))
        if self._in_text:
            self.out.write("\n")
            self._in_text = False
        self._in_reasoning = False

    def __call__(self, event: Any) -> None:
        if isinstance(event, AgentEvent.Nested):
            # a subagent's tool calls, results and errors (its answer is the parent call's
            # result, so its text is not repeated)
            inner = event.event
            if isinstance(inner, (AgentEvent.ToolCall, AgentEvent.ToolResult, AgentEvent.Error)):
                saved, self._indent = self._indent, "    " * event.depth
                try:
                    self(inner)
                finally:
                    self._indent = saved
            return
        # every string an event carries comes from the model, a tool or a file: neutralise it
        if isinstance(event, AgentEvent.ToolResult) and "\r" in event.content:
            # progress bars redraw a line with bare CRs: show their frames as lines
            content = event.content.replace("\r\n", "\n").replace("\r", "\n")
            event = dataclasses.replace(event, content=content)
        for field in ("text", "summary", "content", "message"):
            if isinstance(event, (AgentEvent.TextDelta, AgentEvent.ReasoningDelta)):
                break  # streamed text: redacted as a stream below
            value = getattr(event, field, None)
            if isinstance(value, str) and value:
                # keys redacted; controls and invisible characters (bidi overrides, zero-width)
                # escaped, so they cannot move the cursor or reorder what a person reads
                shown = printable(value)
                if shown != value:
                    event = dataclasses.replace(event, **{field: shown})
        match event:
            case AgentEvent.TextDelta(text=text):
                if self._in_reasoning:  # the answer starts on its own line, not glued to it
                    self.end_text()
                self._in_reasoning = False
                self.out.write(display_safe(self._answer.feed(text)))
                self._in_text = True
            case AgentEvent.ReasoningDelta(text=text):
                if self._in_text and not self._in_reasoning:
                    self.end_text()
                shown = display_safe(self._thinking.feed(text))
                if shown:
                    self.out.write(self._style(shown, "2"))
                self._in_text = self._in_reasoning = True
            case AgentEvent.ToolCall(summary=summary, id=call_id):
                self.end_text()
                line = self._indent + "⏺" + _one_line(summary.removeprefix("   "))
                self.out.write(self._style(line, "1;36") + "\n")
                self._summaries[call_id] = summary
                self._last_call = call_id
            case AgentEvent.ToolResult(id=call_id, content=content, outcome=outcome):
                self.end_text()
                if call_id != self._last_call and call_id in self._summaries:
                    # several calls were announced (or ran concurrently) before this result:
                    # repeat which call it belongs to
                    header = self._indent + "⏺" + self._summaries[call_id].removeprefix("   ")
                    self.out.write(self._style(header, "1;36") + "\n")
                self._summaries.pop(call_id, None)
                self._last_call = None
                rows = preview(content)
                if call_id in self.previewed:
                    self.previewed.discard(call_id)
                    if outcome == "ok":  # an error (the file changed since) is shown whole
                        rows = [content.split("\n", 1)[0]]
                mark = {
                    "ok": "⎿ ",
                    "error": "⎿ ✗ ",
                    "denied": "⎿ ⊘ ",
                    "blocked": "⎿ ⊘ ",
                    "interrupted": "⎿ ✗ ",
                }.get(outcome, "⎿ ")
                for i, row in enumerate(rows):
                    prefix = self._indent + "    " + (mark if i == 0 else "  ")
                    self.out.write(self._style(prefix + row, "2") + "\n")
            case AgentEvent.Done():
                self.end_text()
            case AgentEvent.TurnEnd(turn=turn) if turn.cut_off_note():
                self.end_text()  # a reply the output cap cut short looks finished: say so
                self.out.write(self._style(f"{self._indent}({turn.cut_off_note()})", "2") + "\n")
            case AgentEvent.Error(message=message):
                self.end_text()
                self.out.write(self._style(f"{self._indent}error: {message}", "31") + "\n")
            case AgentEvent.ContextRecovered(note=note):
                self.end_text()
                line = f"{self._indent}(the conversation was too long for the model's context: {note}; asking again)"
                self.out.write(self._style(line, "2") + "\n")
        self.out.flush()
