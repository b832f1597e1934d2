"""Issue 24 item 3 in the notebook: the card offers the gate's scoped "always" — "Always
allow git status*" with how long it lasts (this session, saved for this project, saved for
you) — and a rule saved from a cell holds after the kernel restarts: ``git status -s`` runs
unasked, ``git push`` still asks; ``%claw rules`` shows it with its file and
``%claw rules forget`` removes it. A control file's card offers no "always"."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from clawnb.events import AgentEvent, ApprovalDecision
from clawnb.gates import build_gate
from clawnb.notebook.approval import Approver
from clawnb.tools import BashTool
from clawnb.types import ToolCall
from tests.conftest import call_turn, write_script

from .kernelclient import Kernel, kernel_env
from .test_widgets import buttons, click, make_view

pytestmark = pytest.mark.timeout(120)


def _repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


async def _card_for(view, gate, call: ToolCall, tool) -> asyncio.Task:
    view(AgentEvent.ToolCall(call.name, f"    [bash: {call.arguments['command']}]", call.id,
                             call.arguments))  # fmt: skip
    task = asyncio.ensure_future(gate.before_tool(call, tool))
    for _ in range(200):
        await asyncio.sleep(0.01)
        if call.id in view._buttons:
            break
    return task


def _dropdowns(view, call_id: str) -> dict[str, object]:
    bar = view._buttons[call_id]
    return {
        next(c for c in b._dom_classes if c.startswith("clawnb-always")): b
        for b in bar.children
        if type(b).__name__ == "Dropdown"
    }


async def test_the_card_offers_the_prefix_and_saves_it_for_the_project(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    ws = _repo(tmp_path)
    view, _ = make_view()
    view.root._view_count = 1
    approver = Approver(view, how="widget")
    gate = build_gate(workspace=ws, approve=approver)
    call = ToolCall("b1", "bash", {"command": "git status -s"})
    task = await _card_for(view, gate, call, BashTool(ws))
    found = buttons(view, "b1")
    assert list(found) == ["Approve", "Deny", "Always allow git status*"]
    assert "saved as a rule" in found["Always allow git status*"].tooltip
    menus = _dropdowns(view, "b1")
    assert list(menus) == ["clawnb-always-for"]  # one offer: no scope menu
    duration = menus["clawnb-always-for"]
    assert [v for _label, v in duration.options] == ["session", "project", "user"]
    assert [label for label, _v in duration.options] == [
        "for this session",
        "saved for this project",
        "saved for you",
    ]
    duration.value = "project"
    click(found["Always allow git status*"])
    assert await asyncio.wait_for(task, 5) is call
    saved = ws / ".claw" / "rules.local.toml"
    assert '"bash(git status*)"' in saved.read_text()
    assert view.card("b1").note == f"always allowed: git status*, saved in {saved}"
    # the next git status runs unasked; a compound line is asked
    again = ToolCall("b2", "bash", {"command": "git status"})
    assert await gate.before_tool(again, BashTool(ws)) is again
    assert gate.permissions.session_allows == {"bash(git status*)"}


async def test_an_mcp_card_chooses_the_tool_or_the_whole_server(tmp_path, monkeypatch):
    from clawnb.events import ApprovalRequest

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    view, _ = make_view()
    view.root._view_count = 1
    approver = Approver(view, how="widget")
    gate = build_gate(workspace=tmp_path)
    call = ToolCall("m1", "mcp__github__create_issue", {"title": "t"})
    view(AgentEvent.ToolCall(call.name, "    [mcp__github__create_issue]", "m1", call.arguments))
    offers = gate.always_offers(call, _FakeMcp())
    task = asyncio.ensure_future(approver(ApprovalRequest(call, "mcp", "", {"always": offers})))
    for _ in range(200):
        await asyncio.sleep(0.01)
        if "m1" in view._buttons:
            break
    menus = _dropdowns(view, "m1")
    scope = menus["clawnb-always-scope"]
    assert scope.options == (
        ("mcp__github__create_issue", "mcp__github__create_issue"),
        ("every github tool", "mcp__github__*"),
    )
    scope.value = "mcp__github__*"
    click(buttons(view, "m1")["Always allow"])
    answer = await asyncio.wait_for(task, 5)
    assert answer.decision is ApprovalDecision.ALLOW_SESSION
    assert (answer.scope, answer.save) == ("mcp__github__*", "session")
    assert view.card("m1").note == "always allowed: every github tool for this session"


class _FakeMcp:
    """An MCP-named tool's shape: not read-only, asks like any tool that changes things."""

    from clawnb.types import ToolDefinition as _Def

    definition = _Def("mcp__github__create_issue", "open an issue")

    async def call(self, args):  # pragma: no cover - never run here
        return "ok"


async def test_a_control_file_card_offers_no_always(tmp_path, monkeypatch):
    from clawnb.tools import FileState, WriteTool

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    view, _ = make_view()
    view.root._view_count = 1
    approver = Approver(view, how="widget")
    gate = build_gate(workspace=tmp_path, approve=approver, mode="bypass")
    call = ToolCall("w1", "write", {"path": ".claw/config.toml", "content": "x = 1\n"})
    view(AgentEvent.ToolCall("write", "    [write: .claw/config.toml]", "w1", call.arguments))
    task = asyncio.ensure_future(gate.before_tool(call, WriteTool(tmp_path, FileState())))
    for _ in range(200):
        await asyncio.sleep(0.01)
        if "w1" in view._buttons:
            break
    assert list(buttons(view, "w1")) == ["Approve", "Deny"]
    assert _dropdowns(view, "w1") == {}
    click(buttons(view, "w1")["Deny"])
    await asyncio.wait_for(task, 5)


def test_a_rule_saved_in_a_cell_holds_after_a_kernel_restart(tmp_path) -> None:
    ws = _repo(tmp_path)
    write_script(
        ws / "s.jsonl", [call_turn("c1", "bash", command="git status -s"), {"text": "first"}]
    )
    write_script(
        ws / "s2.jsonl",
        [
            call_turn("c2", "bash", command="git status -s"),
            call_turn("c3", "bash", command="git push origin main"),
            {"text": "second"},
        ],
    )
    env = kernel_env(tmp_path, CLAWNB_FRONTEND_TIMEOUT="5")
    kernel = Kernel(ws, env)
    try:
        assert kernel.execute("%load_ext clawnb").status == "ok"
        # "a 2": the second choice, git status* saved for this project
        run = kernel.execute(
            "%%claw --model scripted:s.jsonl --approve stdin\none", stdin_reply="a 2"
        )
        assert run.status == "ok" and "first" in run.text, run.text
        (prompt,) = run.prompts
        assert "a 1: git status*  for this session" in prompt
        assert "a 2: git status*  saved for this project (" in prompt
    finally:
        kernel.close()
    saved = ws / ".claw" / "rules.local.toml"
    assert '"bash(git status*)"' in saved.read_text()
    kernel = Kernel(ws, env)  # a new kernel: nothing of the first one's session is left
    try:
        assert kernel.execute("%load_ext clawnb").status == "ok"
        run = kernel.execute(
            "%%claw --model scripted:s2.jsonl --approve stdin\ntwo", stdin_reply="n"
        )
        assert run.status == "ok" and "second" in run.text, run.text
        assert len(run.prompts) == 1 and "git push origin main" in run.prompts[0], run.prompts
        shown = kernel.execute("%claw rules").text
        assert "saved from approvals (allow; %claw rules forget PATTERN removes one):" in shown
        assert f"bash(git status*)  saved {saved}" in shown
        said = kernel.execute("%claw rules forget bash(git status*)").text
        assert f"forgotten: bash(git status*) (removed from {saved})" in said
    finally:
        kernel.close()
    assert '"bash(git status*)"' not in saved.read_text()
