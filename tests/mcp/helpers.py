"""Shared by the MCP tests (and tests/attacks/test_mcp_hostile.py): entries for the real and
hostile servers, a manager started and closed around a block, the streamable-HTTP test server.

The servers are real processes; a loaded CI machine takes seconds to import the SDK in each,
so entries get generous startup timeouts (the default, 10 s, is what users get)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from clawnb.mcp.config import McpServer, servers_from_toml
from clawnb.mcp.manager import McpManager

SERVERS = Path(__file__).resolve().parent / "servers"
# Real servers on a busy machine: importing the SDK alone can take several seconds.
START = 120.0


def entry(name: str, **keys: Any) -> McpServer:
    """One server entry, parsed the way a config file is (so a bad key fails loudly)."""
    keys.setdefault("startup_timeout", START)
    parsed = servers_from_toml({"mcp_servers": {name: keys}}, source="test.toml")
    assert not parsed.problems, parsed.problems
    return parsed.servers[0]


def script(name: str, *args: str, **keys: Any) -> dict[str, Any]:
    """The keys of a stdio entry running ``servers/<name>.py`` with this Python."""
    return {"command": sys.executable, "args": [str(SERVERS / f"{name}.py"), *args], **keys}


def faults(out: Path, name: str = "faults", **keys: Any) -> McpServer:
    return entry(name, **script("faults", env={"FAULTS_DIR": str(out)}, **keys))


def time_server(name: str = "time") -> McpServer:
    return entry(
        name, command=sys.executable, args=["-m", "mcp_server_time", "--local-timezone", "UTC"]
    )


@contextlib.asynccontextmanager
async def running(*servers: McpServer, log_dir: Path, **kwargs: Any) -> AsyncIterator[McpManager]:
    """A manager with ``servers`` started (failures are in ``manager.start_lines``), closed
    at the end whatever happens."""
    manager = McpManager(servers, log_dir=log_dir, **kwargs)
    try:
        manager.start_lines = await manager.start()  # type: ignore[attr-defined]
        yield manager
    finally:
        await manager.aclose()


def tool(manager: McpManager, name: str, reserved: tuple[str, ...] = ()) -> Any:
    """The wrapped tool whose server-side name (or clawnb name) is ``name``."""
    for t in manager.tools(reserved=reserved):
        if name in (t.mcp_tool, t.definition.name):
            return t
    raise AssertionError(f"no tool {name}: {[t.definition.name for t in manager.tools()]}")


@contextlib.contextmanager
def http_server(token: str | None = None) -> Iterator[str]:
    """``servers/http_server.py`` in a subprocess on 127.0.0.1; yields its ``/mcp`` URL."""
    argv = [sys.executable, str(SERVERS / "http_server.py")] + ([token] if token else [])
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("PORT "), f"the HTTP test server did not start: {line!r}"
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def run(coro: Any) -> Any:
    """Run a coroutine to the end from synchronous code (module-scoped fixtures)."""
    return asyncio.run(coro)
