"""A session recorded with ``record=FILE`` keeps its MCP tools and results; ``replay:FILE``
plays them back with no server running — offline and deterministic, the same results the
model read when it was recorded. Real server (mcp-server-time) for the recording."""

from __future__ import annotations

import json
import sys

import pytest

from clawnb.events import Approval
from clawnb.session.assemble import build_agent
from clawnb.tools.base import ToolError
from clawnb.types import Message
from tests.conftest import call_turn, scripted_model

TIME = (
    "[mcp_servers.time]\n"
    f"command = {json.dumps(sys.executable)}\n"
    'args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]\n'
)


async def allow(request):
    return Approval.allow_once()


def _results(session) -> dict[str, str]:
    return {m.id: m.content for m in session.history if isinstance(m, Message.ToolResult)}


async def test_a_recorded_sessions_mcp_results_replay_without_the_server(tmp_path, monkeypatch):
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    (xdg / "clawnb").mkdir(parents=True)
    (xdg / "clawnb" / "config.toml").write_text(TIME)
    ws = tmp_path / "ws"
    ws.mkdir()
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("t1", "mcp__time__get_current_time", timezone="UTC"),
            call_turn(
                "t2",
                "mcp__time__convert_time",
                source_timezone="UTC",
                time="25:99",
                target_timezone="Europe/Paris",
            ),
            {"text": "Done."},
        ],
    )
    recording = tmp_path / "rec.jsonl"
    session = build_agent(None, workspace=ws, model=model, approve=allow, record=recording)
    try:
        assert await session.send("what time is it?") == "Done."
        recorded = _results(session)
    finally:
        session.close()
    assert "UTC" in recorded["t1"] and recorded["t2"].startswith("error")  # a real bad time

    # replayed: no server configured at all, and none started
    (xdg / "clawnb" / "config.toml").write_text("")
    asked: list[str] = []

    async def ask(request):
        asked.append(request.call.name)
        return Approval.allow_once()

    replay = build_agent(None, workspace=ws, model=f"replay:{recording}", approve=ask)
    try:
        assert replay.mcp is None
        assert replay.notices == [
            "MCP: replaying the recorded calls of mcp__time__get_current_time, "
            "mcp__time__convert_time (no server started)"
        ]
        assert await replay.send("what time is it?") == "Done."
        assert _results(replay) == recorded  # the same results, byte for byte
        # behind the same gate: the calls were asked as they were when recorded
        assert asked == ["mcp__time__get_current_time", "mcp__time__convert_time"]
        # a call the recording never saw is an error the model reads, not a crash
        tool = replay.tools.get("mcp__time__get_current_time")
        with pytest.raises(ToolError, match="no recorded result left"):
            await tool.call({"timezone": "Asia/Tokyo"})
    finally:
        replay.close()
