"""The package's own exceptions, one small tree::

    ClawError
    ├── ProviderError                a model could not give a turn (provider errors propagate)
    │   ├── ProviderConfigError      e.g. no API key configured (never includes the key)
    │   ├── ScriptError              a scripted/replay file is malformed or exhausted
    │   ├── ProviderHTTPError        the server answered 4xx/5xx (status, message, code)
    │   │   ├── BadRequestError      400/404/413/422: the request itself was refused
    │   │   │   └── ContextOverflowError  the prompt is longer than the model's context window
    │   │   ├── AuthenticationError  401/403: missing, wrong or unauthorised key
    │   │   ├── RateLimitError       429 (``retry_after`` seconds, when the server said)
    │   │   └── ServerError          5xx
    │   ├── ProviderConnectionError  no answer: refused, reset, broken body
    │   │   └── ProviderTimeout      connect or read timeout (stall between chunks)
    │   ├── StreamError              an ``error`` object inside a 200 response or stream
    │   └── ReplyTooLarge            a reply, one stream line or a response body passed its
    │                                size cap: clawnb stopped reading
    ├── ConfigError                  a config file or value is invalid (names file and key)
    ├── SafetyViolation              a safety check refused a call (clawnb.safety; the gate
    │                                turns it into an ``error: safety check failed: …`` result)
    ├── SandboxUnavailable           ``[sandbox] mode = "required"`` and bubblewrap cannot run
    ├── SessionError                 a session file is missing or corrupt
    ├── SecretInPromptError          a ``{name}`` in a %%claw prompt would put a key in the request
    ├── UnsafeFileError              a workspace file clawnb reads by itself (CLAUDE.md …) is a
    │                                link out, a FIFO, a device or too big (clawnb.control.files)
    ├── ShadowedModuleError          a module in the workspace shadows one clawnb needs; clawnb
    │                                did not import it (clawnb.control.imports)
    ├── CommandError                 a ``/command`` unknown or used wrongly (one line to show)
    └── AgentError                   the loop itself stopped
        └── MaxTurnsExceeded

The errors that carry fields (``ProviderHTTPError`` and its subclasses, ``StreamError``,
``ReplyTooLarge``) are dataclasses on one private base, ``_FieldsError``: each declares its
fields once and words its one line (``str(error)``) from them, and a pickled copy keeps them.

Tool failures are *not* exceptions to the loop's caller: they become ``error: …`` tool
results the model reads. The HTTP provider (:mod:`clawnb.providers.openai`) maps every httpx
failure onto this tree with ``raise … from exc``; messages carry the server's own words and
never an API key.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

__all__ = [
    "AgentError",
    "AuthenticationError",
    "BadRequestError",
    "ClawError",
    "CommandError",
    "ConfigError",
    "ContextOverflowError",
    "MaxTurnsExceeded",
    "ProviderConfigError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderHTTPError",
    "ProviderTimeout",
    "RateLimitError",
    "ReplyTooLarge",
    "SafetyViolation",
    "SandboxUnavailable",
    "ScriptError",
    "SecretInPromptError",
    "ServerError",
    "SessionError",
    "ShadowedModuleError",
    "StreamError",
    "UnsafeFileError",
]


class ClawError(Exception):
    """Base class of every clawnb exception."""


class ProviderError(ClawError):
    """A provider failed to produce a turn."""


class ProviderConfigError(ProviderError):
    """A provider is misconfigured (missing key, bad URL)."""


class ScriptError(ProviderError):
    """A scripted or recorded model file is malformed, or has no more turns."""


@dataclass(eq=False, repr=False)
class _FieldsError(ProviderError):
    """A provider error made of fields (each subclass declares them once, as a dataclass):
    ``str(error)`` is the one line :meth:`_line` words from them, and a pickled copy (e.g.
    across processes) keeps every field, where a plain exception would come back as its line
    alone. Equality and ``repr`` stay an exception's."""

    def __post_init__(self) -> None:
        super().__init__(self._line())

    def _line(self) -> str:
        raise NotImplementedError

    def __reduce__(self) -> tuple[Any, ...]:
        return (_remake, (type(self), {f.name: getattr(self, f.name) for f in fields(self)}))


def _remake(cls: type[_FieldsError], values: dict[str, Any]) -> _FieldsError:
    return cls(**values)


@dataclass(eq=False, repr=False)
class ProviderHTTPError(_FieldsError):
    """The server answered with an HTTP error status.

    ``message`` is the server's own explanation (``error.message`` of the JSON body, or the
    start of the body); ``code`` its error code, a number or a string, when it sent one;
    ``endpoint`` the URL it was sent to, when that helps (a 404); ``hint`` what the person can
    do about it (the provider words it, see :mod:`clawnb.providers.openai`), after a dash on
    the same line, so every front end shows the same one line: ``str(error)``.
    """

    status: int
    message: str
    code: str | int | None = None
    retry_after: float | None = None
    endpoint: str | None = None
    hint: str | None = None

    def _line(self) -> str:
        line = f"HTTP {self.status}: {self.message}" if self.message else f"HTTP {self.status}"
        if self.code is not None and str(self.code) != str(self.status):
            line += f" (code {self.code})"
        if self.endpoint:
            line += f" [POST {self.endpoint}]"
        if self.hint:
            line += f" — {self.hint}"
        return line


class BadRequestError(ProviderHTTPError):
    """The request was refused as such (bad model name, context too long, bad schema)."""


@dataclass(eq=False, repr=False)
class ContextOverflowError(BadRequestError):
    """The conversation no longer fits the model's context window (each server words this
    differently; :mod:`clawnb.providers.openai` recognises them). Recoverable: compact or drop
    old turns and ask again. ``context_window`` is the server's limit in tokens when it said."""

    context_window: int | None = field(default=None, kw_only=True)

    prompt_kept = True
    """Set by ``AgentSession.send``: False when the prompt that overflowed was taken back out
    of the history (it alone did not fit), so the next one works."""


class AuthenticationError(ProviderHTTPError):
    """The key is missing, wrong, or not allowed to use this model."""


class RateLimitError(ProviderHTTPError):
    """Too many requests (429); ``retry_after`` is the server's suggested wait in seconds."""


class ServerError(ProviderHTTPError):
    """The server failed (5xx)."""


class ProviderConnectionError(ProviderError):
    """No usable answer: connection refused or reset, or the body broke off."""


class ProviderTimeout(ProviderConnectionError):
    """Connecting took too long, or the server stalled longer than the read timeout."""


@dataclass(eq=False, repr=False)
class StreamError(_FieldsError):
    """The server reported an error inside a successful (200) response — usually mid-stream."""

    message: str
    code: str | int | None = None

    def _line(self) -> str:
        line = f"the server reported an error: {self.message}"
        return line if self.code is None else f"{line} (code {self.code})"


@dataclass(eq=False, repr=False)
class ReplyTooLarge(_FieldsError):
    """What the server sent passed a size cap, so clawnb stopped reading and closed the
    connection: ``what`` says which part (the model's reply — text, reasoning and tool-call
    arguments —, one line of its stream, or a whole response body), ``limit`` the cap in bytes
    and ``setting`` the config key that raises it. The turn is not added to the history."""

    what: str
    limit: int
    setting: str = ""

    def _line(self) -> str:
        line = f"{self.what} passed {_size(self.limit)}; stopped reading"
        return f"{line} (the limit is {self.setting})" if self.setting else line


def _size(n: int) -> str:
    for unit, factor in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if n >= factor:
            value = n / factor
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} bytes"


class ConfigError(ClawError):
    """A configuration file or value is invalid."""


class SafetyViolation(ClawError):
    """A safety check refused a call; the message is the reason shown to the model."""


class SandboxUnavailable(ClawError):
    """``[sandbox] mode = "required"`` and bubblewrap is missing or does not work here."""


class SessionError(ClawError):
    """A session file is missing or corrupt."""


class SecretInPromptError(ClawError):
    """A ``{name}`` in a prompt would have put a key into what is sent to the model."""


class UnsafeFileError(ClawError):
    """A file the workspace supplies (an instruction file) was not read: it leads out of its
    directory, is not a regular file, or is too big. The message names the file and says why,
    never what it holds."""


class ShadowedModuleError(ClawError):
    """A module clawnb needs would come from (or already came from) the workspace or the
    current folder instead of the installed environment, so clawnb did not use it."""


class CommandError(ClawError):
    """A ``/command`` was unknown or used wrongly; the message is the one line to show."""


class AgentError(ClawError):
    """The agent loop could not continue."""


class MaxTurnsExceeded(AgentError):
    def __init__(self, max_turns: int):
        super().__init__(f"exceeded max turns ({max_turns})")
        self.max_turns = max_turns
