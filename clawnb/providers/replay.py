"""Scripted models: replay :class:`AssistantTurn` s from a file, offline and deterministic.

A script is either a JSON array of turns or JSON Lines, one turn per line. A line may also be
a recording entry ``{"turn": {...}, ...}``; only ``turn`` is used. A turn looks like::

    {"text": "Let me look.", "tool_calls": [{"id": "c1", "name": "read",
                                             "arguments": {"path": "notes.txt"}}]}

``stop_reason`` is optional (``tool_use`` when there are calls, else ``stop``).

:class:`RecordingProvider` writes such files: it wraps a real provider and appends one line
``{"request": <summary>, "turn": <turn>}`` per turn, so a session with a live model can be
replayed later — offline, keyless and deterministic — by :class:`ScriptedProvider`. The
request summary names the provider, model and tools and sizes the conversation; it never
holds keys or headers.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from ..control.secrets import redact
from ..errors import ScriptError
from ..events import OnStreamEvent, emit_turn
from ..types import (
    AnyProvider,
    AssistantTurn,
    Message,
    StreamProvider,
    ToolDefinition,
    complete,
)
from .mock import CannedStream

__all__ = ["RecordingProvider", "ScriptedProvider", "load_script", "request_summary"]


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
        elif isinstance(item, dict) and ("mcp" in item or "mcp_tools" in item):
            continue  # MCP traffic of the recording: clawnb.mcp.replay plays it back
        try:
            _check_turn(item)
            turns.append(AssistantTurn.from_dict(item))  # type: ignore[arg-type]
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ScriptError(f"{p}: {where} {n} is not a valid turn: {_reason(exc)}") from None
    return turns


def _reason(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing key {exc}"
    return str(exc)


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False) if value is not None else "null"
    return text if len(text) <= 40 else text[:37] + "..."


def _check_turn(item: object) -> None:
    """A :class:`TypeError` naming the first field of a turn with the wrong type — checked
    here, before anything plays it: a number where a tool call's name belongs would
    otherwise surface as a traceback deep in the loop, far from the file that caused it."""
    if not isinstance(item, dict):
        raise TypeError(f"an assistant turn must be a JSON object, got {_shown(item)}")
    for key in ("text", "reasoning"):
        value = item.get(key)
        if value is not None and not isinstance(value, str):
            raise TypeError(f"'{key}' must be a string or null (got {_shown(value)})")
    calls = item.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise TypeError(f"'tool_calls' must be a list (got {_shown(calls)})")
    for i, call in enumerate(calls or []):
        where = f"tool_calls[{i}]"
        if not isinstance(call, dict):
            raise TypeError(f"'{where}' must be an object (got {_shown(call)})")
        for key in ("id", "name"):
            if key not in call:
                raise TypeError(f"'{where}' has no '{key}'")
            if not isinstance(call[key], str) or not call[key]:
                raise TypeError(
                    f"'{where}.{key}' must be a non-empty string (got {_shown(call[key])})"
                )
        invalid = call.get("invalid_arguments")
        if invalid is not None and not isinstance(invalid, str):
            raise TypeError(f"'{where}.invalid_arguments' must be a string (got {_shown(invalid)})")
    usage = item.get("usage")
    if usage is not None:
        if not isinstance(usage, dict):
            raise TypeError(f"'usage' must be an object (got {_shown(usage)})")
        for key in ("input_tokens", "output_tokens"):
            value = usage.get(key, 0)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise TypeError(f"'usage.{key}' must be a whole number ≥ 0 (got {_shown(value)})")
    stop = item.get("stop_reason")
    if stop is not None and not isinstance(stop, str):
        raise TypeError(f"'stop_reason' must be a string (got {_shown(stop)})")


class ScriptedProvider(CannedStream):
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

    def pieces(self, text: str) -> list[str]:
        return re.findall(r"\S+\s*|\s+", text)  # word by word


def request_summary(
    provider: AnyProvider, messages: list[Message], tools: list[ToolDefinition], *, stream: bool
) -> dict[str, Any]:
    """What a recording keeps about a request: never a key, a header or an URL's credentials."""
    last_user = next((m.content for m in reversed(messages) if isinstance(m, Message.User)), None)
    summary: dict[str, Any] = {
        "provider": type(provider).__name__,
        "stream": stream,
        "messages": len(messages),
        "tools": [t.name for t in tools],
    }
    model = getattr(provider, "model", None)
    if isinstance(model, str):
        summary["model"] = model
    if last_user is not None:
        summary["last_user"] = last_user if len(last_user) <= 500 else last_user[:500] + "…"
    return summary


class RecordingProvider:
    """Wraps a provider and appends every turn it returns to a JSONL file (see module doc).

    Works for ``chat`` and ``stream_chat`` (events are passed through untouched). A failed
    request records nothing. Replay the file with ``ScriptedProvider.from_file(path)``.
    """

    def __init__(self, inner: AnyProvider, path: str | os.PathLike[str]) -> None:
        self.inner = inner
        self.path = Path(path)

    @property
    def model(self) -> Any:
        return getattr(self.inner, "model", None)

    def __repr__(self) -> str:
        return f"RecordingProvider({self.inner!r}, path={str(self.path)!r})"

    def _record(
        self,
        messages: list[Message],
        tools: list[ToolDefinition],
        turn: AssistantTurn,
        *,
        stream: bool,
    ) -> None:
        entry = {
            "request": request_summary(self.inner, messages, tools, stream=stream),
            "turn": turn.to_dict(),
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            # a model that echoed a key must not leave it in a file meant to be shared
            f.write(redact(json.dumps(entry, ensure_ascii=False)) + "\n")

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        turn = await complete(self.inner, messages, tools)
        self._record(messages, tools, turn, stream=False)
        return turn

    async def stream_chat(
        self, messages: list[Message], tools: list[ToolDefinition], on_event: OnStreamEvent = None
    ) -> AssistantTurn:
        if isinstance(self.inner, StreamProvider):
            turn = await self.inner.stream_chat(messages, tools, on_event)
        else:  # a provider that only answers whole turns: its turn as stream events
            turn = await self.inner.chat(messages, tools)
            await emit_turn(on_event, turn)
        self._record(messages, tools, turn, stream=True)
        return turn
