"""One agent that grows: export writes a chapter into the learner's package, parts hands it to
later chapters (or clawnb's, with a switch), and the capstone runs the learner's own session
behind %%claw (a real kernel, headless) and the terminal chat."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from clawnb.course import export, parts
from clawnb.course._save import execute_notebook

ROOT = Path(__file__).resolve().parents[2] / "notebooks"


def _copy(tmp_path, *names, exercises=False):
    src = ROOT / "exercises" if exercises else ROOT
    for name in names:
        shutil.copy(src / name, tmp_path / name)
    (tmp_path / "scripts").mkdir(exist_ok=True)
    shutil.copy(ROOT / "scripts" / "capstone.jsonl", tmp_path / "scripts" / "capstone.jsonl")


def test_export_writes_the_chapter_into_the_package_and_parts_returns_it(
    tmp_path, monkeypatch, capsys
):
    _copy(tmp_path, "09_file_tools.ipynb")
    monkeypatch.chdir(tmp_path)
    export("09_file_tools.ipynb")
    assert (tmp_path / "my_agent" / "ch09_file_tools.py").is_file()
    assert "from .ch09_file_tools import *" in (tmp_path / "my_agent" / "__init__.py").read_text()
    read, bash = parts("ReadTool", "BashTool", use="mine")
    said = capsys.readouterr().out
    assert read.__module__ == "my_agent.ch09_file_tools"
    assert "yours (my_agent/): ReadTool" in said
    assert "clawnb's, not exported yet (or still a stub): BashTool" in said
    import clawnb

    assert bash is clawnb.BashTool
    assert parts("ReadTool", use="clawnb") is clawnb.ReadTool


def test_an_exported_stub_is_not_handed_on(tmp_path, monkeypatch, capsys):
    _copy(tmp_path, "09_file_tools.ipynb", exercises=True)
    monkeypatch.chdir(tmp_path)
    export("09_file_tools.ipynb")
    import clawnb

    assert parts("EditTool", use="mine") is clawnb.EditTool
    assert "still a stub): EditTool" in capsys.readouterr().out


def test_a_later_export_replaces_an_earlier_piece(tmp_path, monkeypatch):
    _copy(tmp_path, "02_first_tool_call.ipynb", "09_file_tools.ipynb")
    monkeypatch.chdir(tmp_path)
    export("02_first_tool_call.ipynb")
    assert parts("ReadTool").__module__ == "my_agent.ch02_first_tool_call"
    export("09_file_tools.ipynb")  # picked up without restarting anything
    assert parts("ReadTool").__module__ == "my_agent.ch09_file_tools"


def _run(path, env):
    nb = execute_notebook(path, allow_errors=True, env=env)
    return "\n".join(
        out.get("text", "") + out.get("evalue", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    )


def test_the_capstone_runs_the_learners_agent_behind_claw(tmp_path):
    _copy(tmp_path, "20_capstone_your_agent.ipynb")
    out = _run(tmp_path / "20_capstone_your_agent.ipynb", {"CLAWNB_APPROVAL": "allow"})
    assert "exported MySession, make_session to my_agent/" in out
    assert "[read: capstone_workspace/notes.txt] done" in out
    assert "(approved by policy: CLAWNB_APPROVAL=allow)" in out
    assert (
        tmp_path / "capstone_workspace" / "hello.txt"
    ).read_text() == "Hello from my own agent!\n"
    assert "test result: ok. 8 passed" in out


def test_the_capstone_with_denials_writes_nothing(tmp_path):
    _copy(tmp_path, "20_capstone_your_agent.ipynb")
    out = _run(tmp_path / "20_capstone_your_agent.ipynb", {"CLAWNB_APPROVAL": "deny"})
    assert "denied" in out
    assert not (tmp_path / "capstone_workspace" / "hello.txt").exists()


def test_the_capstone_exercise_fails_until_written(tmp_path):
    _copy(tmp_path, "20_capstone_your_agent.ipynb", exercises=True)
    out = _run(tmp_path / "20_capstone_your_agent.ipynb", {"CLAWNB_APPROVAL": "allow"})
    assert "test result: FAILED." in out
    assert "stub MySession ... FAILED" in out or "NotImplementedError" in out


def test_chat_agent_runs_the_learners_session_in_the_terminal(tmp_path):
    _copy(tmp_path, "20_capstone_your_agent.ipynb")
    export(tmp_path / "20_capstone_your_agent.ipynb")
    (tmp_path / "capstone_workspace").mkdir()
    (tmp_path / "capstone_workspace" / "notes.txt").write_text("Please create hello.txt.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWNB_")}
    done = subprocess.run(
        [sys.executable, "-m", "clawnb", "chat", "--agent", "my_agent", "--no-color"]
        + ["--model", "scripted:scripts/capstone.jsonl", "--approve", "allow"],
        input="Do what the notes say.\n/cost\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "your agent my_agent (MySession)" in done.stdout
    assert "wrote capstone_workspace/hello.txt" in done.stdout
    assert "/cost needs clawnb's own agent" in done.stdout
    assert (tmp_path / "capstone_workspace" / "hello.txt").exists()


def test_chat_agent_that_is_not_a_session_is_refused_clearly(tmp_path):
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "notagent.py").write_text(
        "def make_session(provider, workspace, history):\n    return 42\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "clawnb", "chat", "--agent", "notagent"]
        + ["--model", "scripted:empty.jsonl"],
        input="",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 2
    assert "int is not a session; it lacks history, mode, send, handlers, configure" in done.stderr
    assert "Traceback" not in done.stderr
