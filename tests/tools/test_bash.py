"""BashTool beyond the book: timeouts, process-group kills, huge output, workspace."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from clawnb.control.sandbox import SandboxPolicy
from clawnb.tools import BashTool, ToolError
from clawnb.tools.bash import format_output
from tests.conftest import async_wait_until, pids_with, running


async def _wait_pid_file(path: Path, timeout: float = 5.0) -> int:
    assert await async_wait_until(lambda: path.exists() and path.read_text().strip(), timeout), (
        "the command never wrote its pid"
    )
    return int(path.read_text().split()[0])


async def test_exit_code_is_reported_not_raised():
    result = await BashTool().call({"command": "echo fail; exit 3"})
    assert result == "fail\n\nexit code: 3"


async def test_exit_code_alone():
    assert await BashTool().call({"command": "exit 7"}) == "exit code: 7"


async def test_stderr_layout_matches_the_book():
    assert await BashTool().call({"command": "echo err >&2"}) == "stderr: err\n"
    assert await BashTool().call({"command": "echo out; echo err >&2"}) == "out\n\nstderr: err\n"


def test_format_output_signal():
    assert format_output("", "", -9) == "exit code: 137 (killed by SIGKILL)"
    assert format_output("", "", 0) == "(no output)"


async def test_timeout_kills_and_reports(tmp_path):
    start = time.monotonic()
    with pytest.raises(ToolError) as info:
        await BashTool().call({"command": "echo started; sleep 30", "timeout": 1})
    assert time.monotonic() - start < 5
    assert str(info.value).startswith("command timed out after 1s")
    assert "started" in str(info.value)


async def test_default_timeout_is_120_and_configurable():
    tool = BashTool()
    assert tool.timeout == 120
    assert "default: 120" in tool.definition.parameters["properties"]["timeout"]["description"]
    with pytest.raises(ToolError, match="timed out after 1s"):
        await BashTool(timeout=1).call({"command": "sleep 10"})


async def test_timeout_argument_is_validated():
    with pytest.raises(ToolError, match="at least 1"):
        await BashTool().call({"command": "true", "timeout": 0})
    with pytest.raises(ToolError, match="at most 600"):
        await BashTool().call({"command": "true", "timeout": 100000})
    with pytest.raises(ToolError, match="must be an integer"):
        await BashTool().call({"command": "true", "timeout": "5"})


async def test_no_orphan_after_timeout(tmp_path):
    pid_file = tmp_path / "pid"
    with pytest.raises(ToolError, match="timed out"):
        await BashTool(kill_grace=0.5).call(
            {"command": f"sleep 1000 & echo $! > {pid_file}; wait", "timeout": 1}
        )
    pid = int(pid_file.read_text())
    assert not running(pid), "the background sleep survived the timeout"


async def test_no_orphan_after_normal_exit():
    result = await BashTool(kill_grace=0.5).call({"command": "sleep 1000 & echo $!"})
    pid = int(result.split()[0])
    assert not running(pid), "the background sleep outlived the tool call"


async def test_no_orphan_after_cancellation(tmp_path):
    pid_file = tmp_path / "pid"
    task = asyncio.create_task(
        BashTool(kill_grace=0.5).call({"command": f"sleep 1000 & echo $! > {pid_file}; sleep 1000"})
    )
    pid = await _wait_pid_file(pid_file)
    assert running(pid)
    start = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # TERM, at most kill_grace (0.5 s), KILL: generous bound for a loaded CI machine
    assert time.monotonic() - start < 10
    assert not running(pid), "the background sleep survived cancellation"


@pytest.mark.parametrize("ticks", [1, 2, 3, 5, 8, 13])
async def test_cancellation_while_spawning_leaves_no_orphan(tmp_path, ticks):
    """Cancel at different moments of process start-up — also while ``create_subprocess_exec``
    is still connecting the pipes, when the child may already have started a background job.
    The call must end promptly and leave nothing running."""
    # Every process of the call carries this number in its command line (bash's script,
    # both sleeps), so a survivor is visible whatever moment the cancellation hit. The child
    # has exec'd before the spawn returns (Popen waits for the exec), so none can appear
    # after the cancellation finished.
    marker = f"1000.{os.getpid()}{ticks:02d}{time.monotonic_ns() % 10**6:06d}"
    task = asyncio.create_task(
        BashTool(kill_grace=0.3).call({"command": f"sleep {marker} & sleep {marker}"})
    )
    for _ in range(ticks):
        await asyncio.sleep(0)
    start = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - start < 10
    assert await async_wait_until(lambda: not pids_with(marker)), pids_with(marker)


async def test_term_ignored_gets_killed(tmp_path):
    """A process that ignores SIGTERM is SIGKILLed after the grace period."""
    pid_file = tmp_path / "pid"
    with pytest.raises(ToolError, match="timed out"):
        await BashTool(kill_grace=0.3).call(
            {
                "command": f"bash -c 'trap \"\" TERM; echo $$ > {pid_file}; sleep 1000' & wait",
                "timeout": 1,
            }
        )
    assert not running(int(pid_file.read_text()))


async def test_huge_output_does_not_deadlock():
    start = time.monotonic()
    # 4 MB on both pipes at once: a tool that reads one pipe after the other would block.
    result = await BashTool().call(
        {
            "command": "head -c 4000000 /dev/zero | tr '\\0' o; head -c 4000000 /dev/zero | tr '\\0' e >&2"
        }
    )
    assert time.monotonic() - start < 10
    assert result.count("o") >= 4_000_000
    assert result.count("e") >= 4_000_000


async def test_output_cap_counts_the_rest():
    result = await BashTool(max_output_bytes=1000).call(
        {"command": "head -c 5000 /dev/zero | tr '\\0' x"}
    )
    assert result.startswith("x" * 1000 + "\n[... 4000 more bytes of stdout not captured ...]")


async def test_binary_output_is_decoded_lossily():
    result = await BashTool().call({"command": "printf 'ok\\xff\\xfe\\n'"})
    assert result == "ok\ufffd\ufffd\n"


async def test_runs_in_workspace(tmp_path):
    (tmp_path / "marker.txt").write_text("x")
    result = await BashTool(tmp_path).call({"command": "pwd; ls"})
    assert result == f"{os.path.realpath(tmp_path)}\nmarker.txt\n"


async def test_stdin_is_closed():
    start = time.monotonic()
    result = await BashTool().call({"command": "read line; echo got:$?", "timeout": 5})
    assert result == "got:1\n"
    assert time.monotonic() - start < 3


async def test_missing_workspace_is_a_clear_error(tmp_path):
    with pytest.raises(ToolError, match="failed to run bash command"):
        await BashTool(tmp_path / "nope").call({"command": "true"})


def test_metadata():
    assert BashTool().read_only is False and BashTool().concurrency_safe is False


def test_plan_mode_variant_is_read_only_but_still_runs_one_command_at_a_time(tmp_path):
    tool = BashTool(tmp_path, sandbox=SandboxPolicy(workspace=tmp_path))
    variant = tool.read_only_variant()
    assert variant is not None and variant.read_only is True
    assert variant.concurrency_safe is False


async def test_api_keys_are_not_visible_to_commands(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    monkeypatch.setenv("CLAWNB_API_KEY", "sk-other-secret")
    monkeypatch.setenv("CLAWNB_HARMLESS", "visible")
    out = await BashTool().call({"command": "env"})
    assert "sk-secret-value" not in out and "sk-other-secret" not in out
    assert "CLAWNB_HARMLESS=visible" in out
    kept = await BashTool(hide_env=()).call({"command": "echo $OPENAI_API_KEY"})
    assert kept == "sk-secret-value\n"
