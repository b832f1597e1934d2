"""Deferred tools and ``tool_search`` (seed 002).

Every tool schema sent to the model costs context tokens on every turn. A tool marked
*deferred* stays registered in the :class:`~clawnb.types.ToolSet` (it can run) but its
definition is not sent to the model until ``tool_search`` activates it; the system prompt
(and ``tool_search``'s own description) list the deferred names so the model knows what it
can load.

* mark a tool deferred with a class/instance attribute ``deferred = True``, or wrap it:
  :func:`defer` (``defer(WebFetchTool())``);
* the loops ask :func:`active_definitions` which definitions to send each turn;
* :func:`deferred_tools_section` gives the lines for the system prompt.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from ..types import JSON, Tool, ToolDefinition, ToolSet, ToolTraits, traits_of
from .base import BaseTool, require_str

__all__ = [
    "Deferred",
    "ToolSearchTool",
    "active_definitions",
    "defer",
    "deferred_tools_section",
    "is_deferred",
]

NAME = "tool_search"


def is_deferred(tool: Tool) -> bool:
    return traits_of(tool).deferred


class Deferred:
    """Wraps a tool so it is deferred; everything else is the inner tool's."""

    def __init__(self, tool: Tool) -> None:
        self.inner = tool

    @property
    def definition(self) -> ToolDefinition:
        return self.inner.definition

    @property
    def traits(self) -> ToolTraits:
        return dataclasses.replace(traits_of(self.inner), deferred=True)

    @property
    def read_only(self) -> bool:
        return self.traits.read_only

    @property
    def concurrency_safe(self) -> bool:
        return self.traits.parallel

    async def call(self, args: JSON) -> str:
        return await self.inner.call(args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"defer({self.inner!r})"


def defer(tool: Tool) -> Deferred:
    """Mark ``tool`` as deferred: registered, but hidden from the model until searched."""
    return tool if isinstance(tool, Deferred) else Deferred(tool)


def _search_tool(tools: ToolSet) -> ToolSearchTool | None:
    tool = tools.get(NAME)
    return tool if isinstance(tool, ToolSearchTool) else None


def active_definitions(tools: ToolSet) -> list[ToolDefinition]:
    """The definitions to send the model this turn (:meth:`ToolSet.active_definitions`): every
    tool that is not deferred, plus the deferred ones ``tool_search`` has activated. Without a
    ``tool_search`` tool nothing could activate them, so deferred tools are then sent like any
    other."""
    return tools.active_definitions()


def deferred_tools_section(tools: ToolSet) -> str | None:
    """System-prompt lines naming the deferred tools (``None`` when there are none)."""
    names = [t.definition.name for t in tools if is_deferred(t)]
    if not names or _search_tool(tools) is None:
        return None
    return (
        "Some tools are available but not loaded yet, to save context: "
        + ", ".join(sorted(names))
        + f". Call `{NAME}` with a name or keywords to load one before using it."
    )


class ToolSearchTool(BaseTool):
    """``tool_search``: find deferred tools by name or keywords and make them available.

    The tool keeps the set of activated names for its session. It searches the ToolSet it is
    attached to (:meth:`ToolSet.active_definitions` attaches the loop's set every turn).
    """

    # changes no file, but which tools the next turn sees: not beside other calls
    traits = ToolTraits(read_only=True, concurrency_safe=False)

    def __init__(self, tools: ToolSet | None = None) -> None:
        self.tools = tools
        self.active: set[str] = set()

    def attach(self, tools: ToolSet) -> None:
        self.tools = tools

    def hides(self, tool: Tool, tools: ToolSet) -> bool:
        """:meth:`ToolSet.active_definitions` asks: a deferred tool stays hidden until loaded
        (searched in ``tools``, the set the loop is using)."""
        self.attach(tools)
        return is_deferred(tool) and tool.definition.name not in self.active

    def _deferred(self) -> list[Tool]:
        if self.tools is None:
            return []
        return [t for t in self.tools if is_deferred(t)]

    @property
    def definition(self) -> ToolDefinition:  # type: ignore[override]
        names = sorted(
            t.definition.name for t in self._deferred() if t.definition.name not in self.active
        )
        listing = f" Not yet loaded: {', '.join(names)}." if names else ""
        return ToolDefinition(
            NAME,
            "Load deferred tools so you can call them. Search by exact name(s) "
            "(comma-separated) or by keywords matched against names and descriptions; "
            "matching tools become available from your next step." + listing,
        ).param("query", "string", "Tool name(s) or keywords to search for", required=True)

    async def call(self, args: JSON) -> str:
        query = require_str(args, "query").strip()
        deferred = self._deferred()
        by_name = {t.definition.name: t for t in deferred}
        wanted = [part.strip() for part in query.split(",") if part.strip()]
        if wanted and all(name in by_name for name in wanted):
            hits = [by_name[name] for name in wanted]
        else:
            terms = query.lower().replace(",", " ").split()
            hits = [
                t
                for t in deferred
                if terms
                and all(
                    term in f"{t.definition.name} {t.definition.description}".lower()
                    for term in terms
                )
            ]
        if not hits:
            available = ", ".join(sorted(by_name)) or "none"
            return f"No matching deferred tools found. Deferred tools: {available}."
        for tool in hits:
            self.active.add(tool.definition.name)
        payload = [
            {
                "name": t.definition.name,
                "description": t.definition.description,
                "parameters": t.definition.parameters,
            }
            for t in hits
        ]
        names = ", ".join(t.definition.name for t in hits)
        return f"Loaded: {names}. They are available from your next step.\n" + json.dumps(
            payload, indent=2
        )
