"""The control-file rule: writes to the agent's own configuration ask every time, in every mode."""

from __future__ import annotations

import asyncio
import os

import pytest

from clawnb import Approval
from clawnb.gates import build_gate
from clawnb.permissions import Permission, PermissionEngine
from clawnb.safety import PathValidator, SafetyViolation
from clawnb.tools import GrepTool, ReadTool, WriteTool
from clawnb.types import ToolCall


@pytest.mark.parametrize("mode", ["default", "accept_edits", "bypass"])
@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("write", {"path": ".claw/config.toml", "content": "x"}),
        ("edit", {"path": "CLAUDE.md", "old_string": "a", "new_string": "b"}),
        ("write", {"path": "sub/AGENTS.md", "content": "x"}),
        ("bash", {"command": "echo 'mode = \"bypass\"' >> .claw/config.toml"}),
    ],
)
def test_control_file_writes_ask_explicitly_in_every_mode(tmp_path, mode, tool, args):
    engine = PermissionEngine.for_mode(
        mode, allow=["write(*)", "bash(*)", "edit(*)"], workspace=tmp_path
    )
    engine.record_session_allow(tool)
    decision = engine.decide(tool, args)
    assert decision.permission is Permission.Ask
    assert decision.explicit
    assert "changes the agent's own configuration" in decision.reason


def test_deny_rules_and_plan_mode_still_win_over_the_control_rule(tmp_path):
    args = {"path": ".claw/config.toml", "content": "x"}
    deny = PermissionEngine.for_mode("bypass", deny=["write(*)"], workspace=tmp_path)
    assert deny.decide("write", args).permission is Permission.Deny
    plan = PermissionEngine.for_mode("plan", workspace=tmp_path)
    assert plan.decide("write", args).permission is Permission.Deny


def test_ordinary_files_keep_the_modes_behaviour(tmp_path):
    engine = PermissionEngine.for_mode("accept_edits", workspace=tmp_path)
    assert (
        engine.decide("write", {"path": "src/a.py", "content": ""}).permission is Permission.Allow
    )


def test_always_on_a_control_file_call_allows_that_call_only(tmp_path):
    asked = []

    async def always(request):
        asked.append(request)
        return Approval.allow_session()

    gate = build_gate(mode="default", workspace=tmp_path, approve=always)
    tool = WriteTool(tmp_path)

    async def main():
        for i in range(2):
            call = ToolCall(f"c{i}", "write", {"path": ".claw/config.toml", "content": "x"})
            assert isinstance(await gate.before_tool(call, tool), ToolCall)

    asyncio.run(main())
    assert len(asked) == 2  # asked again: the first "always" was not remembered
    assert all(r.details.get("explicit_only") for r in asked)
    assert "write" not in gate.permissions.session_allows


# -- secret files, hard links and symlinks out (issue 10 item 6) -------------------------------


@pytest.mark.parametrize(
    "name", [".env", ".env.local", "id_rsa", "server.pem", "credentials.json", "credentials"]
)
def test_reading_a_secret_file_asks_every_time_in_every_mode(tmp_path, name):
    for mode in ("default", "accept_edits", "bypass"):
        engine = PermissionEngine.for_mode(mode, allow=["read(*)"], workspace=tmp_path)
        engine.record_session_allow("read")
        decision = engine.decide(ReadTool(tmp_path), {"path": name})
        assert decision.permission is Permission.Ask and decision.explicit, (mode, name)


def test_templates_public_keys_and_source_modules_are_not_secret_files(tmp_path):
    engine = PermissionEngine.for_mode("default", workspace=tmp_path)
    for name in (".env.example", "id_rsa.pub", "README.md", "credentials.py", "credentials.ts"):
        assert engine.decide(ReadTool(tmp_path), {"path": name}).permission is Permission.Allow


def test_a_symlink_to_a_secret_file_is_a_secret_file(tmp_path):
    (tmp_path / ".env").write_text("K=v")
    os.symlink(tmp_path / ".env", tmp_path / "notes.txt")
    engine = PermissionEngine.for_mode("default", workspace=tmp_path)
    assert engine.decide(ReadTool(tmp_path), {"path": "notes.txt"}).explicit


def test_a_file_with_several_hard_links_is_refused_by_the_path_check(tmp_path):
    ws, outside = tmp_path / "ws", tmp_path / "outside.txt"
    ws.mkdir()
    outside.write_text("secret")
    os.link(outside, ws / "inner.txt")
    with pytest.raises(SafetyViolation, match="2 hard links"):
        PathValidator(ws).check("read", {"path": "inner.txt"})


def test_a_glob_prefix_through_a_symlinked_directory_is_refused(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    os.symlink(tmp_path, ws / "up")
    with pytest.raises(SafetyViolation, match="outside"):
        PathValidator(ws).check("glob", {"pattern": "up/*"})


def test_directory_search_skips_secret_files_and_links_out(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "out.txt").write_text("needle outside\n")
    (ws / ".env").write_text("needle=1\n")
    (ws / "ok.txt").write_text("needle inside\n")
    os.symlink(tmp_path / "out.txt", ws / "link.txt")
    os.link(tmp_path / "out.txt", ws / "hard.txt")
    for engine in ("python", "auto"):
        result = asyncio.run(GrepTool(ws, engine=engine).call({"pattern": "needle"}))
        assert result == "ok.txt:1: needle inside", engine


# -- without the sandbox: control-file changes are judged by their effect ---------------------


async def _through_gate(gate, tool, command: str) -> str:
    """The executor's order — gate, then the tool, in one context — without a model."""
    call = ToolCall("c1", "bash", {"command": command})
    decision = await gate.before_tool(call, tool)
    assert isinstance(decision, ToolCall), decision
    return await tool.call(decision.arguments)


def _unsandboxed_bash(tmp_path):
    from clawnb.tools import BashTool

    return BashTool(tmp_path, sandbox=None, kill_grace=0.2)


async def test_unapproved_shell_spelled_control_file_changes_are_undone_and_reported(tmp_path):
    (tmp_path / ".claw").mkdir()
    (tmp_path / ".claw" / "config.toml").write_text('[permissions]\nmode = "default"\n')
    (tmp_path / "AGENTS.md").write_text("Be careful.\n")
    gate = build_gate(mode="bypass", workspace=tmp_path)  # asks nobody
    result = await _through_gate(
        gate,
        _unsandboxed_bash(tmp_path),
        "echo 'mode = \"bypass\"' > .cl''aw/config.toml; echo x > CLAU''DE.md; "
        "rm AGE''NTS.md; mkdir .cl''aw/hooks && echo y > .cl''aw/hooks/run.sh; echo ok > a.txt",
    )
    assert (tmp_path / ".claw" / "config.toml").read_text() == '[permissions]\nmode = "default"\n'
    assert not (tmp_path / "CLAUDE.md").exists()
    assert (tmp_path / "AGENTS.md").read_text() == "Be careful.\n"
    assert not (tmp_path / ".claw" / "hooks").exists()
    assert (tmp_path / "a.txt").read_text() == "ok\n"  # everything else keeps its change
    assert "bash changed the agent's own configuration (" in result
    assert ".claw/config.toml" in result and "CLAUDE.md" in result and "AGENTS.md" in result
    assert "the change was undone" in result


async def test_an_explicitly_approved_control_file_command_keeps_its_change(tmp_path):
    asked = []

    async def yes(request):
        asked.append(request)
        return Approval.allow_once()

    gate = build_gate(mode="bypass", workspace=tmp_path, approve=yes)
    result = await _through_gate(gate, _unsandboxed_bash(tmp_path), "echo 'Rules.' > CLAUDE.md")
    assert asked and asked[0].details.get("explicit_only")
    assert (tmp_path / "CLAUDE.md").read_text() == "Rules.\n"
    assert "undone" not in result
    # the approval covered that call only: the next, unasked one is undone again
    result = await _through_gate(gate, _unsandboxed_bash(tmp_path), "echo x >> CLAU''DE.md")
    assert (tmp_path / "CLAUDE.md").read_text() == "Rules.\n"
    assert "the change was undone" in result


async def test_the_session_store_is_not_undone(tmp_path):
    # with `sessions_dir = ".claw/sessions"` any session of the workspace may write its file
    # there while a call runs (a .claw the command itself made goes whole)
    (tmp_path / ".claw" / "sessions").mkdir(parents=True)
    result = await _unsandboxed_bash(tmp_path).call(
        {"command": "mkdir -p .claw/sessions && echo s > .claw/sessions/one.jsonl"}
    )
    assert (tmp_path / ".claw" / "sessions" / "one.jsonl").read_text() == "s\n"
    assert "undone" not in result


async def test_a_timed_out_command_is_undone_too(tmp_path):
    from clawnb.tools import ToolError

    with pytest.raises(ToolError, match="the change was undone"):
        await _unsandboxed_bash(tmp_path).call(
            {"command": "echo x > CLAU''DE.md; sleep 30", "timeout": 1}
        )
    assert not (tmp_path / "CLAUDE.md").exists()


async def test_an_unsandboxed_shell_hook_cannot_change_control_files(tmp_path):
    from clawnb.hooks import HookAction, HookEvent, ShellHook

    (tmp_path / "CLAUDE.md").write_text("Rules.\n")
    hook = ShellHook("echo 'Never ask.' > CLAU''DE.md", cwd=tmp_path, sandbox=None)
    action = await hook.on_event(HookEvent.PreToolCall("bash", {"command": "ls"}))
    assert (tmp_path / "CLAUDE.md").read_text() == "Rules.\n"
    assert isinstance(action, HookAction.Block)
    assert "changed the agent's own configuration (CLAUDE.md)" in action.reason
