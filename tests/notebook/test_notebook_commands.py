"""``%claw CMD``, a ``%%claw`` cell whose body is ``/CMD`` and the claw kernel's ``/CMD`` cells
all go through the one registry (clawnb.session.commands), in a real IPython shell: help is
generated from it, Tab completes its names, a keyless ``%claw status`` works, and the
notebook's own commands are offered only in the notebook."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawnb.session.commands import COMMANDS
from tests.conftest import write_script


def _complete(shell, line: str) -> list[str]:
    """What Tab offers at the end of ``line`` (IPython 8+'s completions API)."""
    from IPython.core.completer import provisionalcompleter

    with provisionalcompleter():
        return sorted({c.text for c in shell.Completer.completions(line, len(line))})


def test_tab_completes_claw_subcommands_from_the_registry(shell) -> None:
    assert {"status", "sessions"} <= set(_complete(shell, "%claw s"))
    assert "undo" in _complete(shell, "%claw und")
    assert "exit" not in _complete(shell, "%claw e")  # the chat's, not offered here
    assert "errors" in _complete(shell, "%claw e")
    # (IPython's Python completion may add keywords such as "and" beside ours)
    assert "accept_edits" in _complete(shell, "%claw mode a")
    assert "project" in _complete(shell, "%claw mode ")
    assert {"reset", "resume"} <= set(_complete(shell, "%claw help res"))


def test_help_lists_every_command_the_notebook_offers(shell, capsys) -> None:
    shell.run_line_magic("claw", "help")
    out = capsys.readouterr().out
    for command in COMMANDS.visible("notebook"):
        assert f"%claw {command.name}" in out, command.name
    assert "%claw exit" not in out
    shell.run_line_magic("claw", "--help")  # the old spelling still answers
    assert "%claw undo" in capsys.readouterr().out


def test_a_keyless_status_works_and_the_first_turn_says_what_is_missing(shell, capsys) -> None:
    shell.run_line_magic("claw", "")  # no command: status
    out = capsys.readouterr().out
    assert "model: " in out and "approval policy without a frontend: deny" in out
    assert "session: not saved" in out  # a command saves nothing
    result = shell.run_cell("%%claw\nhello")
    assert not result.success
    assert "no API key found" in capsys.readouterr().out


def test_a_cell_whose_body_is_a_command_runs_it(shell, tmp_path: Path, capsys) -> None:
    write_script(tmp_path / "s.jsonl", [{"text": "hi"}])
    assert shell.run_cell("%%claw --model scripted:s.jsonl\n/status").success
    assert "model: scripted:s.jsonl" in capsys.readouterr().out
    assert shell.run_cell("%%claw\n/mode accept_edits").success
    assert capsys.readouterr().out.strip() == "mode: accept_edits"
    result = shell.run_cell("%%claw\n/stauts")
    assert not result.success
    assert "did you mean %claw status?" in str(result.error_in_exec)
    # a prompt that starts with a path is a prompt
    assert shell.run_cell("%%claw\n/etc/hosts: what is in it?").success
    assert "hi" in capsys.readouterr().out


def test_a_cell_holding_only_a_claw_line_is_awaited(shell) -> None:
    transformed = shell.transform_cell("%claw compact\n")
    assert transformed.startswith("await ") and "claw_command" in transformed
    # anything else in the cell: the plain line magic
    assert "claw_command" not in shell.transform_cell("%claw status\nx = 1\n")


def test_errors_lists_the_failed_cells(shell, capsys) -> None:
    shell.run_line_magic("claw", "errors")
    assert "no cell has failed yet" in capsys.readouterr().out
    shell.run_cell("1/0", store_history=True)
    shell.run_line_magic("claw", "errors")
    out = capsys.readouterr().out
    assert "Err[" in out and "ZeroDivisionError" in out


@pytest.mark.parametrize(
    ("cell", "kind"),
    [("/status", "command"), ("/etc/hosts: what?", "prompt"), ("/plan\nfix it", "command")],
)
def test_which_bodies_are_commands(cell: str, kind: str) -> None:
    from clawnb.notebook.runner import command_line

    assert (command_line(cell) is not None) == (kind == "command")


def test_plan_as_a_command_plans_in_the_cell_and_the_mode_stays(
    shell, tmp_path: Path, capsys, monkeypatch
) -> None:
    from tests.notebook.test_magic import PLAN_SCRIPT

    (tmp_path / "a.txt").write_text("A")
    write_script(tmp_path / "s.jsonl", PLAN_SCRIPT)
    monkeypatch.setenv("CLAWNB_APPROVAL", "allow")
    assert shell.run_cell("%%claw --model scripted:s.jsonl\n/plan write b.txt").success
    out = capsys.readouterr().out
    assert "Plan: 1. write b.txt" in out and "plan executed" in out and "Executed." in out
    assert (tmp_path / "b.txt").read_text() == "B"
    assert shell._clawnb_session.mode == "default"  # /plan plans once; the mode is unchanged


def test_a_claw_line_alone_in_a_cell_can_wait_for_the_model(
    shell, tmp_path: Path, capsys, monkeypatch
) -> None:
    from tests.notebook.test_magic import PLAN_SCRIPT

    (tmp_path / "a.txt").write_text("A")
    write_script(tmp_path / "s.jsonl", PLAN_SCRIPT)
    monkeypatch.setenv("CLAWNB_APPROVAL", "deny")
    assert shell.run_cell("%claw model scripted:s.jsonl").success
    assert shell.run_cell("%claw plan write b.txt").success  # awaited: the planner runs
    out = capsys.readouterr().out
    assert "Plan: 1. write b.txt" in out and "plan not executed" in out
    assert not (tmp_path / "b.txt").exists()


def test_tab_offers_the_sessions_skills_once_there_is_a_session(shell, tmp_path: Path) -> None:
    folder = tmp_path / ".config" / "clawnb" / "skills" / "weekly-report"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\ndescription: The week.\n---\nSummarise the week.\n")
    assert "weekly-report" not in _complete(shell, "%claw we")  # no session yet: none built
    write_script(tmp_path / "s.jsonl", [{"text": "hi"}])
    shell.run_line_magic("claw", "model scripted:s.jsonl")  # builds the session
    assert "weekly-report" in _complete(shell, "%claw we")
