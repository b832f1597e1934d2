"""Issue 24 item 3 in the terminal chat, in a real pseudo-terminal: ``a`` at the approval
question lists the scoped "always" the gate offered — ``git status*`` for this session, saved
for this project or saved for you — and the choice saved for the project holds in a new chat
(``git status -s`` runs unasked, ``git push`` still asks); a control file's question offers no
``[a]lways``; ``/rules`` shows the saved rule with its file and ``/rules forget`` removes it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import call_turn, spawn_chat, write_script

pexpect = pytest.importorskip("pexpect")

ASK = r"\[y\]es / \[n\]o / \[a\]lways: "
ASK_ONCE = r"\[y\]es / \[n\]o: "


def _chat(tmp_path: Path, ws: Path, name: str, turns: list[dict]) -> object:
    script = write_script(tmp_path / f"{name}.jsonl", turns)
    child = spawn_chat(
        tmp_path, "--model", f"scripted:{script}", "--workspace", str(ws), "--no-save",
        "--no-color",
    )  # fmt: skip
    child.expect("you> ")
    return child


def test_always_saved_for_the_project_holds_in_a_new_chat(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    child = _chat(
        tmp_path,
        ws,
        "one",
        [
            call_turn("c1", "bash", command="git status -s"),
            {"text": "Status shown."},
            call_turn("c2", "write", path=".claw/notes.md", content="x\n"),
            {"text": "Noted."},
        ],
    )
    child.sendline("status?")
    child.expect(ASK)
    child.sendline("a")
    child.expect(r"which \(1-3, Enter: back\): ")
    menu = str(child.before)
    assert "1  git status*  for this session" in menu
    assert "2  git status*  saved for this project (" in menu and "rules.local.toml)" in menu
    assert "3  git status*  saved for you, everywhere (" in menu
    child.sendline("2")
    child.expect("always: git status\\*  saved for this project")
    child.expect("Status shown.")
    child.expect("you> ")
    child.sendline("note it")
    child.expect(ASK_ONCE)  # a control file: only this call can be approved
    assert "[a]lways" not in str(child.before)
    child.sendline("y")
    child.expect("Noted.")
    child.expect("you> ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    saved = ws / ".claw" / "rules.local.toml"
    assert '"bash(git status*)"' in saved.read_text()

    child = _chat(
        tmp_path,
        ws,
        "two",
        [
            call_turn("c3", "bash", command="git status -s"),
            {"text": "Ran unasked."},
            call_turn("c4", "bash", command="git push origin main"),
            {"text": "Push answered."},
        ],
    )
    child.sendline("status again")
    i = child.expect([ASK, "Ran unasked."])
    assert i == 1, "git status -s was asked about in the new chat"
    child.expect("you> ")
    child.sendline("push")
    child.expect(ASK)  # git push still asks
    child.sendline("n")
    child.expect("Push answered.")
    child.expect("you> ")
    child.sendline("/rules")
    child.expect("you> ")
    shown = str(child.before)
    assert "saved from approvals (allow; /rules forget PATTERN removes one):" in shown
    assert f"bash(git status*)  saved {saved}" in shown
    child.sendline("/rules forget bash(git status*)")
    child.expect(f"forgotten: bash\\(git status\\*\\) \\(removed from {saved}\\)")
    child.expect("you> ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    assert '"bash(git status*)"' not in saved.read_text()
