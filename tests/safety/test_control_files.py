"""The control-file rule: writes to the agent's own configuration ask every time, in every mode."""

from __future__ import annotations

import asyncio

import pytest

from clawnb import Approval
from clawnb.gates import build_gate
from clawnb.permissions import Permission, PermissionEngine
from clawnb.tools import WriteTool
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
