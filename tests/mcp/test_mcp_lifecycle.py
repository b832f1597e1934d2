"""No server process (nor a child of one) outlives the manager — after ``aclose()``, after the
loop that owns the connections is stopped, after the process exits without closing, and after
a ``kill -9`` of the process that ran the manager. Checked with real pids; plus the stdio
shutdown's escalation (a server that ignores EOF and SIGTERM) and the sandboxed server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from clawnb.control.sandbox import bwrap_path, policy_for  # noqa: E402
from clawnb.mcp.connection import live_server_groups  # noqa: E402
from clawnb.tools.base import ToolError  # noqa: E402
from tests.conftest import async_wait_until, running, wait_until  # noqa: E402
from tests.mcp.helpers import entry, faults, script, tool  # noqa: E402
from tests.mcp.helpers import running as started  # noqa: E402

pytestmark = pytest.mark.timeout(240)
CHILD = Path(__file__).resolve().parent / "manager_child.py"


def pids_in(text: str) -> list[int]:
    return [int(p) for p in text.split()]


async def test_aclose_ends_the_server_and_the_processes_it_started(tmp_path):
    async with started(faults(tmp_path), log_dir=tmp_path) as m:
        pids = pids_in(await tool(m, "children").call({}))
        assert all(running(p) for p in pids) and len(pids) == 3
        assert pids[0] in live_server_groups()
    # aclose returned: the server and both children are gone (the group kill ended them)
    assert not [p for p in pids if running(p)]
    assert pids[0] not in live_server_groups()


async def test_a_server_ignoring_eof_and_sigterm_is_killed_after_the_grace_periods(tmp_path):
    pidfile = tmp_path / "stubborn.pid"
    stubborn = entry(
        "stubborn",
        **script("silent", "--ignore-eof", "--ignore-term", "--pidfile", str(pidfile)),
        startup_timeout=2,
    )
    async with started(stubborn, log_dir=tmp_path) as m:
        (line,) = m.start_lines
        assert line.startswith("stubborn: failed to start: no answer to initialize within 2 s")
    # start() gave up and shut it down: stdin closed (ignored), TERM (ignored), then KILL
    pid = int(pidfile.read_text())
    assert not running(pid)


async def test_stopping_the_loop_that_owns_the_connections_shuts_the_servers_down(tmp_path):
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(tmp_path), "stop-loop"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        pids = pids_in(child.stdout.readline().removeprefix("PIDS"))
        assert all(running(p) for p in pids)
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "STOPPED\n"
        # the process still lives: it was not atexit nor a dying parent that ended them
        assert child.poll() is None
        assert wait_until(lambda: not [p for p in pids if running(p)], 20)
    finally:
        child.kill()
        child.wait()
        for pipe in (child.stdin, child.stdout):
            if pipe is not None:
                pipe.close()


@pytest.mark.parametrize("how", ["exit", "sleep"])
def test_no_orphan_when_the_process_exits_unclosed_or_is_killed_9(tmp_path, how):
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(tmp_path), how],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        pids = pids_in(child.stdout.readline().removeprefix("PIDS"))
        assert len(pids) == 3 and all(running(p) for p in pids)
        if how == "sleep":
            os.kill(child.pid, signal.SIGKILL)  # no atexit, no finally: the kernel's word only
        else:
            child.stdin.write("go\n")  # it returns from its last line without aclose()
            child.stdin.flush()
        child.wait(120)
        assert wait_until(lambda: not [p for p in pids if running(p)], 20), [
            p for p in pids if running(p)
        ]
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for pipe in (child.stdin, child.stdout):
            if pipe is not None:
                pipe.close()


async def test_dropping_the_manager_without_closing_it_still_ends_its_servers(tmp_path):
    import gc

    from clawnb.mcp.manager import McpManager

    m = McpManager([faults(tmp_path)], log_dir=tmp_path)
    assert await m.start() == []
    pids = pids_in(await tool(m, "children").call({}))
    del m
    gc.collect()
    assert await async_wait_until(lambda: not [p for p in pids if running(p)], 30)


needs_bwrap = pytest.mark.skipif(
    bwrap_path() is None and os.environ.get("CLAWNB_SANDBOX_TESTS") != "require",
    reason="bubblewrap is not installed (apt-get install bubblewrap)",
)


@needs_bwrap
async def test_a_sandboxed_server_runs_in_bubblewrap_and_cannot_write_outside(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    status = policy_for(ws, mode="required")
    assert status.policy is not None, status.describe()
    boxed = faults(outside, "boxed", sandbox=True)
    async with started(boxed, log_dir=tmp_path / "logs", workspace=ws, sandbox=status.policy) as m:
        assert m.start_lines == []
        assert await tool(m, "echo").call({"text": "in the box"}) == "in the box"
        # its output folder is outside the workspace: inside the sandbox /tmp is private, so
        # the folder is not there and the write fails
        with pytest.raises(ToolError, match="`children` failed"):
            await tool(m, "children").call({})
    assert not (outside / "children.pids").exists()
    unboxed = faults(outside, "free", sandbox=True)
    async with started(unboxed, log_dir=tmp_path / "logs2") as m:
        (line,) = m.start_lines
    assert "sandbox = true, but no sandbox is available here" in line


async def test_on_the_callers_own_loop_calls_cancel_crash_and_aclose_behave_the_same(tmp_path):
    import asyncio

    from clawnb.mcp.manager import McpManager

    m = McpManager(
        [faults(tmp_path), faults(tmp_path, "crashy")],
        log_dir=tmp_path / "logs",
        loop=asyncio.get_running_loop(),
    )
    try:
        assert await m.start() == []
        assert m._host is not None and m._host.thread is None  # no thread of its own
        assert await tool(m, "mcp__faults__echo").call({"text": "here"}) == "here"
        task = asyncio.ensure_future(tool(m, "mcp__faults__slow").call({"seconds": 60}))
        assert await async_wait_until(lambda: (tmp_path / "slow.started").exists(), 60)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await async_wait_until(lambda: (tmp_path / "slow.cancelled").exists(), 30)
        with pytest.raises(ToolError, match="went away during `crash`"):
            await tool(m, "mcp__crashy__crash").call({})
        pids = pids_in(await tool(m, "mcp__faults__children").call({}))
    finally:
        await m.aclose()
    assert not [p for p in pids if running(p)]


def test_close_from_synchronous_code_while_the_adopted_loop_is_idle(tmp_path):
    import asyncio

    from clawnb.mcp.manager import McpManager

    loop = asyncio.new_event_loop()
    try:
        m = McpManager([faults(tmp_path)], log_dir=tmp_path / "logs", loop=loop)
        assert loop.run_until_complete(m.start()) == []
        pids = pids_in(loop.run_until_complete(tool(m, "children").call({})))
        m.close()  # the chat's exit: its loop is not running between turns
        assert not [p for p in pids if running(p)]
    finally:
        loop.close()
