"""MCP client: the user's own tools through the Model Context Protocol, on the official SDK.

* :mod:`~clawnb.mcp.config` — server entries from ``[mcp_servers.NAME]``, ``[[mcp_servers]]``
  and ``.mcp.json``, one readable line per bad entry;
* :mod:`~clawnb.mcp.connection` — one server: owner task, stdio/HTTP transport, shutdown;
* :mod:`~clawnb.mcp.manager` — every server of a session, on a loop of its own;
* :mod:`~clawnb.mcp.tools` — each server tool as a clawnb tool ``mcp__SERVER__TOOL``;
* :mod:`~clawnb.mcp.results` — results as the text the model reads.

Importing this package (or any module in it) does not import the SDK (``mcp``, the
``clawnb[mcp]`` extra): that happens when a server starts. See ``docs/mcp.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "McpServer": "clawnb.mcp.config",
    "ParsedServers": "clawnb.mcp.config",
    "load_mcp_json": "clawnb.mcp.config",
    "merge_servers": "clawnb.mcp.config",
    "servers_from_mcp_json": "clawnb.mcp.config",
    "servers_from_toml": "clawnb.mcp.config",
    "McpError": "clawnb.mcp.errors",
    "McpManager": "clawnb.mcp.manager",
    "ServerStatus": "clawnb.mcp.manager",
    "ServerState": "clawnb.mcp.connection",
    "McpTool": "clawnb.mcp.tools",
    "McpImage": "clawnb.mcp.results",
    "render_result": "clawnb.mcp.results",
}

__all__ = [
    "McpError",
    "McpImage",
    "McpManager",
    "McpServer",
    "McpTool",
    "ParsedServers",
    "ServerState",
    "ServerStatus",
    "load_mcp_json",
    "merge_servers",
    "render_result",
    "servers_from_mcp_json",
    "servers_from_toml",
]

if TYPE_CHECKING:
    from .config import (
        McpServer,
        ParsedServers,
        load_mcp_json,
        merge_servers,
        servers_from_mcp_json,
        servers_from_toml,
    )
    from .connection import ServerState
    from .errors import McpError
    from .manager import McpManager, ServerStatus
    from .results import McpImage, render_result
    from .tools import McpTool


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'clawnb.mcp' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
