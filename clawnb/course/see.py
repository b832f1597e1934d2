"""See it run: small views for the notebooks, each a plain object that prints as text and
shows as an HTML table in JupyterLab (``_repr_html_``, so no IPython import: the course stays
engine-side). Colours come from JupyterLab's CSS variables, so both themes work.

* :class:`Timeline` — an agent run step by step: every event (model turn, tool call, result,
  done) with whether the history is valid at that moment;
* :func:`rounds` — a finished history as numbered rounds (what the model asked, what came back);
* :func:`sse_steps` — chapter 5a's parser and accumulator, one SSE line at a time;
* :class:`Gauge` — chapter 18's context window: tokens used against the limit.
"""

from __future__ import annotations

import html
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


def _text(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)


@dataclass
class Timeline:
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
            "TurnEnd": lambda e: f"{len(e.turn.tool_calls)} tool call(s)",
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


def sse_steps(lines: list[str], parse: Callable[[str], Any], accumulator: Any) -> _Rows:
    """Feed SSE ``lines`` through ``parse`` (``parse_sse_line``) into ``accumulator`` (a fresh
    ``StreamAccumulator``), one line at a time: what each line gave and the text so far."""
    rows: list[list[str]] = []
    text = ""
    for line in lines:
        events = parse(line) or []
        for event in events:
            accumulator.feed(event)
            if type(event).__name__ == "TextDelta":
                text += event.text
        names = ", ".join(type(e).__name__ for e in events) or "(nothing)"
        rows.append([_short(line, 48), names, _short(text, 30)])
    turn = accumulator.finish()
    calls = ", ".join(f"{c.name}({_short(c.arguments, 30)})" for c in turn.tool_calls) or "none"
    rows.append(["(finish)", f"turn: text={_short(turn.text, 20)} calls={calls}", ""])
    return _Rows(["SSE line", "events", "text so far"], rows)


@dataclass
class Gauge:
    """How full the context window is: ``Gauge(context_manager)``; displays as a bar."""

    context: Any

    def _numbers(self) -> tuple[int, int, float]:
        used = int(getattr(self.context, "tokens_used", 0))
        limit = int(getattr(self.context, "max_tokens", 1)) or 1
        return used, limit, min(used / limit, 1.0)

    def __repr__(self) -> str:
        used, limit, share = self._numbers()
        bar = "█" * round(share * 30) + "░" * (30 - round(share * 30))
        state = "compact now" if used >= limit else "ok"
        return f"context [{bar}] {used:,} / {limit:,} tokens ({share:.0%}) — {state}"

    def _repr_html_(self) -> str:
        used, limit, share = self._numbers()
        colour = "var(--jp-error-color1)" if used >= limit else "var(--jp-brand-color1)"
        return (
            '<div style="font-family:var(--jp-ui-font-family);color:var(--jp-content-font-color1)">'
            f'<div style="width:300px;height:10px;background:var(--jp-layout-color3)">'
            f'<div style="width:{share * 100:.0f}%;height:10px;background:{colour}"></div></div>'
            f"{html.escape(repr(self))}</div>"
        )
