"""Small builders the chapter suites share."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from ..types import AssistantTurn, StopReason, ToolCall


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
