"""``/NAME args`` in the terminal chat: the same registry as the API, so a skill typed in the
chat becomes the turn's prompt and ``/help`` lists it — judged by the saved session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from clawnb.session.log import SessionLog
from clawnb.types import Message
from tests.conftest import scripted_model, session_files

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(60)


def test_a_skill_typed_in_the_chat_is_the_turns_prompt(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    skill = tmp_path / "xdg" / "clawnb" / "skills" / "weekly" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\ndescription: Weekly summary.\nargument-hint: [week]\n---\nCHAT-SKILL week $0.\n"
    )
    model = scripted_model(tmp_path / "s.jsonl", [{"text": "summarised"}])
    data = tmp_path / "home" / ".local" / "share"
    proc = subprocess.run(
        [sys.executable, "-m", "clawnb", "chat", "--model", model, "--workspace", str(ws)],
        input="/help\n/weekly 49\n",
        capture_output=True,
        text=True,
        timeout=30,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path / "home"),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "XDG_DATA_HOME": str(data),
            "PYTHONPATH": str(ROOT),
            "NO_COLOR": "1",
        },
    )
    assert proc.returncode == 0, proc.stderr
    assert "skills:" in proc.stdout and "/weekly [week]" in proc.stdout
    assert "summarised" in proc.stdout
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    saved = SessionLog.read(session_files(ws, env)[0])
    prompts = [m.content for m in saved if isinstance(m, Message.User)]
    assert prompts == ["CHAT-SKILL week 49.\n"]


def test_tab_in_the_chat_completes_skill_names_beside_the_commands(tmp_path, monkeypatch) -> None:
    from clawnb.cli.chat import command_completions
    from clawnb.session.assemble import build_agent

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    skill = tmp_path / "xdg" / "clawnb" / "skills" / "stats-report" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\ndescription: Statistics report.\n---\nReport.\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    session = build_agent(None, workspace=ws, model="scripted:/dev/null")
    try:
        assert command_completions("/st", session) == ["/stats-report", "/status"]
        assert command_completions("/st") == ["/status"]  # no session: the registry only
        assert command_completions("st", session) == []  # only at the start of a command
    finally:
        session.close()


def test_a_forked_skills_calls_are_drawn_nested_under_it_in_the_chat(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("FORK-READ-CONTENT\n", encoding="utf-8")
    skill = tmp_path / "xdg" / "clawnb" / "skills" / "survey" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\ndescription: Survey.\ncontext: fork\n---\nSurvey $ARGUMENTS.\n")
    turns = [
        {"tool_calls": [{"id": "c1", "name": "read", "arguments": {"path": "notes.txt"}}]},
        {"text": "THE-FORK-REPORT"},
    ]
    model = scripted_model(tmp_path / "s.jsonl", turns)
    proc = subprocess.run(
        [sys.executable, "-m", "clawnb", "chat", "--model", model, "--workspace", str(ws)],
        input="/survey src\n",
        capture_output=True,
        text=True,
        timeout=30,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path / "home"),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "XDG_DATA_HOME": str(tmp_path / "home" / ".local" / "share"),
            "PYTHONPATH": str(ROOT),
            "NO_COLOR": "1",
        },
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    card = next(i for i, line in enumerate(lines) if "/survey src" in line and "skill" in line)
    read = next(i for i, line in enumerate(lines) if "read" in line and "notes.txt" in line)
    assert read > card
    assert lines[read].startswith("    ")  # drawn one level in, under the fork's line
    assert not lines[card].startswith(" ")
    assert proc.stdout.count("THE-FORK-REPORT") == 1  # the report, shown once as the answer
