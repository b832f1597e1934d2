"""The client the MCP conformance suite drives: ``python tests/mcp/conformance_client.py URL``.

``@modelcontextprotocol/conformance`` (npm) in client mode starts a test server per scenario,
runs this command with the server's URL as the last argument and the scenario's name in
``MCP_CONFORMANCE_SCENARIO``, and judges what it saw on the wire. Everything here goes through
clawnb's own layer — an :class:`~clawnb.mcp.config.McpServer` entry, the
:class:`~clawnb.mcp.manager.McpManager`, the wrapped :class:`~clawnb.mcp.tools.McpTool` — so
the suite checks what a session would do. Exit 0 when the scenario's steps succeeded.

Scenarios: ``initialize`` (connect, list tools, close), ``tools_call`` (``add_numbers`` with
5 and 3), ``sse-retry`` (call ``test_reconnection``; the SDK's transport reconnects); any
other scenario connects and calls the server's first tool, which is what clawnb would do.
``docs/mcp.md`` lists what passes and what is expected to fail, and why.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile

from clawnb.mcp.config import McpServer
from clawnb.mcp.manager import McpManager

__all__ = ["main", "run_scenario"]

_ARGUMENTS = {"add_numbers": {"a": 5, "b": 3}}


async def run_scenario(url: str, scenario: str) -> int:
    server = McpServer(
        name="conformance", type="http", url=url, startup_timeout=20.0, tool_timeout=20.0
    )
    with tempfile.TemporaryDirectory(prefix="clawnb-conformance-") as logs:
        manager = McpManager([server], log_dir=logs)
        try:
            failed = await manager.start()
            if failed:
                print("\n".join(failed), file=sys.stderr)
                print(manager.log_tail("conformance"), file=sys.stderr)
                return 1
            tools = manager.tools()
            print("tools:", ", ".join(t.mcp_tool for t in tools) or "(none)")
            if scenario == "initialize" or not tools:
                return 0
            wanted = {"tools_call": "add_numbers", "sse-retry": "test_reconnection"}.get(scenario)
            chosen = next((t for t in tools if t.mcp_tool == wanted), tools[0])
            result = await chosen.call(_ARGUMENTS.get(chosen.mcp_tool, {}))
            print(f"{chosen.mcp_tool}: {result}")
            return 0
        except Exception as exc:  # the suite reads the exit status and stderr
            print(f"error: {exc}", file=sys.stderr)
            return 1
        finally:
            await manager.aclose()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python tests/mcp/conformance_client.py SERVER_URL", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "initialize")
    return asyncio.run(run_scenario(args[-1], scenario))


if __name__ == "__main__":
    raise SystemExit(main())
