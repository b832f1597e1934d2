"""Plan mode and ``%claw history`` as a person reads them (issue 26, item 8): the plan's
``exit_plan`` hand-in draws no card of its own next to the plan's box; history numbers each
prompt by the cell that sent it (``In [n]``) and marks what the engine said at the plan's
question ("Approved. Execute the plan.") as what it is, never as the person's words."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from clawnb.config import Config
from clawnb.planning import PlanVerdict
from tests.conftest import write_script

from .test_widgets import click, fake_shell, make_view

PLAN = [
    {
        "text": "Looking.",
        "tool_calls": [{"id": "p1", "name": "read", "arguments": {"path": "a.txt"}}],
    },
    {
        "text": "Plan: 1. write b.txt",
        "tool_calls": [{"id": "p2", "name": "exit_plan", "arguments": {}}],
    },
    {"tool_calls": [{"id": "x1", "name": "write", "arguments": {"path": "b.txt", "content": "B"}}]},
    {"text": "Executed."},
    {"text": "Second answer."},
]


def test_a_plan_cell_shows_no_exit_plan_card_and_history_numbers_cells(
    shell, tmp_path: Path, capsys, monkeypatch
) -> None:
    (tmp_path / "a.txt").write_text("A")
    write_script(tmp_path / "s.jsonl", PLAN)
    monkeypatch.setenv("CLAWNB_APPROVAL", "allow")
    first = shell.execution_count
    shell.run_cell("%%claw --model scripted:s.jsonl --mode plan\nplan then do", store_history=True)
    out = capsys.readouterr().out
    assert "Plan: 1. write b.txt" in out and "plan executed" in out and "Executed." in out
    assert "exit_plan" not in out and "Plan submitted for review" not in out
    assert "[read: a.txt] done" in out  # the other calls keep their cards
    shell.run_cell("x = 1", store_history=True)  # a plain cell in between
    second = shell.execution_count
    shell.run_cell("%%claw\nand now?", store_history=True)
    capsys.readouterr()
    shell.run_line_magic("claw", "history")
    history = capsys.readouterr().out
    lines = history.splitlines()
    assert lines[0] == f"In [{first}] you (plan first): plan then do"
    assert "    → plan approved: executing it" in lines
    assert f"In [{second}] you: and now?" in lines
    assert second == first + 2
    assert "Approved. Execute the plan." not in history and "exit_plan" not in history
    assert not re.search(r"^\[\d+\]", history, re.M)  # no 1, 2, 3 where the cell is known


async def test_the_plan_box_is_the_only_thing_exit_plan_draws(tmp_path, monkeypatch) -> None:
    from clawnb.notebook.runner import CellOptions, run_claw

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    (tmp_path / "a.txt").write_text("A")
    write_script(tmp_path / "p.jsonl", [*PLAN[:2], {"text": "Executed."}])
    shell = fake_shell(tmp_path)
    view, sink = make_view()
    view.root._view_count = 1
    options = CellOptions(model="scripted:p.jsonl", mode="plan")
    task = asyncio.ensure_future(run_claw(shell, options, "plan it", view=view))
    for _ in range(500):
        await asyncio.sleep(0.01)
        boxes = [b for b in view.body.children if "clawnb-plan" in b._dom_classes]
        if boxes:
            break
    else:
        raise AssertionError("no plan box")
    names = [c.name for c in view.transcript.cards.values()]
    assert names == ["read"]  # the read the plan made; no exit_plan card beside the box
    *_, bar = boxes[0].children
    click({getattr(c, "description", ""): c for c in bar.children}["Execute"])
    await asyncio.wait_for(task, 10)
    saved = sink.shown[-1]["text/markdown"]
    assert "Plan: 1. write b.txt" in saved and "Executed." in saved
    assert "exit_plan" not in saved and "Plan submitted for review" not in saved
    assert [c.name for c in view.transcript.cards.values()] == ["read"]


def test_the_chat_history_marks_a_plan_and_its_approval(tmp_path) -> None:
    from clawnb.session.assemble import build_agent

    (tmp_path / "a.txt").write_text("A")
    write_script(tmp_path / "s.jsonl", PLAN)
    session = build_agent(
        Config(), workspace=tmp_path, model=f"scripted:{tmp_path / 's.jsonl'}", session=None
    )
    session.configure(mode="accept_edits")

    async def review(plan: str) -> PlanVerdict:
        return PlanVerdict.execute()

    async def run() -> str | None:
        await session.run_plan("plan then do", None, review)
        await session.send("and now?")
        return await session.command("/history")

    try:
        history = asyncio.run(run()) or ""
    finally:
        session.close()
    lines = history.splitlines()
    assert lines[0] == "[1] you (plan first): plan then do"
    assert "    → plan approved: executing it" in lines
    assert "[2] you: and now?" in lines
    assert "Approved. Execute the plan." not in history and "exit_plan" not in history


def test_history_knows_the_words_the_engine_sends_for_a_plan() -> None:
    from clawnb.session import assemble, reports

    assert reports._APPROVED == assemble.APPROVED_PLAN
