"""A server's tools as clawnb tools: ``mcp__SERVER__TOOL``, behind the same gate as built-ins.

:class:`McpTool` is a :class:`clawnb.types.Tool`: its definition carries the server's input
schema as the JSON schema the model sees, and ``call`` goes through the manager (so it runs on
the manager's loop, with the entry's ``tool_timeout``, cancelled with the turn).

Names: ``mcp__`` + the server's name + ``__`` + the tool's name, with every character other
than letters, digits, ``_`` and ``-`` replaced by ``_`` and the whole cut to 64 characters (the
limit providers put on function names). A name that is already taken — a built-in, another
server's tool after sanitising — gets ``_2``, ``_3``…; names are given in config order, so the
same config gives the same names. Permission rules match the final name (``mcp__git__*``).

Trust: a server's annotations (``readOnlyHint``, ``destructiveHint``, ``openWorldHint``,
``idempotentHint``) are kept as *hints* on the tool (``read_only_hint`` …) for display. The
tool's ``read_only`` — what plan mode offers and what runs without asking where reads do — is
true only when the user's config says so: ``read_only = true`` (or a list of tool names) for
the server, or ``trust_annotations = true`` and the server's ``readOnlyHint``. Hints that only
make a call stricter are believed: ``openWorldHint: true`` makes the tool ``open_world`` (a
read-only tool that reaches the network is still asked about), and a tool is ``destructive``
unless it is read-only or a trusted server says ``destructiveHint: false``.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..control.secrets import redact
from ..tools.base import ToolError
from ..types import JSON, ToolDefinition, compact_json
from .connection import Connection, ServerTool
from .results import McpImage, render_result

if TYPE_CHECKING:
    from .config import McpServer
    from .manager import McpManager

__all__ = [
    "MAX_DESCRIPTION_CHARS",
    "MAX_NAME_CHARS",
    "McpTool",
    "ValueBinder",
    "tool_name",
    "wrap_tools",
]

MAX_NAME_CHARS = 64
# A description is the server's text in every request's tool list: long ones cost tokens on
# every turn (and are where a hostile server puts its instructions), so they are cut.
MAX_DESCRIPTION_CHARS = 2048
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
# How many calls' images a tool keeps for the cards that show them.
_ATTACHMENTS_KEPT = 32


@runtime_checkable
class ValueBinder(Protocol):
    """A tool of a front end with a live namespace (the notebook's ``inspect_variable``) that
    can hold a value for the model to look at: ``bind_value("time_now", data)`` stores it
    under a fresh name and returns that name."""

    def bind_value(self, base: str, value: object) -> str: ...


def _clean(part: str) -> str:
    return _UNSAFE.sub("_", part) or "_"


def tool_name(server: str, tool: str, taken: set[str]) -> str:
    """The clawnb name for ``tool`` of ``server``: ``mcp__SERVER__TOOL``, sanitised, at most
    :data:`MAX_NAME_CHARS` long, and not in ``taken`` (which it is added to)."""
    base = f"mcp__{_clean(server)}__{_clean(tool)}"[:MAX_NAME_CHARS]
    name = base
    n = 2
    while name in taken:
        suffix = f"_{n}"
        name = base[: MAX_NAME_CHARS - len(suffix)] + suffix
        n += 1
    taken.add(name)
    return name


def _description(server: str, tool: ServerTool) -> str:
    text = _CONTROL.sub("", tool.description or tool.title or "").strip()
    if not text:
        text = f"{tool.name} (a tool of the MCP server {server})"
    if len(text) > MAX_DESCRIPTION_CHARS:
        text = text[: MAX_DESCRIPTION_CHARS - 1] + "…"
    return redact(text)


def _parameters(schema: dict[str, Any]) -> dict[str, Any]:
    # Providers want an object schema at the root; the spec requires one too.
    params = dict(schema)
    params.setdefault("type", "object")
    if params.get("type") == "object":
        params.setdefault("properties", {})
    return params


class McpTool:
    """One MCP tool, wrapped (see the module docstring). ``mcp_server`` / ``mcp_tool`` are the
    original names; ``attachments`` maps a call id to the images its result carried (for the
    notebook card)."""

    def __init__(
        self,
        manager: McpManager,
        spec: McpServer,
        tool: ServerTool,
        name: str,
        *,
        deferred: bool = False,
    ) -> None:
        self.manager = manager
        self.spec = spec
        self.server_tool = tool
        self.mcp_server = spec.name
        self.mcp_tool = tool.name
        self.definition = ToolDefinition(
            name, _description(spec.name, tool), _parameters(tool.input_schema)
        )
        hints = tool.hints
        self.read_only_hint = hints.read_only
        self.destructive_hint = hints.destructive
        self.idempotent_hint = hints.idempotent
        self.open_world_hint = hints.open_world
        self.read_only = spec.marks_read_only(tool.name) or (
            spec.trust_annotations and hints.read_only is True
        )
        self.deferred = deferred
        self.attachments: OrderedDict[str, tuple[McpImage, ...]] = OrderedDict()

    @property
    def concurrency_safe(self) -> bool:
        return self.read_only

    @property
    def traits(self) -> Any:
        """The tool's :class:`clawnb.types.ToolTraits` (where this clawnb has them). Hints
        that make a call *stricter* are believed (a server saying its tool reaches the network
        or destroys data); hints that would loosen it need ``trust_annotations``."""
        from .. import types

        traits_class = getattr(types, "ToolTraits", None)
        if traits_class is None:  # an engine that still reads the separate attributes
            return None
        trusted = self.spec.trust_annotations
        return traits_class(
            read_only=self.read_only,
            destructive=not self.read_only and not (trusted and self.destructive_hint is False),
            open_world=self.open_world_hint is True,
            deferred=self.deferred,
        )

    @property
    def trait_source(self) -> str:
        """Why ``read_only`` is what it is, in words (for ``%claw mcp`` and approval cards)."""
        if self.spec.marks_read_only(self.mcp_tool):
            return "read-only: your config says so"
        if self.read_only:
            return "read-only: the server says so and your config trusts its annotations"
        if self.read_only_hint:
            return "the server says read-only (a hint; not trusted, so it is asked like any tool)"
        return "may change things"

    async def call(self, args: JSON) -> str:
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise ToolError(f"`{self.definition.name}` takes a JSON object of arguments")
        try:
            result = await self.manager.call_tool(self.mcp_server, self.mcp_tool, dict(args))
        except ToolError as exc:
            self._record(args, str(exc), is_error=True)
            raise
        bound = self._bind(result)
        if bound is not None:
            self._record(args, bound, is_error=False)
            return bound
        rendered = render_result(
            result,
            output_schema=self.server_tool.output_schema,
            max_chars=self.spec.max_result_chars,
        )
        if rendered.images:
            self._attach(rendered.images)
        self._record(args, rendered.text, is_error=rendered.is_error)
        if rendered.is_error:
            raise ToolError(rendered.text)
        return rendered.text

    def _bind(self, result: Any) -> str | None:
        """A structured result over ``bind_over_chars`` as a kernel variable: what the model
        reads instead of the payload (its shape and the variable's name), or ``None``."""
        structured = getattr(result, "structured_content", None)
        limit = self.spec.bind_over_chars
        binder = self.manager.binder
        if binder is None or structured is None or not limit:
            return None
        if getattr(result, "is_error", False):
            return None
        body = compact_json(structured)
        if len(body) <= limit:
            return None
        name = binder.bind_value(f"{self.mcp_server}_{self.mcp_tool}", structured)
        return redact(
            f"The structured result ({len(body):,} characters of JSON) is bound to the kernel "
            f"variable `{name}`: {_shape(structured)}. Look into it with inspect_variable "
            f"(e.g. {name}) or run_python instead of asking for the whole payload."
        )

    def _record(self, args: dict[str, Any], text: str, *, is_error: bool) -> None:
        recorder = self.manager.recorder
        if recorder is not None:
            recorder.call(self.definition.name, args, text, is_error=is_error)

    def _attach(self, images: tuple[McpImage, ...]) -> None:
        from ..executor import current_call

        context = current_call.get()
        key = context.call_id if context is not None else ""
        self.attachments[key] = images
        while len(self.attachments) > _ATTACHMENTS_KEPT:
            self.attachments.popitem(last=False)

    def __repr__(self) -> str:
        return f"McpTool({self.definition.name!r})"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'s' * (n != 1)}"


def _shape(value: Any) -> str:
    """A structured value in a few words: a dict's keys, a list's length and item kind."""
    if isinstance(value, dict):
        keys = list(value)
        shown = ", ".join(repr(k) for k in keys[:12]) + (", …" if len(keys) > 12 else "")
        return f"a dict of {_count(len(keys), 'key')} ({shown})"
    if isinstance(value, list):
        kinds = sorted({type(v).__name__ for v in value[:100]})
        return f"a list of {_count(len(value), 'item')} ({', '.join(kinds) or 'empty'})"
    return f"a {type(value).__name__}"


def wrap_tools(
    manager: McpManager,
    connections: Sequence[Connection],
    *,
    reserved: Iterable[str] = (),
    defer: bool = False,
) -> list[McpTool]:
    """Every tool of ``connections`` as an :class:`McpTool`, named so that nothing collides
    with ``reserved`` or with each other."""
    taken = set(reserved)
    out: list[McpTool] = []
    for connection in connections:
        for tool in connection.tools:
            name = tool_name(connection.name, tool.name, taken)
            out.append(McpTool(manager, connection.spec, tool, name, deferred=defer))
    return out
