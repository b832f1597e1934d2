"""Plan mode's exploration offers only read-only tools in every front end, judged by what
crossed the socket: the tool definitions in the requests the (attacker's) model server got."""

from __future__ import annotations

import json

import pytest

from .harness import Attack, AttackerServer, make_world, run_attack

pytestmark = pytest.mark.timeout(90)

# Never offered while planning: they change files, run code or start a loop with more tools.
CHANGING = {"write", "edit", "notebook_edit", "run_python", "subagent", "web_fetch"}


def _plan(sandbox: str) -> Attack:
    return Attack(
        f"plan-mode-offers-read-only-tools-sandbox-{sandbox}",
        {
            "id": f"plan-mode-offers-read-only-tools-sandbox-{sandbox}",
            "mode": "plan",
            "approve": "deny",
            "setup": {"user_config": f'[sandbox]\nmode = "{sandbox}"\n'},
            "turns": [{"text": "Plan: read the notes, then write a summary."}],
            "expect": {"no_leak": True},
        },
    )


def _offered(request_body: str) -> set[str]:
    body = json.loads(request_body)
    return {tool["function"]["name"] for tool in body.get("tools", [])}


@pytest.mark.parametrize("frontend", ["api", "notebook"])
def test_planning_without_a_sandbox_offers_no_bash(frontend, tmp_path, monkeypatch):
    world = make_world(tmp_path, _plan("off"), AttackerServer(), AttackerServer())
    problems = run_attack(world, frontend, monkeypatch)
    assert not problems, problems
    offered = _offered(world.server.requests[0].body)
    assert {"read", "grep", "glob", "exit_plan"} <= offered
    assert not offered & (CHANGING | {"bash"}), offered


@pytest.mark.parametrize("frontend", ["api", "notebook"])
def test_planning_with_a_sandbox_offers_bash_only_confined(frontend, tmp_path, monkeypatch):
    world = make_world(tmp_path, _plan("auto"), AttackerServer(), AttackerServer())
    problems = run_attack(world, frontend, monkeypatch)
    assert not problems, problems
    offered = _offered(world.server.requests[0].body)
    assert not offered & CHANGING, offered
    if "bash" in offered:  # only when bubblewrap works here: read-only file system, no network
        from clawnb.config import Config
        from clawnb.control.sandbox import status_from_config

        assert status_from_config(Config(), world.ws).policy is not None
