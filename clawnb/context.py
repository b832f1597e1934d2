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
* **The fixed prompt counts.** Every estimate of what the next request carries adds the
  agent's own fixed part — the system prompt is in the history, the tool schemas are not, so
  :attr:`ContextManager.tools` (the definitions the model is sent) is counted with them
  (:func:`schema_tokens`). A window smaller than that fixed part cannot hold any message:
  :meth:`ContextManager.recover` then raises :class:`FixedPromptTooLarge` ("the agent's own
  prompt (N tokens) does not fit this server's window (M)") instead of blaming the person's
  message, and a window-derived budget below it says so (:attr:`ContextManager.notes`).
* The summary request is one provider call with no tools; its usage goes to ``on_usage``
  (e.g. a :class:`~clawnb.usage.CostTracker`) so the cost figure includes it. A
  ``summarizer`` may stand in for the agent's provider (a cheaper model, or
  :class:`ExtractiveSummarizer` for offline sessions).

Production compaction (seed 001), on top of the book's:

* **When**: at ``max_tokens − output_reserve`` (:attr:`ContextManager.threshold`), so the
  model's reply still fits after the history (never below half of ``max_tokens``).
* **What the summariser reads**: the *full* transcript of the part being summarised —
  every message whole, tool calls with their arguments, tool results as the model saw them
  (a persisted result is its preview and path) — not 100-character clips.
* **How**: one call with no tools, in two phases: the model first writes an
  ``<analysis>`` going through the transcript in order, then the ``<summary>`` with fixed
  sections (requests, files and cells, errors and fixes, decisions, current task, next
  step); only the summary is kept. ``focus`` (``/compact FOCUS``) adds what to stress.
* **What is kept besides**: every request the person made, word for word (long ones
  clipped), listed after the summary by clawnb itself — a weak model cannot lose them; and the
  files most recently read (``read``, ``notebook_read``), re-attached as they are on disk now
  within a token budget. The skills in use are given back by the session
  (:meth:`clawnb.skills.runtime.SessionSkills.after_compaction`, keyed on ``compactions``).
* **Circuit breaker**: a summary that fails (an HTTP 500, a timeout) never fails the turn
  whose answer already arrived; after :data:`MAX_FAILURES` failures in a row the manager
  stops asking for summaries and drops the oldest turns instead (whole turns, so every tool
  call keeps its results), and says so once (a warning, and :attr:`ContextManager.notes`).
  A forced ``/compact`` still tries, and a success closes the breaker again.
* **Old results cleared in place** (before any summary): a tool result that was persisted
  (:class:`~clawnb.tools.results.ResultLimiter`) costs its ~2 KB preview on every later
  request. Once the previews behind the most recent ``clear_keep`` persisted results (and
  before the current request) would together free ``clear_min_tokens`` (default a tenth of
  the threshold), each is replaced by its one-line stub (path and size,
  :func:`~clawnb.tools.results.cleared_stub`) — all at once, so the prompt-cache prefix
  breaks at that boundary only, not on every request. Nothing is lost: the file is on disk
  and ``read`` pages through it. Counted in :attr:`ContextManager.clearings`; it is not a
  compaction (no summary, no ``compact`` event, the skills are not re-attached).
* Automatic, forced (:meth:`~ContextManager.compact_now`) and emergency
  (:meth:`~ContextManager.recover`, after the server refused the request) compaction all go
  through :meth:`~ContextManager.compact`; ``on_compact`` hears of each one
  (:class:`Compaction`), the place a ``compact`` hook attaches.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from .errors import ContextOverflowError
from .types import (
    AnyProvider,
    AssistantTurn,
    Message,
    StopReason,
    System,
    TokenUsage,
    ToolDefinition,
    User,
    complete,
)

__all__ = [
    "MAX_FAILURES",
    "SUMMARY_PREFIX",
    "Compaction",
    "ContextManager",
    "ExtractiveSummarizer",
    "FixedPromptTooLarge",
    "estimate_tokens",
    "schema_tokens",
    "full_transcript",
    "summary_body",
]

log = logging.getLogger(__name__)

SUMMARY_PREFIX = "[Conversation summary]: "
SUMMARY_REQUEST = "Summarize this conversation history in 2-3 sentences, preserving key facts and decisions:\n\n"  # the book's request (ch18); clawnb sends COMPACTION_REQUEST
COMPACTION_REQUEST = """\
This conversation is being compacted: only your summary of the transcript below stays in \
the context, and the work goes on from it. Answer with text only; do not call tools.
First, in <analysis></analysis>, go through the transcript in order.
Then, in <summary></summary>, write these sections:
1. Requests: every request the person made, verbatim where short.
2. Files and cells: each one touched, what was done to it and why.
3. Errors and fixes: each error met and how it was fixed (or that it is open).
4. Decisions, and why.
5. Current task.
6. Next step, in line with the latest request.
Only the summary is kept.{focus}

<transcript>
{transcript}
</transcript>"""
FOCUS_LINE = "\n\nThe person asked this summary to pay particular attention to: {focus}"
FALLBACK_SUMMARY = "Previous conversation."
REQUESTS_HEADER = "\n\n[Requests from the person so far, in order (verbatim; long ones clipped)]"
FILES_HEADER = "\n\n[Files read recently, as they are now (re-attached after compaction)]"
MAX_FAILURES = 3  # consecutive summary failures before the circuit breaker opens
CLEAR_KEEP = 4  # the most recent persisted results that keep their preview

_CHARS_PER_TOKEN = 4
_MESSAGE_OVERHEAD = 4  # role markers and separators the server adds per message
_TOOL_PREVIEW = 100  # the book's clip of a tool result in its transcript
_TEXT_PREVIEW = 2000
_FULL_LIMIT = 40_000  # one message in the summariser's transcript (results are already limited)
_ARGS_LIMIT = 2_000
_REQUEST_CHARS = 600  # one request in the verbatim list
_REATTACH_FILES = 5
_REATTACH_FILE_TOKENS = 5_000
_REATTACH_MAX_BYTES = 2 * 1024 * 1024
_READ_TOOLS = ("read", "notebook_read")
_REMINDER = re.compile(r"\n*<system-reminder>.*?</system-reminder>", re.DOTALL)


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


_TOOL_OVERHEAD = 8  # the template's markup around one tool's schema


def schema_tokens(tools: list[ToolDefinition]) -> int:
    """The tokens the tool schemas add to every request, roughly: each schema as the JSON a
    chat template renders (name, description, parameters), four characters a token, plus a
    few tokens of markup per tool. Zero without tools."""
    chars = 0
    for tool in tools:
        chars += len(
            json.dumps(
                {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
                ensure_ascii=False,
            )
        )
    return chars // _CHARS_PER_TOKEN + _TOOL_OVERHEAD * len(tools) if tools else 0


@dataclass(eq=False, repr=False)
class FixedPromptTooLarge(ContextOverflowError):
    """The agent's own prompt (system prompt and tool schemas, ``fixed_tokens``) does not fit
    the server's window (``context_window``): no message can, whatever it says, and compacting
    cannot help. ``str()`` is the message and the hint, without an HTTP status (the server
    refused the request, but the cause is clawnb's side)."""

    fixed_tokens: int = field(default=0, kw_only=True)

    def _line(self) -> str:
        return f"{self.message} — {self.hint}" if self.hint else self.message


def _fixed_hint(fixed: int) -> str:
    # twice the fixed part leaves room for a conversation and the reply
    need = max(1024, -(-2 * fixed // 1024) * 1024)
    return (
        "your message is not the cause: start the server with a larger context window "
        f"(at least {need} tokens: llama-server -c {need}, llama-cpp-python --n_ctx {need}), "
        'or offer the model fewer, shorter tools with [model] tools = "lean"'
    )


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


def _clip_middle(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} chars not shown ...]\n{text[-half:]}"


def _person_said(msg: User) -> str:
    """What the person wrote: the label front ends show, else the content without the
    reminders clawnb attached."""
    return msg.label if msg.label is not None else _REMINDER.sub("", msg.content).strip()


def summary_body(text: str | Message) -> str:
    """A summary message's text without its prefix and the sections clawnb adds (requests,
    files): what the model wrote. An earlier summary is summarised again by this part only;
    the requests are carried over separately and the files re-read."""
    if isinstance(text, System):
        text = text.content
    elif isinstance(text, Message):
        return ""
    text = text[len(SUMMARY_PREFIX) :] if text.startswith(SUMMARY_PREFIX) else text
    for header in (REQUESTS_HEADER, FILES_HEADER):
        text = text.split(header, 1)[0]
    return text


def _earlier_requests(text: str) -> list[str]:
    """The verbatim requests listed in an earlier summary."""
    if REQUESTS_HEADER not in text:
        return []
    block = text.split(REQUESTS_HEADER, 1)[1].split(FILES_HEADER, 1)[0]
    requests: list[str] = []
    for line in block.splitlines():
        if line.startswith("- "):
            requests.append(line[2:])
        elif line.startswith("  ") and requests:
            requests[-1] += "\n" + line[2:]
    return requests


def full_transcript(messages: list[Message]) -> str:
    """The part of the history to summarise, whole: every message, tool calls with their
    arguments, tool results as the model saw them (a persisted result is its preview)."""
    names: dict[str, str] = {}
    lines: list[str] = []
    for msg in messages:
        match msg:
            case Message.User():
                lines.append(f"[person] {_clip_middle(_person_said(msg), _FULL_LIMIT)}")
            case Message.Assistant(turn=turn):
                if turn.text:
                    lines.append(f"[assistant] {_clip_middle(turn.text, _FULL_LIMIT)}")
                for call in turn.tool_calls:
                    names[call.id] = call.name
                    args = (
                        call.invalid_arguments
                        if call.invalid_arguments is not None
                        else json.dumps(call.arguments, ensure_ascii=False)
                    )
                    lines.append(f"[tool call {call.name}] {_clip_middle(args, _ARGS_LIMIT)}")
            case Message.ToolResult(id=call_id, content=content):
                name = names.get(call_id, "tool")
                lines.append(f"[result of {name}] {_clip_middle(content, _FULL_LIMIT)}")
            case Message.System(content=text):
                if _is_summary(msg):
                    lines.append(f"[summary of the conversation before] {summary_body(text)}")
                else:
                    lines.append(f"[system] {_clip_middle(text, _FULL_LIMIT)}")
    return "\n\n".join(lines)


def _final_summary(text: str | None) -> str:
    """The ``<summary>`` of a two-phase answer (the analysis dropped); an answer without the
    tags is taken whole, less any analysis."""
    if not text or not text.strip():
        return FALLBACK_SUMMARY
    match = re.search(r"<summary>(.*?)(?:</summary>|$)", text, re.DOTALL)
    if match and match.group(1).strip():
        return match.group(1).strip()
    stripped = re.sub(r"<analysis>.*?(</analysis>|$)", "", text, flags=re.DOTALL).strip()
    return stripped or FALLBACK_SUMMARY


class ReadRecord(Protocol):
    """What the context manager asks of the tools' shared
    :class:`~clawnb.tools.base.FileState`: has the agent seen this file?"""

    def seen_mtime(self, path: Path) -> int | None: ...


@dataclass(frozen=True)
class Compaction:
    """What one compaction did, for ``on_compact`` (the ``compact`` hook's payload):
    ``trigger`` is ``"auto"``, ``"manual"``, ``"emergency"`` or ``"resume"``; ``how`` is ``"summary"`` or
    ``"dropped"`` (the circuit breaker's or an overflow's fallback)."""

    trigger: str
    how: str
    messages: int  # how many messages it replaced
    files: tuple[str, ...] = ()  # re-attached
    focus: str | None = None
    tokens_after: int = 0


@dataclass
class _Breaker:
    failures: int = 0  # consecutive
    open: bool = False
    told: bool = False
    last_error: str = ""


class ContextManager:
    """Counts tokens and compacts the history when it reaches its threshold.

    ``max_tokens`` is the context budget (the window, or what a server named of it);
    ``output_reserve`` the room kept for the reply, so compaction starts at
    ``max_tokens − output_reserve`` (:attr:`threshold`). ``workspace`` is where re-attached
    files are read from (only files inside it are); ``reattach_tokens`` caps them together.
    ``on_compact`` is called with a :class:`Compaction` after each one.
    """

    def __init__(
        self,
        max_tokens: int,
        preserve_recent: int,
        *,
        summarizer: AnyProvider | None = None,
        on_usage: Callable[[TokenUsage], object] | None = None,
        output_reserve: int = 0,
        workspace: str | Path | None = None,
        reattach_tokens: int = 20_000,
        on_compact: Callable[[Compaction], object] | None = None,
        file_state: ReadRecord | None = None,
        clear_keep: int = CLEAR_KEEP,
        clear_min_tokens: int | None = None,
    ) -> None:
        if max_tokens <= 0:
            raise ValueError("max_tokens must be positive")
        if preserve_recent < 0:
            raise ValueError("preserve_recent must not be negative")
        if output_reserve < 0 or reattach_tokens < 0:
            raise ValueError("output_reserve and reattach_tokens must not be negative")
        if clear_keep < 0 or (clear_min_tokens is not None and clear_min_tokens < 1):
            raise ValueError("clear_keep must not be negative, clear_min_tokens must be positive")
        self.max_tokens = max_tokens
        self.preserve_recent = preserve_recent
        self.summarizer = summarizer
        self.on_usage = on_usage
        self.output_reserve = output_reserve
        self.workspace = Path(workspace) if workspace is not None else None
        self.reattach_tokens = reattach_tokens
        self.on_compact = on_compact
        # re-read from disk only what the read tool really returned (a denied read never
        # recorded its file): without it, a re-attached file is its last read result
        self.file_state = file_state
        self.clear_keep = clear_keep
        self._clear_min_tokens = clear_min_tokens
        self.clearings = 0  # times old persisted results were cleared to their stubs
        self.tokens_used = 0  # the book's counter: everything recorded so far
        self.context_tokens = 0  # what the next request will carry (compared with threshold)
        self.compactions = 0
        self.notes: list[str] = []  # what the person was told (the circuit breaker)
        # the tool definitions every request sends (the session's, as the model sees them
        # now): their schemas count in every estimate, beside the system prompt
        self.tools: Callable[[], list[ToolDefinition]] | None = None
        self._told_fixed = False  # said once that the budget is below the fixed prompt
        self._breaker = _Breaker()
        self._recorded = False  # usage recorded since the last maybe_compact

    @property
    def threshold(self) -> int:
        """Where compaction starts: the budget less the output reserve (at least half of it)."""
        return max(self.max_tokens - self.output_reserve, self.max_tokens // 2, 1)

    @property
    def tool_tokens(self) -> int:
        """What the tool schemas add to each request (:func:`schema_tokens`); 0 when the
        manager was not told the tools."""
        if self.tools is None:
            return 0
        try:
            return schema_tokens(list(self.tools()))
        except Exception:  # noqa: BLE001 - an estimate must not fail a turn
            log.debug("tool definitions unavailable for the estimate", exc_info=True)
            return 0

    def estimate(self, messages: list[Message]) -> int:
        """What a request with ``messages`` carries, estimated: the messages
        (:func:`estimate_tokens`, the system prompt among them) and the tool schemas."""
        return estimate_tokens(messages) + self.tool_tokens

    def fixed_tokens(self, messages: list[Message]) -> int:
        """The agent's own part of every request, estimated: the leading system prompt (not a
        compaction summary) and the tool schemas — what no compaction can make smaller."""
        return estimate_tokens(messages[: _prompt_end(messages)]) + self.tool_tokens

    @property
    def clear_min_tokens(self) -> int:
        """What clearing old results must free at least (tokens), so that it breaks the
        prompt-cache prefix rarely: ``clear_min_tokens``, else a tenth of the threshold."""
        if self._clear_min_tokens is not None:
            return self._clear_min_tokens
        return max(self.threshold // 10, 1)

    def clear_old_results(self, messages: list[Message]) -> int:
        """Replace the previews of persisted results behind the most recent ``clear_keep``
        ones (and before the current request) by their one-line stubs, in place — but only
        when that frees at least :attr:`clear_min_tokens`. Returns the tokens freed (0: the
        history is unchanged)."""
        from .tools.results import cleared_stub

        current = len(messages) - _current_request(messages)
        found: list[tuple[int, str, str]] = []  # (index, call id, stub)
        freed = 0
        for i, msg in enumerate(messages):
            if isinstance(msg, Message.ToolResult):
                stub = cleared_stub(msg.content)
                if stub is not None:
                    found.append((i, msg.id, stub))
        old = [item for item in found[: max(len(found) - self.clear_keep, 0)] if item[0] < current]
        for i, _, stub in old:
            freed += (len(getattr(messages[i], "content", "")) - len(stub)) // _CHARS_PER_TOKEN
        if not old or freed < self.clear_min_tokens:
            return 0
        for i, call_id, stub in old:
            messages[i] = Message.ToolResult(call_id, stub)
        self.clearings += 1
        self.context_tokens = max(self.context_tokens - freed, 0)
        log.info("cleared %d old persisted results from the context (~%d tokens)", len(old), freed)
        return freed

    @property
    def breaker_open(self) -> bool:
        """Whether summaries are off after :data:`MAX_FAILURES` failures in a row."""
        return self._breaker.open

    def record(self, usage: TokenUsage) -> None:
        """Note what one model turn consumed (input + output tokens)."""
        spent = usage.input_tokens + usage.output_tokens
        self.tokens_used += spent
        self.context_tokens = spent  # the turn's input was the whole history: a measurement
        self._recorded = True

    def should_compact(self) -> bool:
        return self.context_tokens >= self.threshold

    async def maybe_compact(
        self, provider: AnyProvider, messages: list[Message], *, trigger: str = "auto"
    ) -> bool:
        """After a turn: bring ``context_tokens`` up to date and compact if it reached the
        threshold. Returns whether the history changed. Never raises for a failed summary:
        the turn's answer already arrived (see the circuit breaker in the module docstring).
        ``trigger`` names the occasion for ``on_compact`` (``"resume"``: a resumed history
        over the threshold, before its next request)."""
        if self._recorded:
            # The report covered everything up to the latest Assistant turn; add what came
            # after it (tool results).
            last = max(
                (i for i, m in enumerate(messages) if isinstance(m, Message.Assistant)),
                default=-1,
            )
            self.context_tokens += estimate_tokens(messages[last + 1 :])
        else:
            self.context_tokens = self.estimate(messages)
        self._recorded = False
        self.fit_window(getattr(provider, "context_window", None), messages)
        cleared = self.clear_old_results(messages) > 0
        if not self.should_compact():
            return cleared
        if self._breaker.open:
            return self._drop_oldest(messages, trigger) > 0
        try:
            return await self.compact(provider, messages, trigger=trigger)
        except ContextOverflowError:
            # the summary request itself no longer fits: drop the middle instead of failing a
            # turn that was answered
            return self._drop(messages, self.preserve_recent) > 0
        except Exception as exc:  # noqa: BLE001 - a failed summary is not the turn's failure
            self._failed(exc)
            return self._breaker.open and self._drop_oldest(messages, trigger) > 0

    def _failed(self, exc: Exception) -> None:
        """Count a failed summary; at :data:`MAX_FAILURES` in a row, open the breaker and say
        so — once."""
        breaker = self._breaker
        breaker.failures += 1
        breaker.last_error = f"{type(exc).__name__}: {exc}"
        log.info("compaction summary failed (%d in a row): %s", breaker.failures, exc)
        if breaker.failures >= MAX_FAILURES and not breaker.open:
            breaker.open = True
            if not breaker.told:
                breaker.told = True
                note = (
                    f"compaction failed {breaker.failures} times in a row "
                    f"({breaker.last_error[:200]}): no more summaries this session; the "
                    "oldest turns are dropped instead when the context fills up "
                    "(/compact tries a summary again)"
                )
                self.notes.append(note)
                log.warning(note)

    def fit_window(self, window: int | None, messages: list[Message] | None = None) -> str | None:
        """Lower ``max_tokens`` to three quarters of a context ``window`` the server named (its
        error, ``/v1/models``, llama-server's ``/props``), leaving room for the reply and for
        the estimate's error. Returns a note when it changed. With ``messages``, a budget that
        falls below the agent's own fixed prompt (:meth:`fixed_tokens`) says so in the note,
        and once in :attr:`notes` and the log: no conversation fits such a window."""
        if not isinstance(window, int) or window <= 0 or window * 3 // 4 >= self.max_tokens:
            return None
        self.max_tokens = max(window * 3 // 4, 1)
        note = f"context budget lowered to {self.max_tokens} tokens"
        fixed = self.fixed_tokens(messages) if messages is not None else 0
        if fixed >= self.max_tokens:
            note += (
                f", below the agent's own prompt ({fixed} tokens) — this server's window "
                f"({window}) is too small for clawnb"
            )
            if not self._told_fixed:
                self._told_fixed = True
                self.notes.append(f"{note}: {_fixed_hint(fixed)}")
                log.warning("%s: %s", note, _fixed_hint(fixed))
        return note

    def check_fits(self, messages: list[Message], window: int | None) -> None:
        """Raise :class:`FixedPromptTooLarge` when the agent's own prompt alone is at least
        ``window`` tokens (estimated): no message can be answered there. A current request
        larger than that prompt is the first thing to blame, so then nothing is raised."""
        if not isinstance(window, int) or window <= 0:
            return
        fixed = self.fixed_tokens(messages)
        request = estimate_tokens(messages[len(messages) - _current_request(messages) :])
        if fixed >= window and request < fixed:
            raise FixedPromptTooLarge(
                400,
                f"the agent's own prompt ({fixed} tokens) does not fit this server's window "
                f"({window})",
                "context_length_exceeded",
                hint=_fixed_hint(fixed),
                context_window=window,
                fixed_tokens=fixed,
            )

    def _split(self, messages: list[Message], keep: int | None = None) -> tuple[int, int]:
        """(start, end) of the middle to summarise: after the leading System messages (but
        not earlier summaries), before the preserved tail of ``keep`` messages (default
        ``preserve_recent``; never inside a tool round)."""
        keep = self.preserve_recent if keep is None else keep
        keep_start = _prompt_end(messages)
        end = max(len(messages) - keep, keep_start)
        while keep_start < end < len(messages) and isinstance(messages[end], Message.ToolResult):
            end -= 1
        return keep_start, end

    async def compact(
        self,
        provider: AnyProvider,
        messages: list[Message],
        *,
        keep: int | None = None,
        focus: str | None = None,
        trigger: str = "manual",
    ) -> bool:
        """Summarise the middle of ``messages`` in place, keeping the last ``keep`` messages
        (default ``preserve_recent``) word for word. Returns whether anything changed.

        The one compaction every path uses (automatic, forced, emergency). Provider errors
        propagate and leave ``messages`` untouched; a success closes the circuit breaker.
        """
        keep = self.preserve_recent if keep is None else keep
        if len(messages) <= keep + 1:
            return False
        start, end = self._split(messages, keep)
        middle = messages[start:end]
        if not middle:
            return False
        focus_line = FOCUS_LINE.format(focus=focus.strip()) if focus and focus.strip() else ""
        request: list[Message] = [
            Message.User(
                COMPACTION_REQUEST.format(focus=focus_line, transcript=full_transcript(middle))
            )
        ]
        source = self.summarizer if self.summarizer is not None else provider
        turn = await complete(source, request, [])
        if turn.usage is not None and self.on_usage is not None:
            self.on_usage(turn.usage)
        self._breaker = _Breaker(told=self._breaker.told)
        summary = _final_summary(turn.text)
        requests = self._requests_block(middle)
        files, attached = self._files_block(middle, messages[end:])
        content = SUMMARY_PREFIX + summary + requests + files
        rebuilt = [*messages[:start], Message.System(content), *messages[end:]]
        messages[:] = rebuilt
        self.compactions += 1
        self.tokens_used //= 3
        self.context_tokens = self.estimate(messages)
        if self.should_compact():
            log.warning(
                "history still ~%d tokens after compaction (limit %d): the %d preserved "
                "messages alone are too large",
                self.context_tokens,
                self.threshold,
                len(messages) - start - 1,
            )
        self._report(Compaction(trigger, "summary", len(middle), attached, focus))
        return True

    def _report(self, event: Compaction) -> None:
        if self.on_compact is None:
            return
        event = Compaction(
            event.trigger,
            event.how,
            event.messages,
            event.files,
            event.focus,
            self.context_tokens,
        )
        try:
            self.on_compact(event)
        except Exception:  # noqa: BLE001 - a listener must not undo a compaction
            log.exception("on_compact listener failed")

    def _requests_block(self, middle: list[Message]) -> str:
        """Every request the person made in ``middle`` (and those an earlier summary listed),
        word for word up to :data:`_REQUEST_CHARS` each; the oldest are left out when the
        list would take more than an eighth of the threshold."""
        requests: list[str] = []
        for msg in middle:
            if isinstance(msg, System) and _is_summary(msg):
                requests += _earlier_requests(msg.content)
            elif isinstance(msg, User):
                said = _person_said(msg)
                if said:
                    requests.append(_clip(said, _REQUEST_CHARS))
        if not requests:
            return ""
        budget = max(self.threshold // 8, 50) * _CHARS_PER_TOKEN
        kept: list[str] = []
        used = 0
        for text in reversed(requests):
            entry = "- " + text.replace("\n", "\n  ")
            if kept and used + len(entry) > budget:
                break
            kept.insert(0, entry)
            used += len(entry) + 1
        omitted = len(requests) - len(kept)
        lines = ([f"- ({omitted} earlier requests not listed)"] if omitted else []) + kept
        return REQUESTS_HEADER + "\n" + "\n".join(lines)

    def _files_block(
        self, middle: list[Message], tail: list[Message]
    ) -> tuple[str, tuple[str, ...]]:
        """The files read in ``middle`` (latest first, not read again in ``tail``), as they are
        now, within the re-attach budget: ``(text, paths)``."""
        budget = min(self.reattach_tokens, self.threshold // 4) * _CHARS_PER_TOKEN
        if budget <= 0:
            return "", ()
        in_tail = {path for path, _ in _reads(tail, {})}
        results = {m.id: m.content for m in middle if isinstance(m, Message.ToolResult)}
        seen: set[str] = set()
        parts: list[str] = []
        attached: list[str] = []
        used = 0
        for path, seen_text in reversed(_reads(middle, results)):
            if path in seen or path in in_tail or "tool-results" in Path(path).parts:
                continue  # a persisted result is paged through, not re-attached whole
            seen.add(path)
            text = self._current_text(path)
            if text is None:
                text = seen_text
            if text is None:
                continue
            room = min(_REATTACH_FILE_TOKENS * _CHARS_PER_TOKEN, budget - used)
            if room < 200:
                break
            text = _clip_middle(text, room)
            parts.append(f"--- {path} ---\n{text}")
            attached.append(path)
            used += len(text)
            if len(attached) >= _REATTACH_FILES:
                break
        if not parts:
            return "", ()
        return FILES_HEADER + "\n" + "\n\n".join(parts), tuple(attached)

    def _current_text(self, path: str) -> str | None:
        """The file at ``path`` as it is now, if it is a text file inside the workspace that
        the read tool returned in this session (``file_state``: a read the gate refused never
        counts), keys redacted as in every tool result; ``None`` otherwise (the last read
        result is used)."""
        if self.workspace is None or self.file_state is None or path.endswith(".ipynb"):
            return None
        target = Path(path) if Path(path).is_absolute() else self.workspace / path
        try:
            resolved = target.resolve()
            resolved.relative_to(self.workspace.resolve())
            if not resolved.is_file() or resolved.stat().st_size > _REATTACH_MAX_BYTES:
                return None  # a huge file: what the model last read of it stands in
            if self.file_state.seen_mtime(resolved) is None:
                return None  # never returned by the read tool (refused, or failed)
            data = resolved.read_bytes()
        except (OSError, ValueError):
            return None
        if b"\0" in data:
            return None
        from .control.secrets import redact

        return redact(data.decode("utf-8", errors="replace"))

    async def compact_now(
        self, provider: AnyProvider, messages: list[Message], *, focus: str | None = None
    ) -> bool:
        """``/compact [focus]``: the usual compaction, or — when the history is still too
        short for it to touch anything — a summary of the whole conversation. False only when
        there is nothing but the system prompt (and summaries). Errors propagate (the person
        asked, and is told why it failed); they count toward the circuit breaker."""
        try:
            if await self.compact(provider, messages, focus=focus):
                return True
            return await self.compact(provider, messages, keep=0, focus=focus)
        except ContextOverflowError:
            raise
        except Exception as exc:
            self._failed(exc)
            raise

    async def recover(
        self, provider: AnyProvider, messages: list[Message], error: Exception | None = None
    ) -> str | None:
        """Make ``messages`` fit after the server refused them as longer than its context
        window (:class:`~clawnb.errors.ContextOverflowError`), keeping the current request —
        the last user message and everything after it — word for word.

        When the error names the window, ``max_tokens`` drops to three quarters of it, so
        later turns compact in time. Everything before the current request is summarised;
        if the summary request does not fit either, or fails, or the circuit breaker is open,
        those messages are dropped (a note says so in their place). Returns what was done, in
        words, or ``None`` when nothing before the current request is left to cut (the
        request alone is too long).
        """
        window = getattr(error, "context_window", None) or getattr(provider, "context_window", None)
        self.check_fits(messages, window)  # the agent's own prompt alone: nothing can help
        budget = self.fit_window(window, messages)
        notes = [budget] if budget else []
        keep = _current_request(messages)
        try:
            if self._breaker.open:
                raise _BreakerOpen
            changed = await self.compact(provider, messages, keep=keep, trigger="emergency")
            what = "summarised the earlier conversation"
        except (ContextOverflowError, _BreakerOpen):
            dropped = self._drop(messages, keep)
            changed = dropped > 0
            what = f"dropped the {dropped} oldest messages (too long even to summarise)"
        except Exception as exc:  # noqa: BLE001 - the request must still go out
            self._failed(exc)
            dropped = self._drop(messages, keep)
            changed = dropped > 0
            what = f"dropped the {dropped} oldest messages (the summary failed)"
        if not changed:
            return None
        return "; ".join([what, *notes])

    def _drop(self, messages: list[Message], keep: int, trigger: str = "emergency") -> int:
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
        self.context_tokens = self.estimate(messages)
        self._report(Compaction(trigger, "dropped", count))
        return count

    def _drop_oldest(self, messages: list[Message], trigger: str) -> int:
        """The circuit breaker's fallback: drop whole turns, oldest first, until the history is
        under the threshold (or only the current request is left). A cut falls only before a
        person's message, so every tool call keeps its results. An earlier summary is kept
        (with a line saying how much went since). Returns how many messages went."""
        start = _prompt_end(messages)
        kept_summary = (
            messages[start] if start < len(messages) and _is_summary(messages[start]) else None
        )
        first = start + 1 if kept_summary is not None else start
        cuts = [i for i in range(first + 1, len(messages)) if isinstance(messages[i], Message.User)]
        if not cuts:
            return 0
        cut = cuts[-1]
        for candidate in cuts:
            if self.estimate(messages[:first] + messages[candidate:]) < self.threshold:
                cut = candidate
                break
        count = cut - first
        line = f"({count} earlier messages were dropped to make room; no summary of them was made.)"
        if isinstance(kept_summary, System):
            note = Message.System(f"{kept_summary.content}\n\n{line}")
        else:
            note = Message.System(SUMMARY_PREFIX + line)
        messages[:] = [*messages[:start], note, *messages[cut:]]
        self.compactions += 1
        self.context_tokens = self.estimate(messages)
        self._report(Compaction(trigger, "dropped", count))
        return count

    def __repr__(self) -> str:
        return (
            f"ContextManager(context_tokens={self.context_tokens}, max_tokens={self.max_tokens}, "
            f"preserve_recent={self.preserve_recent}, compactions={self.compactions})"
        )


class _BreakerOpen(Exception):
    """Internal: the emergency path skips the summary while the breaker is open."""


def _prompt_end(messages: list[Message]) -> int:
    """Index after the leading System messages that are the prompt (not summaries)."""
    i = 0
    while (
        i < len(messages)
        and isinstance(messages[i], Message.System)
        and not _is_summary(messages[i])
    ):
        i += 1
    return i


def _reads(messages: list[Message], results: dict[str, str]) -> list[tuple[str, str | None]]:
    """``(path, what the read returned)`` for each read tool call in ``messages``, in order."""
    found: list[tuple[str, str | None]] = []
    for msg in messages:
        if isinstance(msg, Message.Assistant):
            for call in msg.turn.tool_calls:
                path = call.arguments.get("path") if isinstance(call.arguments, dict) else None
                if call.name in _READ_TOOLS and isinstance(path, str) and path:
                    found.append((path, results.get(call.id)))
    return found


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
        if "<transcript>" in text:  # clawnb's two-phase request: summarise the transcript only
            body = text.split("<transcript>", 1)[1].rsplit("</transcript>", 1)[0]
        else:
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
