"""Plain-terminal rendering of :class:`~clawnb.events.AgentEvent` s.

Used by ``python -m clawnb demo`` and the terminal chat. It only consumes events: answer text
streams as it arrives, each tool call gets a header line, a short preview of its result and its
outcome.

On a terminal that can move the cursor (a tty whose ``TERM`` is not ``dumb``) two things more:
a call that runs longer than a moment gets a one-line running indicator (:class:`StatusLine`:
spinner, elapsed seconds, the command's last output line) that is erased before anything else
is written; and with colours on, each finished line of the answer is redrawn as Markdown
(:func:`markdown_line`: headings, bold, inline code, lists, quotes, fenced code blocks). Piped
output, ``TERM=dumb``, ``--no-color`` or ``NO_COLOR`` get the plain text as the model wrote it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import shutil
import sys
import time
from typing import Any, TextIO

from ..control.secrets import StreamRedactor, redact
from ..events import AgentEvent
from ..planning import EXIT_PLAN
from ..safety import display_safe

__all__ = [
    "MarkdownLines",
    "StatusLine",
    "TerminalRenderer",
    "approval_view",
    "can_redraw",
    "diff_colour",
    "markdown_line",
    "preview",
    "printable",
]

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


def can_redraw(out: Any) -> bool:
    """Whether ``out`` is a terminal that takes ``\\r`` and "erase line" (``ESC [K``): a tty,
    and ``TERM`` is not ``dumb`` (nor unset)."""
    try:
        tty = bool(out.isatty())
    except (AttributeError, ValueError, OSError):
        return False
    return tty and os.environ.get("TERM", "dumb") not in ("", "dumb")


ERASE_LINE = "\r\x1b[K"


def cells(text: str) -> int:
    """How many terminal columns ``text`` takes: wide (CJK) characters two, combining none."""
    import unicodedata

    return sum(
        0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        for ch in text
    )


SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class StatusLine:
    """A text stream with a one-line indicator under what was written: :meth:`show` draws it
    (only at the start of a line, only when ``enabled``), and any :meth:`write` erases it
    first, so it never mixes with the answer, a result or a question. Everything else is the
    wrapped stream's."""

    def __init__(self, out: TextIO, *, enabled: bool | None = None) -> None:
        self.out = out
        self.enabled = can_redraw(out) if enabled is None else enabled
        self.shown = False
        self.at_line_start = True
        self.held = 0  # a question is waiting for an answer: nothing may be drawn over it

    def write(self, text: str) -> int:
        self.clear()
        if text:
            self.at_line_start = text.endswith("\n")
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()

    def show(self, text: str) -> None:
        """Draw (or redraw) the indicator; nothing while a line is half written or held."""
        if not self.enabled or self.held or not (self.at_line_start or self.shown):
            return
        width = max(10, shutil.get_terminal_size((80, 24)).columns - 1)
        if cells(text) > width:  # one row, or the erase would miss the first ones
            while text and cells(text) > width - 1:
                text = text[:-1]
            text += "…"
        self.out.write(ERASE_LINE + text)
        self.out.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.out.write(ERASE_LINE)
            self.shown = False

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, …
        return getattr(self.out, name)


class _Running:
    """The calls running now and the indicator that says so, ticking on the event loop."""

    DELAY = 0.6  # a call quicker than this shows no indicator at all
    TICK = 0.15

    def __init__(self, status: StatusLine) -> None:
        self.status = status
        self.calls: dict[str, tuple[str, float]] = {}  # id -> (name, started)
        self.last_output = ""
        self._timer: asyncio.TimerHandle | None = None

    def start(self, call_id: str, name: str) -> None:
        if not self.status.enabled:
            return
        self.calls[call_id] = (name, time.monotonic())
        if self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # not on a loop (a synchronous caller): no indicator
                return
            self._timer = loop.call_later(self.DELAY, self._tick)

    def output(self, text: str) -> None:
        rows = [r for r in text.replace("\r", "\n").split("\n") if r.strip()]
        if rows:
            self.last_output = rows[-1].strip()

    def done(self, call_id: str) -> None:
        self.calls.pop(call_id, None)
        if not self.calls:
            self.stop()

    def stop(self) -> None:
        self.calls.clear()
        self.last_output = ""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.status.clear()

    def _tick(self) -> None:
        self._timer = None
        if not self.calls:
            return
        now = time.monotonic()
        name, started = next(iter(self.calls.values()))
        what = name if len(self.calls) == 1 else f"{len(self.calls)} tools"
        frame = SPINNER[int(now / self.TICK) % len(SPINNER)]
        line = f"  {frame} running {what} · {now - started:.0f}s"
        if self.last_output:
            line += f" · {display_safe(self.last_output)}"
        self.status.show(line + "  (Ctrl-C cancels)")
        self._timer = asyncio.get_running_loop().call_later(self.TICK, self._tick)


# -- Markdown for a terminal ------------------------------------------------------------------

_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_CODE = re.compile(r"`([^`\n]+)`")
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_NUMBERED = re.compile(r"^(\s*)(\d+[.)])\s+(.*)$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")


def _inline(text: str) -> str:
    """Bold, italic, inline code and links in one line of prose, as SGR styles."""
    codes: list[str] = []

    def keep(match: re.Match[str]) -> str:  # code spans are not parsed further
        codes.append(match.group(1))
        return f"\x00{len(codes) - 1}\x00"

    text = _CODE.sub(keep, text)
    text = _LINK.sub(lambda m: f"\x1b[4m{m.group(1)}\x1b[24m \x1b[2m({m.group(2)})\x1b[22m", text)
    text = _BOLD.sub(lambda m: f"\x1b[1m{m.group(2)}\x1b[22m", text)
    text = _ITALIC.sub(lambda m: f"\x1b[3m{m.group(1)}\x1b[23m", text)
    return re.sub("\x00(\\d+)\x00", lambda m: f"\x1b[36m{codes[int(m.group(1))]}\x1b[39m", text)


def markdown_line(line: str, in_code: bool = False) -> tuple[str, bool]:
    """One line of a Markdown answer styled for a terminal, and whether a fenced code block
    is open after it: headings bold (``#`` marks dropped), ``**bold**``, ``*italic*``,
    `` `code` `` cyan, links underlined with their address, ``-``/``*`` items as ``•``,
    quotes with a bar, code blocks indented in yellow with their fences dim."""
    if _FENCE.match(line):
        return f"\x1b[2m{line}\x1b[22m", not in_code
    if in_code:
        return f"\x1b[33m{line}\x1b[39m", True
    if m := _HEADING.match(line):
        level, title = len(m.group(1)), _inline(m.group(2))
        style = "1;4" if level <= 2 else "1"
        return f"\x1b[{style}m{title}\x1b[0m", False
    if _RULE.match(line):
        return "\x1b[2m" + "─" * 40 + "\x1b[22m", False
    if m := _BULLET.match(line):
        return f"{m.group(1)}• {_inline(m.group(2))}", False
    if m := _NUMBERED.match(line):
        return f"{m.group(1)}{m.group(2)} {_inline(m.group(3))}", False
    if line.startswith(">"):
        return f"\x1b[2m│\x1b[22m {_inline(line.lstrip('>').lstrip())}", False
    return _inline(line), False


class MarkdownLines:
    """The answer's lines redrawn as Markdown once each is complete: the text streams as it
    arrives, and at its newline a line that fits on the screen is erased and written again
    styled (a longer one wrapped, so it stays as written)."""

    def __init__(self) -> None:
        self.line = ""  # what the current, unfinished line shows so far
        self.in_code = False

    def feed(self, shown: str) -> str:
        """What to write for ``shown`` (text already made safe to print)."""
        out: list[str] = []
        *complete, rest = shown.split("\n")
        for piece in complete:
            out.append(piece)
            out.append(self._finish(self.line + piece))
            self.line = ""
        out.append(rest)
        self.line += rest
        return "".join(out)

    def end(self) -> str:
        """The unfinished last line, redrawn (the caller ends the line)."""
        if not self.line:
            return ""
        done, self.line = self._finish(self.line, newline=False), ""
        return done

    def _finish(self, line: str, newline: bool = True) -> str:
        styled, self.in_code = markdown_line(line, self.in_code)
        width = shutil.get_terminal_size((80, 24)).columns
        end = "\n" if newline else ""
        if styled == line or cells(line) >= width:
            return end  # nothing to style, or wrapped: \r would only reach its last row
        return ERASE_LINE + styled + end


class TerminalRenderer:
    """Print agent events to a text stream. Pass the instance as ``on_event``."""

    def __init__(
        self,
        out: TextIO | StatusLine | None = None,
        *,
        color: bool | None = None,
        previewed: set[str] | None = None,
        markdown: bool | None = None,
    ) -> None:
        self.out = out or sys.stdout
        self.color = self.out.isatty() if color is None else color
        # the running indicator needs a StatusLine to draw on (the chat's); Markdown needs
        # colours and a terminal that can redraw a line
        self._running = _Running(self.out) if isinstance(self.out, StatusLine) else None
        if markdown is None:
            markdown = self.color and can_redraw(self.out) and not os.environ.get("NO_COLOR")
        self._markdown = MarkdownLines() if markdown else None
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
            self.out.write(self._answer_text(display_safe(held)))
        if self._markdown is not None and not self._in_reasoning:
            self.out.write(self._markdown.end())
        held = self._thinking.flush()
        if held:
            self.out.write(self._style(display_safe(held), "2"))
        if self._in_text:
            self.out.write("\n")
            self._in_text = False
        self._in_reasoning = False

    def _answer_text(self, shown: str) -> str:
        return self._markdown.feed(shown) if self._markdown is not None else shown

    def close(self) -> None:
        """Stop the running indicator (a cancelled turn leaves no ticking timer behind)."""
        if self._running is not None:
            self._running.stop()

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
                self.out.write(self._answer_text(display_safe(self._answer.feed(text))))
                self._in_text = True
            case AgentEvent.ReasoningDelta(text=text):
                if self._in_text and not self._in_reasoning:
                    self.end_text()
                shown = display_safe(self._thinking.feed(text))
                if shown:
                    self.out.write(self._style(shown, "2"))
                self._in_text = self._in_reasoning = True
            case AgentEvent.ToolCall(name=name) | AgentEvent.ToolResult(name=name) if (
                name == EXIT_PLAN
            ):
                pass  # plan mode's hand-in: the plan question right after says it all
            case AgentEvent.ToolCall(summary=summary, id=call_id):
                self.end_text()
                line = self._indent + "⏺" + _one_line(summary.removeprefix("   "))
                self.out.write(self._style(line, "1;36") + "\n")
                self._summaries[call_id] = summary
                self._last_call = call_id
            case AgentEvent.ToolRunning(id=call_id, name=name) if self._running is not None:
                self._running.start(call_id, name)
            case AgentEvent.ToolOutput(text=text) if self._running is not None:
                self._running.output(text)
            case AgentEvent.ToolResult(id=call_id, content=content, outcome=outcome):
                if self._running is not None:
                    self._running.done(call_id)
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
                self.close()
                self.end_text()
                if self._markdown is not None:
                    self._markdown.in_code = False  # an unclosed fence ends with the answer
            case AgentEvent.TurnEnd(turn=turn) if turn.cut_off_note():
                self.end_text()  # a reply the output cap cut short looks finished: say so
                self.out.write(self._style(f"{self._indent}({turn.cut_off_note()})", "2") + "\n")
            case AgentEvent.Error(message=message):
                if not self._indent:  # a subagent's error: its call may still be running
                    self.close()
                self.end_text()
                self.out.write(self._style(f"{self._indent}error: {message}", "31") + "\n")
            case AgentEvent.ContextRecovered(note=note):
                self.end_text()
                line = f"{self._indent}(the conversation was too long for the model's context: {note}; asking again)"
                self.out.write(self._style(line, "2") + "\n")
        self.out.flush()
