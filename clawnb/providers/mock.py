"""MockProvider (book ch1) and MockStreamProvider (ch5a): deterministic models for tests,
the demo and the course. Both ignore what they are sent and hand out canned turns in order."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Iterable

from ..errors import ProviderError
from ..events import OnStreamEvent, emit_turn
from ..types import AssistantTurn, Message, ToolDefinition

__all__ = ["CannedStream", "MockProvider", "MockStreamProvider"]


class MockProvider:
    """Returns the queued turns first-in, first-out; raises ``ProviderError`` when empty."""

    def __init__(self, responses: Iterable[AssistantTurn] = ()) -> None:
        self._responses: deque[AssistantTurn] = deque(responses)

    def push(self, turn: AssistantTurn) -> None:
        self._responses.append(turn)

    def __len__(self) -> int:
        return len(self._responses)

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        if not self._responses:
            raise ProviderError("MockProvider: no more responses")
        return self._responses.popleft()


class CannedStream(ABC):
    """A provider whose turns are ready-made (``chat`` hands them out) and that streams each
    one as the events a server would have sent for it (:func:`~clawnb.events.emit_turn`), its
    text cut by :meth:`pieces`. Returns the original turn."""

    @abstractmethod
    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        """The next ready-made turn."""

    def pieces(self, text: str) -> list[str]:
        """The text deltas a turn's text streams as."""
        return [text]

    async def stream_chat(
        self, messages: list[Message], tools: list[ToolDefinition], on_event: OnStreamEvent = None
    ) -> AssistantTurn:
        turn = await self.chat(messages, tools)
        await emit_turn(on_event, turn, pieces=self.pieces)
        return turn


class MockStreamProvider(CannedStream):
    """Streams each queued turn: one ``TextDelta`` per character, then for each tool call a
    ``ToolCallStart`` and one ``ToolCallDelta`` with its arguments as compact JSON, then
    ``Done`` (reasoning and usage too, when a queued turn has them). Returns the original
    turn. Also usable as a plain :class:`Provider`."""

    def __init__(self, responses: Iterable[AssistantTurn] = ()) -> None:
        self._inner = MockProvider(responses)

    def push(self, turn: AssistantTurn) -> None:
        self._inner.push(turn)

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        return await self._inner.chat(messages, tools)

    def pieces(self, text: str) -> list[str]:
        return list(text)  # one delta per character
