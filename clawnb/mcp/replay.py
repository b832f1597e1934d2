"""MCP traffic in recordings: a session recorded with ``--record FILE`` keeps its MCP tools
and every call's result in the same file, and ``replay:FILE`` plays them back with no server
running — so a notebook that used MCP tools re-runs offline and deterministically (nbval).

The recording gains two kinds of lines beside the model's turns (which the scripted model
reads; these it skips):

* ``{"mcp_tools": [{"name": "mcp__time__now", "description": …, "parameters": …,
  "read_only": false, "open_world": false}, …]}`` — the tools the model was offered, written
  when the session starts;
* ``{"mcp": {"tool": "mcp__time__now", "arguments": {…}, "result": "…", "is_error": false}}``
  — one per call, in call order, redacted like every recording.

On replay each recorded tool is a :class:`ReplayedMcpTool` behind the same gate (its traits as
recorded, so a call that asked then asks now): a call returns the next recorded result for
that tool — the first whose arguments match, else the next one in order — and a call the
recording never saw is an error the model reads, naming the tool.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..control.secrets import redact
from ..tools.base import ToolError
from ..types import ToolDefinition, ToolTraits

__all__ = ["McpRecorder", "ReplayedMcpTool", "recorded_tools"]


class McpRecorder:
    """Appends the MCP lines of a recording to ``path`` (the model's recording file)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def _write(self, entry: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(redact(json.dumps(entry, ensure_ascii=False)) + "\n")

    def tools(self, tools: Iterable[Any]) -> None:
        rows = []
        for tool in tools:
            traits = tool.traits
            rows.append(
                {
                    "name": tool.definition.name,
                    "description": tool.definition.description,
                    "parameters": tool.definition.parameters,
                    "read_only": bool(traits.read_only),
                    "open_world": bool(traits.open_world),
                }
            )
        if rows:
            self._write({"mcp_tools": rows})

    def call(self, name: str, arguments: dict[str, Any], result: str, *, is_error: bool) -> None:
        self._write(
            {"mcp": {"tool": name, "arguments": arguments, "result": result, "is_error": is_error}}
        )


class _Calls:
    """The recorded calls of one replay, shared by its tools."""

    def __init__(self, calls: list[dict[str, Any]]) -> None:
        self.calls = calls

    def take(self, name: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        mine = [c for c in self.calls if c.get("tool") == name]
        pick = next((c for c in mine if c.get("arguments") == arguments), mine[0] if mine else None)
        if pick is not None:
            self.calls.remove(pick)
        return pick


class ReplayedMcpTool:
    """A recorded MCP tool: its definition and traits as recorded, its results played back."""

    def __init__(self, row: dict[str, Any], calls: _Calls) -> None:
        self.definition = ToolDefinition(
            str(row["name"]), str(row.get("description", "")), row.get("parameters") or {}
        )
        self.traits = ToolTraits(
            read_only=bool(row.get("read_only")),
            destructive=not row.get("read_only"),
            open_world=bool(row.get("open_world")),
        )
        self._calls = calls

    async def call(self, args: Any) -> str:
        name = self.definition.name
        arguments = args if isinstance(args, dict) else {}
        recorded = self._calls.take(name, arguments)
        if recorded is None:
            raise ToolError(
                f"{name}: this replay has no recorded result left for it "
                "(the recording was made with other calls; record the session again)"
            )
        if recorded.get("is_error"):
            raise ToolError(str(recorded.get("result", "")))
        return str(recorded.get("result", ""))

    def __repr__(self) -> str:
        return f"ReplayedMcpTool({self.definition.name!r})"


def recorded_tools(path: str | os.PathLike[str]) -> list[ReplayedMcpTool] | None:
    """The MCP tools of a recording, ready to replay; ``None`` when it holds none (then the
    configured servers start as usual). Lines that are not MCP lines are the model's."""
    rows: dict[str, dict[str, Any]] = {}
    calls: list[dict[str, Any]] = []
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError:
        return None  # the scripted model says what is wrong with the file
    for line in text.splitlines():
        if '"mcp' not in line:
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(entry, dict):
            continue
        for row in entry.get("mcp_tools") or []:
            if isinstance(row, dict) and isinstance(row.get("name"), str):
                rows[row["name"]] = row
        if isinstance(entry.get("mcp"), dict):
            calls.append(entry["mcp"])
    if not rows:
        return None
    shared = _Calls(calls)
    return [ReplayedMcpTool(row, shared) for row in rows.values()]
