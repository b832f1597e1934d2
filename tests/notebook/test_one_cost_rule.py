"""One cost rule in every front end (issue 26, item 4): the same scripted model — which has
no price — is "not priced" in the chat, in a ``%%claw`` cell and through the Python API, never
``$0.0000``, and its token counts carry thousands separators everywhere."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from clawnb.config import Config
from clawnb.types import TokenUsage
from clawnb.usage import CostTracker
from tests.conftest import ROOT, spawn_chat, write_script

pexpect = pytest.importorskip("pexpect")

TURNS = [{"text": "Hello there.", "usage": {"input_tokens": 10100, "output_tokens": 2345}}]
TOKENS = "10,100 in + 2,345 out"


def _script(tmp_path: Path) -> Path:
    return write_script(tmp_path / "s.jsonl", TURNS)


def test_the_chat_says_not_priced_with_separators_in_cost_and_at_exit(tmp_path) -> None:
    child = spawn_chat(
        tmp_path, "--model", f"scripted:{_script(tmp_path)}", "--workspace", str(tmp_path / "w")
    )
    child.expect("you> ")
    child.sendline("hi")
    child.expect("Hello there.")
    child.expect("you> ")
    child.sendline("/cost")
    child.expect("you> ")
    cost = str(child.before)
    child.sendeof()
    child.expect(pexpect.EOF)
    total = str(child.before)
    child.close()
    assert child.exitstatus == 0
    assert f"tokens: {TOKENS} | cost: not priced" in cost
    assert f"(this session: tokens: {TOKENS} | cost: not priced)" in total
    assert "$" not in cost + total


def test_a_chat_that_never_asked_the_model_prints_no_total(tmp_path) -> None:
    child = spawn_chat(
        tmp_path, "--model", f"scripted:{_script(tmp_path)}", "--workspace", str(tmp_path / "w")
    )
    child.expect("you> ")
    child.sendline("/status")
    child.expect("you> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    assert "this session:" not in str(child.before)
    child.close()


def test_a_claw_cell_footer_and_claw_cost_say_not_priced(shell, tmp_path, capsys) -> None:
    _script(tmp_path)
    shell.run_cell("%%claw --model scripted:s.jsonl\nhi")
    cell = capsys.readouterr().out
    assert "[1 turn · 10,100 in / 2,345 out tokens · not priced]" in cell
    shell.run_line_magic("claw", "cost")
    cost = capsys.readouterr().out
    assert f"tokens: {TOKENS} | cost: not priced" in cost
    assert "$" not in cell + cost


def test_the_python_api_reports_the_same_words(tmp_path) -> None:
    from clawnb.session.assemble import build_agent

    session = build_agent(
        Config(), workspace=tmp_path / "w", model=f"scripted:{_script(tmp_path)}", session=None
    )

    async def turn() -> str | None:
        await session.send("hi", lambda event: None)
        return await session.command("/cost")

    try:
        cost = asyncio.run(turn())
    finally:
        session.close()
    assert cost is not None and f"tokens: {TOKENS} | cost: not priced" in cost
    assert session.cost.report() == f"tokens: {TOKENS} | cost: not priced"
    assert "| 1 | 10,100 | 2,345 | not priced |" in session.cost._repr_markdown_()
    assert "$" not in repr(session.cost)


def test_the_demo_one_shot_says_not_priced(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "clawnb", "demo", "--workspace", str(tmp_path / "w")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("[") and "| cost: not priced]" in last
    assert "$0.0000" not in done.stdout


def test_a_model_priced_at_zero_is_free_and_a_priced_one_costs_dollars() -> None:
    config = Config.from_toml(
        '[pricing."local/*"]\ninput = 0\noutput = 0\n[pricing."paid/m"]\ninput = 3.0\noutput = 15.0'
    )
    free = CostTracker.for_model("local/llama", config)
    paid = CostTracker.for_model("paid/m", config)
    unknown = CostTracker.for_model("mystery/m", config)
    for tracker in (free, paid, unknown):
        tracker.record(TokenUsage(1234, 567))
    assert free.report() == "tokens: 1,234 in + 567 out | cost: free"
    assert paid.report() == "tokens: 1,234 in + 567 out | cost: $0.0122"
    assert unknown.report() == "tokens: 1,234 in + 567 out | cost: not priced"
    assert free.summary() == "tokens: 1234 in + 567 out | cost: free"  # the book's line
    silent = CostTracker.for_model("local/llama", config)
    silent.record(None)
    assert silent.report() == "tokens: not reported | cost: free"
    silent.record(TokenUsage(1000, 2000))
    assert silent.report() == ("tokens: 1,000 in + 2,000 out (+ 1 turn not reported) | cost: free")
