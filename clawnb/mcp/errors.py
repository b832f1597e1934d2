"""The MCP layer's one exception: :class:`McpError` (a :class:`~clawnb.errors.ClawError`).

Raised by the manager's prompt and resource helpers (an unknown or unconnected server, a
server's own error) with a message that is one readable line. Tool calls never raise it to the
loop: they raise :class:`~clawnb.tools.base.ToolError`, which the loop turns into an
``error: …`` result the model reads.
"""

from __future__ import annotations

from ..errors import ClawError

__all__ = ["McpError"]


class McpError(ClawError):
    """An MCP server could not do what was asked (one line, already redacted)."""
