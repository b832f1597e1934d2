"""The course's answer to chapter 21: an MCP client over stdio, by hand (``StdioClient``) and a
server tool wrapped as one of the book's tools (``McpToolAdapter``). The notebook's solution,
kept short; production's counterpart is :mod:`clawnb.mcp` on the official SDK."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from ..types import ToolDefinition

__all__ = ["PROTOCOL_VERSION", "McpError", "McpToolAdapter", "StdioClient", "mcp_tools"]

PROTOCOL_VERSION = "2025-06-18"


class McpError(Exception):
    """The server answered with an error, went away, or did not answer in time."""


class StdioClient:
    """One MCP server as a child process: JSON-RPC 2.0, one JSON object per line, requests on
    its stdin, answers (and notifications, and anything else it prints) on its stdout."""

    def __init__(self, command: Sequence[str], timeout: float = 10.0) -> None:
        self.command = list(command)
        self.timeout = timeout
        self.process: asyncio.subprocess.Process | None = None
        self.server_info: dict[str, Any] = {}
        self.skipped: list[bytes] = []  # lines that were not our answer (for a log)
        self._next_id = 0

    async def start(self) -> dict[str, Any]:
        self.process = await asyncio.create_subprocess_exec(
            *self.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=16 * 1024 * 1024,  # one line is one message: allow big ones
        )
        self.server_info = await self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "my-agent", "version": "0.1"},
            },
        )
        await self.notify("notifications/initialized")
        return self.server_info

    async def _send(self, message: dict[str, Any]) -> None:
        if self.process is None or self.process.stdin is None:
            raise McpError("the server is not running: call start() first")
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        await self.process.stdin.drain()

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self._send(message)

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            await self._send(message)
            return await asyncio.wait_for(self._answer(self._next_id, method), self.timeout)
        except TimeoutError:
            raise McpError(f"{method}: no answer within {self.timeout} s") from None
        except (BrokenPipeError, ConnectionResetError):
            raise McpError(f"{method}: the server went away") from None

    async def _answer(self, wanted: int, method: str) -> Any:
        assert self.process is not None and self.process.stdout is not None
        while True:
            line = await self.process.stdout.readline()
            if not line:  # end of output: the server has gone
                raise McpError(f"{method}: the server went away (it closed its output)")
            try:
                message = json.loads(line)
            except ValueError:
                self.skipped.append(line)  # garbage: a server's stray print
                continue
            if not isinstance(message, dict) or "method" in message:
                self.skipped.append(line)  # a notification, or a request to us
                continue
            if message.get("id") != wanted:
                self.skipped.append(line)  # an answer to something else
                continue
            if "error" in message:
                error = message["error"]
                text = error.get("message", error) if isinstance(error, dict) else error
                raise McpError(f"{method}: {text}")
            return message.get("result", {})

    async def list_tools(self) -> list[dict[str, Any]]:
        return list((await self.request("tools/list")).get("tools", []))

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = await self.request(
            "tools/call", {"name": name, "arguments": arguments}
        )
        return result

    async def close(self) -> None:
        """Close stdin (a well-behaved server exits), then terminate, then kill: no orphan."""
        process = self.process
        if process is None or process.returncode is not None:
            return
        if process.stdin is not None:
            process.stdin.close()
        for stop in (None, process.terminate, process.kill):
            if stop is not None:
                try:
                    stop()
                except ProcessLookupError:
                    break
            try:
                await asyncio.wait_for(process.wait(), 1.0)
                return
            except TimeoutError:
                continue
        await process.wait()


class McpToolAdapter:
    """A server's tool as one of the book's tools, named ``mcp__SERVER__TOOL``."""

    def __init__(self, client: StdioClient, server: str, tool: dict[str, Any]) -> None:
        self.client = client
        self.tool_name = tool["name"]
        schema = tool.get("inputSchema") or {"type": "object", "properties": {}}
        self.definition = ToolDefinition(
            f"mcp__{server}__{tool['name']}", tool.get("description", ""), dict(schema)
        )

    async def call(self, args: Any) -> str:
        result = await self.client.call_tool(self.tool_name, args if isinstance(args, dict) else {})
        texts = [b.get("text", "") for b in result.get("content", []) if b.get("type") == "text"]
        text = "\n".join(texts)
        if result.get("isError"):
            raise McpError(text or f"{self.tool_name} failed")
        return text


async def mcp_tools(client: StdioClient, server: str) -> list[McpToolAdapter]:
    """Every tool the server lists, wrapped."""
    return [McpToolAdapter(client, server, tool) for tool in await client.list_tools()]
