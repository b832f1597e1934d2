"""%%claw cells get the session's whole control plane: the project's mode when the cell names
none, a subagent's writes in the cell's checkpoint (``%claw undo``), its calls shown under the
subagent's card, and its ``run_python`` asked about like the parent's."""

from __future__ import annotations

from pathlib import Path

from clawnb.notebook.html import transcript_markdown
from clawnb.types import AssistantTurn
from tests.conftest import call_turn, write_script


def test_claw_undo_restores_what_a_subagent_wrote(shell, tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("CLAWNB_APPROVAL", "allow")
    (tmp_path / "notes.txt").write_text("before\n")
    write_script(
        tmp_path / "s.jsonl",
        [
            call_turn("s1", "subagent", task="rewrite the notes"),
            call_turn("r1", "read", path="notes.txt"),
            call_turn("c1", "write", path="notes.txt", content="after\n"),
            call_turn("c2", "write", path="new.txt", content="made by the child\n"),
            {"text": "child: done"},
            {"text": "The subagent rewrote the notes."},
        ],
    )
    assert shell.run_cell("%%claw --model scripted:s.jsonl\ndelegate").success
    out = capsys.readouterr().out
    assert (tmp_path / "notes.txt").read_text() == "after\n", out
    assert "↳ subagent: [write: notes.txt]" in out  # the child's calls, under its card
    shell.run_line_magic("claw", "undo")
    assert (tmp_path / "notes.txt").read_text() == "before\n"
    assert not (tmp_path / "new.txt").exists()


def test_a_subagents_run_python_waits_for_the_policy_even_in_bypass(shell, tmp_path: Path):
    write_script(
        tmp_path / "s.jsonl",
        [
            call_turn("s1", "subagent", task="run code"),
            call_turn("c1", "run_python", code="open('ran.txt', 'w').write('x')"),
            {"text": "child: done"},
            {"text": "done"},
        ],
    )
    # no CLAWNB_APPROVAL and no frontend: the policy denies
    assert shell.run_cell("%%claw --model scripted:s.jsonl --mode bypass\ngo").success
    assert not (tmp_path / "ran.txt").exists()
    results = {
        m.id: m.content for m in shell._clawnb_session.messages if type(m).__name__ == "ToolResult"
    }
    assert results["s1"] == "child: done"  # the subagent ran; only its run_python was refused


def test_a_cell_without_mode_follows_the_projects_mode(shell, tmp_path: Path, capsys):
    (tmp_path / ".claw").mkdir()
    (tmp_path / ".claw" / "config.toml").write_text('[permissions]\nmode = "accept_edits"\n')
    write_script(
        tmp_path / "s.jsonl",
        [call_turn("w1", "write", path="a.txt", content="a"), {"text": "written"}],
    )
    shell.run_line_magic("claw", "trust")  # an untrusted project may not widen the mode
    # no approval policy at all: only accept_edits lets the write run
    assert shell.run_cell("%%claw --model scripted:s.jsonl\nwrite a.txt").success
    assert (tmp_path / "a.txt").read_text() == "a"
    shell.run_line_magic("claw", "status")
    assert "mode: accept_edits (from the project's configuration)" in capsys.readouterr().out


def test_plan_mode_cells_offer_only_read_only_tools_while_planning(shell, tmp_path: Path):
    write_script(
        tmp_path / "s.jsonl",
        [
            call_turn("b1", "bash", command="touch pwned"),
            {"text": "Plan: nothing."},
            {"text": "Executed: nothing to do."},
        ],
    )
    assert shell.run_cell(
        "%%claw --model scripted:s.jsonl --mode plan --approve allow\nplan"
    ).success
    assert not (tmp_path / "pwned").exists()
    results = {
        m.id: m.content for m in shell._clawnb_session.messages if type(m).__name__ == "ToolResult"
    }
    # bash is off while planning, or (with a working sandbox) confined read-only
    assert "not available in planning mode" in results["b1"] or "Read-only" in results["b1"]


def test_claw_mode_project_goes_back_to_the_configured_mode(shell, tmp_path: Path, capsys):
    (tmp_path / ".claw").mkdir()
    (tmp_path / ".claw" / "config.toml").write_text('[permissions]\nmode = "plan"\n')
    shell.run_line_magic("claw", "mode bypass")
    shell.run_line_magic("claw", "mode project")
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "mode: plan (from the project's configuration)"


def test_a_subagents_call_gets_its_own_card_marked_as_nested() -> None:
    from clawnb.events import AgentEvent
    from clawnb.notebook.widgets import WidgetView

    view = WidgetView()
    view(AgentEvent.ToolCall("subagent", "    [subagent]", "s1", {"task": "t"}))
    inner = AgentEvent.ToolCall("write", "    [write: a.txt]", "c1", {"path": "a.txt"})
    view(AgentEvent.Nested("s1", inner))
    view(AgentEvent.Nested("s1", AgentEvent.TurnEnd(AssistantTurn("x"))))  # not drawn
    card = view.card("c1")  # the approver finds it, so its approval gets buttons
    assert card is not None and card.parent == "s1"
    assert view.card("s1").parent == ""
    assert "↳ subagent:" in transcript_markdown(view.transcript)
