"""A subagent's writes are the session's writes: ``%claw undo`` after the cell restores what the
child changed (issue 10: "its writes get no card and no undo checkpoint"). Driven through a
real kernel with the harness's attacker server; judged by the file's bytes."""

from __future__ import annotations

import pytest

from .harness import Attack, AttackerServer, execute_notebook, make_world

pytestmark = pytest.mark.timeout(90)

ATTACK = Attack(
    "rt-subagent-write-is-undoable",
    {
        "id": "rt-subagent-write-is-undoable",
        "mode": "accept_edits",
        "setup": {"files": {"notes.txt": "the original notes\n"}},
        "turns": [
            {"tool_calls": [{"id": "s1", "name": "subagent", "arguments": {"task": "tidy"}}]},
            {"tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "notes.txt"}}]},
            {
                "tool_calls": [
                    {
                        "id": "w1",
                        "name": "write",
                        "arguments": {"path": "notes.txt", "content": "rewritten by the child\n"},
                    },
                    {
                        "id": "w2",
                        "name": "write",
                        "arguments": {"path": "planted.txt", "content": "new file\n"},
                    },
                ]
            },
            {"text": "child: done"},
            {"text": "done"},
        ],
    },
)


def test_redteam_claw_undo_restores_a_subagents_writes(tmp_path):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    world = make_world(tmp_path, ATTACK, AttackerServer(), AttackerServer())
    notes = world.ws / "notes.txt"
    nb = new_notebook(
        cells=[
            new_code_cell("%load_ext clawnb"),
            new_code_cell(f"%%claw --new --cwd {world.ws} --mode accept_edits\ntidy the notes"),
            new_code_cell(
                "from pathlib import Path\n"
                f"print('AFTER-CELL', Path({str(notes)!r}).read_text().strip())"
            ),
            new_code_cell("%claw undo"),
        ]
    )
    with world.server, world.server2:
        execute_notebook(nb, world, "allow")
    shown = nbformat.writes(nb)
    # the child really wrote (else the undo below proves nothing) …
    assert "AFTER-CELL rewritten by the child" in shown, shown[-3000:]
    # … its calls were drawn as cards (nothing but a card names planted.txt: both answers are
    # plain text) …
    assert "planted.txt" in shown
    # … and the undo of that turn restored the file and removed the one it created
    assert notes.read_text() == "the original notes\n", shown[-3000:]
    assert not (world.ws / "planted.txt").exists()
