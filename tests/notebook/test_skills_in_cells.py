"""Skills in a notebook: ``%%claw /NAME args`` and ``%claw NAME args`` run a skill through
the one command registry, as in the chat and the API — judged by the scripted model's
session history (what it was sent as the user's turn)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawnb.types import Message
from tests.conftest import write_script

pytestmark = pytest.mark.timeout(60)


def _skill(root: Path) -> None:
    folder = root / ".config" / "clawnb" / "skills" / "weekly"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\ndescription: Weekly summary.\nargument-hint: [week]\n---\n"
        "NOTEBOOK-SKILL summarise week $0.\n"
    )


def _sent(shell) -> list[str]:
    session = shell._clawnb_session
    messages = session.agent_session().history if hasattr(session, "agent_session") else []
    return [m.content for m in messages if isinstance(m, Message.User)]


@pytest.mark.parametrize("cell", ["%%claw --model scripted:s.jsonl\n/weekly 49", "line"])
def test_a_skill_runs_from_a_cell_through_the_registry(shell, tmp_path: Path, capsys, cell) -> None:
    _skill(tmp_path)
    write_script(tmp_path / "s.jsonl", [{"text": "warmed"}, {"text": "summarised"}])
    shell.run_cell("%%claw --model scripted:s.jsonl\nhello")  # the session exists now
    capsys.readouterr()
    if cell == "line":
        shell.run_line_magic("claw", "weekly 49")
    else:
        result = shell.run_cell(cell)
        assert result.success, result.error_in_exec
    out = capsys.readouterr().out
    assert "summarised" in out
    assert any(s.startswith("NOTEBOOK-SKILL summarise week 49.") for s in _sent(shell))


@pytest.mark.parametrize(
    "policy",
    ["allow", "deny"],
)
def test_a_cells_skill_snippet_is_a_bash_call_under_the_cells_approval_policy(
    shell, tmp_path: Path, capsys, monkeypatch, policy: str
) -> None:
    folder = tmp_path / ".config" / "clawnb" / "skills" / "today"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\ndescription: Today.\n---\nNow: !`echo NB-$((6*7))`\n")
    write_script(tmp_path / "s.jsonl", [{"text": "warmed"}, {"text": "ok"}])
    shell.run_cell("%%claw --model scripted:s.jsonl\nhello")
    monkeypatch.setenv("CLAWNB_APPROVAL", policy)
    result = shell.run_cell("%%claw --model scripted:s.jsonl\n/today")
    assert result.success, result.error_in_exec
    sent = _sent(shell)[-1]
    if policy == "allow":
        assert sent.startswith("Now: NB-42")
    else:
        assert sent.startswith("Now: [snippet denied: echo NB-$((6*7))]")


def test_a_forked_skills_calls_are_cards_nested_under_its_card_in_the_cell(
    shell, tmp_path: Path, capsys
) -> None:
    folder = tmp_path / ".config" / "clawnb" / "skills" / "survey"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\ndescription: Survey.\ncontext: fork\n---\nSurvey $0.\n")
    (tmp_path / "notes.txt").write_text("NB-FORK-READ\n", encoding="utf-8")
    turns = [
        {"text": "warmed"},
        {"tool_calls": [{"id": "c1", "name": "read", "arguments": {"path": "notes.txt"}}]},
        {"text": "NB-FORK-REPORT"},
    ]
    write_script(tmp_path / "s.jsonl", turns)
    shell.run_cell("%%claw --model scripted:s.jsonl\nhello")
    capsys.readouterr()
    result = shell.run_cell("%%claw --model scripted:s.jsonl\n/survey src")
    assert result.success, result.error_in_exec
    lines = capsys.readouterr().out.splitlines()
    card = next(i for i, line in enumerate(lines) if "[skill: /survey src (fork)]" in line)
    read = next(i for i, line in enumerate(lines) if "read" in line and "notes.txt" in line)
    assert read > card and lines[read].startswith("↳ fork: ")  # under the fork's card
    assert any("NB-FORK-REPORT" in line for line in lines[read:])
    history = shell._clawnb_session.agent_session().history
    assert history[-1].turn.text == "NB-FORK-REPORT" and history[-2].label == "/survey src"
