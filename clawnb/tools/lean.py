"""A lean tool set for models behind a small context window (``[model] tools = "lean"``).

The standard set (:func:`clawnb.tools.default_tools`) sends eight to ten schemas with every
request — about 1,300 tokens by clawnb's estimate, before the system prompt; on llama-server
the whole fixed prompt is 1,844 tokens with them and 830 with the lean set. The lean set is
the five tools an agent cannot do without — ``read``, ``write``, ``edit``, ``bash``,
``grep`` — each with a one-line description and only the parameters a small model needs
(``bash`` finds files and lists folders; notebooks are read as files). They are the standard
tools themselves (same checks, same gate, same read-before-edit state), given shorter
definitions: each lean parameter is one of the tool's own, so every call a lean schema allows
is one the tool accepts.
"""

from __future__ import annotations

import os
from typing import Any

from ..types import Tool, ToolDefinition, ToolSet

__all__ = ["LEAN_TOOLS", "TOOL_SETS", "lean_definition", "lean_tools"]

TOOL_SETS = ("standard", "lean")

# name -> (description, [(parameter, type, required)])
LEAN_TOOLS: dict[str, tuple[str, list[tuple[str, str, bool]]]] = {
    "read": ("Read a text file.", [("path", "string", True), ("offset", "integer", False)]),
    "write": ("Write a whole file.", [("path", "string", True), ("content", "string", True)]),
    "edit": (
        "Replace old_string (exact, once) with new_string in a file.",
        [("path", "string", True), ("old_string", "string", True), ("new_string", "string", True)],
    ),
    "bash": ("Run a bash command.", [("command", "string", True)]),
    "grep": ("Search files for a regex.", [("pattern", "string", True), ("path", "string", False)]),
}


def lean_definition(definition: ToolDefinition) -> ToolDefinition:
    """``definition`` in its lean form (the standard one for a tool the lean set lacks)."""
    lean = LEAN_TOOLS.get(definition.name)
    if lean is None:
        return definition
    description, params = lean
    own: dict[str, Any] = definition.parameters.get("properties", {})
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, kind, needed in params:
        if name not in own:  # never offer a parameter the tool does not read
            continue
        properties[name] = {"type": kind}
        if needed:
            required.append(name)
    return ToolDefinition(
        definition.name,
        description,
        {"type": "object", "properties": properties, "required": required},
    )


def lean_tools(
    workspace: str | os.PathLike[str] | None = None, *, sandbox: Any = None, **options: Any
) -> ToolSet:
    """The lean set for ``workspace``: the standard ``read``, ``write``, ``edit``, ``bash``
    and ``grep`` (sharing one read-before-edit state) with their lean definitions, and
    ``ask_user`` as it is when an ``input_handler`` is given."""
    from . import default_tools

    standard = default_tools(workspace, web=False, sandbox=sandbox, deferred=(), **options)
    kept: list[Tool] = []
    for tool in standard:
        if tool.definition.name in LEAN_TOOLS:
            # an instance attribute in place of the class's definition: the tool is unchanged
            tool.definition = lean_definition(tool.definition)  # type: ignore[misc]
            kept.append(tool)
        elif tool.definition.name == "ask_user":
            kept.append(tool)
    return ToolSet(kept)
