"""OpenAI-compatible chat completions over HTTP (book ch5b's ``OpenRouterProvider``).

:class:`OpenAICompatProvider` talks to anything that speaks ``POST {base}/chat/completions``:
OpenRouter, OpenAI, Ollama, vLLM, llama.cpp, LiteLLM, Groq, Mistral, DeepSeek, and the
Anthropic/Gemini compatibility endpoints. :class:`OpenRouterProvider` is the book's flavour of
it, with OpenRouter's URL and the ``openrouter/free`` model as defaults.

Both answer ``chat`` (one JSON response) and ``stream_chat`` (server-sent events; every
:class:`~clawnb.events.StreamEvent` reaches ``on_event`` as soon as its line arrives, and one
assembled :class:`~clawnb.types.AssistantTurn` is returned). Streams go through the tolerant
:class:`~clawnb.providers.sse.SSEDecoder` / :class:`~clawnb.providers.sse.ChunkNormaliser` into the
book's :class:`~clawnb.providers.sse.StreamAccumulator`.

Failures map onto :mod:`clawnb.errors` (``ProviderHTTPError`` and its subclasses,
``ProviderConnectionError``, ``ProviderTimeout``, ``StreamError``, ``ReplyTooLarge``).
Nothing the server sends is read without a bound: one reply (text, reasoning and tool-call
arguments) stops at ``max_reply_bytes`` (2 MiB), one SSE line at ``max_line_bytes`` (1 MiB),
a JSON body at twice the reply cap plus 64 KiB (JSON escaping), an error body is cut after
64 KiB — past a cap the connection is closed and :class:`~clawnb.errors.ReplyTooLarge` says
so; nothing is retried and the turn never reaches the history. Rate limits (429, honouring
``Retry-After``), 5xx answers and connection failures are retried with exponential backoff —
but only before anything reached the caller: once a delta has been shown, a broken stream is
reported, never silently restarted. Cancelling the task (a kernel interrupt) closes the HTTP
stream at once.

The API key is read from ``CLAWNB_API_KEY``, then ``OPENROUTER_API_KEY`` (only ever sent to
openrouter.ai), then ``OPENAI_API_KEY`` (only ever sent to other hosts). It never appears in a
repr, a log line, an exception message or a recording.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import hashlib
import json
import logging
import random
import re
import ssl
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

import httpx

from ..control.secrets import Secret, env_key, key_variables, redact
from ..errors import (
    AuthenticationError,
    BadRequestError,
    ContextOverflowError,
    ProviderConfigError,
    ProviderConnectionError,
    ProviderError,
    ProviderHTTPError,
    ProviderTimeout,
    RateLimitError,
    ReplyTooLarge,
    ServerError,
    StreamError,
)
from ..events import OnStreamEvent, StreamEventCallback, emit, emit_turn
from ..prompt import system_content
from ..types import (
    AssistantTurn,
    Message,
    StopReason,
    ToolCall,
    ToolDefinition,
    compact_json,
)
from .profiles import (
    PROFILES,
    SERVER_KINDS,
    ServerProfile,
    detect,
    is_local_url,
    models_context_window,
    props_context_window,
)
from .sse import (
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_REPLY_BYTES,
    MAX_REPLY_SETTING,
    ChunkNormaliser,
    SSEDecoder,
    StreamAccumulator,
    parse_arguments,
    usage_from,
)

if TYPE_CHECKING:
    from typing import Self

__all__ = [
    "OPENROUTER_BASE_URL",
    "OpenAICompatProvider",
    "OpenRouterProvider",
    "convert_messages",
    "context_window_of",
    "convert_tools",
    "is_context_overflow",
    "no_key_message",
    "parse_completion",
    "shorten_tool_ids",
    "unreachable_message",
    "wire_messages",
]

log = logging.getLogger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
OPENROUTER_DEFAULT_MODEL = "openrouter/free"

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504, 529})
ERROR_BODY_BYTES = 64 * 1024  # of an error answer, enough for any server's message


# ---------------------------------------------------------------------------------------------
# Wire format (book §3.6)
# ---------------------------------------------------------------------------------------------


def convert_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Our messages → OpenAI chat messages, the book's way.

    ``System``/``User`` → ``{role, content}``; ``Assistant`` → ``{role: "assistant"}`` with
    ``content`` only when the turn has text and ``tool_calls`` only when it has calls (never an
    empty list), each call's arguments serialised as a compact JSON *string*; ``ToolResult`` →
    ``{role: "tool", content, tool_call_id}``. Keys whose value would be ``None`` are left out
    (an assistant turn with neither text nor calls sends ``content: ""``, which every server
    accepts). Reasoning is not sent back (some servers reject it).
    """
    out: list[dict[str, Any]] = []
    for msg in messages:
        match msg:
            case Message.System(content=content):
                # system_content drops the static/dynamic boundary marker (clawnb.prompt)
                out.append({"role": "system", "content": system_content(content)})
            case Message.User(content=content):
                out.append({"role": "user", "content": content})
            case Message.Assistant(turn=turn):
                entry: dict[str, Any] = {"role": "assistant"}
                if turn.text is not None:
                    entry["content"] = turn.text
                if turn.tool_calls:
                    entry["tool_calls"] = [_wire_call(c) for c in turn.tool_calls]
                elif turn.text is None:
                    entry["content"] = ""  # an assistant message needs content or calls
                out.append(entry)
            case Message.ToolResult(id=call_id, content=content):
                out.append({"role": "tool", "content": content, "tool_call_id": call_id})
            case _:
                raise TypeError(f"not a Message: {msg!r}")
    return out


def wire_messages(messages: list[Message], *, cache: bool = False) -> list[dict[str, Any]]:
    """:func:`convert_messages`, in the shape the widest range of servers accepts.

    An assistant message with tool calls and no text gets ``"content": ""``: llama-cpp-python's
    chat templates read ``message.content`` (a missing key is an HTTP 500, an empty 200 when
    streaming) and Ollama refuses ``null`` ("invalid message content type: <nil>"), while an
    empty string works with those, llama.cpp ``--jinja``, vLLM and the hosted APIs. The book's
    ``convert_messages`` keeps leaving the key out, as the course checks.

    The roles always alternate, as strict chat templates demand (Mistral-Nemo's, served by
    llama-server, answers anything else with a 400 on every later request). The stored history
    is not changed — every front end's history goes through here:

    * every system message (the prompt, a compaction summary, a recovery note) is folded into
      one, first (``cache``: its static prefix marked cacheable, see :mod:`clawnb.prompt`);
    * neighbouring user messages (a turn that failed or was interrupted before any answer,
      then the next message) become one, their texts joined by a blank line;
    * neighbouring assistant texts become one;
    * where a person's message follows a tool round that ended without an answer (Ctrl-C, a
      turn limit), :data:`NO_ANSWER` stands for the answer that never came, and a conversation
      whose first turn is the assistant's (the oldest turns were dropped) starts with
      :data:`CONTINUED`.

    Tool results and assistant messages with tool calls are outside the alternation, as those
    templates count them.
    """
    systems: list[str | list[dict[str, Any]]] = []
    body: list[dict[str, Any]] = []
    last_turn = ""  # the role of the last user or assistant-text message sent
    for msg, entry in zip(messages, convert_messages(messages), strict=True):
        role = entry["role"]
        if role == "system":
            assert isinstance(msg, Message.System)
            systems.append(system_content(msg.content, cache=cache and not systems))
            continue
        if role == "assistant" and entry.get("content") is None:
            entry["content"] = ""
        if role == "tool" or entry.get("tool_calls"):
            body.append(entry)
            continue
        previous = body[-1] if body else None
        if role == last_turn and previous is not None and previous["role"] == role:
            if not previous.get("tool_calls"):
                previous["content"] = _joined(previous["content"], entry["content"])
                continue
        if role == last_turn == "user":
            body.append({"role": "assistant", "content": NO_ANSWER})
        elif role == "assistant" and not last_turn:
            body.insert(0, {"role": "user", "content": CONTINUED})
        elif role == last_turn == "assistant":
            body.append({"role": "user", "content": CONTINUED})
        body.append(entry)
        last_turn = role
    if not systems:
        return body
    content = systems[0]
    for more in systems[1:]:
        content = _joined(content, more)
    return [{"role": "system", "content": content}, *body]


NO_ANSWER = "(no answer: this turn ended before the model replied)"
"""The assistant message :func:`wire_messages` puts between a tool round that ended without an
answer and the person's next message (the stored history is left as it is)."""
CONTINUED = "(continuing the conversation)"
"""The user message :func:`wire_messages` puts before a conversation whose oldest turns were
dropped, so that it starts with the person's turn."""


def _joined(first: Any, second: Any) -> Any:
    """Two messages' contents as one: text joined by a blank line; content parts (a cached
    system prompt) keep their parts and gain the other's text as one more."""
    if isinstance(first, str) and isinstance(second, str):
        return f"{first}\n\n{second}" if first and second else first or second
    parts = first if isinstance(first, list) else [{"type": "text", "text": first}]
    more = second if isinstance(second, list) else [{"type": "text", "text": second}]
    return [*parts, *more]


def _wire_call(call: ToolCall) -> dict[str, Any]:
    # Arguments the model sent as broken JSON go back as "{}": strict servers reject the
    # conversation otherwise, and the tool result already told the model what went wrong.
    arguments = "{}" if call.invalid_arguments is not None else compact_json(call.arguments)
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    }


# Mistral's chat templates (Mistral-Nemo-Instruct-2407's, served by llama-server) raise
# "Tool call IDs should be alphanumeric strings with length 9!" for any other id, in an
# assistant message's tool_calls and in a tool message's tool_call_id alike.
TOOL_ID_LENGTH = 9
_SHORT_ID = re.compile(rf"[A-Za-z0-9]{{{TOOL_ID_LENGTH}}}")
_ID_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_TOOL_IDS_REFUSED = re.compile(r"tool call ids? (should|must) be alphanumeric", re.IGNORECASE)
_NINE_CHAR_MODELS = re.compile(
    r"mistral|mixtral|ministral|devstral|codestral|magistral|pixtral", re.IGNORECASE
)


def needs_short_tool_ids(model: str) -> bool:
    """Whether ``model``'s name is one of Mistral's families, whose templates accept only
    9-character alphanumeric tool-call ids."""
    return bool(_NINE_CHAR_MODELS.search(model))


def _nine(text: str) -> str:
    number = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    out = []
    for _ in range(TOOL_ID_LENGTH):
        number, digit = divmod(number, len(_ID_ALPHABET))
        out.append(_ID_ALPHABET[digit])
    return "".join(out)


def shorten_tool_ids(wire: list[dict[str, Any]]) -> dict[str, str]:
    """Rewrite, in place, every tool-call id of wire messages (``tool_calls[].id`` and
    ``tool_call_id``) as 9 alphanumerics, the only ids Mistral's templates accept; returns the
    map (wire id → stored id).

    An id that already is 9 alphanumerics stays; any other becomes the first 9 base-62 digits
    of its SHA-256 — the same in every request, so the history keeps its own ids and a call
    and its result always carry the same wire id. Two ids never share one in a request (a
    clash takes the next hash)."""
    ids: list[str] = []
    for entry in wire:
        ids.extend(str(c.get("id", "")) for c in entry.get("tool_calls") or ())
        if entry.get("role") == "tool":
            ids.append(str(entry.get("tool_call_id", "")))
    taken = {i for i in ids if _SHORT_ID.fullmatch(i)}
    mapping = {i: i for i in taken}
    for original in ids:
        if original in mapping:
            continue
        salt, candidate = 0, _nine(original)
        while candidate in taken:
            salt += 1
            candidate = _nine(f"{original}\0{salt}")
        taken.add(candidate)
        mapping[original] = candidate
    for entry in wire:
        for call in entry.get("tool_calls") or ():
            call["id"] = mapping[str(call.get("id", ""))]
        if entry.get("role") == "tool":
            entry["tool_call_id"] = mapping[str(entry.get("tool_call_id", ""))]
    return {short: original for original, short in mapping.items()}


def convert_tools(tools: list[ToolDefinition]) -> list[dict[str, Any]]:
    """Tool definitions → ``{"type": "function", "function": {name, description, parameters}}``."""
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
            },
        }
        for t in tools
    ]


def parse_completion(data: Any) -> AssistantTurn:
    """A non-streaming ``chat/completions`` JSON body → :class:`AssistantTurn`.

    ``finish_reason == "tool_calls"`` (or any parsed call) means ``TOOL_USE``; arguments that
    are not JSON are kept as ``invalid_arguments``; ``usage`` maps prompt/completion tokens.
    """
    if not isinstance(data, dict):
        raise ProviderError(f"the server's response is not a JSON object: {_preview(data)}")
    if data.get("error") is not None or data.get("object") == "error":
        ChunkNormaliser().feed_chunk(data)  # raises StreamError with the server's message
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ProviderError("no choices in the server's response")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        message = {}
    text = message.get("content")
    reasoning = message.get("reasoning_content") or message.get("reasoning")
    if isinstance(text, list):  # typed content parts
        parts = [p.get("text", "") for p in text if isinstance(p, dict) and p.get("type") == "text"]
        text = "".join(parts)
    elif text is not None and not isinstance(text, str):
        text = str(text)
    calls = []
    for i, raw in enumerate(message.get("tool_calls") or ()):
        if not isinstance(raw, dict):
            continue
        fn = raw.get("function")
        if not isinstance(fn, dict):
            fn = {}
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            continue
        args = fn.get("arguments")
        if args is None or isinstance(args, str):
            arguments, invalid = parse_arguments(args or "")
        else:
            arguments, invalid = args, None
        call_id = raw.get("id")
        if not isinstance(call_id, str) or not call_id:
            call_id = f"call_{i}"
        calls.append(ToolCall(call_id, name, arguments, invalid))
    tool_use = choice.get("finish_reason") == "tool_calls" or bool(calls)
    return _cut_off(
        AssistantTurn(
            text=text,
            tool_calls=calls,
            stop_reason=StopReason.TOOL_USE if tool_use and calls else StopReason.STOP,
            usage=usage_from(data.get("usage")),
            reasoning=reasoning if isinstance(reasoning, str) and reasoning else None,
        ),
        choice.get("finish_reason"),
    )


def _cut_off(turn: AssistantTurn, finish_reason: Any, cap: int | None = None) -> AssistantTurn:
    """``finish_reason: "length"`` on a reply without tool calls: :attr:`StopReason.LENGTH`,
    with the output cap that was sent (``cap``), so the front ends can say it was cut off."""
    if finish_reason == "length" and not turn.tool_calls:
        turn.stop_reason = StopReason.LENGTH
        turn.output_limit = cap
    return turn


def _preview(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


# ---------------------------------------------------------------------------------------------
# Keys
# ---------------------------------------------------------------------------------------------


def _host(url: str) -> str:
    return (urlsplit(url).hostname or "").lower()


def _api_root(url: str) -> str:
    """The API root, forgiving a pasted endpoint (``…/v1/chat/completions``)."""
    url = url.strip().rstrip("/")
    if url.endswith("/chat/completions"):
        url = url[: -len("/chat/completions")]
    return url


# The words of the failures a new user meets first, one line each, shown as they are by the
# chat, a %%claw cell and the Python API (tests/providers/test_failure_wording.py runs the same
# failures through all three).
_GENERIC_CONNECT = ("all connection attempts failed", "connection refused", "connecterror")


def no_key_message(base_url: str) -> str:
    """No key for a server that needs one: which variables to set (the front ends add how to
    run offline)."""
    names = " or ".join(key_variables(base_url))
    where = _host(base_url) or "the server"
    return f"no API key found for {where}: set {names} (environment or .env)"


def unreachable_message(url: str, detail: str = "") -> str:
    """Nothing answered at ``url`` (with its port): whether it runs, and where the URL comes
    from. ``detail`` (httpx's words) is added only when it says more than "refused"."""
    line = f"could not reach {url} — is the server running? check --base-url / CLAWNB_BASE_URL"
    if detail and not any(word in detail.lower() for word in _GENERIC_CONNECT):
        line += f" ({detail})"
    return line


def _public_url(url: str) -> str:
    """``url`` without any ``user:password@`` part, for messages."""
    parts = urlsplit(url)
    if parts.username or parts.password:
        netloc = parts.hostname or ""
        if parts.port:
            netloc += f":{parts.port}"
        return parts._replace(netloc=netloc).geturl()
    return url


def _is_openrouter(url: str) -> bool:
    host = _host(url)
    return host == "openrouter.ai" or host.endswith(".openrouter.ai")


def _secret(value: str | None) -> Secret | None:
    return Secret.of(value)


# ---------------------------------------------------------------------------------------------
# Retry helpers
# ---------------------------------------------------------------------------------------------


def _retry_after(headers: httpx.Headers) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms``, ``Retry-After`` seconds or
    HTTP date), or ``None``."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _status_code(code: Any) -> int | None:
    """An error ``code`` that is an HTTP status (``502`` or ``"502"``), else ``None``."""
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    if isinstance(code, str) and code.isdigit():
        return int(code)
    return None


_ERROR_CLASSES: dict[int, type[ProviderHTTPError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: AuthenticationError,
    404: BadRequestError,
    413: BadRequestError,
    422: BadRequestError,
    429: RateLimitError,
}


def _error_class(status: int) -> type[ProviderHTTPError]:
    if status >= 500:
        return ServerError
    return _ERROR_CLASSES.get(status, ProviderHTTPError)


# How servers say "the prompt does not fit" (recorded wordings: tests/providers/data/):
# OpenAI and llama-cpp-python (code context_length_exceeded, "maximum context length"),
# vLLM ("maximum context length … reduce the length of the messages"), llama.cpp
# (exceed_context_size_error, "exceeds the available context size"), Ollama ("the input length
# exceeds the context length"), OpenRouter ("This endpoint's maximum context length"),
# Anthropic via routers ("prompt is too long"), LM Studio ("context length of only").
_OVERFLOW_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
_OVERFLOW_TEXT = re.compile(
    r"maximum context length|context[ _]length[ _]exceeded|exceeds? the (available )?context"
    r"|context size|context window|prompt is too long|input is too long|too many tokens"
    r"|context length of only|input length exceeds",
    re.IGNORECASE,
)
# "'max_tokens' … is too large" is about the output cap, not the prompt (vLLM, OpenAI)
_CAP_TOO_LARGE = re.compile(r"max_(completion_)?tokens'?\W+(or \W*max_\w+\W+)?is too large", re.I)
_WINDOW = re.compile(
    r"maximum context length is (\d+)|context size \((\d+) tokens\)|context window of (\d+)"
    r"|context length of only (\d+)",
    re.IGNORECASE,
)


def is_context_overflow(status: int, message: str, code: Any = None) -> bool:
    """Whether an HTTP error says the conversation is longer than the model's context."""
    if status not in (400, 413, 422, 500):
        return False
    if isinstance(code, str) and code in _OVERFLOW_CODES:
        return True
    if _CAP_TOO_LARGE.search(message):
        return False
    return bool(_OVERFLOW_TEXT.search(message))


def context_window_of(message: str, raw: bytes = b"") -> int | None:
    """The context window a context-length error names (``n_ctx`` in llama.cpp's JSON, or the
    number in the message), or ``None``."""
    try:
        data = json.loads(raw) if raw else None
    except (ValueError, RecursionError):
        data = None
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("n_ctx"), int):
        return int(error["n_ctx"])
    match = _WINDOW.search(message)
    if match:
        return int(next(g for g in match.groups() if g))
    return None


def _error_details(raw: bytes) -> tuple[str, str | int | None]:
    """The server's message and code from an error body (JSON ``error.message``/``code``,
    FastAPI ``detail``, OpenRouter's upstream ``metadata.raw``, or plain text)."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        text = raw.decode("utf-8", "replace").strip()
        return _preview(" ".join(text.split()), 500), None
    if not isinstance(data, dict):
        return _preview(compact_json(data), 500), None
    error = data.get("error", data)
    code = data.get("code")
    message: Any = None
    if isinstance(error, dict):
        message = error.get("message") or error.get("detail") or error.get("msg")
        code = error.get("code", code) if error.get("code") is not None else error.get("type", code)
        metadata = error.get("metadata")
        if isinstance(metadata, dict) and metadata.get("raw"):
            upstream = metadata["raw"]
            upstream = upstream if isinstance(upstream, str) else compact_json(upstream)
            message = f"{message or 'upstream error'}: {_preview(upstream, 300)}"
    elif isinstance(error, str):
        message = error
    if message is None and "detail" in data:
        detail = data["detail"]
        message = detail if isinstance(detail, str) else compact_json(detail)
    if message is None:
        message = compact_json(data)
    if not isinstance(message, str):
        message = compact_json(message)
    return _preview(message, 1000), code


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    return httpx.create_ssl_context()


# ---------------------------------------------------------------------------------------------
# The provider
# ---------------------------------------------------------------------------------------------


class OpenAICompatProvider:
    """A model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    ``model`` is the server's model name; ``api_key`` defaults to the environment (see the
    module docstring) and may stay ``None`` for local servers that need none. ``base_url`` is
    the API root (``http://localhost:11434/v1`` for Ollama). ``client`` (an
    ``httpx.AsyncClient`` you own) or ``transport`` (e.g. ``httpx.MockTransport``) replace the
    network for tests or pooling. ``temperature``, ``max_tokens``, ``tool_choice`` and
    ``extra_body`` (merged into the request, for provider-specific fields) pass through.
    ``stream_usage`` asks for token usage in streams (dropped automatically if the server
    rejects ``stream_options``). ``cache_prompt`` marks the static part of the system prompt
    cacheable (``cache_control``) for servers that honour it (Anthropic models via OpenRouter).
    ``max_reply_bytes`` and ``max_line_bytes`` bound what one answer may hold (see the module
    docstring; ``None``: no cap). ``context_window`` is the server's window in tokens, for a
    server that does not say (llama-cpp-python's ``--n_ctx``): an empty stream from a request
    estimated past it is a :class:`~clawnb.errors.ContextOverflowError`. A window the server
    names (``/models``, an overflow error) is kept the same way. ``short_tool_ids`` sends
    tool-call ids as 9 alphanumerics (:func:`shorten_tool_ids`), as Mistral's templates
    demand; ``None`` (the default) turns it on for a Mistral model by name, or when a server
    refuses other ids (the request is then sent again at once); ``False`` never.
    """

    default_base_url: str = OPENAI_BASE_URL
    default_model: str | None = None
    default_headers: ClassVar[Mapping[str, str]] = {}  # sent with every request
    service = "the server"  # for messages: "no API key for the server"
    needs_key = False  # refuse to start without a key (servers that answer nothing without)

    def __init__(
        self,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        *,
        client: httpx.AsyncClient | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 120.0,
        max_retries: int = 2,
        retry_backoff: float = 0.5,
        max_retry_wait: float = 60.0,
        temperature: float | None = None,
        max_tokens: int | None = None,
        tool_choice: Any = None,
        extra_body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        stream_usage: bool = True,
        cache_prompt: bool = False,
        default_cap: bool = False,
        server: str | None = None,
        max_reply_bytes: int | None = DEFAULT_MAX_REPLY_BYTES,
        max_line_bytes: int | None = DEFAULT_MAX_LINE_BYTES,
        context_window: int | None = None,
        short_tool_ids: bool | None = None,
    ) -> None:
        model = model if model is not None else self.default_model
        if not model:
            raise ProviderConfigError(f"{type(self).__name__} needs a model name")
        self.model = model
        self.api_base = _api_root(base_url or self.default_base_url)
        self._key_from_env = api_key is None
        self._key_given = api_key is not None  # by the Python caller (from_env's is not)
        self.__key = _secret(api_key if api_key is not None else env_key(self.api_base))
        if self.needs_key and self.__key is None:
            names = " or ".join(key_variables(self.api_base))
            raise ProviderConfigError(
                f"no API key for {self.service}: pass api_key=... or set {names}"
            )
        self._client = client
        self._transport = transport
        self.timeout = httpx.Timeout(read_timeout, connect=connect_timeout)
        self.max_retries = max(0, max_retries)
        self.retry_backoff = retry_backoff
        self.max_retry_wait = max_retry_wait
        self.request_fields: dict[str, Any] = {}
        if temperature is not None:
            self.request_fields["temperature"] = temperature
        if max_tokens is not None:
            self.request_fields["max_tokens"] = max_tokens
        if tool_choice is not None:
            self.request_fields["tool_choice"] = tool_choice
        self.extra_body = dict(extra_body or {})
        self.headers = {**self.default_headers, **(headers or {})}
        self.stream_usage = stream_usage
        # Mark the system prompt's static prefix cacheable (Anthropic-style cache_control,
        # passed through by OpenRouter); see clawnb.prompt.system_content.
        self.cache_prompt = cache_prompt
        # max_tokens is clawnb's default cap, not the user's: drop it if a server refuses it
        self.default_cap = default_cap and max_tokens is not None
        # Server profile (clawnb.providers.profiles): a named kind, or "auto" to ask the
        # server's /models once, before the first request, when it runs on a local network.
        if server not in (None, "auto") and server not in PROFILES:
            kinds = ", ".join(SERVER_KINDS)
            raise ProviderConfigError(f"unknown server kind {server!r} (one of: {kinds})")
        self.server = server
        self.profile: ServerProfile | None = PROFILES.get(server or "")
        # the server's context size: given, or as the server said (/models, an overflow error)
        self.context_window: int | None = context_window
        self._told_unstreamed = False  # said once that this server's replies come whole
        self._probe_pending = server == "auto" and is_local_url(self.api_base)
        self.max_reply_bytes = max_reply_bytes
        self.max_line_bytes = max_line_bytes
        # 9-character tool-call ids on the wire (Mistral's templates refuse others): for a
        # Mistral model by name, or from the first refusal that says so
        self.short_tool_ids = (
            needs_short_tool_ids(model) if short_tool_ids is None else short_tool_ids
        )
        self._short_ids_chosen = short_tool_ids is not None  # the caller's say is final

    @property
    def max_body_bytes(self) -> int | None:
        """A JSON answer's cap: the reply's, twice (JSON escaping), and room for the rest."""
        return None if self.max_reply_bytes is None else 2 * self.max_reply_bytes + 64 * 1024

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_env(cls, model: str | None = None, **options: Any) -> Self:
        """A provider whose key comes from the environment (or a ``.env`` file in the current
        directory); :class:`~clawnb.errors.ProviderConfigError` if none is set."""
        base_url = options.get("base_url") or cls.default_base_url
        key = env_key(base_url, dotenv=True)
        if key is None:
            raise ProviderConfigError(no_key_message(base_url))
        provider = cls(model, key, **options)
        provider._key_given = False
        return provider

    def base_url(self, url: str) -> Self:
        """Point the provider at another API root (builder style, returns the provider)."""
        self.api_base = _api_root(url)
        self._probe_pending = self.server == "auto" and is_local_url(self.api_base)
        if self._key_from_env:  # never carry an env key to a host it was not meant for
            self.__key = _secret(env_key(self.api_base))
        return self

    @property
    def has_key(self) -> bool:
        return self.__key is not None

    def __repr__(self) -> str:
        key = "set" if self.__key is not None else "none"
        return (
            f"{type(self).__name__}(model={self.model!r}, base_url={self.api_base!r}, "
            f"api_key=<{key}>)"
        )

    # The book's associated functions, as static methods.
    convert_messages = staticmethod(convert_messages)
    convert_tools = staticmethod(convert_tools)

    # -- requests -----------------------------------------------------------------------------

    @property
    def endpoint(self) -> str:
        return f"{self.api_base}/chat/completions"

    def build_request(
        self, messages: list[Message], tools: list[ToolDefinition], *, stream: bool = False
    ) -> dict[str, Any]:
        """The JSON body: ``model``, ``messages``, ``tools`` (omitted when empty), ``stream``
        (only when true), usage options, then pass-through fields."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": wire_messages(messages, cache=self.cache_prompt),
        }
        if self.short_tool_ids:
            shorten_tool_ids(body["messages"])
        if tools:
            body["tools"] = convert_tools(tools)
            choice = self.tool_choice_for(messages)
            if choice is not None:
                body["tool_choice"] = choice
        if stream:
            body["stream"] = True
            if self.stream_usage:
                body["stream_options"] = {"include_usage": True}
        body.update((k, v) for k, v in self.request_fields.items() if k != "tool_choice")
        body.update(self.extra_body)
        return body

    def tool_choice_for(self, messages: list[Message]) -> Any:
        """The ``tool_choice`` a request with tools sends (``None``: leave it out).

        A forced choice (``"required"`` or one tool by name) applies to the round that answers
        the person's message only; the rounds after it (the request ends with tool results)
        send ``"auto"``, as agent SDKs do: forcing every round made the model call the same
        tool until the turn limit. ``"auto"``/``"none"`` apply to every round; without a
        choice of the user's, the server profile's (llama-cpp-python needs one to pass the
        tools on at all)."""
        chosen = self.request_fields.get("tool_choice")
        if chosen is None:
            return self.profile.tool_choice if self.profile is not None else None
        forced = chosen == "required" or isinstance(chosen, dict)
        if forced and not (messages and isinstance(messages[-1], Message.User)):
            return "auto"
        return chosen

    def _request_headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", **self.headers}
        if self.__key is not None:
            headers["Authorization"] = f"Bearer {self.__key.reveal()}"
        return headers

    def _redact(self, text: str) -> str:
        # the key is registered with the process-wide redactor when it is set (Secret), which
        # also catches its encoded forms and every other known key
        return redact(text)

    @asynccontextmanager
    async def _http(self) -> AsyncIterator[httpx.AsyncClient]:
        if self._client is not None:
            yield self._client
            return
        if self._transport is not None:  # a test's transport: a client of its own per call
            async with httpx.AsyncClient(
                transport=self._transport, timeout=self.timeout, verify=_ssl_context()
            ) as client:
                yield client
            return
        yield await _shared_client()

    def _http_error(self, response: httpx.Response, raw: bytes) -> ProviderHTTPError:
        message, code = _error_details(raw)
        if not message:
            message = response.reason_phrase or "error"
        message = self._redact(message)
        retry_after = _retry_after(response.headers)
        fields: dict[str, Any] = {
            "retry_after": retry_after,
            # a 404 is usually a wrong base URL or model name: say where we asked
            "endpoint": _public_url(self.endpoint) if response.status_code == 404 else None,
            "hint": self._http_hint(response.status_code, retry_after),
        }
        if is_context_overflow(response.status_code, message, code):
            return ContextOverflowError(
                response.status_code,
                message,
                code,
                context_window=context_window_of(message, raw),
                **fields,
            )
        return _error_class(response.status_code)(response.status_code, message, code, **fields)

    def _http_hint(self, status: int, retry_after: float | None) -> str | None:
        """What the person can do about an error status, in the words every front end shows
        (the chat, a ``%%claw`` cell and the Python API print ``str(error)``): the variables to
        set, never a Python argument, unless the key came as one."""
        names = " or ".join(key_variables(self.api_base))
        if status in (401, 403):
            if self.__key is None:
                return f"no API key is set for {_host(self.api_base) or 'this server'}: set {names}"
            if self._key_given:
                return "the server refused the key given as api_key="
            if status == 403:
                return f"the key is not allowed to do this (check {names} and the model)"
            return f"the server refused the API key: check {names}"
        if status == 404:
            return (
                f"is the model name {self.model!r} right? check --model / CLAWNB_MODEL "
                "and --base-url / CLAWNB_BASE_URL"
            )
        if status == 429:
            wait = f"; it asked to wait {retry_after:.0f} s" if retry_after else ""
            return f"rate limited: wait a little and send again{wait}"
        return None

    def _transport_error(self, exc: Exception, progress: _Progress) -> ProviderError:
        """An httpx failure in words that say how far the request got."""
        host = _host(self.api_base) or self.api_base
        detail = self._redact(str(exc) or type(exc).__name__)
        if isinstance(exc, (httpx.UnsupportedProtocol, httpx.InvalidURL)):
            return ProviderConfigError(f"bad base URL {self.api_base!r}: {detail}")
        if isinstance(exc, httpx.TimeoutException):
            what = "connecting to" if isinstance(exc, httpx.ConnectTimeout) else "waiting for"
            return ProviderTimeout(f"timed out {what} {host} ({type(exc).__name__})")
        if progress.delivered:
            return ProviderConnectionError(f"the stream from {host} broke off: {detail}")
        if progress.answered:
            # The server answered and then dropped the body: it was reached.
            return ProviderConnectionError(
                f"the stream from {host} broke off before any data: {detail}"
            )
        if isinstance(exc, httpx.ConnectError):
            return ProviderConnectionError(unreachable_message(_public_url(self.api_base), detail))
        # Connected and sent the request, but the server closed before answering (it crashed,
        # or a proxy in between gave up).
        return ProviderConnectionError(f"{host} closed the connection without answering: {detail}")

    def _retry_delay(self, attempt: int, error: Exception) -> float | None:
        """Seconds to wait before retry number ``attempt + 1``, or ``None`` to give up."""
        if attempt >= self.max_retries:
            return None
        if isinstance(error, StreamError):
            # An error object before any output, e.g. OpenRouter's upstream 429/5xx as a chunk
            if _status_code(error.code) not in RETRY_STATUSES:
                return None
        elif isinstance(error, ProviderHTTPError):
            if error.status not in RETRY_STATUSES:
                return None
            if error.retry_after is not None:
                return error.retry_after if error.retry_after <= self.max_retry_wait else None
        elif not isinstance(error, ProviderConnectionError):
            return None
        delay = self.retry_backoff * 2.0**attempt
        return min(delay * (1 + random.random() * 0.25), self.max_retry_wait)

    def _adapt(self, error: ProviderHTTPError, body: dict[str, Any]) -> bool:
        """Drop a field this server refuses and say whether to ask again at once.

        ``stream_options`` (some servers reject it) goes for good. A default output cap that a
        server finds too large for its context (vLLM: "'max_tokens' … is too large") goes
        too; a cap the user chose stays, and the error is reported.
        """
        if error.status not in (400, 422, 500):
            return False
        refused_ids = _TOOL_IDS_REFUSED.search(error.message)
        if refused_ids and not (self.short_tool_ids or self._short_ids_chosen):
            # a Mistral template behind a model name that did not say so (llama-server's
            # --chat-template-file): 9-character ids from now on, this request included
            self.short_tool_ids = True
            shorten_tool_ids(body.get("messages") or [])
            log.warning("%s accepts only 9-character tool-call ids; sending those", self.api_base)
            return True
        if error.status == 500:
            return False
        if "stream_options" in body and "stream_options" in error.message:
            del body["stream_options"]
            self.stream_usage = False
            return True
        cap = next((k for k in ("max_tokens", "max_completion_tokens") if k in body), None)
        if cap is not None and self.default_cap and _CAP_TOO_LARGE.search(error.message):
            del body[cap]
            self.request_fields.pop(cap, None)
            log.warning("%s refused the default output cap; asking without one", self.api_base)
            return True
        return False

    # -- Provider -----------------------------------------------------------------------------

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        """One non-streaming request → the assembled turn."""
        await self.detect_server()
        return await self._with_retries(self.build_request(messages, tools), self._chat_once)

    async def detect_server(self) -> ServerProfile | None:
        """With ``server="auto"`` and a local base URL: ask ``GET /models`` once which server
        this is and apply its profile. A server that cannot be reached is asked again next
        time; one that answers without revealing itself is left alone."""
        if not self._probe_pending:
            return self.profile
        try:
            response = await self._probe(f"{self.api_base}/models")
        except httpx.HTTPError:
            return self.profile  # not up yet: the real request will say so
        self._probe_pending = False
        try:
            models = response.json() if response.status_code == 200 else None
        except ValueError:
            models = None
        kind = detect(models, response.headers.get("server"))
        if kind is not None:
            self.profile = PROFILES[kind]
            # the window the server names (vLLM, llama-server); one it does not name stays
            # as given (llama-cpp-python's --n_ctx)
            self.context_window = models_context_window(models, self.model) or self.context_window
            log.info("%s looks like %s", self.api_base, self.profile.name)
        if self.context_window is None and kind == "llama.cpp":
            self.context_window = await self._props_window()
        return self.profile

    async def _props_window(self) -> int | None:
        """llama-server's window from its ``GET /props`` (``default_generation_settings.n_ctx``,
        its ``-c``), for a build whose ``/v1/models`` does not say it. Asked once, with the
        detection; any failure is silent (``None``: the window stays unknown)."""
        root = self.api_base.removesuffix("/v1")
        try:
            response = await self._probe(f"{root}/props")
            return props_context_window(response.json() if response.status_code == 200 else None)
        except (httpx.HTTPError, ValueError):
            return None

    async def _probe(self, url: str) -> httpx.Response:
        """``GET url`` with the request's headers and a short timeout (the server detection's
        questions; the whole body is read before the client closes)."""
        async with self._http() as client:
            return await client.get(
                url, headers=self._request_headers(), timeout=httpx.Timeout(5.0, connect=2.0)
            )

    async def _chat_once(
        self, client: httpx.AsyncClient, body: dict[str, Any], progress: _Progress
    ) -> AssistantTurn:
        # streamed in, so a body past its cap is never held whole (client.post reads it all)
        async with client.stream(
            "POST", self.endpoint, json=body, headers=self._request_headers(), timeout=self.timeout
        ) as response:
            progress.answered = True
            if response.status_code >= 400:
                raise self._http_error(response, await _read_head(response, ERROR_BODY_BYTES))
            return self._parse_json(await _read_capped(response, self.max_body_bytes), body)

    def _parse_json(self, raw: bytes, body: Mapping[str, Any]) -> AssistantTurn:
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            raise ProviderError(
                "the server's response is not JSON: "
                + self._redact(_preview(raw.decode("utf-8", "replace")))
            ) from None
        try:
            turn = parse_completion(data)
        except StreamError as exc:
            raise StreamError(self._redact(exc.message), code=exc.code) from None
        if turn.stop_reason == StopReason.LENGTH:
            turn.output_limit = _cap(body)
        if self.max_reply_bytes is not None and _reply_size(turn) > self.max_reply_bytes:
            raise ReplyTooLarge("the model's reply", self.max_reply_bytes, MAX_REPLY_SETTING)
        return turn

    async def _with_retries(
        self,
        body: dict[str, Any],
        once: Callable[[httpx.AsyncClient, dict[str, Any], _Progress], Awaitable[AssistantTurn]],
        *,
        retries: bool = True,
    ) -> AssistantTurn:
        """Run ``once(client, body, progress)`` until it returns a turn, retrying what is worth
        retrying (see :meth:`_retry_delay`) — but never after output reached the caller, and
        not at all without ``retries``."""
        attempt = 0
        async with self._http() as client:
            while True:
                progress = _Progress()
                try:
                    return await once(client, body, progress)
                except (httpx.RequestError, httpx.InvalidURL) as exc:
                    error: ProviderError = self._transport_error(exc, progress)
                    cause: BaseException | None = exc
                except ProviderHTTPError as exc:
                    if self._adapt(exc, body):
                        continue
                    if isinstance(exc, ContextOverflowError) and exc.context_window:
                        self.context_window = exc.context_window  # the server said
                    error, cause = exc, None
                except (ProviderConnectionError, StreamError) as exc:
                    # a stream that ended with no data, or an error object in the answer
                    error, cause = exc, None
                if progress.delivered:
                    raise error from cause  # output was shown: never restart silently
                if retries:
                    delay = self._retry_delay(attempt, error)
                else:
                    # even a request asked once: a connection that closed before any answer
                    # (a kept-alive one the server had dropped — llama-cpp-python after an
                    # empty stream) gets one more try, on a new connection
                    closed = isinstance(cause, (httpx.ReadError, httpx.RemoteProtocolError))
                    delay = 0.0 if attempt == 0 and closed and not progress.answered else None
                if delay is None:
                    raise error from cause
                attempt += 1
                log.warning("%s; retry %d/%d in %.1fs", error, attempt, self.max_retries, delay)
                await asyncio.sleep(delay)

    # -- StreamProvider -----------------------------------------------------------------------

    async def stream_chat(
        self, messages: list[Message], tools: list[ToolDefinition], on_event: OnStreamEvent = None
    ) -> AssistantTurn:
        """Stream one turn: ``on_event`` sees every event as its line arrives; the assembled
        turn is returned. Retries happen only before the first event reached ``on_event``."""
        await self.detect_server()
        body = self.build_request(messages, tools, stream=True)
        if not self._can_stream(body):
            # this server cannot stream this request: ask for the whole reply, shown at once
            turn = await self._with_retries(self.build_request(messages, tools), self._chat_once)
            await emit_turn(on_event, turn)
            return turn

        async def once(
            client: httpx.AsyncClient, body: dict[str, Any], progress: _Progress
        ) -> AssistantTurn:
            return await self._stream_once(client, body, on_event, progress)

        try:
            return await self._with_retries(body, once)
        except _EmptyStream:
            if self.profile is None or self.profile.kind != "llama-cpp-python":
                raise
        # llama-cpp-python fails inside a stream without a word (a template error, an overflow
        # of its --n_ctx): the same request unstreamed, once and not retried, gets its reason
        # (recognised as an overflow when it is one) or the answer
        log.warning(
            "%s sent an empty stream; asking once more without streaming to hear why",
            self.profile.name,
        )
        turn = await self._with_retries(
            self.build_request(messages, tools), self._chat_once, retries=False
        )
        await emit_turn(on_event, turn)
        return turn

    def _can_stream(self, body: dict[str, Any]) -> bool:
        """Whether this server can stream ``body``. llama-cpp-python's function-calling chat
        handler raises inside the stream whenever ``tool_choice`` is ``"auto"`` and its
        grammar step picks a tool — even for a plain question — and the client sees an empty
        200; the same request without streaming works. Said once per provider."""
        if self.profile is None or self.profile.streams_auto_tool_choice:
            return True
        if not body.get("tools") or body.get("tool_choice") != "auto":
            return True
        if not self._told_unstreamed:
            self._told_unstreamed = True
            log.warning(
                "%s cannot stream a reply while the model may choose a tool "
                '(tool_choice "auto"): those replies arrive whole',
                self.profile.name,
            )
        return False

    async def _stream_once(
        self,
        client: httpx.AsyncClient,
        body: dict[str, Any],
        on_event: StreamEventCallback | None,
        progress: _Progress,
    ) -> AssistantTurn:
        log.debug("POST %s (model=%s, stream)", self.endpoint, self.model)
        async with client.stream(
            "POST",
            self.endpoint,
            json=body,
            headers={**self._request_headers(), "Accept": "text/event-stream"},
            timeout=self.timeout,
        ) as response:
            progress.answered = True
            if response.status_code >= 400:
                raise self._http_error(response, await _read_head(response, ERROR_BODY_BYTES))
            content_type = response.headers.get("content-type", "")
            if "json" in content_type and "event-stream" not in content_type:
                # The server ignored ``stream: true`` and sent one JSON completion.
                turn = self._parse_json(await _read_capped(response, self.max_body_bytes), body)
                if on_event is not None:
                    progress.delivered = True
                    await emit_turn(on_event, turn)
                return turn
            decoder = SSEDecoder(self.max_line_bytes)
            normaliser = ChunkNormaliser(self.max_reply_bytes)
            accumulator = StreamAccumulator()  # the book's class builds the turn
            head = b""  # the start of the body, to explain a response that is not SSE
            saw_data = False
            try:
                async for chunk in response.aiter_bytes():
                    if not saw_data and len(head) < 300:
                        head += chunk[:300]
                    for payload in decoder.feed(chunk):
                        saw_data = True
                        for event in normaliser.feed(payload):
                            accumulator.feed(event)
                            if on_event is not None:
                                progress.delivered = True
                                await emit(on_event, event)
                tail = []
                for payload in decoder.flush():
                    saw_data = True
                    tail.extend(normaliser.feed(payload))
                if not saw_data:
                    raise self._no_events(content_type, head, body)
                tail.extend(normaliser.close())
            except StreamError as exc:
                raise StreamError(self._redact(exc.message), code=exc.code) from None
            for event in tail:
                accumulator.feed(event)
                await emit(on_event, event)
            return _cut_off(accumulator.finish(), normaliser.finish_reason, _cap(body))

    def _no_events(self, content_type: str, head: bytes, body: dict[str, Any]) -> ProviderError:
        """The body ended without a single ``data:`` line."""
        preview = self._redact(_preview(head.decode("utf-8", "replace").strip(), 200))
        where = _public_url(self.endpoint)
        if "event-stream" in content_type and head.strip():
            # Keep-alive comments, then the end: the server (or the model behind a router)
            # gave up while working. Nothing was shown, so asking again is safe.
            return ProviderConnectionError(f"{where} closed the stream without sending any data")
        if "event-stream" in content_type:
            # Not a byte: the server failed before generating, typically its chat template
            # refusing the messages. Asking again would only pay for the prompt again.
            tokens = _prompt_estimate(body)
            if self.context_window is not None and tokens > self.context_window:
                # llama-cpp-python says nothing else when the prompt does not fit a stream
                return ContextOverflowError(
                    200,
                    f"{where} answered with an empty stream, and the conversation (about "
                    f"{tokens} tokens) is longer than its context window "
                    f"({self.context_window} tokens)",
                    "context_length_exceeded",
                    context_window=self.context_window,
                )
            if self.profile is not None and self.profile.kind == "llama-cpp-python":
                return _EmptyStream(
                    f"{where} answered with an empty stream: llama-cpp-python fails inside a "
                    "stream without a word — when its chat template rejects the messages, "
                    "when the conversation is longer than its --n_ctx, or when a tool choice "
                    "it cannot stream was asked for; its log says which"
                )
            return _EmptyStream(
                f"{where} answered with an empty stream: the server failed before writing "
                "anything (often its chat template rejecting the messages); its log says why"
            )
        return ProviderError(
            f"{where} did not answer with server-sent events "
            f"(content-type {content_type or 'missing'}): {preview or 'empty body'}"
        )


class _EmptyStream(ProviderError):
    """A stream that ended before a single event (the server failed before generating)."""


def _cap(body: Mapping[str, Any]) -> int | None:
    """The output cap a request sends (``max_tokens`` or ``max_completion_tokens``)."""
    for key in ("max_tokens", "max_completion_tokens"):
        if isinstance(body.get(key), int):
            return int(body[key])
    return None


def _prompt_estimate(body: dict[str, Any]) -> int:
    """The tokens a request's prompt holds, roughly: its messages and tool schemas as JSON,
    four characters a token (the JSON's quotes and keys stand for the template's markup)."""
    sent = compact_json([body.get("messages") or [], body.get("tools") or []])
    return len(sent) // 4


async def _read_capped(response: httpx.Response, limit: int | None) -> bytes:
    """The whole body, or :class:`~clawnb.errors.ReplyTooLarge` as soon as it passes
    ``limit`` bytes (a declared ``Content-Length`` past it is refused before reading)."""
    if limit is None:
        return await response.aread()
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ReplyTooLarge("the server's response", limit, MAX_REPLY_SETTING)
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise ReplyTooLarge("the server's response", limit, MAX_REPLY_SETTING)
        chunks.append(chunk)
    return b"".join(chunks)


async def _read_head(response: httpx.Response, limit: int) -> bytes:
    """At most the first ``limit`` bytes of the body (an error answer: the message is at the
    start; the rest is not read)."""
    head = b""
    async for chunk in response.aiter_bytes():
        head += chunk[: limit - len(head)]
        if len(head) >= limit:
            break
    return head


def _reply_size(turn: AssistantTurn) -> int:
    """The bytes one reply holds: its text, reasoning and tool-call arguments (UTF-8)."""
    size = sum(len(t.encode("utf-8", "surrogatepass")) for t in (turn.text, turn.reasoning) if t)
    for call in turn.tool_calls:
        raw = call.invalid_arguments if call.invalid_arguments is not None else call.arguments
        size += len(call.name) + len(compact_json(raw).encode("utf-8", "surrogatepass"))
    return size


# One HTTP client per event loop, shared by every provider on it and kept between requests: its
# open connection saves a TCP (and TLS) handshake and a client's construction on every turn —
# about a millisecond of each time-to-first-token on a local server
# (benchmarks/bench_provider_overhead.py). Each request passes its provider's timeout and
# headers. A client never crosses event loops (notebook cells, course checks, asyncio.run);
# it belongs to the loop, not to a provider, so a provider dropped mid-loop leaves no socket
# behind, and it is closed when its loop shuts down (_close_with_loop).
_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()


async def _shared_client() -> httpx.AsyncClient:
    loop = asyncio.get_running_loop()
    entry = _CLIENTS.get(loop)
    if entry is None or entry[0].is_closed:
        client = httpx.AsyncClient(verify=_ssl_context())
        keeper = _close_with_loop(client)
        await anext(keeper)
        entry = _CLIENTS[loop] = (client, keeper)
    return entry[0]


async def _close_with_loop(client: httpx.AsyncClient) -> AsyncIterator[None]:
    """Suspended for the life of an event loop: ``asyncio.run``, ``asyncio.Runner`` and the
    chat's loop finish suspended async generators when they shut down, which closes the
    client and its kept-alive connection before the loop goes (no unclosed sockets)."""
    try:
        yield
    finally:
        await client.aclose()


class _Progress:
    """How far one attempt got: the server ``answered`` (status line received) and output was
    ``delivered`` to the caller (after which nothing is retried)."""

    __slots__ = ("answered", "delivered")

    def __init__(self) -> None:
        self.answered = False
        self.delivered = False


class OpenRouterProvider(OpenAICompatProvider):
    """The book's provider: OpenRouter (``https://openrouter.ai/api/v1``), default model
    ``openrouter/free``. A key is required: pass ``api_key=`` or set ``CLAWNB_API_KEY`` /
    ``OPENROUTER_API_KEY`` (also read from ``.env`` by :meth:`from_env`)."""

    default_base_url = OPENROUTER_BASE_URL
    default_model = OPENROUTER_DEFAULT_MODEL
    default_headers = {"X-Title": "clawnb"}  # names the app in OpenRouter's activity list
    service = "OpenRouter"
    needs_key = True

    @classmethod
    def new(cls, api_key: str, model: str, **options: Any) -> OpenRouterProvider:
        """The book's constructor order: ``OpenRouterProvider.new(key, model)``."""
        return cls(model, api_key, **options)

    @classmethod
    def from_env_with_model(cls, model: str, **options: Any) -> OpenRouterProvider:
        """The book's name for ``from_env(model)``."""
        return cls.from_env(model, **options)
