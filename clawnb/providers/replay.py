"""Scripted models: replay :class:`AssistantTurn` s from a file, offline and deterministic.

A script is either a JSON array of turns or JSON Lines, one turn per line. A line may also be
a recording entry ``{"turn": {...}, ...}``; only ``turn`` is used. A turn looks like::

    {"text": "Let me look.", "tool_calls": [{"id": "c1", "name": "read",
                                             "arguments": {"path": "notes.txt"}}]}

``stop_reason`` is optional (``tool_use`` when there are calls, else ``stop``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..errors import ScriptError
from ..events import EventCallback, StreamEvent, emit
from ..types import AssistantTurn, Message, ToolDefinition, compact_json

__all__ = ["ScriptedProvider", "load_script"]


def load_script(path: str | os.PathLike[str]) -> list[AssistantTurn]:
    """Parse a script file; :class:`ScriptError` names the file and line of any problem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"cannot read script {p}: {exc.strerror or exc}") from exc
    stripped = text.lstrip()
    entries: list[tuple[int, object]] = []
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScriptError(f"{p}: invalid JSON at line {exc.lineno}: {exc.msg}") from exc
        entries = [(i + 1, item) for i, item in enumerate(data)]
        where = "entry"
    else:
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                entries.append((lineno, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ScriptError(f"{p}: line {lineno} is not valid JSON: {exc.msg}") from exc
        where = "line"
    turns = []
    for n, item in entries:
        if isinstance(item, dict) and isinstance(item.get("turn"), dict):
            item = item["turn"]
        try:
            turns.append(AssistantTurn.from_dict(item))  # type: ignore[arg-type]
        except (KeyError, TypeError, ValueError) as exc:
            raise ScriptError(f"{p}: {where} {n} is not a valid turn: {exc}") from exc
    return turns


class ScriptedProvider:
    """Plays turns back in order, as a plain or a streaming provider.

    Streaming splits text into word-sized deltas so front ends show realistic live output.
    """

    def __init__(self, turns: list[AssistantTurn], *, name: str = "script") -> None:
        self._turns = list(turns)
        self._next = 0
        self.name = name

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> ScriptedProvider:
        return cls(load_script(path), name=str(path))

    @property
    def remaining(self) -> int:
        return len(self._turns) - self._next

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        if self._next >= len(self._turns):
            raise ScriptError(f"scripted model {self.name}: no more turns")
        turn = self._turns[self._next]
        self._next += 1
        return turn

    async def stream_chat(
        self,
        messages: list[Message],
        tools: list[ToolDefinition],
        on_event: EventCallback | None = None,
    ) -> AssistantTurn:
        turn = await self.chat(messages, tools)
        if turn.reasoning:
            await emit(on_event, StreamEvent.ReasoningDelta(turn.reasoning))
        for piece in re.findall(r"\S+\s*|\s+", turn.text or ""):
            await emit(on_event, StreamEvent.TextDelta(piece))
        for i, call in enumerate(turn.tool_calls):
            await emit(on_event, StreamEvent.ToolCallStart(i, call.id, call.name))
            await emit(on_event, StreamEvent.ToolCallDelta(i, compact_json(call.arguments)))
        if turn.usage is not None:
            await emit(on_event, StreamEvent.Usage(turn.usage))
        await emit(on_event, StreamEvent.Done())
        return turn
