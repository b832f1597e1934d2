"""Run by test_mcp_lifecycle in a subprocess: start a manager with a faults server, have the
server start two children, print every pid (``PIDS server child child``), wait for a line on
stdin, then end the way argv[2] says — ``sleep`` (to be killed -9), ``exit`` (without closing the manager: the atexit
backstop's case) or ``stop-loop`` (the manager's loop stopped under its connections)."""

import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from clawnb.mcp.manager import McpManager  # noqa: E402
from tests.mcp.helpers import faults, tool  # noqa: E402

out, how = Path(sys.argv[1]), sys.argv[2]


async def main() -> McpManager:
    manager = McpManager([faults(out)], log_dir=out / "logs")
    assert await manager.start() == []
    pids = await tool(manager, "children").call({})
    print("PIDS", pids, flush=True)
    return manager


manager = asyncio.run(main())
sys.stdin.readline()  # the test has seen the processes running: go on
if how == "sleep":
    time.sleep(600)
elif how == "stop-loop":
    host = manager._host  # the fault: the loop that owns the connections stops
    assert host is not None
    host.loop.call_soon_threadsafe(host.loop.stop)
    host.thread.join(60)
    print("STOPPED", flush=True)
    time.sleep(600)
# "exit": fall off the end without manager.aclose()
