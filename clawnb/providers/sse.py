"""Server-sent events: from bytes on the wire to one assembled :class:`AssistantTurn` (ch5a).

The book's pieces are the production pieces:

* :func:`parse_sse_line` turns one ``data: {...}`` line into :class:`StreamEvent` s (``None`` for
  anything else), exactly as chapter 5a specifies; the course suite pins it down.
* :class:`StreamAccumulator` folds events into a turn. The HTTP provider builds every streamed
  turn with it, so the class a learner writes is the class that runs.

In front of the accumulator the provider puts tolerance the book leaves out, in two steps:

* :class:`SSEDecoder` — bytes → ``data`` payloads, one line at a time, never buffering past a
  line (comment keep-alives, ``data:`` without a space, CRLF, a BOM).
* :class:`ChunkNormaliser` — payloads → clean :class:`StreamEvent` s. Real OpenAI-compatible
  servers differ in small ways: a usage-only final chunk, the tool-call id and name repeated on
  every chunk (llama.cpp), a name-only first chunk (vLLM), no ``index`` (Mistral), a first
  index of 1 (Anthropic compatibility), whole arguments in one chunk (Ollama), ``[DONE]``
  missing, error objects inside a 200 stream, ``reasoning`` fields. The normaliser turns every
  one of them into the event stream the book's accumulator expects (contiguous call indexes,
  one start per call, arguments that add up to JSON). Garbage never raises out of it; only an
  error object the server sent does (:class:`~clawnb.errors.StreamError`).

Production: ``SSEDecoder → ChunkNormaliser → StreamAccumulator``, with every event also handed
to the caller's ``on_event``.

Both tolerant steps are **bounded**: a line longer than the decoder's ``max_line`` (default
1 MiB) and a reply whose text, reasoning and tool-call arguments add up to more than the
normaliser's ``max_reply`` (default 2 MiB) raise :class:`~clawnb.errors.ReplyTooLarge` the
moment they pass it — a server that streams forever, or sends one 40 MB line, is stopped with
a clear line instead of filling memory and the session file.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import ReplyTooLarge, StreamError
from ..events import AnyStreamEvent, StreamEvent
from ..types import AssistantTurn, StopReason, TokenUsage, ToolCall, compact_json

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_REPLY_BYTES",
    "ChunkNormaliser",
    "SSEDecoder",
    "StreamAccumulator",
    "StreamEvent",
    "parse_arguments",
    "parse_sse_line",
    "usage_from",
]


DEFAULT_MAX_REPLY_BYTES = 2 * 1024 * 1024
"""One model reply's cap (text + reasoning + tool-call arguments, UTF-8): far above a whole
file written in one ``write`` at the default output cap, far below what fills a session file."""
DEFAULT_MAX_LINE_BYTES = 1024 * 1024
"""One SSE line's cap: a chunk is a few hundred bytes; a whole reply fits in one line only from
a server that ignored ``stream`` — which answers JSON, not SSE."""

# The config keys that raise the caps, named in the error (clawnb.config, [limits]).
MAX_REPLY_SETTING = "[limits] max_reply_bytes"
MAX_LINE_SETTING = "[limits] max_sse_line_bytes"


# ---------------------------------------------------------------------------------------------
# The book's parser and accumulator (ch5a)
# ---------------------------------------------------------------------------------------------


def _is_opt_str(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _valid_tool_delta(tc: Any) -> bool:
    if not isinstance(tc, dict):
        return False
    index = tc.get("index")
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        return False
    fn = tc.get("function")
    if fn is not None and not (
        isinstance(fn, dict) and _is_opt_str(fn.get("name")) and _is_opt_str(fn.get("arguments"))
    ):
        return False
    return _is_opt_str(tc.get("id"))


def _valid_choice(choice: Any) -> bool:
    """The book's chunk schema: ``delta`` is required; typed fields must have their types."""
    if not isinstance(choice, dict) or not _is_opt_str(choice.get("finish_reason")):
        return False
    delta = choice.get("delta")
    if not isinstance(delta, dict) or not _is_opt_str(delta.get("content")):
        return False
    calls = delta.get("tool_calls")
    if calls is None:
        return True
    return isinstance(calls, list) and all(_valid_tool_delta(tc) for tc in calls)


def parse_sse_line(line: str) -> list[AnyStreamEvent] | None:
    """Parse one SSE line the way the book does (ch5a).

    Only lines starting with ``"data: "`` (with the space) count; ``data: [DONE]`` gives
    ``[Done]``. A JSON chunk gives its events in order — a ``TextDelta`` for non-empty
    content, then per tool-call entry a ``ToolCallStart`` when it carries an ``id`` and a
    ``ToolCallDelta`` for non-empty arguments. Anything else (other fields, comments, invalid
    JSON, a chunk that does not match the schema, no events) gives ``None``.
    """
    if not line.startswith("data: "):
        return None
    data = line[6:]
    if data == "[DONE]":
        return [StreamEvent.Done()]
    try:
        chunk = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(chunk, dict):
        return None
    choices = chunk.get("choices")
    if not isinstance(choices, list) or not all(_valid_choice(c) for c in choices):
        return None
    if not choices:
        return None
    delta = choices[0]["delta"]
    events: list[AnyStreamEvent] = []
    content = delta.get("content")
    if content:
        events.append(StreamEvent.TextDelta(content))
    for tc in delta.get("tool_calls") or ():
        fn = tc.get("function") or {}
        if tc.get("id") is not None:
            events.append(StreamEvent.ToolCallStart(tc["index"], tc["id"], fn.get("name") or ""))
        arguments = fn.get("arguments")
        if arguments:
            events.append(StreamEvent.ToolCallDelta(tc["index"], arguments))
    return events or None


class _PartialCall:
    __slots__ = ("id", "name", "pieces")

    def __init__(self) -> None:
        self.id = ""
        self.name = ""
        # joined once in finish(): ``+=`` on an attribute copies the whole string each time,
        # quadratic in a long streamed write (measured: 14 s for 10 MB in 4 KiB deltas)
        self.pieces: list[str] = []


class StreamAccumulator:
    """Folds :class:`StreamEvent` s into one :class:`AssistantTurn` (the book's ch5a).

    ``ToolCallStart`` pads the call list up to its ``index`` and sets id and name; a
    ``ToolCallDelta`` for an index not seen yet is ignored. :meth:`finish` drops calls without
    a name and parses arguments as JSON — text that is not JSON (``""`` included) becomes
    ``None``, and non-empty invalid text is also kept in ``ToolCall.invalid_arguments`` so the
    loop can tell the model instead of running the tool with nothing. Reasoning and usage
    events (extensions beyond the book) are kept too.
    """

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[_PartialCall] = []
        self._usage: TokenUsage | None = None

    def feed(self, event: AnyStreamEvent) -> None:
        match event:
            case StreamEvent.TextDelta(text=text):
                self._text.append(text)
            case StreamEvent.ToolCallStart(index=index, id=call_id, name=name):
                while len(self._calls) <= index:
                    self._calls.append(_PartialCall())
                self._calls[index].id = call_id
                self._calls[index].name = name
            case StreamEvent.ToolCallDelta(index=index, arguments=arguments):
                if 0 <= index < len(self._calls):
                    self._calls[index].pieces.append(arguments)
            case StreamEvent.ReasoningDelta(text=text):
                self._reasoning.append(text)
            case StreamEvent.Usage(usage=usage):
                self._usage = usage
            case _:
                pass

    def finish(self) -> AssistantTurn:
        calls = []
        for partial in self._calls:
            if not partial.name:
                continue
            raw = "".join(partial.pieces)
            try:
                arguments = json.loads(raw)
                invalid = None
            except (ValueError, RecursionError):
                arguments = None
                invalid = raw if raw.strip() else None
            calls.append(ToolCall(partial.id, partial.name, arguments, invalid))
        text = "".join(self._text)
        reasoning = "".join(self._reasoning)
        return AssistantTurn(
            text=text or None,
            tool_calls=calls,
            stop_reason=StopReason.TOOL_USE if calls else StopReason.STOP,
            usage=self._usage,
            reasoning=reasoning or None,
        )


# ---------------------------------------------------------------------------------------------
# The tolerance in front of it: bytes → payloads → clean events
# ---------------------------------------------------------------------------------------------


class SSEDecoder:
    """Incremental SSE line decoder: feed it byte chunks, get ``data`` payloads back.

    Each ``data:`` line is handed out as soon as its line ends — never held until the blank
    line that ends the event — so the first token reaches the screen without delay. Accepts
    ``data:`` with or without the space, ``\\n``, ``\\r\\n`` and ``\\r`` line ends (also split
    across chunks), a UTF-8 BOM, and ignores comments (``: keep-alive``) and the ``event``,
    ``id`` and ``retry`` fields. :meth:`flush` processes a last line that had no newline.
    """

    __slots__ = ("_buf", "_started", "max_line")

    def __init__(self, max_line: int | None = DEFAULT_MAX_LINE_BYTES) -> None:
        self._buf = b""
        self._started = False
        # a line past this many bytes (complete or still arriving) raises ReplyTooLarge: the
        # buffer never holds more than one cap and one chunk (None: no cap)
        self.max_line = max_line

    def feed(self, chunk: bytes) -> list[bytes]:
        data = self._buf + chunk if self._buf else chunk
        if not self._started:
            if len(data) < 3 and b"\n" not in data and b"\r" not in data:
                self._buf = data  # too short to tell whether a BOM starts the body
                return []
            self._started = True
            if data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]
        if b"\r" in data:
            trailing_cr = data.endswith(b"\r")
            if trailing_cr:  # maybe the first half of a CRLF split across chunks
                data = data[:-1]
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            lines = data.split(b"\n")
            last = lines.pop()
            self._buf = last + b"\r" if trailing_cr else last
        else:
            lines = data.split(b"\n")
            self._buf = lines.pop()
        if self.max_line is not None:
            self._check_lengths(lines)
        out = []
        for line in lines:
            if line.startswith(b"data:"):
                out.append(line[6:] if line[5:6] == b" " else line[5:])
        return out

    def _check_lengths(self, lines: list[bytes]) -> None:
        limit = self.max_line
        assert limit is not None
        if len(self._buf) > limit or any(len(line) > limit for line in lines):
            self._buf = b""  # nothing of it is kept: the stream is over
            raise ReplyTooLarge("one line of the server's stream", limit, MAX_LINE_SETTING)

    def flush(self) -> list[bytes]:
        """End of body: a final line without a newline still counts."""
        rest, self._buf = self._buf, b""
        if rest.endswith(b"\r"):
            rest = rest[:-1]
        if b"\r" in rest:
            rest = rest.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        out = []
        for line in rest.split(b"\n"):
            if line.startswith(b"data:"):
                out.append(line[6:] if line[5:6] == b" " else line[5:])
        return out


def parse_arguments(raw: str) -> tuple[Any, str | None]:
    """Tool-call argument text of a complete reply → ``(arguments, invalid_text)``.

    Empty text means "no arguments" (``{}``); text that is not JSON gives ``(None, raw)`` so
    the model can be told. A JSON string that itself holds a JSON object (some models encode
    twice) is unwrapped.
    """
    if not raw or raw.isspace():
        return {}, None
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None, raw
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            inner = json.loads(value)
        except (ValueError, RecursionError):
            return value, None
        if isinstance(inner, dict):
            return inner, None
    return value, None


class _Slot:
    """One tool call as the server sent it, and how much of it has been handed on."""

    __slots__ = ("position", "id", "synthetic_id", "name", "args", "sent", "streaming", "held")

    def __init__(self, position: int, call_id: str | None) -> None:
        self.position = position
        self.synthetic_id = call_id is None
        self.id = call_id if call_id is not None else f"call_{position}"
        self.name = ""
        self.args: list[str] = []
        self.sent = 0  # how many pieces of ``args`` went out as ToolCallDelta
        self.streaming = False  # arguments are passed on as they arrive
        self.held = False  # arguments encoded twice: handed on, decoded once, at close

    @property
    def started(self) -> bool:
        return bool(self.name)


def _error_text(error: Any) -> tuple[str, Any]:
    if isinstance(error, dict):
        message = error.get("message") or error.get("error") or error.get("detail")
        code = error.get("code", error.get("type"))
        if isinstance(message, dict):
            return _error_text(message)
        return (str(message) if message else compact_json(error)), code
    return str(error), None


def usage_from(data: Any) -> TokenUsage | None:
    """OpenAI ``usage`` (``prompt_tokens``/``completion_tokens``; also the ``input_tokens``/
    ``output_tokens`` spelling) → :class:`TokenUsage`; ``None`` when absent or malformed."""
    if not isinstance(data, dict):
        return None
    prompt = data.get("prompt_tokens", data.get("input_tokens"))
    completion = data.get("completion_tokens", data.get("output_tokens"))
    try:
        return TokenUsage(int(prompt or 0), int(completion or 0))
    except (TypeError, ValueError, OverflowError):
        return None


def _continues(slot: _Slot, index: int | None, call_id: str | None, name: str | None) -> bool:
    """Does a tool-call entry continue ``slot`` (found by its index, or the latest call)?"""
    if call_id is not None and not slot.synthetic_id and call_id != slot.id:
        # A new id with a name is a new call (Ollama sends parallel calls all as index 0);
        # without a name it is the same call under a regenerated id (some proxies).
        return name is None
    if index is not None:
        return True
    # Neither an index nor a known id (Mistral, Gemini): only a nameless entry, or one that
    # repeats the name before any arguments, continues the latest call.
    return name is None or not slot.name or (name == slot.name and not slot.args)


def _decoded_once(raw: str) -> str:
    """Arguments some models encode twice (a JSON string holding a JSON object) → the object
    as JSON text; anything else unchanged."""
    value, invalid = parse_arguments(raw)
    return compact_json(value) if invalid is None and isinstance(value, dict) else raw


class ChunkNormaliser:
    """Any OpenAI-compatible server's chunks in, clean :class:`StreamEvent` s out.

    Production streams as the book does — every event goes to :class:`StreamAccumulator`,
    which builds the turn — and this class is the tolerance in front of it. :meth:`feed`
    takes one ``data`` payload (bytes or str) and returns the events it produced; the events
    obey the book's contract whatever the server did:

    * tool calls get contiguous indexes 0, 1, … in the order they appeared. Entries are
      matched to calls by id first, then by ``index``, then — for servers that send neither on
      continuation chunks — to the latest call; repeated ids and names do not start new calls.
    * ``ToolCallStart`` comes once per call, as soon as its name is known (with the arguments
      received so far in one ``ToolCallDelta`` right after it); nameless calls never start.
    * the arguments a call's deltas add up to are JSON text: a call that sent none gets ``{}``
      at the end, and arguments encoded twice are handed on decoded once, at the end. Text
      that is simply not JSON passes through, so the model can be told.
    * usage (also from a usage-only final chunk with empty ``choices``) comes once, just
      before ``Done``; ``Done`` comes exactly once, at ``[DONE]`` or at :meth:`close`.

    Garbage never raises; an ``error`` object in the stream (or ``finish_reason: "error"``)
    raises :class:`~clawnb.errors.StreamError` with the server's message. Text, reasoning and
    tool-call arguments are counted as they arrive (held-back arguments too): past
    ``max_reply`` bytes :class:`~clawnb.errors.ReplyTooLarge` is raised.
    """

    def __init__(self, max_reply: int | None = DEFAULT_MAX_REPLY_BYTES) -> None:
        self._slots: list[_Slot] = []
        self._by_index: dict[int, _Slot] = {}
        self._by_id: dict[str, _Slot] = {}
        self._usage: TokenUsage | None = None
        self._broken: bytes | None = None
        self.done = False
        self.finish_reason: str | None = None  # the last one the server sent
        self.max_reply = max_reply
        self.reply_bytes = 0  # text + reasoning + arguments received so far (UTF-8)

    def _count(self, text: str) -> None:
        """Add one piece of the reply to its size; past the cap the reply is refused."""
        if self.max_reply is None:
            return
        self.reply_bytes += len(text.encode("utf-8", "surrogatepass"))
        if self.reply_bytes > self.max_reply:
            raise ReplyTooLarge("the model's reply", self.max_reply, MAX_REPLY_SETTING)

    def feed(self, payload: bytes | str) -> list[AnyStreamEvent]:
        """One ``data`` payload → events. Never raises for malformed input."""
        if isinstance(payload, str):
            payload = payload.encode("utf-8", "surrogatepass")
        try:
            chunk = json.loads(payload)
        except (ValueError, RecursionError):
            if payload.strip() == b"[DONE]":
                return self.close()
            return self._recover(payload)
        self._broken = None
        return self.feed_chunk(chunk) if isinstance(chunk, dict) else []

    def _recover(self, payload: bytes) -> list[AnyStreamEvent]:
        """A JSON chunk split over several ``data:`` lines (legal SSE, rare in practice)."""
        if self._broken is not None:
            joined = self._broken + b"\n" + payload
            try:
                chunk = json.loads(joined)
            except (ValueError, RecursionError):
                self._broken = joined if len(joined) < 1_000_000 else None
                return []
            self._broken = None
            return self.feed_chunk(chunk) if isinstance(chunk, dict) else []
        self._broken = payload if len(payload) < 1_000_000 else None
        return []

    def feed_chunk(self, chunk: dict[str, Any]) -> list[AnyStreamEvent]:
        """One decoded chunk object → events."""
        error = chunk.get("error")
        if error or chunk.get("object") == "error":
            message, code = _error_text(error or chunk)
            raise StreamError(message, code=code)
        events: list[AnyStreamEvent] = []
        usage = chunk.get("usage")
        if usage is None:
            extra = chunk.get("x_groq")  # Groq reports usage here on its last chunk
            usage = extra.get("usage") if isinstance(extra, dict) else None
        if usage is not None:
            self._usage = usage_from(usage) or self._usage
        choices = chunk.get("choices")
        if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
            return events
        choice = choices[0]
        delta = choice.get("delta")
        if delta is None:
            delta = choice.get("message")
        if isinstance(delta, dict):
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if reasoning and isinstance(reasoning, str):
                self._count(reasoning)
                events.append(StreamEvent.ReasoningDelta(reasoning))
            content = delta.get("content")
            if content and isinstance(content, str):
                self._count(content)
                events.append(StreamEvent.TextDelta(content))
            elif content:
                self._content_parts(content, events)
            calls = delta.get("tool_calls")
            if calls and isinstance(calls, list):
                for tc in calls:
                    if isinstance(tc, dict):
                        self._tool_delta(tc, events)
        if choice.get("finish_reason") == "error":
            raise StreamError("the server ended the stream with finish_reason 'error'")
        if isinstance(choice.get("finish_reason"), str) and choice["finish_reason"]:
            self.finish_reason = choice["finish_reason"]
        return events

    def _content_parts(self, content: Any, events: list[AnyStreamEvent]) -> None:
        """Content sent as a list of typed parts (Mistral's thinking models)."""
        if not isinstance(content, list):
            return
        for part in content:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str) and part["text"]:
                self._count(part["text"])
                events.append(StreamEvent.TextDelta(part["text"]))
            elif kind == "thinking":
                inner = part.get("thinking")
                pieces = inner if isinstance(inner, list) else [{"text": inner}]
                for piece in pieces:
                    text = piece.get("text") if isinstance(piece, dict) else None
                    if isinstance(text, str) and text:
                        self._count(text)
                        events.append(StreamEvent.ReasoningDelta(text))

    def _tool_delta(self, tc: dict[str, Any], events: list[AnyStreamEvent]) -> None:
        fn = tc.get("function")
        if not isinstance(fn, dict):
            fn = {}
        index = tc.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            index = None
        call_id = tc.get("id")
        if not call_id or not isinstance(call_id, str):
            call_id = None
        name = fn.get("name")
        if not name or not isinstance(name, str):
            name = None
        args = fn.get("arguments")
        if args is not None and not isinstance(args, str):
            args = compact_json(args)

        slot = self._find_slot(index, call_id, name)
        if call_id is not None:
            if slot.synthetic_id and not slot.started:
                slot.id, slot.synthetic_id = call_id, False
            self._by_id[call_id] = slot
        if name is not None and not slot.started:
            self._count(name)  # endless new calls add up too
            slot.name = name
            events.append(StreamEvent.ToolCallStart(slot.position, slot.id, slot.name))
        if args:
            self._count(args)
            slot.args.append(args)
        self._hand_on_arguments(slot, events)

    def _find_slot(self, index: int | None, call_id: str | None, name: str | None) -> _Slot:
        """The call a tool-call entry belongs to; a new one when it continues none."""
        slot = self._by_id.get(call_id) if call_id is not None else None
        reused_id = False
        if slot is not None and index is not None:
            known = self._by_index.get(index)
            if known is not None and known is not slot:
                slot = known  # an id repeated across indexes: the index says which call
            elif known is None and name is not None and slot.args:
                # a new index, with a name, after the id's call already got arguments: a
                # second call whose server reused the id; it gets an id of its own
                slot, reused_id = None, True
        if slot is None:
            if index is not None:
                candidate = self._by_index.get(index)
            else:
                candidate = self._slots[-1] if self._slots else None
            if candidate is not None and _continues(candidate, index, call_id, name):
                slot = candidate
        if slot is None:
            own_id = f"{call_id}_{len(self._slots)}" if reused_id else call_id
            slot = _Slot(len(self._slots), own_id)
            self._slots.append(slot)
            if index is not None:
                self._by_index[index] = slot
        return slot

    def _hand_on_arguments(self, slot: _Slot, events: list[AnyStreamEvent]) -> None:
        """Pass on the argument text not sent yet — unless it may still need rewriting at
        :meth:`close`: blanks so far (maybe no arguments at all), or a leading quote (encoded
        twice)."""
        if not slot.started or slot.held:
            return
        if not slot.streaming:
            head = "".join(slot.args).lstrip()
            if not head:
                return
            if head.startswith('"'):
                slot.held = True
                return
            slot.streaming = True
        if slot.sent < len(slot.args):
            events.append(StreamEvent.ToolCallDelta(slot.position, "".join(slot.args[slot.sent :])))
            slot.sent = len(slot.args)

    def close(self) -> list[AnyStreamEvent]:
        """``[DONE]`` or end of body: held-back arguments, usage (if any), then ``Done`` —
        once."""
        if self.done:
            return []
        self.done = True
        events: list[AnyStreamEvent] = []
        for slot in self._slots:
            if slot.held:
                events.append(
                    StreamEvent.ToolCallDelta(slot.position, _decoded_once("".join(slot.args)))
                )
            elif slot.started and not slot.streaming:
                events.append(StreamEvent.ToolCallDelta(slot.position, "{}"))  # no arguments
        if self._usage is not None:
            events.append(StreamEvent.Usage(self._usage))
        events.append(StreamEvent.Done())
        return events
