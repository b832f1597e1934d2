"""Issue 25 — memory and the prompt cache: the memory index is in the system prompt from the
start and never rewritten; a memory noted mid-session reaches the model as a reminder after
the history, so every request of the session is a byte-identical continuation of the one
before."""

from __future__ import annotations

import json
from pathlib import Path

from clawnb.config import Config
from clawnb.memory.store import Memory, MemoryStore, project_memory_dir
from clawnb.session.assemble import build_agent
from clawnb.types import Message
from tests.memory.conftest import MemoryModel, ops

NOTED = {
    "op": "create",
    "name": "plot style",
    "description": "the person wants seaborn plots, never matplotlib defaults",
    "type": "project",
}


def _wire(messages: list[Message]) -> list[str]:
    return [json.dumps(m.to_dict(), sort_keys=True) for m in messages]


async def test_a_memory_noted_mid_session_arrives_as_a_reminder_and_the_prompt_stays(trusted_ws):
    store = MemoryStore(project_memory_dir(trusted_ws))
    store.save(Memory("dataset id column", "the dataset's id column is 'key'", "project"))
    model = MemoryModel([ops(NOTED)])
    session = build_agent(
        Config(memory="on"), workspace=trusted_ws, provider=model, subagents=False, skills=False
    )
    try:
        await session.send("load the data")
        await session.memory_settled()  # the review noted 'plot style'
        assert (Path(store.root) / "plot-style.md").is_file()
        await session.send("now plot it")
        await session.memory_settled()
        await session.send("and save the figure")
    finally:
        session.close()

    first, second, third = (_wire(r) for r in model.requests)
    system = model.requests[0][0]
    assert isinstance(system, Message.System) and "dataset id column" in system.content
    assert "plot style" not in system.content  # read at the start, not rewritten
    # append-only: each request begins with the whole of the one before, system prompt first
    assert second[: len(first)] == first and third[: len(second)] == second
    told = model.requests[1][-1]
    assert isinstance(told, Message.User)
    assert told.content.startswith("now plot it\n\n<system-reminder>")
    assert "new (project): plot style — the person wants seaborn plots" in told.content
    assert told.label == "now plot it"  # the person's words on screen, not the reminder
    later = model.requests[2][-1]
    assert "plot style" not in later.content  # told once


async def test_a_memory_forgotten_by_a_review_is_told_as_forgotten(trusted_ws):
    store = MemoryStore(project_memory_dir(trusted_ws))
    store.save(Memory("old fact", "the table was called rows", "project"))
    model = MemoryModel([ops({"op": "delete", "name": "old fact"})])
    session = build_agent(
        Config(memory="on"), workspace=trusted_ws, provider=model, subagents=False, skills=False
    )
    try:
        await session.send("the table is called items now")
        await session.memory_settled()
        await session.send("go on")
    finally:
        session.close()
    assert store.get("old fact") is None
    assert "forgotten: old fact" in model.requests[1][-1].content
    assert "old fact" in model.requests[1][0].content  # the prompt still as it was at the start
