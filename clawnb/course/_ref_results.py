"""The course's answer to chapter 24: results that fit (``ResultStore``: a long tool result
saved whole, the model given a preview, pages read back) and a compaction with a circuit
breaker (``Compactor``). The notebook's solution, kept short; production's counterparts are
:class:`clawnb.tools.results.ResultLimiter` and :class:`clawnb.context.ContextManager`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..types import Message

__all__ = ["SUMMARY_PREFIX", "Compactor", "ResultStore"]

# ---------------------------------------------------------------------------- results


class ResultStore:
    """Results up to ``max_chars`` pass; a longer one is saved in ``folder`` and the model
    gets a preview: its size, where it is, the first ``head`` and last ``tail`` characters."""

    def __init__(
        self, folder: str | Path, max_chars: int = 4000, head: int = 1200, tail: int = 400
    ):
        self.folder = Path(folder)
        self.max_chars = max_chars
        self.head = head
        self.tail = tail

    def fit(self, call_id: str, text: str) -> str:
        if len(text) <= self.max_chars:
            return text
        self.folder.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_-]", "_", call_id) or "result"  # never a path of its own
        path = self.folder / f"{safe}.txt"
        path.write_text(text, encoding="utf-8")
        return self.preview(text, path)

    def preview(self, text: str, path: Path) -> str:
        lines = text.count("\n") + (0 if text.endswith("\n") else 1)
        hidden = len(text) - self.head - self.tail
        return (
            f"[result too large for the context: {len(text):,} chars, {lines:,} lines, saved "
            f"in full to {path}; read it in pages with offset and limit]\n\n"
            f"{text[: self.head]}\n[... {hidden:,} chars not shown ...]\n{text[-self.tail :]}"
        )

    def page(self, path: str | Path, offset: int = 1, limit: int = 100) -> str:
        """Lines ``offset`` .. ``offset + limit - 1`` (counted from 1) as they are in the file,
        then a line saying where the next page starts, if there is one."""
        lines = Path(path).read_text(encoding="utf-8").splitlines(keepends=True)
        if offset > len(lines):
            return f"[offset {offset} is past the end: the file has {len(lines)} lines]"
        chosen = lines[offset - 1 : offset - 1 + limit]
        end = offset - 1 + len(chosen)
        text = "".join(chosen)
        if end < len(lines):
            text += (
                f"[lines {offset}-{end} of {len(lines)}; the next page starts at offset {end + 1}]"
            )
        return text


# ---------------------------------------------------------------------------- compaction

SUMMARY_PREFIX = "[Conversation summary]: "
REQUEST = "Summarise this conversation so the work can go on from the summary alone:\n\n"


def _text(message: Message) -> str:
    if isinstance(message, Message.Assistant):
        calls = [f"{c.name}({json.dumps(c.arguments)})" for c in message.turn.tool_calls]
        return " ".join([message.turn.text or "", *calls])
    return str(getattr(message, "content", ""))


class Compactor:
    """Summarises the middle of a history once it reaches ``max_tokens``; after
    ``max_failures`` failed summaries in a row it stops asking and drops the oldest turns."""

    def __init__(self, model: Any, max_tokens: int, keep: int = 4, max_failures: int = 3):
        self.model = model
        self.max_tokens = max_tokens
        self.keep = keep
        self.max_failures = max_failures
        self.failures = 0  # in a row
        self.open = False  # the breaker: no more summaries
        self.notes: list[str] = []  # what the person was told

    def tokens(self, messages: list[Message]) -> int:
        return sum(len(_text(m)) // 4 + 4 for m in messages)

    async def after_turn(self, messages: list[Message]) -> str | None:
        """Call once a turn is answered. None (nothing to do), "summary", "failed" (the history
        is unchanged) or "dropped". Never raises for a summary that failed."""
        if self.tokens(messages) < self.max_tokens:
            return None
        if not self.open:
            try:
                await self.summarise(messages)
            except Exception as exc:  # the turn was answered: its summary failing is no error
                self.failures += 1
                if self.failures < self.max_failures:
                    return "failed"
                self.open = True
                self.notes.append(
                    f"compaction failed {self.failures} times in a row ({exc}); no more "
                    "summaries: the oldest turns are dropped instead"
                )
            else:
                self.failures = 0
                return "summary"
        self.drop_oldest(messages)
        return "dropped"

    def _prompt_end(self, messages: list[Message]) -> int:
        """After the leading System messages that are the prompt (an earlier summary is not)."""
        i = 0
        while (
            i < len(messages)
            and isinstance(messages[i], Message.System)
            and not str(getattr(messages[i], "content", "")).startswith(SUMMARY_PREFIX)
        ):
            i += 1
        return i

    async def summarise(self, messages: list[Message]) -> None:
        start = self._prompt_end(messages)
        end = max(len(messages) - self.keep, start)
        while start < end < len(messages) and isinstance(messages[end], Message.ToolResult):
            end -= 1  # never keep a result without the turn that asked for it
        middle = messages[start:end]
        if not middle:
            return
        transcript = "\n".join(f"{type(m).__name__}: {_text(m)}" for m in middle)
        turn = await self.model.chat([Message.User(REQUEST + transcript)], [])
        summary = Message.System(SUMMARY_PREFIX + (turn.text or ""))
        messages[:] = [*messages[:start], summary, *messages[end:]]

    def drop_oldest(self, messages: list[Message]) -> None:
        """Drop whole turns after the leading System messages, oldest first, until the rest
        fits: a cut falls only before a person's message, and the last one always stays."""
        start = self._prompt_end(messages)
        if start < len(messages) and str(getattr(messages[start], "content", "")).startswith(
            SUMMARY_PREFIX
        ):
            start += 1  # an earlier summary stays: it is all that is left of those turns
        cuts = [i for i in range(start, len(messages)) if isinstance(messages[i], Message.User)]
        if not cuts:
            return
        cut = cuts[-1]
        for i in cuts:
            if self.tokens(messages[:start] + messages[i:]) < self.max_tokens:
                cut = i
                break
        messages[:] = [*messages[:start], *messages[cut:]]
