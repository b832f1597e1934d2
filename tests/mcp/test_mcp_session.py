"""[mcp_servers] starts real servers in a session: their tools are the model's, behind the same
gate, in every front end that builds a session (the API here; the chat and %%claw build theirs
the same way, with build_agent); /mcp shows them; closing the session ends them."""

from __future__ import annotations

import json
import os
import sys

from clawnb.events import Approval
from clawnb.session.assemble import build_agent
from clawnb.types import Message
from tests.conftest import call_turn, scripted_model, wait_until


def _user_config(home, text: str) -> None:
    (home / "clawnb").mkdir(parents=True, exist_ok=True)
    (home / "clawnb" / "config.toml").write_text(text)


TIME = (
    "[mcp_servers.time]\n"
    f"command = {json.dumps(sys.executable)}\n"
    'args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]\n'
)


async def test_a_configured_server_answers_the_model_and_ends_with_the_session(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    _user_config(tmp_path / "xdg", TIME)
    ws = tmp_path / "ws"
    ws.mkdir()
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("t1", "mcp__time__get_current_time", timezone="UTC"),
            {"text": "It is now."},
        ],
    )

    async def approve(request):
        return Approval.allow_once()

    session = build_agent(None, workspace=ws, model=model, approve=approve)
    try:
        assert "mcp__time__get_current_time" in session.tools
        assert session.notices == []
        await session.send("what time is it?")
        result = next(m for m in session.history if isinstance(m, Message.ToolResult))
        assert not result.content.startswith("error"), result.content
        assert "UTC" in result.content
        shown = await session.command("/mcp")
        assert "time" in shown and "get_current_time" in shown
        pids = [c.pid for c in session.mcp.connections.values() if c.pid]
        assert pids
    finally:
        session.close()
    assert wait_until(lambda: not any(_alive(pid) for pid in pids), timeout=10)


def test_an_untrusted_projects_servers_are_not_started(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    ws = tmp_path / "ws"
    marker = tmp_path / "started"
    ws.mkdir()
    (ws / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"evil": {"command": "sh", "args": ["-c", f"touch {marker}"]}}})
    )
    session = build_agent(None, workspace=ws, model="scripted:/dev/null")
    try:
        assert session.mcp is None
        assert any("not trusted" in line and "evil" in line for line in session.notices)
        assert not marker.exists()
    finally:
        session.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for good: only its parent has not reaped it yet
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


async def test_a_subagent_calls_the_sessions_mcp_tools_and_its_end_leaves_the_servers_running(
    tmp_path, monkeypatch
):
    """MCP servers are infrastructure: a child session (the subagent) gets the same server
    tools, behind its own gate, and finishing it does not end the parent's servers."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    _user_config(tmp_path / "xdg", TIME)
    ws = tmp_path / "ws"
    ws.mkdir()
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("s1", "subagent", task="ask the time server"),
            call_turn("c1", "mcp__time__get_current_time", timezone="UTC"),
            {"text": "the child knows the time"},
            {"text": "done"},
        ],
    )
    asked: list[str] = []

    async def approve(request):
        asked.append(request.call.name)
        return Approval.allow_once()

    session = build_agent(None, workspace=ws, model=model, approve=approve)
    try:
        assert await session.send("go") == "done"
        # the child's call went through the gate (asked) and reached the real server
        assert "mcp__time__get_current_time" in asked
        subagent = next(
            m for m in session.history if isinstance(m, Message.ToolResult) and m.id == "s1"
        )
        assert "the child knows the time" in subagent.content
        # a read-only child gets no server tool the user has not marked read-only
        assert not any(n.startswith("mcp__") for n in session.child(read_only=True).tools.names())
        pids = [c.pid for c in session.mcp.connections.values() if c.pid]
        assert pids and all(_alive(pid) for pid in pids)
        shown = await session.child().command("/mcp")
        assert "get_current_time" in shown
        assert all(_alive(pid) for pid in pids)  # a child's end is not the servers' end
    finally:
        session.close()


async def test_hooks_fire_on_mcp_tools_in_the_parent_and_in_a_subagent(tmp_path, monkeypatch):
    """The hook users report silently skipped: a pre_tool hook matching ``mcp__*`` runs
    before every MCP call — the session's and a subagent's — and its non-zero exit blocks it."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    ws = tmp_path / "ws"
    ws.mkdir()
    seen = ws / "hook-saw.txt"  # in the workspace: a sandboxed hook may write there
    _user_config(
        tmp_path / "xdg",
        TIME
        + "\n[[hooks.pre_tool]]\n"
        + 'tool_pattern = "mcp__*"\n'
        + f'command = "echo called >> {seen}; test $(wc -l < {seen}) -lt 3"\n'
        + "timeout_ms = 20000\n",
    )
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("t1", "mcp__time__get_current_time", timezone="UTC"),
            call_turn("s1", "subagent", task="ask the time server"),
            call_turn("c1", "mcp__time__get_current_time", timezone="UTC"),
            {"text": "the child knows"},
            call_turn("t3", "mcp__time__get_current_time", timezone="UTC"),
            {"text": "done"},
        ],
    )

    async def approve(request):
        return Approval.allow_once()

    session = build_agent(None, workspace=ws, model=model, approve=approve)
    try:
        assert await session.send("go") == "done"
        results = {m.id: m.content for m in session.history if isinstance(m, Message.ToolResult)}
    finally:
        session.close()
    assert seen.read_text().splitlines() == ["called"] * 3  # parent, child, parent again
    assert "UTC" in results["t1"]
    assert "blocked" in results["t3"].lower()  # the third run of the hook exits 1
