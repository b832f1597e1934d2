"""Servers that misbehave — crash mid-call, hang, never finish ``initialize``, print garbage on
stdout, answer with 50 MB — each give a clear tool error or one failed line, and the manager
(and every other server) goes on. Plus what real results look like through the wrapper:
images, structured content, a schema mismatch, ``isError``, cancellation reaching the server."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest

pytest.importorskip("mcp")

from clawnb.mcp.connection import ServerState  # noqa: E402
from clawnb.mcp.manager import McpManager  # noqa: E402
from clawnb.tools.base import ToolError  # noqa: E402
from tests.conftest import async_wait_until, running  # noqa: E402
from tests.mcp.helpers import entry, faults, script, tool  # noqa: E402
from tests.mcp.helpers import running as started  # noqa: E402

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    return tmp_path_factory.mktemp("faults")


@pytest.fixture(scope="module")
def manager(out, tmp_path_factory):
    """One faults server and a second one, "other", shared by the tests that do not kill them."""
    m = McpManager(
        [faults(out, tool_timeout=3), faults(out, "other")],
        log_dir=tmp_path_factory.mktemp("logs"),
    )
    assert asyncio.run(m.start()) == []
    yield m
    m.close()


async def test_a_hanging_tool_times_out_cancelled_and_the_server_still_answers(manager):
    with pytest.raises(ToolError) as err:
        await tool(manager, "mcp__faults__hang").call({})
    assert str(err.value) == (
        "faults: `hang` did not answer within 3 s (tool_timeout); the request was cancelled"
    )
    assert await tool(manager, "mcp__faults__echo").call({"text": "still here"}) == "still here"


async def test_a_50_mb_result_is_a_clear_error_and_the_next_call_works(manager):
    with pytest.raises(ToolError) as err:
        await tool(manager, "mcp__other__big").call({"megabytes": 50})
    assert "the reply was 50.0 MB, over this server's 16.0 MB limit (max_message_bytes)" in str(
        err.value
    )
    assert await tool(manager, "mcp__other__echo").call({"text": "next"}) == "next"
    # a result under the message limit but over the model's cap is cut, with a marker
    text = await tool(manager, "mcp__other__big").call({"megabytes": 0.5})
    assert len(text) < 100_200 and "[... cut here: the result was 500,000 characters" in text


async def test_cancelling_the_awaiting_task_cancels_the_request_on_the_server(manager, out):
    task = asyncio.ensure_future(tool(manager, "mcp__faults__slow").call({"seconds": 60}))
    assert await async_wait_until(lambda: (out / "slow.started").exists(), 60)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # the SDK sent notifications/cancelled: the server's handler was interrupted
    assert await async_wait_until(lambda: (out / "slow.cancelled").exists(), 30)


async def test_real_results_images_structured_mismatch_errors_and_mixed_content(manager):
    image_tool = tool(manager, "mcp__faults__image")
    assert await image_tool.call({}) == "a grey square\n[image/png 640×480]"
    ((image,),) = image_tool.attachments.values()
    assert (image.width, image.height, image.to_bytes()[:4]) == (640, 480, b"\x89PNG")
    assert await tool(manager, "mcp__faults__structured").call({}) == '{"n":3}'
    mismatch = await tool(manager, "mcp__faults__mismatch").call({})
    assert mismatch.endswith("its content follows]\nthe count is unknown today")
    with pytest.raises(ToolError, match="^disk full$"):
        await tool(manager, "mcp__faults__fails").call({})
    mixed = await tool(manager, "mcp__faults__mixed").call({})
    assert "[resource link: report <file:///srv/report.txt>, text/plain] the weekly report" in mixed
    assert "[resource memo://today, text/plain]\nbuy milk" in mixed


async def test_prompts_and_resources_are_listed_and_read(manager):
    prompts = await manager.list_prompts()
    assert [(s, p.name) for s, p in prompts] == [("faults", "review"), ("other", "review")]
    got = await manager.get_prompt("faults", "review", {"topic": "the plan"})
    assert got.messages[0].content.text == "Please review the plan."
    resources = await manager.list_resources("faults")
    assert [r.uri for _, r in resources] == ["memo://notes"]
    read = await manager.read_resource("faults", "memo://notes")
    assert read.contents[0].text == "the notes"


async def test_a_server_that_crashes_mid_call_is_an_error_and_the_others_go_on(tmp_path):
    async with started(
        faults(tmp_path, "crashy"), faults(tmp_path, "steady"), log_dir=tmp_path
    ) as m:
        with pytest.raises(ToolError) as err:
            await tool(m, "mcp__crashy__crash").call({})
        assert str(err.value).startswith(
            "crashy: the server went away during `crash` (exit code 3)"
        )
        assert await tool(m, "mcp__steady__echo").call({"text": "fine"}) == "fine"
        (crashy,) = [s for s in m.status() if s.name == "crashy"]
        assert crashy.state is ServerState.FAILED
        # the next call says why at once, and how to get it back
        with pytest.raises(
            ToolError, match="is not running .* restart it with `%claw mcp restart crashy`"
        ):
            await tool(m, "mcp__crashy__echo").call({"text": "?"})
        assert await m.restart("crashy") == "crashy: connected, 12 tools (faults 1.0)"
        assert await tool(m, "mcp__crashy__echo").call({"text": "back"}) == "back"


async def test_servers_that_never_initialize_or_print_garbage_fail_alone_with_one_line(tmp_path):
    silent = entry("silent", **script("silent"), startup_timeout=3)
    garbage = entry("garbage", **script("silent", "--garbage"), startup_timeout=3)
    missing = entry("missing", command="/no/such/mcp-server")
    unset = entry("unset", **script("silent"), env={"TOKEN": "${CLAWNB_TEST_UNSET_VAR}"})
    async with started(silent, garbage, missing, unset, faults(tmp_path), log_dir=tmp_path) as m:
        lines = m.start_lines
        assert await tool(m, "echo").call({"text": "ok"}) == "ok"  # the good one is up
    assert lines == [
        "silent: failed to start: no answer to initialize within 3 s; see `%claw mcp log silent`",
        "garbage: failed to start: no answer to initialize within 3 s; its stdout had 3 line(s) "
        "that are not JSON-RPC (first: 'INFO starting up, step 0') — a server must keep stdout "
        "for protocol messages; see `%claw mcp log garbage`",
        "missing: failed to start: command not found: '/no/such/mcp-server'; "
        "see `%claw mcp log missing`",
        "unset: failed to start: ${CLAWNB_TEST_UNSET_VAR} is not set (used in mcp_servers.unset "
        "in test.toml); see `%claw mcp log unset`",
    ]
    log = m.log_tail("garbage")
    assert "ignored a stdout line that is not JSON-RPC: b'INFO starting up, step 0'" in log


async def test_garbage_lines_between_messages_are_skipped_and_logged(tmp_path):
    noisy = entry(
        "noisy",
        command=sys.executable,
        args=[script("noisy_proxy")["args"][0], sys.executable, script("faults")["args"][0]],
        env={"FAULTS_DIR": str(tmp_path)},
    )
    async with started(noisy, log_dir=tmp_path) as m:
        assert m.start_lines == []
        assert await tool(m, "echo").call({"text": "through the noise"}) == "through the noise"
        assert "not JSON-RPC: b'DEBUG: handling a request'" in m.log_tail("noisy")


async def test_servers_start_concurrently_each_within_its_own_timeout(tmp_path):
    servers = [entry(f"s{i}", **script("silent"), startup_timeout=4) for i in range(3)]
    began = time.monotonic()
    async with started(*servers, log_dir=tmp_path) as m:
        assert len(m.start_lines) == 3
    # one after another would take 12 s; together they take one timeout (and some overhead)
    assert time.monotonic() - began < 11
    logs = {s.name: m.log_tail(s.name) for s in servers}
    # every server was started before the first one timed out
    first_timeout = min(
        line[8:27] for log in logs.values() for line in log.splitlines() if "no answer" in line
    )
    last_start = max(
        line[8:27] for log in logs.values() for line in log.splitlines() if "] started " in line
    )
    assert last_start <= first_timeout
    assert all(not running(pid) for pid in [s.pid for s in m.status()] if pid)
