"""One agent that grows: export writes a chapter into the learner's package, parts hands it to
later chapters (or clawnb's, with a switch), and the capstone runs the learner's own session
behind %%claw (a real kernel, headless) and the terminal chat."""

import json
import os
import subprocess
import sys
from pathlib import Path

from shipped import fill_in, shipped_course

from clawnb.course import export, parts
from clawnb.course._save import execute_notebook
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall


def _course(tmp_path, exercises=False):
    """The course as it ships, under ``tmp_path``: the folder of its notebooks (or of the
    exercises), with every relative path in them naming what it names in the checkout."""
    folder = shipped_course(tmp_path)
    return folder if exercises else folder.parent


def test_export_writes_the_chapter_into_the_package_and_parts_returns_it(
    tmp_path, monkeypatch, capsys
):
    folder = _course(tmp_path)
    monkeypatch.chdir(folder)
    export("09_file_tools.ipynb")
    assert (folder / "my_agent" / "ch09_file_tools.py").is_file()
    assert "from .ch09_file_tools import *" in (folder / "my_agent" / "__init__.py").read_text()
    read, bash = parts("ReadTool", "BashTool", use="mine")
    said = capsys.readouterr().out
    assert read.__module__ == "my_agent.ch09_file_tools"
    assert "yours (my_agent/): ReadTool" in said
    assert "clawnb's, not exported yet (or still a stub): BashTool" in said
    import clawnb

    assert bash is clawnb.BashTool
    assert parts("ReadTool", use="clawnb") is clawnb.ReadTool


def test_an_exported_stub_is_not_handed_on(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(_course(tmp_path, exercises=True))
    export("09_file_tools.ipynb")
    import clawnb

    assert parts("EditTool", use="mine") is clawnb.EditTool
    assert "still a stub): EditTool" in capsys.readouterr().out


def test_a_later_export_replaces_an_earlier_piece(tmp_path, monkeypatch):
    monkeypatch.chdir(_course(tmp_path))
    export("02_first_tool_call.ipynb")
    assert parts("ReadTool").__module__ == "my_agent.ch02_first_tool_call"
    export("09_file_tools.ipynb")  # picked up without restarting anything
    assert parts("ReadTool").__module__ == "my_agent.ch09_file_tools"


def test_parts_loads_a_package_whose_chapters_call_parts_themselves(tmp_path, monkeypatch, capsys):
    # Chapter 3's exercise module holds its own `parts(..., use="mine")` cell: loading the
    # package runs it, and it must get the half-loaded package (chapters 1 and 2), not load the
    # package again — which recursed into a RecursionError and a KeyError.
    folder = _course(tmp_path, exercises=True)
    fill_in(folder)
    monkeypatch.chdir(folder)
    for name in ("01_first_llm_call", "02_first_tool_call", "03_agentic_loop"):
        export(f"{name}.ipynb")
    capsys.readouterr()
    provider, single_turn = parts("MockProvider", "single_turn", use="mine")
    assert provider.__module__ == "my_agent.ch01_first_llm_call"
    assert single_turn.__module__ == "my_agent.ch03_agentic_loop"
    assert capsys.readouterr().out == "parts: yours (my_agent/): MockProvider, single_turn\n"
    # and chapter 3's own cell got the learner's pieces too, quietly
    from my_agent import ch03_agentic_loop

    assert ch03_agentic_loop.MockProvider is provider


def test_chapter_4s_history_check_works_from_the_learners_package(tmp_path, monkeypatch):
    # The exported module must carry the chapter's imports: history_is_valid names Message,
    # and from my_agent/ (not the notebook's namespace) a missing import is a NameError.
    folder = _course(tmp_path, exercises=True)
    fill_in(folder)
    monkeypatch.chdir(folder)
    export("04_messages_and_types.ipynb")
    history_is_valid = parts("history_is_valid", use="mine")
    assert history_is_valid.__module__ == "my_agent.ch04_messages_and_types"
    call = ToolCall("c1", "read", {"path": "a.txt"})
    asked = Message.Assistant(AssistantTurn(None, [call], StopReason.TOOL_USE))
    assert history_is_valid([Message.User("read a.txt"), asked, Message.ToolResult("c1", "x")])
    assert not history_is_valid([Message.User("read a.txt"), asked])
    assert not history_is_valid([Message.ToolResult("c1", "an orphan")])


def _run(path, env):
    nb = execute_notebook(path, allow_errors=True, env=env)
    return "\n".join(
        out.get("text", "") + out.get("evalue", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    )


def test_the_capstone_runs_the_learners_agent_behind_claw(tmp_path):
    folder = _course(tmp_path)
    out = _run(folder / "20_capstone_your_agent.ipynb", {"CLAWNB_APPROVAL": "allow"})
    assert "exported MySession, make_session to my_agent/" in out
    assert "[read: capstone_workspace/notes.txt] done" in out
    assert "(approved by policy: CLAWNB_APPROVAL=allow)" in out
    assert (folder / "capstone_workspace" / "hello.txt").read_text() == "Hello from my own agent!\n"
    _shows_the_later_chapters_at_work(folder, out)
    assert "test result: ok." in out and "FAILED" not in out


def _shows_the_later_chapters_at_work(folder, out):
    """What the recorded run shows of chapters 22 to 24 in the agent, in ``folder``."""
    # ch22: the workspace's skill, loaded without asking
    assert "[skill: greet] done" in out
    assert "One friendly line" in out
    # ch24: the long log saved whole, and a preview in its place
    log = (folder / "capstone_workspace" / "server.log").read_text()
    assert (folder / ".claw" / "results" / "k4.txt").read_text() == log
    assert "[result too large for the context: 148,937 chars, 5,001 lines, saved in full" in out
    # ch23: the hook refused the write of the log before anyone was asked, whatever the policy
    assert "blocked by a hook: logs are evidence: the agent does not rewrite them" in out
    assert log.endswith("05001 GET /api/report 500 KeyError: 'owner'\n")


def test_the_capstone_with_denials_writes_nothing(tmp_path):
    folder = _course(tmp_path)
    out = _run(folder / "20_capstone_your_agent.ipynb", {"CLAWNB_APPROVAL": "deny"})
    assert "denied" in out
    assert not (folder / "capstone_workspace" / "hello.txt").exists()
    _shows_the_later_chapters_at_work(folder, out)


def test_the_capstone_exercise_fails_until_written(tmp_path):
    folder = _course(tmp_path, exercises=True)
    out = _run(folder / "20_capstone_your_agent.ipynb", {"CLAWNB_APPROVAL": "allow"})
    assert "test result: FAILED." in out
    assert "stub MySession ... FAILED" in out or "NotImplementedError" in out


def test_chat_agent_runs_the_learners_session_in_the_terminal(tmp_path):
    folder = _course(tmp_path)
    export(folder / "20_capstone_your_agent.ipynb")
    (folder / "capstone_workspace").mkdir()
    (folder / "capstone_workspace" / "notes.txt").write_text("Please create hello.txt.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWNB_")}
    done = subprocess.run(
        [sys.executable, "-m", "clawnb", "chat", "--agent", "my_agent", "--no-color"]
        + ["--model", "scripted:scripts/capstone.jsonl", "--approve", "allow"],
        input="Do what the notes say.\n/cost\n/undo\n",
        capture_output=True,
        text=True,
        cwd=folder,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "your agent my_agent (MySession)" in done.stdout
    assert "wrote capstone_workspace/hello.txt" in done.stdout
    # the learner's TurnEnd events feed /cost; what needs clawnb's own machinery says so
    assert "cost: not priced (your agent's TurnEnd events: 6 replies)" in done.stdout
    assert "/undo needs clawnb's own agent" in done.stdout
    assert (folder / "capstone_workspace" / "hello.txt").exists()


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


def _set_up_the_workspace(folder):
    """The capstone's Try it setup cell, run in ``folder`` as the notebook runs it: the notes,
    the long log, .claw/agent.toml with its hook, the greet skill."""
    cells = json.loads((folder / "20_capstone_your_agent.ipynb").read_text())["cells"]
    setup = next("".join(c["source"]) for c in cells if c.get("id") == "capstone-08")
    exec(compile(setup, "capstone setup cell", "exec"), {"Path": Path})


def test_the_learners_own_hooks_results_and_skills_run_in_their_agent_in_a_terminal(
    tmp_path, monkeypatch
):
    # The learner built chapters 20, 22, 23 and 24 (filled-in exercises, use="mine"): the
    # package hands the capstone's session their HookRunner, ResultStore, Compactor and
    # SkillIndex (chapter 20 asked for them before those chapters existed), and the terminal
    # chat drives it in a pseudo-terminal, asking the person at the write.
    import pexpect

    from clawnb.session.custom import load_session

    folder = _course(tmp_path, exercises=True)
    fill_in(folder)
    monkeypatch.chdir(folder)
    for name in ("20_capstone_your_agent", "22_commands_and_skills", "23_hooks_with_conditions"):
        export(f"{name}.ipynb")
    export("24_results_and_compaction.ipynb")
    _set_up_the_workspace(folder)
    monkeypatch.setattr(sys, "path", list(sys.path))  # load_session adds the folder
    try:
        session = load_session("my_agent", provider=None, workspace=str(folder), history=[])
        built = {
            name: type(getattr(session, name)).__module__
            for name in ("hooks", "results", "compactor", "skills")
        }
    finally:
        for name in [n for n in sys.modules if n == "my_agent" or n.startswith("my_agent.")]:
            del sys.modules[name]
    assert built == {
        "hooks": "my_agent.ch23_hooks_with_conditions",
        "results": "my_agent.ch24_results_and_compaction",
        "compactor": "my_agent.ch24_results_and_compaction",
        "skills": "my_agent.ch22_commands_and_skills",
    }

    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWNB_")}
    child = pexpect.spawn(
        sys.executable,
        ["-m", "clawnb", "chat", "--agent", "my_agent", "--no-color"]
        + ["--model", "scripted:../scripts/capstone.jsonl"],
        cwd=str(folder),
        env={**env, "TERM": "dumb"},
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
    )
    try:
        child.expect("you> ")
        child.sendline("Do what the notes say.")
        child.expect(r"\[y\]es / \[n\]o / \[a\]lways: ")  # the write of hello.txt, and only it
        seen = str(child.before)
        child.sendline("y")
        child.expect("you> ")
        seen += str(child.before)
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert "write: capstone_workspace/hello.txt" in seen
    assert (folder / "capstone_workspace" / "hello.txt").read_text() == "Hello from my own agent!\n"
    assert "blocked by a hook: logs are evidence: the agent does not rewrite them" in seen
    log = (folder / "capstone_workspace" / "server.log").read_text()
    assert log.endswith("05001 GET /api/report 500 KeyError: 'owner'\n"), (
        "the hook's block was ignored"
    )
    assert (folder / ".claw" / "results" / "k4.txt").read_text() == log
    assert "result too large for the context" in seen
    assert seen.count("[y]es / [n]o") == 0, "asked more than once"
