"""The nouns of the agent (book chapter 4).

Everything the loops, providers and front ends pass around lives here:

* :class:`Message` with its four variants ``Message.System``, ``Message.User``,
  ``Message.Assistant`` and ``Message.ToolResult``;
* :class:`AssistantTurn` — one model reply, with :class:`StopReason`, :class:`ToolCall` s and
  :class:`TokenUsage`;
* :class:`ToolDefinition` — the JSON schema a tool shows the model;
* the :class:`Tool`, :class:`Provider` and :class:`StreamProvider` protocols and :class:`ToolSet`.

Every noun serialises to plain JSON-able dicts and back without loss
(``to_dict`` / ``from_dict``), which is what sessions and replays store.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Protocol,
    TypeAlias,
    cast,
    dataclass_transform,
    runtime_checkable,
)

if TYPE_CHECKING:  # events.py builds on these nouns; only the type checker needs its names
    from .events import OnStreamEvent

__all__ = [
    "JSON",
    "JSONObject",
    "AnyProvider",
    "AssistantTurn",
    "Message",
    "Provider",
    "StopReason",
    "StreamProvider",
    "TokenUsage",
    "Tool",
    "ToolCall",
    "ToolDefinition",
    "ToolSet",
    "ToolTraits",
    "CAUTIOUS",
    "Declared",
    "Hiding",
    "Sandboxed",
    "traits_of",
    "Variant",
    "compact_json",
    "complete",
]


JSON: TypeAlias = "dict[str, JSON] | list[JSON] | str | int | float | bool | None"
"""Any value JSON can carry: what a model's tool arguments decode to (an object, usually, but
the model may send anything, so a tool narrows before it reads)."""
JSONObject: TypeAlias = "dict[str, JSON]"
"""A JSON object: tool arguments once a tool has checked them, a hook's ``{"args": …}``."""


@dataclass_transform(frozen_default=True)
class Variant:
    """Base of one variant of an enum the book writes in Rust (``StreamEvent::TextDelta``…):
    a subclass is a frozen dataclass of its annotated fields, so variants compare by value,
    hash, and take part in ``match`` by position or keyword."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        dataclass(frozen=True)(cls)


def compact_json(value: JSON) -> str:
    """JSON the way the book's ``serde_json::Value::to_string`` writes it: compact, sorted keys."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


class StopReason(StrEnum):
    """Why the model stopped: it is finished (``STOP``) or wants tools run (``TOOL_USE``)."""

    STOP = "stop"
    TOOL_USE = "tool_use"
    LENGTH = "length"
    """The output cap cut the reply short (``finish_reason: "length"``): it looks finished
    but is not; front ends say so (:meth:`AssistantTurn.cut_off_note`)."""


@dataclass
class TokenUsage:
    """Tokens one request consumed. Both counts default to zero."""

    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )

    def to_dict(self) -> JSONObject:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TokenUsage:
        return cls(int(data.get("input_tokens", 0)), int(data.get("output_tokens", 0)))


@dataclass
class ToolCall:
    """The model asks for tool ``name`` to run with ``arguments`` (usually a JSON object).

    ``arguments`` is whatever JSON the model sent. When the model sent text that is not JSON,
    ``arguments`` is ``None`` and ``invalid_arguments`` keeps the raw text so the loop can tell
    the model what went wrong instead of running the tool with nothing.
    """

    id: str
    name: str
    arguments: JSON = field(default_factory=dict)
    invalid_arguments: str | None = None

    def to_dict(self) -> JSONObject:
        data = {"id": self.id, "name": self.name, "arguments": self.arguments}
        if self.invalid_arguments is not None:
            data["invalid_arguments"] = self.invalid_arguments
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        return cls(
            id=data["id"],
            name=data["name"],
            arguments=data.get("arguments", {}),
            invalid_arguments=data.get("invalid_arguments"),
        )


@dataclass
class AssistantTurn:
    """One reply from the model.

    ``text`` is ``None`` when the model said nothing (``""`` stays ``""``). ``reasoning`` holds
    any separate reasoning text a server streamed (never mixed into ``text``).
    """

    text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    stop_reason: StopReason = StopReason.STOP
    usage: TokenUsage | None = None
    reasoning: str | None = None
    # the cap (max_tokens) sent, when it cut the reply short; out of the repr the course prints
    output_limit: int | None = field(default=None, repr=False)

    def cut_off_note(self) -> str | None:
        """``"cut off at the output limit (N tokens)"`` for a reply the cap cut short."""
        if self.stop_reason != StopReason.LENGTH:
            return None
        tokens = self.output_limit or (self.usage.output_tokens if self.usage else 0)
        note = "cut off at the output limit"
        return f"{note} ({tokens} tokens)" if tokens else note

    def to_dict(self) -> JSONObject:
        data: JSONObject = {
            "text": self.text,
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "stop_reason": self.stop_reason.value,
            "usage": self.usage.to_dict() if self.usage is not None else None,
        }
        if self.reasoning is not None:
            data["reasoning"] = self.reasoning
        if self.output_limit is not None:
            data["output_limit"] = self.output_limit
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AssistantTurn:
        if not isinstance(data, dict):
            raise TypeError(f"an assistant turn must be a JSON object, got {type(data).__name__}")
        calls = data.get("tool_calls") or []
        if not isinstance(calls, list):
            raise TypeError("'tool_calls' must be a list")
        stop = data.get("stop_reason")
        stop_reason = (
            StopReason(stop) if stop else (StopReason.TOOL_USE if calls else StopReason.STOP)
        )
        usage = data.get("usage")
        text = data.get("text")
        if text is not None and not isinstance(text, str):
            raise TypeError("'text' must be a string or null")
        return cls(
            text=text,
            tool_calls=[ToolCall.from_dict(c) for c in calls],
            stop_reason=stop_reason,
            usage=TokenUsage.from_dict(usage) if usage else None,
            reasoning=data.get("reasoning"),
            output_limit=data.get("output_limit"),
        )


# Inside ``Message`` the names ``System``… are its class attributes, not types, so its
# constructors name the variant classes through these aliases.
_System: TypeAlias = "System"
_User: TypeAlias = "User"
_Assistant: TypeAlias = "Assistant"
_ToolResult: TypeAlias = "ToolResult"


class Message:
    """A conversation entry. Use the variants: ``Message.System(text)``, ``Message.User(text)``,
    ``Message.Assistant(turn)`` and ``Message.ToolResult(id, content)`` — or the lower-case
    constructors ``Message.system(...)`` etc. Variants support ``match``::

        match msg:
            case Message.Assistant(turn=turn): ...
            case Message.ToolResult(id=call_id, content=content): ...
    """

    __slots__ = ()
    role: ClassVar[str] = ""

    System: ClassVar[type[_System]]
    User: ClassVar[type[_User]]
    Assistant: ClassVar[type[_Assistant]]
    ToolResult: ClassVar[type[_ToolResult]]

    @staticmethod
    def system(content: str) -> _System:
        return System(content)

    @staticmethod
    def user(content: str) -> _User:
        return User(content)

    @staticmethod
    def assistant(turn: AssistantTurn) -> _Assistant:
        return Assistant(turn)

    @staticmethod
    def tool_result(id: str, content: str) -> _ToolResult:
        return ToolResult(id, content)

    def to_dict(self) -> JSONObject:
        raise NotImplementedError

    @staticmethod
    def from_dict(data: dict[str, Any]) -> Message:
        """Rebuild a message from :meth:`to_dict` output; raises ``ValueError`` on bad input."""
        if not isinstance(data, dict):
            raise ValueError(f"a message must be a JSON object, got {type(data).__name__}")
        role = data.get("role")
        try:
            if role == "system":
                return System(_as_str(data["content"]))
            if role == "user":
                label = data.get("label")
                return User(_as_str(data["content"]), None if label is None else _as_str(label))
            if role == "assistant":
                return Assistant(AssistantTurn.from_dict(data["turn"]))
            if role == "tool":
                return ToolResult(_as_str(data["id"]), _as_str(data["content"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"invalid {role} message: {exc}") from exc
        raise ValueError(f"unknown message role {role!r}")


def _as_str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


@dataclass(slots=True)
class System(Message):
    content: str
    role: ClassVar[str] = "system"

    def to_dict(self) -> JSONObject:
        return {"role": "system", "content": self.content}


@dataclass(slots=True)
class User(Message):
    """A user message. ``label`` is how front ends show it when the content is not the
    person's own words (a planning request: ``/plan <task>`` instead of the instructions the
    agent adds); the model always gets ``content``."""

    content: str
    label: str | None = None
    role: ClassVar[str] = "user"

    def to_dict(self) -> JSONObject:
        data: JSONObject = {"role": "user", "content": self.content}
        if self.label is not None:
            data["label"] = self.label
        return data

    @property
    def shown(self) -> str:
        """What a person sees for this message: its label, else its content."""
        return self.label if self.label is not None else self.content


@dataclass(slots=True)
class Assistant(Message):
    turn: AssistantTurn
    role: ClassVar[str] = "assistant"

    def to_dict(self) -> JSONObject:
        return {"role": "assistant", "turn": self.turn.to_dict()}


@dataclass(slots=True)
class ToolResult(Message):
    id: str
    content: str
    role: ClassVar[str] = "tool"

    def to_dict(self) -> JSONObject:
        return {"role": "tool", "id": self.id, "content": self.content}


Message.System = System
Message.User = User
Message.Assistant = Assistant
Message.ToolResult = ToolResult


class ToolDefinition:
    """Name, description and JSON-schema parameters of a tool, built fluently::

    ToolDefinition("read", "Read the contents of a file.").param(
        "path", "string", "The file path to read", required=True)
    """

    __slots__ = ("name", "description", "parameters")

    def __init__(self, name: str, description: str, parameters: dict[str, Any] | None = None):
        self.name = name
        self.description = description
        self.parameters: dict[str, Any] = parameters or {
            "type": "object",
            "properties": {},
            "required": [],
        }

    def param(
        self, name: str, type_: str, description: str, required: bool = False
    ) -> ToolDefinition:
        """Add a parameter ``{"type": type_, "description": description}`` (optional unless
        ``required``)."""
        return self.param_raw(name, {"type": type_, "description": description}, required)

    def param_raw(
        self, name: str, schema: dict[str, Any], required: bool = False
    ) -> ToolDefinition:
        """Add a parameter with a full JSON schema (arrays, enums, …)."""
        self.parameters["properties"][name] = schema
        if required and name not in self.parameters["required"]:
            self.parameters["required"].append(name)
        return self

    def to_dict(self) -> JSONObject:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolDefinition:
        return cls(data["name"], data.get("description", ""), data.get("parameters"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ToolDefinition) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"ToolDefinition(name={self.name!r})"


@runtime_checkable
class Tool(Protocol):
    """Anything with a :class:`ToolDefinition` and an async ``call``.

    ``call`` returns the text the model sees. Errors are raised as exceptions; the loop turns
    them into ``error: {message}`` results. What a tool is allowed to count on — running in
    parallel, running unasked in plan mode — it declares as :class:`ToolTraits`
    (:func:`traits_of`); a tool that declares nothing gets the fail-closed defaults.
    """

    @property
    def definition(self) -> ToolDefinition: ...

    async def call(self, args: JSON) -> str: ...


@dataclass(frozen=True)
class ToolTraits:
    """What a tool declares about itself, in one place: the gate, the executor, plan mode and
    the listings read these and nothing else. Every default is the cautious answer.

    MCP tools map a server's annotations (``readOnlyHint``, ``destructiveHint``,
    ``openWorldHint``) onto these — as hints from an untrusted party, which never approve a
    call by themselves.
    """

    read_only: bool = False  # changes nothing: plan mode offers it, default mode runs it
    concurrency_safe: bool | None = None  # may run beside other calls; None: when read-only
    destructive: bool = False  # may lose data a checkpoint cannot give back
    always_asks: bool = False  # asks in every mode (runs code in the person's own process)
    open_world: bool = False  # reaches outside the machine (the network)
    auto_allowed: bool = False  # runs unasked: an OS sandbox bounds what it can do
    deferred: bool = False  # its schema is sent only once tool_search loads it

    @property
    def parallel(self) -> bool:
        """Whether the executor may run this tool's calls alongside others."""
        return self.read_only if self.concurrency_safe is None else self.concurrency_safe


CAUTIOUS = ToolTraits()
"""The traits of a tool that declares none."""


@runtime_checkable
class Declared(Protocol):
    """A tool that declares its :class:`ToolTraits` (every tool clawnb ships does)."""

    @property
    def traits(self) -> ToolTraits: ...


def traits_of(tool: object) -> ToolTraits:
    """``tool``'s declared traits. A tool written to the book's protocol alone (a learner's,
    the course's) has the book's two flags, ``read_only`` and ``concurrency_safe``: this is
    the one place they are read, and nothing else is assumed of such a tool."""
    # ``isinstance(tool, Declared)``, spelt as what it checks (the one attribute): the loop
    # asks this of every tool on every request, and a runtime check against a Protocol costs
    # ~100× more on Python 3.11
    traits = getattr(tool, "traits", None)
    if isinstance(traits, ToolTraits):
        return traits
    read_only = getattr(tool, "read_only", False) is True
    concurrent = getattr(tool, "concurrency_safe", False) is True
    if not (read_only or concurrent):
        return CAUTIOUS
    return ToolTraits(read_only=read_only, concurrency_safe=concurrent)


@runtime_checkable
class Sandboxed(Protocol):
    """A tool whose calls run in an OS sandbox it can describe in one line (bash:
    ``"sandboxed: workspace-write, no network"``), for the card and the question."""

    @property
    def sandbox_description(self) -> str: ...


@runtime_checkable
class Hiding(Protocol):
    """A tool that decides which other tools the model sees this turn (``tool_search`` hides
    the deferred ones it has not loaded, ``exit_plan`` everything but the read-only ones)."""

    def hides(self, tool: Tool, tools: ToolSet) -> bool: ...


@functools.lru_cache(maxsize=256)
def _hides(cls: type) -> bool:
    """Whether a tool class is :class:`Hiding` — asked per request of every tool, so the
    (slow) Protocol check is made once per class; ``hides`` is a method, a class attribute."""
    return callable(getattr(cls, "hides", None))


class ToolSet:
    """Tools by name. Adding a tool whose name is taken replaces the old one."""

    def __init__(self, tools: Iterable[Tool] = ()):
        self._tools: dict[str, Tool] = {}
        self._definitions: list[ToolDefinition] | None = None
        for tool in tools:
            self.push(tool)

    def with_(self, tool: Tool) -> ToolSet:
        """Builder form of :meth:`push`."""
        self.push(tool)
        return self

    def push(self, tool: Tool) -> None:
        self._tools[tool.definition.name] = tool
        self._definitions = None

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def remove(self, name: str) -> Tool | None:
        self._definitions = None
        return self._tools.pop(name, None)

    def definitions(self) -> list[ToolDefinition]:
        """The definitions to show the model (a fresh list; cached between changes)."""
        if self._definitions is None:
            self._definitions = [t.definition for t in self._tools.values()]
        return self._definitions.copy()

    def active_definitions(self) -> list[ToolDefinition]:
        """The definitions to send the model this turn. A tool in the set may hide others by
        offering ``hides(tool, toolset) -> bool`` — ``tool_search`` hides the deferred tools
        it has not loaded yet, the planning phase everything but its read-only tools — so the
        loop never needs to know which tool does that."""
        tools = list(self._tools.values())
        hiders = [cast(Hiding, t) for t in tools if _hides(type(t))]
        if not hiders:
            return self.definitions()
        return [t.definition for t in tools if not any(h.hides(t, self) for h in hiders)]

    def names(self) -> list[str]:
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ToolSet({self.names()!r})"


@runtime_checkable
class Provider(Protocol):
    """A model that answers a whole turn at once."""

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn: ...


@runtime_checkable
class StreamProvider(Protocol):
    """A model that streams: ``on_event`` sees every :class:`~clawnb.providers.sse.StreamEvent`
    as it arrives (a plain function or a coroutine function), and the assembled turn is
    returned at the end."""

    async def stream_chat(
        self, messages: list[Message], tools: list[ToolDefinition], on_event: OnStreamEvent = None
    ) -> AssistantTurn: ...


AnyProvider: TypeAlias = Provider | StreamProvider
"""What a loop, a compaction or a subagent accepts as its model: either protocol."""


async def complete(
    provider: AnyProvider, messages: list[Message], tools: list[ToolDefinition]
) -> AssistantTurn:
    """One whole turn from either kind of provider, nobody listening: ``chat`` when it has
    one, else ``stream_chat`` without a callback."""
    if isinstance(provider, Provider):
        return await provider.chat(messages, tools)
    return await provider.stream_chat(messages, tools, None)
