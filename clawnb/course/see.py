"""See it run: small views for the notebooks, each a plain object that prints as text and
shows as an HTML table (``_repr_html_``, so no IPython import here: the course stays
engine-side). Colours come from JupyterLab's CSS variables, so both themes work.

The step-by-step views (:class:`Timeline`, :func:`sse_steps`, :class:`Gauge` with snapshots)
also render one frame per step; in a live kernel they display as a widget that steps through
those frames (◀ Prev, Next ▶, a slider: :class:`clawnb.notebook.stepper.Stepper`), and the
same display carries the static table as its fallback. A saved notebook, GitHub and nbval see
that table (nbval ignores the widget's view key), so saved outputs stay deterministic.
``view.widget()`` builds the stepper explicitly.

* :class:`Timeline` — an agent run step by step: every event (model turn, tool call, result,
  done) with whether the history is valid at that moment;
* :func:`rounds` — a finished history as numbered rounds (what the model asked, what came back);
* :func:`sse_steps` — chapter 5a's parser and accumulator, one SSE line at a time;
* :class:`Gauge` — chapter 18's context window: tokens used against the limit.
"""

from __future__ import annotations

import html
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..types import Message
from .reference import history_is_valid

__all__ = ["Gauge", "Timeline", "rounds", "sse_steps"]

_TABLE = (
    '<table style="border-collapse:collapse;font-family:var(--jp-code-font-family);'
    'font-size:var(--jp-code-font-size);color:var(--jp-content-font-color1)">'
)
_CELL = 'style="border:1px solid var(--jp-border-color2);padding:2px 6px;text-align:left"'


def _short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = text.replace("\n", "⏎")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th {_CELL}>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td {_CELL}>{html.escape(c)}</td>" for c in row) + "</tr>"
        for row in rows
    )
    return f"{_TABLE}<tr>{head}</tr>{body}</table>"


def _frame_table(header: list[str], rows: list[list[str]], current: int) -> str:
    """The rows up to ``current`` (0-based), that row marked: the run so far."""
    parts = [f"{_TABLE}<tr>" + "".join(f"<th {_CELL}>{html.escape(h)}</th>" for h in header)]
    for i, row in enumerate(rows[: current + 1]):
        mark = ";background:var(--jp-layout-color2);font-weight:bold" if i == current else ""
        cells = "".join(
            f'<td style="border:1px solid var(--jp-border-color2);padding:2px 6px;'
            f'text-align:left{mark}">{html.escape(c)}</td>'
            for c in row
        )
        parts.append(f"<tr>{cells}</tr>")
    return "".join(parts) + "</table>"


def _frame(title: str, body: str, table: str) -> str:
    return (
        '<div style="font-family:var(--jp-ui-font-family);color:var(--jp-content-font-color1)">'
        f'<div style="font-weight:bold;margin:4px 0">{html.escape(title)}</div>'
        f"{body}{table}</div>"
    )


def _pre(text: str) -> str:
    return (
        '<pre style="margin:4px 0;padding:4px 6px;white-space:pre-wrap;'
        "background:var(--jp-layout-color2);color:var(--jp-content-font-color1);"
        f'font-family:var(--jp-code-font-family)">{html.escape(text)}</pre>'
    )


def _verdict(valid: str) -> str:
    if not valid:
        return ""
    colour = "var(--jp-success-color1)" if valid == "yes" else "var(--jp-error-color1)"
    words = "holds" if valid == "yes" else "is broken"
    return f'<div style="color:{colour}">history invariant {words} after this step</div>'


class _Stepped:
    """Shared by the step-by-step views: frames, the widget, and the display bundle."""

    def frames(self) -> list[str]:
        """One HTML frame per step."""
        raise NotImplementedError

    def widget(self) -> Any:
        """A :class:`~clawnb.notebook.stepper.Stepper` over :meth:`frames` (needs ipywidgets)."""
        from ..notebook.stepper import Stepper  # the front end, loaded only when asked for

        return Stepper(self.frames())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        data: dict[str, Any] = {"text/plain": repr(self), "text/html": self._repr_html_()}
        # Only inside a kernel is there a front end that could show a widget; the static
        # table stays in the bundle as what anything without live widgets renders.
        if "ipykernel" in sys.modules:
            try:
                view = self.widget()._repr_mimebundle_()
            except ImportError:  # no ipywidgets: the table alone
                return data
            key = "application/vnd.jupyter.widget-view+json"
            if key in view:
                data[key] = view[key]
        return data

    def _repr_html_(self) -> str:
        raise NotImplementedError


def _text(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)


@dataclass
class Timeline(_Stepped):
    """Pass it as ``on_event`` (``await agent.chat(history, timeline)``); display it after.

    ``history`` (optional) is the list the agent appends to: each step then says whether the
    history is valid at that moment, so you can watch the invariant hold between rounds and
    be broken, briefly, while a round's results are still coming."""

    history: list[Message] | None = None
    steps: list[tuple[str, str, str]] = field(default_factory=list)

    def __call__(self, event: Any) -> None:
        kind = type(event).__name__
        if kind == "TextDelta" and self.steps and self.steps[-1][0] == "TextDelta":
            # streamed text arrives in many small pieces: one row per run of text
            _, text, valid = self.steps[-1]
            self.steps[-1] = ("TextDelta", text + event.text, valid)
            return
        detail = {
            "TextDelta": lambda e: e.text,
            "ToolCall": lambda e: e.summary.strip(),
            "ToolResult": lambda e: f"{e.outcome}: {e.content}",
            "Done": lambda e: e.text,
            "Error": lambda e: e.message,
            # the model's turn as a whole, after its text and calls have streamed
            "TurnEnd": lambda e: (
                (f"model says {e.turn.text!r}, " if e.turn.text else "model turn: ")
                + f"{len(e.turn.tool_calls)} tool call(s)"
            ),
        }.get(kind, lambda e: "")(event)
        valid = "" if self.history is None else ("yes" if history_is_valid(self.history) else "no")
        self.steps.append((kind, detail, valid))

    def _rows(self) -> list[list[str]]:
        return [[str(i), kind, _short(d), v] for i, (kind, d, v) in enumerate(self.steps, 1)]

    def _header(self) -> list[str]:
        return ["step", "event", "detail", "history valid"]

    def __repr__(self) -> str:
        return _text(self._header(), self._rows()) if self.steps else "Timeline(no events yet)"

    def _repr_html_(self) -> str:
        return _table(self._header(), self._rows())

    def frames(self) -> list[str]:
        rows = self._rows()
        return [
            _frame(
                f"step {i} of {len(self.steps)}: {kind}",
                _pre(detail or "(no detail)") + _verdict(valid),
                _frame_table(self._header(), rows, i - 1),
            )
            for i, (kind, detail, valid) in enumerate(self.steps, 1)
        ]


@dataclass
class _Rows:
    header: list[str]
    rows: list[list[str]]

    def __repr__(self) -> str:
        return _text(self.header, self.rows)

    def _repr_html_(self) -> str:
        return _table(self.header, self.rows)


def rounds(history: list[Message]) -> _Rows:
    """A history as rounds: each model turn, the calls it made and the results they got."""
    results = {m.id: m.content for m in history if isinstance(m, Message.ToolResult)}
    rows: list[list[str]] = []
    number = 0
    for message in history:
        if isinstance(message, Message.User):
            rows.append(["", "user", _short(message.content)])
        elif isinstance(message, Message.Assistant):
            number += 1
            turn = message.turn
            if turn.text:
                rows.append([str(number), "model says", _short(turn.text)])
            for call in turn.tool_calls:
                rows.append([str(number), f"model calls {call.name}", _short(call.arguments)])
                rows.append([str(number), "  result", _short(results.get(call.id, "(missing!)"))])
    return _Rows(["round", "who", "what"], rows)


@dataclass(repr=False)  # keep _Rows' text table as the repr
class _SseSteps(_Rows, _Stepped):
    # per step: what came in, the complete lines it gave (chunked only), the part of a line
    # held back until more arrives (chunked only), the events (repr), the text so far
    inputs: list[tuple[str, list[str] | None, str, list[str], str]] = field(default_factory=list)

    def frames(self) -> list[str]:
        out = []
        total = len(self.rows)
        for i, row in enumerate(self.rows):
            if i < len(self.inputs):
                came, lines, held, events, text = self.inputs[i]
                unit = "line" if lines is None else "chunk"
                title = f"{unit} {i + 1} of {total - 1}: {row[-2]}"
                body = "<div>bytes in</div>" + _pre(came)
                if lines is not None:
                    body += "<div>complete lines</div>" + _pre("\n".join(lines) or "(none yet)")
                    body += "<div>held back until the line ends</div>" + _pre(held or "(nothing)")
                body += (
                    "<div>events out</div>"
                    + _pre("\n".join(events) or "(nothing: no data line, or one that is ignored)")
                    + "<div>text so far</div>"
                    + _pre(text)
                )
            else:
                title = "finish: the accumulator assembles the turn"
                body = _pre(row[-2])
            out.append(_frame(title, body, _frame_table(self.header, self.rows, i)))
        return out


def sse_steps(
    lines: list[str] | list[bytes],
    parse: Callable[[str], Any],
    accumulator: Any,
    *,
    chunked: bool = False,
) -> _SseSteps:
    """Feed SSE ``lines`` through ``parse`` (``parse_sse_line``) into ``accumulator`` (a fresh
    ``StreamAccumulator``), one line at a time: what each line gave and the text so far.
    Displayed in a kernel, it steps through the lines: bytes in, events out.

    ``chunked=True`` takes the pieces as they come off the network instead (``str`` or
    ``bytes``, cut anywhere, even inside a line or a UTF-8 character): each step shows the
    chunk, the lines it completed, and what is held back until its line ends."""
    import codecs

    rows: list[list[str]] = []
    inputs: list[tuple[str, list[str] | None, str, list[str], str]] = []
    text = ""
    buffer = ""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(line: str) -> list[Any]:
        nonlocal text
        events = parse(line) or []
        for event in events:
            accumulator.feed(event)
            if type(event).__name__ == "TextDelta":
                text += event.text
        return list(events)

    for item in lines:
        came = decoder.decode(item) if isinstance(item, bytes) else item
        if not chunked:
            events = feed(came)
            names = ", ".join(type(e).__name__ for e in events) or "(nothing)"
            rows.append([_short(came, 48), names, _short(text, 30)])
            inputs.append((came, None, "", [repr(e) for e in events], text))
            continue
        buffer += came
        *complete, buffer = buffer.split("\n")
        complete = [line.removesuffix("\r") for line in complete]
        events = [event for line in complete for event in feed(line)]
        names = ", ".join(type(e).__name__ for e in events) or "(nothing)"
        rows.append([_short(repr(item), 40), str(len(complete)), names, _short(text, 30)])
        inputs.append((came, complete, buffer, [repr(e) for e in events], text))
    if chunked and (buffer + decoder.decode(b"", final=True)).strip():
        # a stream that ends without a newline still ends its last line
        last = buffer + decoder.decode(b"", final=True)
        events = feed(last)
        names = ", ".join(type(e).__name__ for e in events) or "(nothing)"
        rows.append(["(end of stream)", "1", names, _short(text, 30)])
        inputs.append(("", [last], "", [repr(e) for e in events], text))
    turn = accumulator.finish()
    calls = ", ".join(f"{c.name}({_short(c.arguments, 30)})" for c in turn.tool_calls) or "none"
    finish = f"turn: text={_short(turn.text, 20)} calls={calls}"
    if chunked:
        rows.append(["(finish)", "", finish, ""])
        return _SseSteps(["chunk", "lines", "events", "text so far"], rows, inputs)
    rows.append(["(finish)", finish, ""])
    return _SseSteps(["SSE line", "events", "text so far"], rows, inputs)


def _bar_html(share: float, full: bool) -> str:
    colour = "var(--jp-error-color1)" if full else "var(--jp-brand-color1)"
    return (
        '<div style="width:300px;height:10px;background:var(--jp-layout-color3)">'
        f'<div style="width:{share * 100:.0f}%;height:10px;background:{colour}"></div></div>'
    )


def _bar_text(share: float) -> str:
    return "█" * round(share * 30) + "░" * (30 - round(share * 30))


@dataclass
class Gauge(_Stepped):
    """How full the context window is: ``Gauge(context_manager)``; displays as a bar.

    To watch it fill, call ``gauge.snap("what just happened")`` after each change (a message
    added, ``maybe_compact`` run): each snapshot is one step, and a step where the number of
    compactions went up is marked as the point where the history was compacted."""

    context: Any
    # label, tokens in the window, limit, compactions so far, messages (or -1 if unknown)
    snaps: list[tuple[str, int, int, int, int]] = field(default_factory=list)

    def _numbers(self) -> tuple[int, int, float]:
        # what the next request will carry, if the manager tracks it (clawnb's does); the
        # book's manager only has its running total
        used = int(getattr(self.context, "context_tokens", getattr(self.context, "tokens_used", 0)))
        limit = int(getattr(self.context, "max_tokens", 1)) or 1
        return used, limit, min(used / limit, 1.0)

    def snap(self, label: str, messages: list[Message] | None = None) -> None:
        """Record the window as it is now, as one step."""
        used, limit, _ = self._numbers()
        compactions = int(getattr(self.context, "compactions", 0))
        self.snaps.append(
            (label, used, limit, compactions, -1 if messages is None else len(messages))
        )

    def _snap_rows(self) -> list[list[str]]:
        rows = []
        before, before_count = (self.snaps[0][3], self.snaps[0][4]) if self.snaps else (0, -1)
        for i, (label, used, limit, compactions, count) in enumerate(self.snaps, 1):
            share = min(used / (limit or 1), 1.0)
            # the book's manager keeps no count of compactions: a shorter history says it too
            shrank = 0 <= count < before_count
            compacted = compactions > before or shrank
            event = "compacted" if compacted else ("full" if used >= limit else "")
            before, before_count = compactions, count
            rows.append(
                [
                    str(i),
                    _short(label, 40),
                    f"{_bar_text(share)} {used:,}/{limit:,}",
                    "" if count < 0 else str(count),
                    event,
                ]
            )
        return rows

    _SNAP_HEADER = ["step", "what happened", "window", "messages", "note"]

    def __repr__(self) -> str:
        if self.snaps:
            return _text(self._SNAP_HEADER, self._snap_rows())
        used, limit, share = self._numbers()
        state = "compact now" if used >= limit else "ok"
        return f"context [{_bar_text(share)}] {used:,} / {limit:,} tokens ({share:.0%}) — {state}"

    def _repr_html_(self) -> str:
        if self.snaps:
            return _table(self._SNAP_HEADER, self._snap_rows())
        used, limit, share = self._numbers()
        return (
            '<div style="font-family:var(--jp-ui-font-family);color:var(--jp-content-font-color1)">'
            f"{_bar_html(share, used >= limit)}{html.escape(repr(self))}</div>"
        )

    def frames(self) -> list[str]:
        rows = self._snap_rows()
        out = []
        for i, (label, used, limit, _, count) in enumerate(self.snaps):
            share = min(used / (limit or 1), 1.0)
            note = rows[i][4]
            body = _bar_html(share, used >= limit) + _pre(
                f"{used:,} / {limit:,} tokens ({share:.0%})"
                + ("" if count < 0 else f", {count} messages")
                + (f" — {note}" if note else "")
            )
            title = f"step {i + 1} of {len(self.snaps)}: {label}"
            out.append(_frame(title, body, _frame_table(self._SNAP_HEADER, rows, i)))
        return out

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        if not self.snaps:  # a single reading: nothing to step through
            return {"text/plain": repr(self), "text/html": self._repr_html_()}
        return super()._repr_mimebundle_(include, exclude)
