"""The terminal chat's approval question keeps a long command's head on the screen: a
60-line or 9,000-character command is shown as its first and last lines with the hidden line
count, and ``v`` pages through the whole of it before the person answers (a real chat in a
40-row pseudo-terminal, driven with pexpect; the answer is "no", and the command's own marker
file proves it did not run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import call_turn, spawn_chat, write_script

pexpect = pytest.importorskip("pexpect")


def _chat_for(tmp_path: Path, command: str):
    script = write_script(
        tmp_path / "s.jsonl",
        [call_turn("c1", "bash", command=command), {"text": "Understood."}],
    )
    (tmp_path / "ws").mkdir()
    child = spawn_chat(
        tmp_path,
        "--model",
        f"scripted:{script}",
        "--workspace",
        str(tmp_path / "ws"),
        "--no-color",
    )
    child.expect("you> ")
    child.sendline("go")
    return child


def _end(child) -> None:
    child.expect("Understood.")
    child.expect("you> ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()


def test_a_sixty_line_command_shows_head_tail_and_pages_on_v(tmp_path):
    lines = ["echo FIRST-LINE", *(f"echo filler-{n:02d}" for n in range(2, 60)), "touch ran"]
    child = _chat_for(tmp_path, "\n".join(lines))
    child.expect(r"\[v\]iew whole: ")
    question = str(child.before)
    assert "FIRST-LINE" in question and "touch ran" in question
    assert "(50 lines hidden here: v shows them)" in question
    assert "filler-30" not in question  # hidden until asked for
    assert "(60 lines," in question and "shortened: v shows the whole command" in question
    child.sendline("v")
    child.expect("-- more: Enter for the next page, q to stop -- ")
    first_page = str(child.before)
    assert "filler-30" in first_page and "touch ran" not in first_page
    child.sendline("")
    child.expect(r"\[v\]iew whole: ")  # the rest, then the same question again
    rest = str(child.before)
    assert "filler-50" in rest and "60 │ touch ran" in rest
    child.sendline("n")
    _end(child)
    assert not (tmp_path / "ws" / "ran").exists()


def test_a_nine_thousand_character_line_is_cut_around_a_mark(tmp_path):
    command = "echo HEAD-OF-IT " + "x" * 9000 + " ; touch ran"
    child = _chat_for(tmp_path, command)
    child.expect(r"\[v\]iew whole: ")
    question = str(child.before)
    assert "HEAD-OF-IT" in question and "touch ran" in question
    assert "characters hidden" in question
    assert "x" * 200 not in question
    child.sendline("v")
    child.expect(r"\[v\]iew whole: ")
    assert "x" * 9000 in str(child.before).replace("\r\n", "")
    child.sendline("n")
    _end(child)
    assert not (tmp_path / "ws" / "ran").exists()


def test_a_short_command_keeps_the_plain_question(tmp_path):
    child = _chat_for(tmp_path, "echo one\necho two\ntouch ran")
    child.expect(r"\[a\]lways: ")
    assert "view whole" not in str(child.before)
    assert "1 │ echo one" in str(child.before)
    child.sendline("n")
    _end(child)
