"""Chapter 21: an MCP client over stdio, by hand. Not a book test file: the book has no MCP
chapter. Two tests run against a real server from the package index (``mcp-server-time``);
the rest against a tiny server written here, which can print garbage, crash, hang or refuse to
exit, so the client's error handling is tested too."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import sys
import time
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any

from ..types import Message
from ._helpers import alive, error_of, eventually, text_turn, tool_results, tool_turn
from ._suite import Skipped, Suite

suite = Suite("mcp_client", "StdioClient, McpToolAdapter", chapters=["ch21"])

# The real server starts in a second or two (it imports the SDK); under load, more.
REAL_TIMEOUT = 20.0

_FAKE = r"""
import json, os, signal, sys, time

mode, log = sys.argv[1], sys.argv[2]
with open(log + ".pid", "w") as f:
    f.write(str(os.getpid()))


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


while True:
    line = sys.stdin.readline()
    if not line:
        break
    with open(log, "a") as f:
        f.write(line)
    message = json.loads(line)
    if "id" not in message:
        continue
    id, method = message["id"], message["method"]
    if mode == "noisy":
        sys.stdout.write("starting up... (a stray print, not JSON)\n")
        send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "hi"}})
        send({"jsonrpc": "2.0", "id": id + 1000, "result": {"tools": [{"name": "wrong"}]}})
    if method == "initialize":
        result = {"protocolVersion": message["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "fake", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "echo", "description": "Say the text back",
                             "inputSchema": {"type": "object", "required": ["text"],
                                             "properties": {"text": {"type": "string"}}}}]}
    elif method == "tools/call":
        name, args = message["params"]["name"], message["params"].get("arguments", {})
        if name == "crash":
            sys.exit(3)
        if name == "hang":
            time.sleep(10)
        if name == "echo":
            result = {"content": [{"type": "text", "text": args["text"]},
                                  {"type": "image", "data": "", "mimeType": "image/png"},
                                  {"type": "text", "text": "(echoed)"}]}
        elif name == "fail":
            result = {"content": [{"type": "text", "text": "no such timezone: Mars/Olympus"}],
                      "isError": True}
        else:
            send({"jsonrpc": "2.0", "id": id,
                  "error": {"code": -32602, "message": f"unknown tool: {name}"}})
            continue
    else:
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no such method"}})
        continue
    send({"jsonrpc": "2.0", "id": id, "result": result})

if mode == "stubborn":  # stdin closed: a well-behaved server exits now; this one does not
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(10)
"""


def _fake(tmp: Path, mode: str = "plain") -> list[str]:
    """The command that starts the fake server; what it receives goes to ``tmp/received``."""
    script = tmp / "fake_server.py"
    script.write_text(_FAKE, encoding="utf-8")
    return [sys.executable, str(script), mode, str(tmp / "received")]


def _received(tmp: Path) -> list[dict[str, Any]]:
    path = tmp / "received"
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]


def _pid(tmp: Path) -> int:
    return int((tmp / "received.pid").read_text())


async def _reap(client: Any) -> None:
    """End and reap the client's process if its close() left it running (so a learner's
    close that only closes stdin fails its own test, not every test after it)."""
    process = getattr(client, "process", None)
    if isinstance(process, asyncio.subprocess.Process) and process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await asyncio.wait_for(process.wait(), 5)


@contextlib.asynccontextmanager
async def _running(client: Any) -> AsyncIterator[Any]:
    """``client`` started for the block (``as`` names what ``start()`` returned), then closed
    however the block ends, and its process reaped if ``close()`` left it running."""
    try:
        yield await client.start()
    finally:
        try:
            await client.close()
        finally:
            await _reap(client)


async def _fails_soon(call: Awaitable[Any], what: str) -> None:
    """``call`` raises, and within 3 s; ``what`` names it in the message if it does not."""
    start = time.monotonic()
    error = await error_of(call)
    assert error is not None, f"{what} returned instead of raising"
    assert time.monotonic() - start < 3


def _time_server() -> list[str]:
    if importlib.util.find_spec("mcp_server_time") is None:
        raise Skipped("needs the real server: pip install mcp-server-time")
    return [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]


def _hour(text: str) -> str:
    """``21:00`` from the time server's answer to a conversion (the date is today's)."""
    return str(json.loads(text)["target"]["datetime"])[11:16]


@suite.test(at_least=REAL_TIMEOUT)
async def test_mcp_client_talks_to_a_real_server(impl, tmp):
    # The handshake, the tool list and a call, against mcp-server-time from the package index.
    client = impl.StdioClient(_time_server(), timeout=REAL_TIMEOUT)
    async with _running(client) as info:
        assert info["serverInfo"]["name"] == "mcp-time"
        tools = await client.list_tools()
        assert sorted(t["name"] for t in tools) == ["convert_time", "get_current_time"]
        args = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
        result = await client.call_tool("convert_time", args)
        assert _hour(result["content"][0]["text"]) == "21:00"


@suite.test
async def test_mcp_client_initializes_then_says_initialized(impl, tmp):
    # initialize (protocol version, capabilities, clientInfo) first, then the notification
    # notifications/initialized (no id: nobody answers a notification), then the requests.
    client = impl.StdioClient(_fake(tmp))
    async with _running(client):
        await client.list_tools()
    sent = _received(tmp)
    assert [m.get("method") for m in sent] == [
        "initialize",
        "notifications/initialized",
        "tools/list",
    ]
    first, second, third = sent
    assert first["jsonrpc"] == "2.0"
    assert "id" in first
    assert isinstance(first["params"]["protocolVersion"], str)
    assert isinstance(first["params"]["capabilities"], dict)
    assert first["params"]["clientInfo"]["name"]
    assert "id" not in second
    assert third["id"] != first["id"]


@suite.test
async def test_mcp_client_skips_garbage_notifications_and_other_answers(impl, tmp):
    # Before each answer this server prints a line that is not JSON, a notification and an
    # answer to an id nobody asked about: only the answer with the request's own id counts.
    client = impl.StdioClient(_fake(tmp, "noisy"))
    async with _running(client):
        tools = await client.list_tools()
        assert [t["name"] for t in tools] == ["echo"]


@suite.test
async def test_mcp_client_raises_on_an_error_response(impl, tmp):
    # A JSON-RPC error is an answer too: raise it, with the server's message, and go on.
    client = impl.StdioClient(_fake(tmp))
    async with _running(client):
        error = await error_of(client.call_tool("nope", {}))
        assert error is not None, "an error response came back as if it were a result"
        assert "unknown tool: nope" in str(error)
        tools = await client.list_tools()  # the connection is still good
        assert [t["name"] for t in tools] == ["echo"]


@suite.test
async def test_mcp_client_reports_a_server_that_crashes_mid_call(impl, tmp):
    # The server exits during the call: its output ends. Say so at once, do not wait for
    # the timeout (here 30 s) and do not loop on empty reads.
    client = impl.StdioClient(_fake(tmp), timeout=30)
    async with _running(client):
        await _fails_soon(client.call_tool("crash", {}), "the call to a server that died")


@suite.test
async def test_mcp_client_gives_up_on_a_server_that_never_answers(impl, tmp):
    # A request has a time limit: a call the server never answers fails after it.
    client = impl.StdioClient(_fake(tmp), timeout=0.5)
    async with _running(client):
        await _fails_soon(client.call_tool("hang", {}), "the unanswered call")


@suite.test
async def test_mcp_client_close_leaves_no_process_behind(impl, tmp):
    # This server ignores both the end of its input and SIGTERM: close() must still end it
    # (close stdin, wait a little, terminate, wait, kill), and soon.
    client = impl.StdioClient(_fake(tmp, "stubborn"))
    try:
        await client.start()
        pid = _pid(tmp)
        start = time.monotonic()
        await client.close()
        await eventually(lambda: not alive(pid), within=1)
        assert ("still running" if alive(pid) else "ended") == "ended"
        assert time.monotonic() - start < 4
    finally:
        await _reap(client)  # a close() that left it running fails above, and ends it here


@suite.test(at_least=REAL_TIMEOUT)
async def test_mcp_adapter_wraps_a_real_servers_tool(impl, tmp):
    # Each server tool becomes a book tool called mcp__SERVER__TOOL, with the server's own
    # description and input schema, and a call that returns the tool's text.
    client = impl.StdioClient(_time_server(), timeout=REAL_TIMEOUT)
    async with _running(client):
        listed = await client.list_tools()
        tools = [impl.McpToolAdapter(client, "time", tool) for tool in listed]
        names = sorted(t.definition.name for t in tools)
        assert names == ["mcp__time__convert_time", "mcp__time__get_current_time"]
        convert = next(t for t in tools if t.definition.name.endswith("convert_time"))
        schema = next(t for t in listed if t["name"] == "convert_time")["inputSchema"]
        assert convert.definition.parameters == schema
        assert convert.definition.description == "Convert time between timezones"
        args = {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}
        assert _hour(await convert.call(args)) == "21:00"


@suite.test
async def test_mcp_adapter_returns_the_text_blocks_joined(impl, tmp):
    # A result's content is a list of blocks: the text ones, joined by newlines, are what the
    # model reads (an image block has no text to give).
    client = impl.StdioClient(_fake(tmp))
    async with _running(client):
        echo = impl.McpToolAdapter(client, "fake", (await client.list_tools())[0])
        assert await echo.call({"text": "hello"}) == "hello\n(echoed)"


@suite.test
async def test_mcp_adapter_raises_when_the_tool_reports_an_error(impl, tmp):
    # isError: true is the tool saying it failed: raise, so the loop sends "error: ..." and
    # the model knows the call did not work.
    client = impl.StdioClient(_fake(tmp))
    async with _running(client):
        tool = {"name": "fail", "description": "Always fails", "inputSchema": {"type": "object"}}
        error = await error_of(impl.McpToolAdapter(client, "fake", tool).call({}))
        assert error is not None, "the tool's failure came back as if it were a result"
        assert "no such timezone: Mars/Olympus" in str(error)


@suite.test
async def test_mcp_adapter_is_a_tool_the_agent_can_call(impl, tmp):
    # In the agent's loop the adapter is one more tool: the model calls it by its long name.
    client = impl.StdioClient(_fake(tmp))
    async with _running(client):
        echo = impl.McpToolAdapter(client, "fake", (await client.list_tools())[0])
        model = impl.MockProvider(
            [tool_turn(("c1", "mcp__fake__echo", {"text": "ping"})), text_turn("It said ping.")]
        )
        messages = [Message.User("Call the echo tool")]
        answer = await impl.SimpleAgent(model).tool(echo).chat(messages)
    assert answer == "It said ping."
    assert tool_results(messages) == [("c1", "ping\n(echoed)")]
