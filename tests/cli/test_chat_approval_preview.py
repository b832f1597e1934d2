"""The terminal chat shows what an approval is about before it asks: an edit's or a write's
whole numbered diff (the notebook card's preview), a screenful at a time when it is longer than
the screen, then the question; after ``y`` the result is its one line, not the diff again. A
real chat in a 40-row pseudo-terminal, driven with pexpect; what the file holds afterwards
shows which answer was taken."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import call_turn, spawn_chat, write_script

pexpect = pytest.importorskip("pexpect")

QUESTION = r"\[y\]es / \[n\]o / \[a\]lways: "
MATH = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
MORE = r"-- more: Enter for the next page, q to stop \((\d+) of (\d+) diff lines shown\) -- "


def _chat(tmp_path: Path, turns: list[dict], *extra: str):
    script = write_script(tmp_path / "s.jsonl", [*turns, {"text": "All done."}])
    (tmp_path / "ws").mkdir(exist_ok=True)
    child = spawn_chat(
        tmp_path,
        "--model",
        f"scripted:{script}",
        "--workspace",
        str(tmp_path / "ws"),
        "--no-save",
        *extra,
    )
    child.expect("you> ")
    child.sendline("go")
    return child


def _end(child) -> str:
    child.expect("All done.")
    after = str(child.before)
    child.expect("you> ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    return after


def test_an_edit_shows_its_whole_diff_before_the_question_and_only_its_line_after(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "mathutils.py").write_text(MATH)
    new = "def sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b  # ADDED\n"
    child = _chat(
        tmp_path,
        [
            call_turn("r1", "read", path="mathutils.py"),
            call_turn(
                "e1",
                "edit",
                path="mathutils.py",
                old_string="def sub(a, b):\n    return a - b\n",
                new_string=new,
            ),
        ],
        "--no-color",
    )
    child.expect(QUESTION)
    before = str(child.before)
    # the line the old 5-line cut hid is there, and every diff row comes before the question
    assert "+   10 |     return a * b  # ADDED" in before
    assert "[edit: mathutils.py] line " in before and "0 removed, 4 added" in before
    assert before.index("# ADDED") < before.index("? allow [edit: mathutils.py] (")
    child.sendline("y")
    after = _end(child)
    assert "edited mathutils.py" in after
    assert "@@" not in after and "# ADDED" not in after  # not the diff a second time
    assert "return a * b  # ADDED" in (tmp_path / "ws" / "mathutils.py").read_text()


def test_a_new_file_shows_every_line_it_writes_before_the_question(tmp_path):
    child = _chat(
        tmp_path,
        [call_turn("w1", "write", path="notes.txt", content="alpha\nbeta\ngamma\n")],
        "--no-color",
    )
    child.expect(QUESTION)
    before = str(child.before)
    assert "[write: notes.txt] new file, 3 lines" in before
    for n, word in enumerate(("alpha", "beta", "gamma"), 1):
        assert f"+    {n} | {word}" in before
    assert before.index("gamma") < before.index("? allow [write: notes.txt]")
    child.sendline("n")
    _end(child)
    assert not (tmp_path / "ws" / "notes.txt").exists()


def test_an_overwrite_shows_what_goes_and_what_comes(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("old one\nkept\n")
    child = _chat(
        tmp_path,
        [
            call_turn("r1", "read", path="notes.txt"),
            call_turn("w1", "write", path="notes.txt", content="new one\nkept\n"),
        ],
        "--no-color",
    )
    child.expect(QUESTION)
    before = str(child.before)
    assert "[write: notes.txt] overwrites 2 lines: 1 removed, 1 added" in before
    assert "-    1 | old one" in before and "+    1 | new one" in before
    assert before.index("+    1 | new one") < before.index("? allow [write: notes.txt]")
    child.sendline("y")
    after = _end(child)
    assert "wrote notes.txt" in after and "old one" not in after
    assert (tmp_path / "ws" / "notes.txt").read_text() == "new one\nkept\n"


def test_a_long_diff_is_paged_with_enter_and_v_shows_what_q_skipped(tmp_path):
    content = "".join(f"line {n:03d}\n" for n in range(1, 101))
    child = _chat(
        tmp_path, [call_turn("w1", "write", path="long.txt", content=content)], "--no-color"
    )
    child.expect(MORE)  # 40 rows: a first page, not all 101 diff rows at once
    shown, total = int(child.match.group(1)), int(child.match.group(2))
    assert total == 101 and 8 <= shown < 40
    first = str(child.before)
    assert "line 001" in first and f"line {shown - 1:03d}" in first
    assert f"line {shown + 1:03d}" not in first and "? allow" not in first
    child.sendline("")  # Enter: the next page
    child.expect(MORE)
    assert f"line {shown + 1:03d}" in str(child.before)
    assert "line 100" not in str(child.before)
    child.sendline("q")  # on to the question: it says how much was not shown
    child.expect(r"\[y\]es / \[n\]o / \[a\]lways / \[v\]iew whole: ")
    question = str(child.before)
    unseen = re.search(r"\((\d+) diff lines not shown: v shows the whole diff\)", question)
    assert unseen is not None and int(unseen.group(1)) == 101 - 2 * shown
    assert "line 100" not in question
    assert question.index("diff lines not shown") < question.index("? allow [write: long.txt]")
    child.sendline("v")  # the whole diff again, from its first line, page by page
    seen = ""
    while child.expect([MORE, r"\[v\]iew whole: "]) == 0:
        seen += str(child.before)
        child.sendline("")
    seen += str(child.before)
    assert all(f"line {n:03d}" in seen for n in range(1, 101))
    child.sendline("y")
    _end(child)
    assert (tmp_path / "ws" / "long.txt").read_text() == content


def test_the_diff_is_coloured_when_colours_are_on(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("old one\n")
    child = _chat(
        tmp_path,
        [
            call_turn("r1", "read", path="notes.txt"),
            call_turn("w1", "write", path="notes.txt", content="new one\n"),
        ],
    )
    child.expect(QUESTION)
    before = str(child.before)
    assert "\x1b[32m    +    1 | new one\x1b[0m" in before
    assert "\x1b[31m    -    1 | old one\x1b[0m" in before
    assert "\x1b[36m    @@ -1,1 +1,1 @@\x1b[0m" in before
    child.sendline("n")
    _end(child)
    assert (tmp_path / "ws" / "notes.txt").read_text() == "old one\n"


def test_a_command_of_several_lines_is_shown_before_the_question(tmp_path):
    child = _chat(
        tmp_path,
        [call_turn("b1", "bash", command="echo one\necho two\ntouch ran")],
        "--no-color",
    )
    child.expect(QUESTION)
    before = str(child.before)
    assert "  [bash]" in before and "3 │ touch ran" in before
    assert before.index("3 │ touch ran") < before.index("? allow bash (")
    child.sendline("n")
    _end(child)
    assert not (tmp_path / "ws" / "ran").exists()


def test_piped_answers_get_the_whole_long_diff_without_pauses(tmp_path):
    import subprocess
    import sys

    from tests.conftest import ROOT

    content = "".join(f"line {n:03d}\n" for n in range(1, 101))
    script = write_script(
        tmp_path / "s.jsonl",
        [call_turn("w1", "write", path="long.txt", content=content), {"text": "All done."}],
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PYTHONPATH": str(ROOT),
        "LINES": "40",
    }
    argv = ["-m", "clawnb", "chat", "--model", f"scripted:{script}", "--no-save"]
    done = subprocess.run(
        [sys.executable, *argv, "--workspace", str(tmp_path / "ws"), "--no-color"],
        input="go\ny\n",  # the "y" answers the question, no "more" prompt takes it
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "-- more" not in done.stdout
    assert all(f"| line {n:03d}" in done.stdout for n in range(1, 101))
    assert done.stdout.index("line 100") < done.stdout.index("? allow [write: long.txt]")
    assert (tmp_path / "ws" / "long.txt").read_text() == content


OWN_AGENT = '''
import contextlib

from clawnb.events import ApprovalRequest
from clawnb.types import AssistantTurn, Message, ToolCall


class AsksFirst:
    """A learner's session whose one tool runs code: it asks before running it."""

    mode = "default"

    def __init__(self, history):
        self.history = history
        self.approve = None

    async def send(self, prompt, on_event=None, *, review=None):
        self.history.append(Message.User(prompt))
        call = ToolCall("p1", "run_python", {"code": "import os\\nprint(os.getcwd())"})
        answer = await self.approve(ApprovalRequest(call, "[run_python]", "it runs code"))
        text = "ran it" if answer.allowed else "did not run it"
        self.history.append(Message.Assistant(AssistantTurn(text=text)))
        if on_event is not None:
            from clawnb.events import AgentEvent

            on_event(AgentEvent.TextDelta(text))
        return text

    @contextlib.contextmanager
    def handlers(self, *, approve=None, ask=None):
        self.approve = approve
        try:
            yield
        finally:
            self.approve = None

    def configure(self, *, mode=None, max_turns=None, model=None):
        pass


def make_session(provider, workspace, history):
    return AsksFirst(history)
'''


def test_code_to_run_is_shown_as_numbered_lines_before_the_question(tmp_path):
    (tmp_path / "asks_first.py").write_text(OWN_AGENT)
    script = write_script(tmp_path / "s.jsonl", [{"text": "unused"}])
    child = spawn_chat(
        tmp_path,
        "--agent",
        "asks_first",
        "--model",
        f"scripted:{script}",
        "--workspace",
        str(tmp_path / "ws"),
        "--no-color",
        env={"PYTHONPATH": f"{tmp_path}:{Path(__file__).resolve().parents[2]}"},
    )
    child.expect("you> ")
    child.sendline("go")
    child.expect(QUESTION)
    before = str(child.before)
    assert "  [run_python]" in before
    assert "1 │ import os" in before and "2 │ print(os.getcwd())" in before
    assert before.index("print(os.getcwd())") < before.index("? allow [run_python] (it runs code)")
    child.sendline("n")
    child.expect("did not run it")
    child.expect("you> ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
