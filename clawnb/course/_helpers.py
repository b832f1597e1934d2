"""Small builders the chapter suites share."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..types import AssistantTurn, Message, StopReason, ToolCall, ToolDefinition


def text_turn(text: str | None) -> AssistantTurn:
    """A final answer."""
    return AssistantTurn(text=text, tool_calls=[], stop_reason=StopReason.STOP)


def tool_turn(*calls: tuple[str, str, Any], text: str | None = None) -> AssistantTurn:
    """A turn asking for tools: each call is ``(id, name, arguments)``."""
    return AssistantTurn(
        text=text,
        tool_calls=[ToolCall(id, name, args) for id, name, args in calls],
        stop_reason=StopReason.TOOL_USE,
    )


# The calls a scripted model makes, for :func:`tool_turn`: ``(id, tool name, arguments)``.
Call = tuple[str, str, dict[str, str]]


def read_call(id: str, path: Path | str) -> Call:
    return (id, "read", {"path": str(path)})


def write_call(id: str, path: Path | str, content: str) -> Call:
    return (id, "write", {"path": str(path), "content": content})


def edit_call(id: str, path: Path | str, old: str, new: str) -> Call:
    return (id, "edit", {"path": str(path), "old_string": old, "new_string": new})


def bash_call(id: str, command: str) -> Call:
    return (id, "bash", {"command": command})


def file_with(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` and return the path: the file a test starts from."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def tree(root: Path, files: dict[str, str]) -> Path:
    """Write each ``relative path: text`` under ``root`` (folders made as needed)."""
    for name, text in files.items():
        file_with(root / name, text)
    return root


async def error_of(awaitable: Awaitable[Any]) -> Exception | None:
    """The exception awaiting raises, or None when it succeeds."""
    try:
        await awaitable
    except Exception as exc:
        return exc
    return None


async def raises(awaitable: Awaitable[Any]) -> bool:
    """True if awaiting fails with any exception (the book's ``is_err()``)."""
    return await error_of(awaitable) is not None


class Recorder:
    """A scripted model that also notes what it was sent: the messages (as a copy, at the
    time of the call) and the names of the tools offered. It streams one delta per turn, so
    it serves both ``chat`` and ``stream_chat`` loops."""

    def __init__(self, turns: list[AssistantTurn]) -> None:
        self.turns = list(turns)
        self.sent: list[list[Message]] = []
        self.offered: list[list[str]] = []

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        self.sent.append(list(messages))
        self.offered.append([t.name for t in tools])
        if not self.turns:
            raise RuntimeError("Recorder: no more turns")
        return self.turns.pop(0)

    async def stream_chat(
        self, messages: list[Message], tools: list[ToolDefinition], on_event: Any = None
    ) -> AssistantTurn:
        return await self.chat(messages, tools)


def declaration(definition: ToolDefinition) -> tuple[str, bool, set[str]]:
    """``(name, has a description, required parameters)`` of a tool's definition: what the
    model reads first about a tool, in one comparison."""
    required = definition.parameters.get("required", [])
    return definition.name, bool(definition.description), set(required)


def tool_results(messages: list[Message]) -> list[tuple[str, str]]:
    """``(call id, content)`` of each tool result in a history, in order: one comparison
    shows which results came back, and what they said."""
    return [(m.id, m.content) for m in messages if isinstance(m, Message.ToolResult)]


def kinds(messages: list[Message]) -> list[str]:
    """``["User", "Assistant", "ToolResult"]``: the shape of a history."""
    return [type(m).__name__ for m in messages]


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a killed one nobody has reaped yet, a zombie,
    runs nothing: it counts as gone)."""
    if Path("/proc").is_dir():
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as stat:
                return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False
    try:  # no /proc (macOS): ask the kernel; a zombie counts as alive here
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def eventually(condition: Callable[[], object], within: float) -> bool:
    """Wait until ``condition()`` is true, up to ``within`` seconds; whether it became so."""
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def outcome(awaitable: Awaitable[Any]) -> str:
    """What a tool call came to, as the loop would pass it on: its result, or ``error: …``
    when it raised (a tool may report a failure either way)."""
    try:
        return str(await awaitable)
    except Exception as exc:
        return f"error: {exc}"


def opening_comment(fn: Any) -> str:
    """The comment a test's body opens with (the rule it checks, in the test's own words)."""
    import inspect

    try:
        lines = inspect.getsource(fn).splitlines()
    except (OSError, TypeError):
        return ""
    start = next(
        (i + 1 for i, line in enumerate(lines) if line.lstrip().startswith(("def ", "async def "))),
        len(lines),
    )
    said = []
    for line in lines[start:]:
        text = line.strip()
        if not text.startswith("#"):
            break
        said.append(text.lstrip("#").strip())
    return " ".join(said)
