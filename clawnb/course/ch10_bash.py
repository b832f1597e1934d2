"""Book chapter 10: BashTool — ``bash.rs``, 10 tests, and four of ours."""

from __future__ import annotations

import asyncio
import time

from ._helpers import alive, declaration, eventually, outcome, raises
from ._suite import Suite

suite = Suite("bash", "BashTool", chapters=["ch10"])


async def _run(impl, command):
    return await impl.BashTool().call({"command": command})


@suite.test
def test_bash_definition(impl, tmp):
    assert declaration(impl.BashTool().definition) == ("bash", True, {"command"})


@suite.test
async def test_bash_runs_command(impl, tmp):
    assert "hello" in await _run(impl, "echo hello")


@suite.test
async def test_bash_captures_stderr(impl, tmp):
    assert "err" in await _run(impl, "echo err >&2")


@suite.test
async def test_bash_missing_arg(impl, tmp):
    assert await raises(impl.BashTool().call({}))


@suite.test
def test_bash_default(impl, tmp):
    assert impl.BashTool().definition.name == "bash"


@suite.test
async def test_bash_stdout_and_stderr(impl, tmp):
    result = await _run(impl, "echo out && echo err >&2")
    assert "out" in result
    assert "stderr:" in result
    assert "err" in result


@suite.test
async def test_bash_no_output(impl, tmp):
    assert await _run(impl, "true") == "(no output)"


@suite.test
async def test_bash_exit_code_nonzero(impl, tmp):
    # a non-zero exit is not an error: the output still comes back
    assert "fail" in await _run(impl, "echo fail && exit 1")


@suite.test
async def test_bash_multiline_output(impl, tmp):
    result = await _run(impl, "echo line1 && echo line2 && echo line3")
    for line in ("line1", "line2", "line3"):
        assert line in result


@suite.test
async def test_bash_wrong_arg_type(impl, tmp):
    assert await raises(impl.BashTool().call({"command": 123}))


# Not in the book (its bash has no timeout, no exit code and runs in a terminal, where a stuck
# command only stops the program): what chapter 10 says a notebook agent needs on top.


@suite.test
async def test_bash_reports_the_exit_code(impl, tmp):
    # Not in the book: a failing command is not a tool error, but the model must see it failed.
    result = await _run(impl, "echo fail; exit 3")
    assert "fail" in result
    assert "exit code: 3" in result


@suite.test
async def test_bash_leaves_the_event_loop_running(impl, tmp):
    # Not in the book: the loop awaits the tool; while the command runs, everything else in
    # the kernel (the UI, other tools, the interrupt) must keep going: no blocking call.
    ticks = 0

    async def clock():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.02)
            ticks += 1

    running = asyncio.ensure_future(clock())
    await asyncio.sleep(0)  # let the clock start
    try:
        await _run(impl, "sleep 0.6")
    finally:
        running.cancel()
    # 0.6 s at one tick each 0.02 s is 30 ticks; a blocked loop gets none in that time.
    assert ticks >= 5, "the event loop stood still while the command ran"


@suite.test
async def test_bash_stops_a_command_at_its_timeout(impl, tmp):
    # Not in the book: a stuck command must not hold the notebook; it ends at its timeout.
    started = time.monotonic()
    result = await outcome(impl.BashTool().call({"command": "sleep 2", "timeout": 1}))
    took = time.monotonic() - started
    assert "timed out" in result
    assert took < 1.9, f"the call returned after {took:.1f} s, not at its 1 s timeout"


@suite.test
async def test_bash_timeout_kills_the_whole_process_group(impl, tmp):
    # Not in the book: `sleep 3 &` is a child of the shell; killing only bash would leave it
    # running after the call returned. The pid file says which process to look for.
    pid_file = tmp / "sleep.pid"
    command = f"sleep 3 & echo $! > {pid_file}; wait"
    result = await outcome(impl.BashTool().call({"command": command, "timeout": 1}))
    assert "timed out" in result
    child = int(pid_file.read_text())
    assert await eventually(lambda: not alive(child), within=1.0), "the background sleep survived"
