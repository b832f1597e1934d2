"""MCP servers in the terminal chat, through a pseudo-terminal: the user's configured server
starts with the chat, the scripted model's call to its tool is asked about like any tool and
answered by the real server, ``/mcp`` shows it, a server prompt runs as ``/mcp__…``, and
leaving the chat leaves no server process behind."""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import call_turn, pids_with, spawn_chat, wait_until, write_script
from tests.mcp.helpers import SERVERS

pexpect = pytest.importorskip("pexpect")
pytestmark = pytest.mark.timeout(180)


def test_the_chat_starts_the_users_server_asks_for_its_tool_and_ends_it(tmp_path):
    marker = f"FAULTS_MARK_{tmp_path.name}"
    config = tmp_path / "xdg" / "clawnb"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(
        "[mcp_servers.faults]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(SERVERS / 'faults.py'))}, {json.dumps(marker)}]\n"
        "startup_timeout = 120\n"
        f"env = {{ FAULTS_DIR = {json.dumps(str(tmp_path))} }}\n"
    )
    script = write_script(
        tmp_path / "s.jsonl",
        [
            call_turn("e1", "mcp__faults__echo", text="hello from the server"),
            {"text": "The server said hello."},
            {"text": "Reviewed."},
        ],
    )
    (tmp_path / "ws").mkdir()
    child = spawn_chat(
        tmp_path,
        "--model",
        f"scripted:{script}",
        "--workspace",
        str(tmp_path / "ws"),
        "--no-color",
        timeout=60,
    )
    child.expect("you> ")
    assert pids_with(marker), "the server did not start with the chat"
    child.sendline("ask the server")
    child.expect(r"mcp__faults__echo")
    child.expect(r"\[y\]es / \[n\]o")
    child.sendline("y")
    child.expect("The server said hello.")
    child.expect("you> ")
    child.sendline("/mcp")
    child.expect(r"faults: connected")
    child.expect("you> ")
    child.sendline("/mcp__faults__review the parser")
    child.expect("Reviewed.")
    child.expect("you> ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    assert wait_until(lambda: not pids_with(marker), timeout=15), pids_with(marker)
