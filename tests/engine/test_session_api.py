"""AgentSession's public API, the one thing front ends drive: handlers routed per turn,
configure, plan → review → execute, and nested loops (subagents) that inherit the session's
gate, checkpoints and display."""

from __future__ import annotations

import pytest

from clawnb.config import Config
from clawnb.errors import MaxTurnsExceeded
from clawnb.events import AgentEvent, Approval
from clawnb.planning import PlanVerdict
from clawnb.session.assemble import build_agent
from clawnb.session.protocol import Session
from clawnb.tools.base import BaseTool
from clawnb.types import Message, ToolDefinition, ToolTraits
from tests.conftest import call_turn, scripted_model


async def _allow(request) -> Approval:
    return Approval.allow_once()


def _results(history: list[Message]) -> dict[str, str]:
    return {m.id: m.content for m in history if isinstance(m, Message.ToolResult)}


class Launch(BaseTool):
    """A tool that runs code in the user's process: it always asks (like run_python)."""

    traits = ToolTraits(always_asks=True)

    def __init__(self) -> None:
        self.runs = 0
        self.definition = ToolDefinition("launch", "run something")

    async def call(self, args) -> str:
        self.runs += 1
        return "launched"


def test_the_production_session_follows_the_front_end_protocol(tmp_path):
    model = scripted_model(tmp_path / "s.jsonl", [{"text": "hi"}])
    session = build_agent(Config(), workspace=tmp_path, model=model)
    assert isinstance(session, Session)


async def test_handlers_route_approvals_for_one_block_then_restore(tmp_path):
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("w1", "write", path="a.txt", content="a"),
            {"text": "one"},
            call_turn("w2", "write", path="b.txt", content="b"),
            {"text": "two"},
        ],
    )
    session = build_agent(Config(), workspace=tmp_path, model=model)
    with session.handlers(approve=_allow):
        await session.send("write a")
    assert (tmp_path / "a.txt").read_text() == "a"
    await session.send("write b")  # nobody attached: refused, not run
    assert not (tmp_path / "b.txt").exists()
    assert "no approval callback" in _results(session.history)["w2"]


async def test_configure_mode_and_turn_limit_apply_to_the_next_turns(tmp_path):
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("w1", "write", path="a.txt", content="a"),
            {"text": "done"},
            call_turn("r1", "read", path="a.txt"),
            call_turn("r2", "read", path="a.txt"),
        ],
    )
    session = build_agent(Config(), workspace=tmp_path, model=model)
    session.configure(mode="bypass")
    assert session.mode == "bypass"
    await session.send("write it")  # no handler attached, yet bypass runs it
    assert (tmp_path / "a.txt").read_text() == "a"
    session.configure(max_turns=1)
    with pytest.raises(MaxTurnsExceeded):
        await session.send("read twice")
    with pytest.raises(ValueError, match="unknown permission mode"):
        session.configure(mode="yolo")


async def test_configure_model_switches_the_provider_and_keeps_the_history(tmp_path):
    first = scripted_model(tmp_path / "a.jsonl", [{"text": "from a"}])
    second = scripted_model(tmp_path / "b.jsonl", [{"text": "from b"}])
    session = build_agent(Config(), workspace=tmp_path, model=first)
    assert await session.send("one") == "from a"
    session.configure(model=second)
    assert await session.send("two") == "from b"
    assert session.model == second
    assert [m.content for m in session.history if isinstance(m, Message.User)] == ["one", "two"]


async def test_plan_mode_send_plans_revises_then_executes_on_one_history(tmp_path):
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            {"text": "Plan v1", "tool_calls": [{"id": "p1", "name": "exit_plan", "arguments": {}}]},
            {"text": "Plan v2", "tool_calls": [{"id": "p2", "name": "exit_plan", "arguments": {}}]},
            call_turn("w1", "write", path="out.txt", content="planned"),
            {"text": "executed"},
        ],
    )
    session = build_agent(Config(), workspace=tmp_path, model=model, mode="plan")
    seen: list[str] = []
    verdicts = [PlanVerdict.revise("use out.txt"), PlanVerdict.execute()]

    async def review(plan: str) -> PlanVerdict:
        seen.append(plan)
        return verdicts.pop(0)

    with session.handlers(approve=_allow):
        assert await session.send("make out.txt", review=review) == "executed"
    assert seen == ["Plan v1", "Plan v2"]
    assert (tmp_path / "out.txt").read_text() == "planned"
    users = [m.content for m in session.history if isinstance(m, Message.User)]
    assert users[1].endswith("Task: Revise the plan: use out.txt")
    assert users[-1] == "Approved. Execute the plan."


async def test_plan_mode_without_a_reviewer_runs_nothing(tmp_path):
    model = scripted_model(
        tmp_path / "s.jsonl",
        [call_turn("b1", "bash", command="touch pwned"), {"text": "the plan"}],
    )
    session = build_agent(Config(), workspace=tmp_path, model=model, mode="plan")
    with session.handlers(approve=_allow):
        assert await session.send("plan it") == "the plan"
    # bash is either off while planning or (with a working sandbox) confined read-only
    assert not (tmp_path / "pwned").exists()
    assert (
        "error" in _results(session.history)["b1"] or "Read-only" in _results(session.history)["b1"]
    )


async def test_subagent_writes_are_checkpointed_and_undone_with_the_turn(tmp_path):
    (tmp_path / "keep.txt").write_text("original")
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("s1", "subagent", task="change files"),
            call_turn("c1", "write", path="new.txt", content="child"),
            {"tool_calls": [{"id": "c2", "name": "read", "arguments": {"path": "keep.txt"}}]},
            call_turn("c3", "edit", path="keep.txt", old_string="original", new_string="changed"),
            {"text": "child done"},
            {"text": "parent done"},
        ],
    )
    session = build_agent(Config(), workspace=tmp_path, model=model, mode="accept_edits")
    events: list = []
    with session.handlers(approve=_allow):  # the subagent call itself asks
        await session.send("delegate", events.append)
    child_calls = {
        e.event.id for e in events if isinstance(e, AgentEvent.Nested) and hasattr(e.event, "id")
    }
    assert {"c1", "c3"} <= child_calls  # the child made the changes, not the parent
    assert (tmp_path / "new.txt").read_text() == "child"
    assert (tmp_path / "keep.txt").read_text() == "changed"
    report = session.undo()
    assert not (tmp_path / "new.txt").exists()
    assert (tmp_path / "keep.txt").read_text() == "original"
    assert "removed" in report and "restored" in report


async def test_subagent_calls_reach_the_front_end_nested_under_the_parent_call(tmp_path):
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("s1", "subagent", task="look"),
            call_turn("c1", "glob", pattern="*.txt"),
            {"text": "child done"},
            {"text": "parent done"},
        ],
    )
    session = build_agent(Config(), workspace=tmp_path, model=model)
    events: list = []
    with session.handlers(approve=_allow):
        await session.send("delegate", events.append)
    nested = [e for e in events if isinstance(e, AgentEvent.Nested)]
    kinds = [(type(e.event).__name__, e.parent_id, e.depth) for e in nested]
    assert ("ToolCall", "s1", 1) in kinds and ("ToolResult", "s1", 1) in kinds
    top_calls = [e.id for e in events if isinstance(e, AgentEvent.ToolCall)]
    assert top_calls == ["s1"]  # the child's call is not shown as the agent's own


async def test_always_ask_tools_ask_in_bypass_for_subagents_too(tmp_path):
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("s1", "subagent", task="launch"),
            call_turn("c1", "launch"),
            {"text": "child done"},
            call_turn("l2", "launch"),
            call_turn("l3", "launch"),
            {"text": "parent done"},
        ],
    )
    tool = Launch()
    session = build_agent(
        Config(), workspace=tmp_path, model=model, mode="bypass", extra_tools=[tool]
    )
    asked: list[str] = []
    answers = [Approval.deny("no"), Approval.allow_session()]

    async def approve(request) -> Approval:
        asked.append(request.call.id)
        return answers.pop(0)

    with session.handlers(approve=approve):
        await session.send("go")
    assert asked == ["c1", "l2"]  # the child's call was asked about; "always" settles l3
    assert tool.runs == 2


async def test_plan_requests_are_tagged_on_the_message_not_recognised_by_text(tmp_path):
    from clawnb.planning import DEFAULT_PLAN_PROMPT

    model = scripted_model(
        tmp_path / "s.jsonl",
        [{"text": "Plan: add a README"}, {"text": "I only pasted the text."}],
    )
    session = build_agent(Config(), workspace=tmp_path, model=model, session="new")
    await session.plan("add a README")
    planned = session.history.id
    session.new_session()
    # a person who pastes the planning instructions is not making a /plan request
    await session.send(f"{DEFAULT_PLAN_PROMPT}\n\nTask: add a README")
    titles = {info.id: info.title for info in session.list_sessions()}
    assert titles[planned] == "/plan add a README"
    assert titles[session.session_id].startswith("You are in PLANNING MODE")
    reopened = build_agent(Config(), workspace=tmp_path, model=model, session=planned)
    first = next(m for m in reopened.history if isinstance(m, Message.User))
    assert first.label == "/plan add a README"
    assert first.content.startswith(DEFAULT_PLAN_PROMPT)  # what the model got
    session.close()
    reopened.close()


async def test_status_names_the_configuration_only_when_a_configuration_chose_the_mode(
    tmp_path, monkeypatch
):
    """The clutter item of issue 26: ``mode: default (from the project's configuration)``
    when no configuration exists."""
    from clawnb.session.assemble import build_agent

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    ws = tmp_path / "ws"
    ws.mkdir()
    bare = build_agent(None, workspace=ws, model="scripted:/dev/null")
    try:
        assert "mode: default\n" in await bare.command("/status")
    finally:
        bare.close()
    (ws / ".claw").mkdir()
    (ws / ".claw" / "config.toml").write_text('[permissions]\nmode = "plan"\n')
    planned = build_agent(None, workspace=ws, model="scripted:/dev/null")
    try:
        assert "mode: plan (from the project's configuration)" in await planned.command("/status")
    finally:
        planned.close()
