"""Issue 25 — every kind of turn is reviewed for memory: a plan-mode turn (plan, the person's
correction, execution) like any other; a skill fork's turn once, by the parent, with the
child's report in it — the child runs no review of its own."""

from __future__ import annotations

from pathlib import Path

from clawnb.config import Config
from clawnb.memory.store import MemoryStore, project_memory_dir
from clawnb.planning import PlanVerdict
from clawnb.session.assemble import build_agent
from clawnb.types import AssistantTurn, StopReason, ToolCall
from tests.memory.conftest import MemoryModel, ops

KEY_COLUMN = {
    "op": "create",
    "name": "id column",
    "description": "the dataset's id column is 'key', never 'id'",
    "type": "project",
}


def _exit_plan(text: str, call_id: str) -> AssistantTurn:
    return AssistantTurn(text, [ToolCall(call_id, "exit_plan", {})], StopReason.TOOL_USE)


async def test_a_plan_mode_turn_is_reviewed_with_the_persons_correction(trusted_ws):
    model = MemoryModel(
        [ops(KEY_COLUMN)],
        turns=[
            _exit_plan("Plan v1: join on 'id'", "p1"),
            _exit_plan("Plan v2: join on 'key'", "p2"),
            AssistantTurn("joined", [], StopReason.STOP),
        ],
    )
    session = build_agent(
        Config(memory="on"),
        workspace=trusted_ws,
        provider=model,
        mode="plan",
        subagents=False,
        skills=False,
    )
    verdicts = [PlanVerdict.revise("no: the id column is 'key', not 'id'"), PlanVerdict.execute()]

    async def review(plan: str) -> PlanVerdict:
        return verdicts.pop(0)

    assert await session.send("join the two tables", review=review) == "joined"
    await session.memory_settled()
    session.close()

    assert len(model.review_prompts) == 1  # the whole plan-mode turn, once
    reviewed = model.review_prompts[0]
    assert "the id column is 'key', not 'id'" in reviewed  # the correction
    assert "Plan v1" in reviewed and "joined" in reviewed  # plan and execution
    memory = MemoryStore(project_memory_dir(trusted_ws)).get("id column")
    assert memory is not None and "'key'" in memory.description


async def test_a_skill_fork_is_reviewed_once_by_the_parent_with_its_report(trusted_ws):
    skill = trusted_ws / ".claw" / "skills" / "digest"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\ndescription: Digest a dataset.\ncontext: fork\n---\nDigest $ARGUMENTS.\n"
    )
    model = MemoryModel(
        [ops(KEY_COLUMN)],
        turns=[AssistantTurn("REPORT: the tables join on 'key'", [], StopReason.STOP)],
    )
    session = build_agent(
        Config(memory="on"), workspace=trusted_ws, provider=model, subagents=False
    )
    answer = await session.command("/digest sales.csv")
    await session.memory_settled()
    session.close()

    assert answer == "REPORT: the tables join on 'key'"
    assert len(model.requests) == 1  # the child's one turn
    assert len(model.review_prompts) == 1  # the parent's review; the child ran none
    reviewed = model.review_prompts[0]
    assert "REPORT: the tables join on 'key'" in reviewed and "/digest sales.csv" in reviewed
    assert (Path(project_memory_dir(trusted_ws)) / "id-column.md").is_file()
