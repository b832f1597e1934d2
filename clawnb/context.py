"""Keeping the conversation inside the model's context window (book ch18).

:class:`ContextManager` counts tokens and, once the count reaches ``max_tokens``, replaces the
middle of the history with a summary written by the model::

    [System prompt]  [System "[Conversation summary]: …"]  [last preserve_recent messages]

Rules beyond the book:

* **Tool rounds are never split.** If the preserved tail would begin with a ``ToolResult``,
  the cut moves back to the Assistant turn that made the call, so every Assistant tool call
  is still followed by its results.
* **Summaries do not pile up.** An earlier ``[Conversation summary]`` message is summarised
  again with the rest of the middle instead of being kept beside the new one.
* **Counting what is in the window, not what was ever sent.** ``tokens_used`` is the book's
  running total of every recorded turn (input + output), kept for display. Compaction instead
  compares ``context_tokens``, the size of the history *now*: a provider's usage report for
  the latest turn measures exactly that (its input was the whole history, its output the new
  reply), and messages appended after that turn (tool results) are added at about four
  characters per token (:func:`estimate_tokens`). The book's total grows with every turn, so
  it would compact long before the window is full, and again every few turns after.
  If a turn reports no usage (offline and scripted models), the whole history is estimated.
  After a compaction, ``context_tokens`` is the estimate of the new, shorter history until the
  next real report replaces it; ``tokens_used`` is divided by 3 as in the book.
* The summary request is one provider call with no tools; its usage goes to ``on_usage``
  (e.g. a :class:`~clawnb.usage.CostTracker`) so the cost figure includes it. A
  ``summarizer`` may stand in for the agent's provider (a cheaper model, or
  :class:`ExtractiveSummarizer` for offline sessions).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from .errors import ContextOverflowError
from .types import (
    AnyProvider,
    AssistantTurn,
    Message,
    StopReason,
    TokenUsage,
    ToolDefinition,
    complete,
)

__all__ = [
    "SUMMARY_PREFIX",
    "ContextManager",
    "ExtractiveSummarizer",
    "estimate_tokens",
]

log = logging.getLogger(__name__)

SUMMARY_PREFIX = "[Conversation summary]: "
SUMMARY_REQUEST = (
    "Summarize this conversation history in 2-3 sentences, preserving key facts and decisions:\n\n"
)
FALLBACK_SUMMARY = "Previous conversation."

_CHARS_PER_TOKEN = 4
_MESSAGE_OVERHEAD = 4  # role markers and separators the server adds per message
_TOOL_PREVIEW = 100
_TEXT_PREVIEW = 2000


def estimate_tokens(messages: list[Message]) -> int:
    """A rough token count: characters / 4 plus a few tokens per message.

    Used when a provider reports no usage. Real tokenisers give 3–5 characters per token for
    English and code, so this errs on neither side by much; it is only a trigger for
    compaction, not a bill.
    """
    chars = 0
    for msg in messages:
        match msg:
            case Message.Assistant(turn=turn):
                chars += len(turn.text or "")
                for call in turn.tool_calls:
                    chars += len(call.name) + len(call.id)
                    chars += len(
                        call.invalid_arguments
                        if call.invalid_arguments is not None
                        else json.dumps(call.arguments, ensure_ascii=False)
                    )
            case Message.ToolResult(id=call_id, content=content):
                chars += len(call_id) + len(content)
            case _:
                chars += len(getattr(msg, "content", ""))
    return chars // _CHARS_PER_TOKEN + _MESSAGE_OVERHEAD * len(messages)


def _is_summary(msg: Message) -> bool:
    return isinstance(msg, Message.System) and msg.content.startswith(SUMMARY_PREFIX)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def transcript(messages: list[Message]) -> str:
    """The middle of the history as plain lines for the summary request."""
    lines: list[str] = []
    for msg in messages:
        match msg:
            case Message.User(content=text):
                lines.append(f"User: {_clip(text, _TEXT_PREVIEW)}")
            case Message.Assistant(turn=turn):
                if turn.text:
                    lines.append(f"Assistant: {_clip(turn.text, _TEXT_PREVIEW)}")
                for call in turn.tool_calls:
                    lines.append(f"  [tool: {call.name}]")
            case Message.ToolResult(content=content):
                lines.append(f"  Tool result: {_clip(content, _TOOL_PREVIEW)}")
            case Message.System(content=text):
                lines.append(f"System: {_clip(text, _TEXT_PREVIEW)}")
    return "\n".join(lines)


class ContextManager:
    """Counts tokens and compacts the history when it reaches ``max_tokens``."""

    def __init__(
        self,
        max_tokens: int,
        preserve_recent: int,
        *,
        summarizer: AnyProvider | None = None,
        on_usage: Callable[[TokenUsage], object] | None = None,
    ) -> None:
        if max_tokens <= 0:
            raise ValueError("max_tokens must be positive")
        if preserve_recent < 0:
            raise ValueError("preserve_recent must not be negative")
        self.max_tokens = max_tokens
        self.preserve_recent = preserve_recent
        self.summarizer = summarizer
        self.on_usage = on_usage
        self.tokens_used = 0  # the book's counter: everything recorded so far
        self.context_tokens = 0  # what the next request will carry (compared with max_tokens)
        self.compactions = 0
        self._recorded = False  # usage recorded since the last maybe_compact

    def record(self, usage: TokenUsage) -> None:
        """Note what one model turn consumed (input + output tokens)."""
        spent = usage.input_tokens + usage.output_tokens
        self.tokens_used += spent
        self.context_tokens = spent  # the turn's input was the whole history: a measurement
        self._recorded = True

    def should_compact(self) -> bool:
        return self.context_tokens >= self.max_tokens

    async def maybe_compact(self, provider: AnyProvider, messages: list[Message]) -> bool:
        """After a turn: bring ``context_tokens`` up to date and compact if it reached the
        limit. Returns whether it compacted."""
        if self._recorded:
            # The report covered everything up to the latest Assistant turn; add what came
            # after it (tool results).
            last = max(
                (i for i, m in enumerate(messages) if isinstance(m, Message.Assistant)),
                default=-1,
            )
            self.context_tokens += estimate_tokens(messages[last + 1 :])
        else:
            self.context_tokens = estimate_tokens(messages)
        self._recorded = False
        self.fit_window(getattr(provider, "context_window", None))
        if not self.should_compact():
            return False
        try:
            return await self.compact(provider, messages)
        except ContextOverflowError:
            # the summary request itself no longer fits: drop the middle instead of failing a
            # turn that was answered
            return self._drop(messages, self.preserve_recent) > 0

    def fit_window(self, window: int | None) -> str | None:
        """Lower ``max_tokens`` to three quarters of a context ``window`` the server named (its
        error, or vLLM's ``/v1/models``), leaving room for the reply and for the estimate's
        error. Returns a note when it changed."""
        if not isinstance(window, int) or window <= 0 or window * 3 // 4 >= self.max_tokens:
            return None
        self.max_tokens = max(window * 3 // 4, 1)
        return f"context budget lowered to {self.max_tokens} tokens"

    def _split(self, messages: list[Message], keep: int | None = None) -> tuple[int, int]:
        """(start, end) of the middle to summarise: after the leading System messages (but
        not earlier summaries), before the preserved tail of ``keep`` messages (default
        ``preserve_recent``; never inside a tool round)."""
        keep = self.preserve_recent if keep is None else keep
        keep_start = 0
        while (
            keep_start < len(messages)
            and isinstance(messages[keep_start], Message.System)
            and not _is_summary(messages[keep_start])
        ):
            keep_start += 1
        end = max(len(messages) - keep, keep_start)
        while keep_start < end < len(messages) and isinstance(messages[end], Message.ToolResult):
            end -= 1
        return keep_start, end

    async def compact(
        self, provider: AnyProvider, messages: list[Message], *, keep: int | None = None
    ) -> bool:
        """Summarise the middle of ``messages`` in place, keeping the last ``keep`` messages
        (default ``preserve_recent``) word for word. Returns whether anything changed.

        Provider errors propagate and leave ``messages`` untouched.
        """
        keep = self.preserve_recent if keep is None else keep
        if len(messages) <= keep + 1:
            return False
        start, end = self._split(messages, keep)
        middle = messages[start:end]
        if not middle:
            return False
        request: list[Message] = [Message.User(SUMMARY_REQUEST + transcript(middle))]
        source = self.summarizer if self.summarizer is not None else provider
        turn = await complete(source, request, [])
        if turn.usage is not None and self.on_usage is not None:
            self.on_usage(turn.usage)
        summary = turn.text if turn.text else FALLBACK_SUMMARY
        rebuilt = [*messages[:start], Message.System(SUMMARY_PREFIX + summary), *messages[end:]]
        messages[:] = rebuilt
        self.compactions += 1
        self.tokens_used //= 3
        self.context_tokens = estimate_tokens(messages)
        if self.should_compact():
            log.warning(
                "history still ~%d tokens after compaction (limit %d): the %d preserved "
                "messages alone are too large",
                self.context_tokens,
                self.max_tokens,
                len(messages) - start - 1,
            )
        return True

    async def compact_now(self, provider: AnyProvider, messages: list[Message]) -> bool:
        """``/compact``: the usual compaction, or — when the history is still too short for it
        to touch anything — a summary of the whole conversation. False only when there is
        nothing but the system prompt (and summaries)."""
        if await self.compact(provider, messages):
            return True
        return await self.compact(provider, messages, keep=0)

    async def recover(
        self, provider: AnyProvider, messages: list[Message], error: Exception | None = None
    ) -> str | None:
        """Make ``messages`` fit after the server refused them as longer than its context
        window (:class:`~clawnb.errors.ContextOverflowError`), keeping the current request —
        the last user message and everything after it — word for word.

        When the error names the window, ``max_tokens`` drops to three quarters of it, so
        later turns compact in time. Everything before the current request is summarised;
        if the summary request does not fit either, those messages are dropped (a note says
        so in their place). Returns what was done, in words, or ``None`` when nothing before
        the current request is left to cut (the request alone is too long).
        """
        window = getattr(error, "context_window", None) or getattr(provider, "context_window", None)
        budget = self.fit_window(window)
        notes = [budget] if budget else []
        keep = _current_request(messages)
        try:
            changed = await self.compact(provider, messages, keep=keep)
            what = "summarised the earlier conversation"
        except ContextOverflowError:
            dropped = self._drop(messages, keep)
            changed = dropped > 0
            what = f"dropped the {dropped} oldest messages (too long even to summarise)"
        if not changed:
            return None
        return "; ".join([what, *notes])

    def _drop(self, messages: list[Message], keep: int) -> int:
        """Replace everything between the system prompt and the last ``keep`` messages with a
        note saying they were dropped; returns how many went."""
        start, end = self._split(messages, keep)
        count = end - start
        if count <= 0:
            return 0
        note = Message.System(
            f"{SUMMARY_PREFIX}({count} earlier messages were dropped: the conversation no "
            "longer fit the model's context window.)"
        )
        messages[:] = [*messages[:start], note, *messages[end:]]
        self.compactions += 1
        self.context_tokens = estimate_tokens(messages)
        return count

    def __repr__(self) -> str:
        return (
            f"ContextManager(context_tokens={self.context_tokens}, max_tokens={self.max_tokens}, "
            f"preserve_recent={self.preserve_recent}, compactions={self.compactions})"
        )


def _current_request(messages: list[Message]) -> int:
    """How many messages the current request spans: from the last user message to the end."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], Message.User):
            return len(messages) - i
    return 0


class ExtractiveSummarizer:
    """An offline stand-in for the summary call: keeps the first and last lines of the
    transcript, clipped to ``max_chars``. Used with scripted models so that compaction needs
    no model turn; it is honest about being a clipping, not an understanding."""

    def __init__(self, max_chars: int = 1200) -> None:
        self.max_chars = max_chars

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        text = messages[-1].content if messages and isinstance(messages[-1], Message.User) else ""
        body = text.split("\n\n", 1)[-1]
        lines = [line for line in body.splitlines() if line.strip()]
        half = max(1, self.max_chars // 2)
        head: list[str] = []
        tail: list[str] = []
        used = 0
        for line in lines:
            if used + len(line) > half:
                break
            head.append(line)
            used += len(line) + 1
        used = 0
        for line in reversed(lines[len(head) :]):
            if used + len(line) > half:
                break
            tail.insert(0, line)
            used += len(line) + 1
        skipped = len(lines) - len(head) - len(tail)
        parts = head + ([f"... ({skipped} lines omitted) ..."] if skipped > 0 else []) + tail
        summary = "Earlier conversation (extract): " + " | ".join(parts)
        return AssistantTurn(text=summary, stop_reason=StopReason.STOP)
