"""A notebook resumed after a kernel restart talks to the model with today's system prompt
(date, git state, instructions), as the chat's /resume always did — not the one the
conversation was saved with."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from clawnb.types import Message
from tests.conftest import write_script


def test_a_resumed_notebook_sends_todays_system_prompt(shell, tmp_path: Path, capsys) -> None:
    write_script(tmp_path / "s.jsonl", [{"text": "first answer"}, {"text": "second answer"}])
    assert shell.run_cell("%%claw --model scripted:s.jsonl\nhello").success
    saved = shell._clawnb_session.messages.path
    # the conversation as a person would find it days later: saved with an old prompt
    records = [json.loads(line) for line in saved.read_text().splitlines() if line.strip()]
    old = "You are clawnb. Today's date: 1999-12-31."
    for record in records:
        if record.get("message", {}).get("role") == "system":
            record["message"]["content"] = old
    saved.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert old in saved.read_text()

    del shell._clawnb_session  # the kernel restarts
    assert shell.run_cell("%claw resume").success
    assert "resumed session" in capsys.readouterr().out
    assert shell.run_cell("%%claw --model scripted:s.jsonl\nand again").success
    system = shell._clawnb_session.messages[0]
    assert isinstance(system, Message.System)
    assert "1999-12-31" not in system.content
    assert date.today().isoformat() in system.content
