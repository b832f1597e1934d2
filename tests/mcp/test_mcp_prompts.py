"""A server's prompts are slash commands and its resources attach by reference, in a real
session with real servers (the SDK's low-level server in servers/faults.py and the package
index's mcp-server-fetch): ``/mcp__SERVER__PROMPT args`` sends the server's prompt as the turn,
``@SERVER:URI`` attaches the resource after the person's words, ``/mcp prompts`` and
``/mcp resources`` list them; misuse is one line and sends nothing."""

from __future__ import annotations

import json
import sys

import pytest

from clawnb.errors import CommandError
from clawnb.providers.openai import OpenAICompatProvider
from clawnb.session.assemble import build_agent
from tests.fake_servers import FakeServer, Reply
from tests.mcp.helpers import SERVERS


def _config(home, out) -> None:
    (home / "clawnb").mkdir(parents=True)
    faults = {
        "command": sys.executable,
        "args": [str(SERVERS / "faults.py")],
        "env": {"FAULTS_DIR": str(out), "SECRET_NOTE": "x"},
        "startup_timeout": 120,
    }
    fetch = {
        "command": sys.executable,
        "args": ["-m", "mcp_server_fetch"],
        "startup_timeout": 120,
    }
    lines = []
    for name, entry in (("faults", faults), ("fetch", fetch)):
        lines.append(f"[mcp_servers.{name}]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in entry.items() if key != "env"]
        if name == "faults":
            lines.append(f"env = {{ FAULTS_DIR = {json.dumps(str(out))} }}")
    (home / "clawnb" / "config.toml").write_text("\n".join(lines) + "\n")


@pytest.fixture
def wired(tmp_path, monkeypatch):
    pytest.importorskip("mcp_server_fetch")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    _config(tmp_path / "xdg", tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    with FakeServer(replies=[Reply("reviewed"), Reply("fetched"), Reply("read")]) as server:
        provider = OpenAICompatProvider("m", base_url=server.url, max_retries=0)
        session = build_agent(None, workspace=ws, provider=provider)
        try:
            assert session.notices == [], session.notices
            yield session, server
        finally:
            session.close()


def _last_user(request: dict) -> str:
    return [m["content"] for m in request["messages"] if m["role"] == "user"][-1]


async def test_a_servers_prompt_is_a_command_whose_text_is_the_turn(wired):
    session, server = wired
    listed = await session.command("/mcp prompts")
    assert "/mcp__faults__review topic=…" in listed and "Review a topic." in listed
    assert "/mcp__fetch__fetch url=…" in listed  # the real server's prompt
    assert await session.command("/mcp__faults__review the parser") == "reviewed"
    assert _last_user(server.requests[-1]).startswith("Please review the parser.")
    # key=value works too, and the real fetch server's prompt is asked for with its argument
    await session.command("/mcp__fetch__fetch url=http://127.0.0.1:9/none")
    assert "127.0.0.1:9/none" in _last_user(server.requests[-1])


async def test_a_prompt_used_wrongly_is_one_line_and_sends_nothing(wired):
    session, server = wired
    before = len(server.requests)
    with pytest.raises(CommandError, match=r"needs topic; usage: /mcp__faults__review topic="):
        await session.command("/mcp__faults__review")
    with pytest.raises(CommandError, match=r"has no argument 'colour' \(it takes: topic\)"):
        await session.command("/mcp__faults__review topic=a colour=red")
    with pytest.raises(CommandError, match=r"unknown command /mcp__faults__nothing"):
        await session.command("/mcp__faults__nothing")
    assert len(server.requests) == before
    assert len(session.history) <= 1  # at most the system prompt: no half turn kept


async def test_a_resource_named_in_a_prompt_is_attached_after_the_persons_words(wired):
    session, server = wired
    assert "@faults:memo://notes" in await session.command("/mcp resources")
    await session.send("summarise @faults:memo://notes please, and mail me at @user:example.com")
    sent = _last_user(server.requests[-1])
    assert sent.startswith("summarise @faults:memo://notes please")
    assert '<resource server="faults" uri="memo://notes">\n[resource memo://notes' in sent
    assert "\nthe notes\n</resource>" in sent
    assert 'example.com">' not in sent  # not a configured server: left as text
    # the transcript shows what the person wrote
    users = [m for m in session.history if m.role == "user"]
    assert users[-1].label.startswith("summarise @faults:memo://notes please")
