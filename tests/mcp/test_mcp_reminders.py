"""What the model must learn mid-conversation reaches it as a reminder after the history, never
by rewriting the system prompt: every request the provider gets is a byte-identical
continuation of the one before (the prompt cache keeps the whole prefix). Checked on the wire,
against a real MCP server and an OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import sys

from clawnb.events import Approval
from clawnb.providers.openai import OpenAICompatProvider
from clawnb.session.assemble import build_agent
from tests.fake_servers import FakeServer, Reply

TIME = (
    "[mcp_servers.time]\n"
    f"command = {json.dumps(sys.executable)}\n"
    'args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]\n'
)


def _user_texts(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def _is_continuation(before: dict, after: dict) -> bool:
    """``after`` starts with every message of ``before``, unchanged, and the same tools."""
    old, new = before["messages"], after["messages"]
    return new[: len(old)] == old and before.get("tools") == after.get("tools")


async def test_the_servers_state_is_a_reminder_after_the_history_only_when_it_changes(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    (tmp_path / "xdg" / "clawnb").mkdir(parents=True)
    (tmp_path / "xdg" / "clawnb" / "config.toml").write_text(TIME)
    ws = tmp_path / "ws"
    ws.mkdir()

    async def approve(request):
        return Approval.allow_once()

    with FakeServer(replies=[Reply("one"), Reply("two"), Reply("three"), Reply("four")]) as server:
        provider = OpenAICompatProvider("m", base_url=server.url, max_retries=0)
        session = build_agent(None, workspace=ws, provider=provider, approve=approve)
        try:
            await session.send("first question")
            await session.send("second question")
            await session.mcp.stop("time")  # the server goes away between turns
            await session.send("third question")
            session.remind("task", "background task 7 finished")
            await session.send("fourth question")
        finally:
            session.close()
        requests = list(server.requests)

    assert len(requests) == 4
    system = requests[0]["messages"][0]
    assert system["role"] == "system" and "time: connected" not in system["content"]
    first, second, third, fourth = (_user_texts(r)[-1] for r in requests)
    # the first message says which servers are connected, after the person's words
    assert first.startswith("first question\n\n<system-reminder>")
    assert "- time: connected" in first
    # nothing changed: nothing repeated
    assert second == "second question"
    # the server stopped: the model hears it once, with the next message
    assert "<system-reminder>" in third and "time: stopped" in third
    assert fourth.startswith("fourth question") and "background task 7 finished" in fourth
    assert "time:" not in fourth
    # the system prompt never changed and each request continues the one before it
    for before, after in zip(requests, requests[1:], strict=False):
        assert after["messages"][0] == system
        assert _is_continuation(before, after)
    # the session's history shows the person's own words
    labels = [m.label for m in session.history if getattr(m, "label", None)]
    assert "first question" in labels
