"""Issue 25 — consolidation by the model: behind the gates and the lock, a read-only child
session is shown every memory of the folder (the possibly stale marked), may read the
workspace, and answers with operations that the review's code applies: contradictions
settled, a stale memory dropped; without a model the store's own tidying, as before."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clawnb.config import Config
from clawnb.memory.consolidate import STATE
from clawnb.memory.store import INDEX, Memory, MemoryStore, evidence_of, project_memory_dir
from clawnb.session.assemble import build_agent
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall, ToolDefinition
from tests.memory.conftest import ops

MARK = "<memories-to-consolidate>"


class Consolidator:
    """A scripted model. A consolidation request (the child's) is answered by ``decide``, which
    gets the prompt and what the child's reads returned, and may first ask for reads
    (``reads``). Every request's tool names are kept."""

    def __init__(
        self, decide: Callable[[str, list[str]], list[dict[str, Any]]], reads: list[str] = ()
    ) -> None:
        self.decide = decide
        self.reads = list(reads)
        self.tool_names: list[list[str]] = []
        self.prompts: list[str] = []

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        first = next((m for m in messages if isinstance(m, Message.User)), None)
        if first is None or MARK not in first.content:
            return AssistantTurn(ops(), [], StopReason.STOP)  # a review, or a turn
        self.tool_names.append(sorted(t.name for t in tools))
        self.prompts.append(first.content)
        if self.reads:
            path = self.reads.pop(0)
            call = ToolCall(f"r{len(self.reads)}", "read", {"path": path})
            return AssistantTurn(None, [call], StopReason.TOOL_USE)
        seen = [m.content for m in messages if isinstance(m, Message.ToolResult)]
        return AssistantTurn(ops(*self.decide(first.content, seen)), [], StopReason.STOP)


def _due(ws: Path) -> Path:
    """Five sessions since the last consolidation (never): every gate passes."""
    sessions = ws.parent / "sessions"
    sessions.mkdir()
    for i in range(5):
        (sessions / f"s{i}.jsonl").write_text("{}\n")
    return sessions


def _start(ws: Path, model: Consolidator, sessions: Path):
    return build_agent(
        Config(memory="on", sessions_dir=str(sessions)),  # type: ignore[arg-type]
        workspace=ws,
        provider=model,
        subagents=False,
        skills=False,
    )


async def test_two_contradicting_memories_become_one(trusted_ws):
    store = MemoryStore(project_memory_dir(trusted_ws))
    store.save(Memory("test command", "the tests run with tox", "project", learnt="2026-01-01"))
    store.save(
        Memory(
            "how to test", "tox is gone: tests run with pytest -q", "project", learnt="2026-03-01"
        )
    )

    def settle(prompt: str, _: list[str]) -> list[dict[str, Any]]:
        assert "the tests run with tox" in prompt and "tox is gone" in prompt
        assert "learnt 2026-01-01" in prompt and "learnt 2026-03-01" in prompt
        return [
            {
                "op": "update",
                "name": "test command",
                "description": "the tests run with pytest -q (tox is gone)",
                "type": "project",
            },
            {"op": "delete", "name": "how to test"},
        ]

    model = Consolidator(settle)
    session = _start(trusted_ws, model, _due(trusted_ws))
    await session.memory_settled()
    session.close()

    assert model.tool_names == [["glob", "grep", "read"]]  # a read-only child
    assert [m.name for m in store.all()] == ["test command"]
    assert store.get("test command").description == "the tests run with pytest -q (tox is gone)"
    index = (store.root / INDEX).read_text()
    assert "how to test" not in index and "pytest -q" in index
    assert json.loads((store.root / STATE).read_text())["last"] > 0  # the gate's clock moved


async def test_a_stale_memory_is_dropped_after_the_child_reads_its_file(trusted_ws):
    (trusted_ws / "schema.md").write_text("id column: id\n")
    path, digest = evidence_of(trusted_ws, "schema.md")
    store = MemoryStore(project_memory_dir(trusted_ws))
    store.save(
        Memory(
            "id column",
            "the id column is 'id'",
            "project",
            evidence_path=path,
            evidence_hash=digest,
        )
    )
    store.save(Memory("plots", "figures go to reports/", "project"))
    (trusted_ws / "schema.md").write_text("id column: key (renamed)\n")  # the evidence changed

    def drop_stale(prompt: str, seen: list[str]) -> list[dict[str, Any]]:
        assert "## id column (project;" in prompt and "POSSIBLY STALE" in prompt
        assert prompt.count("— POSSIBLY STALE") == 1  # 'plots' has no evidence
        assert any("key (renamed)" in text for text in seen)  # it read the file now
        return [{"op": "delete", "name": "id column"}]

    model = Consolidator(drop_stale, reads=["schema.md"])
    session = _start(trusted_ws, model, _due(trusted_ws))
    await session.memory_settled()
    session.close()
    assert [m.name for m in store.all()] == ["plots"]


async def test_the_gates_still_hold_a_model_consolidation_back(trusted_ws):
    store = MemoryStore(project_memory_dir(trusted_ws))
    store.save(Memory("a", "one fact", "project"))
    sessions = trusted_ws.parent / "sessions"
    sessions.mkdir()
    (sessions / "s0.jsonl").write_text("{}\n")  # one session: under the five needed
    model = Consolidator(lambda prompt, seen: [{"op": "delete", "name": "a"}])
    session = _start(trusted_ws, model, sessions)
    await session.memory_settled()
    session.close()
    assert model.prompts == [] and store.get("a") is not None


async def test_a_failed_model_consolidation_falls_back_to_the_stores_own(trusted_ws):
    store = MemoryStore(project_memory_dir(trusted_ws))
    store.save(
        Memory("tabs", "the person indents with four spaces", "project", learnt="2026-01-01")
    )
    twin = Memory("indent", "the person indents with four spaces.", "project", learnt="2026-02-01")
    (store.root / "indent.md").write_text(twin.to_text())  # a duplicate behind the store's back

    def broken(prompt: str, seen: list[str]) -> list[dict[str, Any]]:
        raise RuntimeError("HTTP 500")

    model = Consolidator(broken)
    session = _start(trusted_ws, model, _due(trusted_ws))
    await session.memory_settled()
    session.close()
    assert len(model.prompts) == 1  # it was asked …
    assert [m.name for m in store.all()] == ["tabs"]  # … and the duplicate merged without it


def test_offline_the_keeper_tidies_without_a_model(trusted_ws):
    from clawnb.memory.extract import MemoryKeeper

    store = MemoryStore(project_memory_dir(trusted_ws))
    store.save(
        Memory("tabs", "the person indents with four spaces", "project", learnt="2026-01-01")
    )
    twin = Memory("indent", "the person indents with four spaces.", "project", learnt="2026-02-01")
    (store.root / "indent.md").write_text(twin.to_text())
    keeper = MemoryKeeper(provider=None, workspace=trusted_ws, trusted=True)  # type: ignore[arg-type]
    done = keeper.consolidate_if_due(_due(trusted_ws))
    assert done == ["merged indent into tabs", *done[1:]]
    assert [m.name for m in store.all()] == ["tabs"]
