"""What %%claw and %claw print, read as a person reads it: help, masked keys, line-magic
output, undo messages (issue 12, item 10)."""

from __future__ import annotations

import re

from clawnb.control.secrets import mask
from clawnb.notebook.magic import parse_options


def test_cell_help_names_the_magic_as_it_is_typed(capsys) -> None:
    assert parse_options("--help") is None
    out = capsys.readouterr().out
    assert out.startswith("usage: %%claw [--model MODEL]")
    assert "%%%claw" not in out and "::" not in out.splitlines()[0]


def test_a_masked_key_shows_none_of_its_characters() -> None:
    key = "sk-or-v1-" + "abcd1234" * 6
    shown = mask(key)
    assert shown == f"*** (set, {len(key)} characters)"
    assert not any(key[i : i + 3] in shown for i in range(len(key) - 2))


def test_line_magics_read_like_a_person_wrote_them(shell, tmp_path, capsys, monkeypatch) -> None:
    from tests.conftest import write_script

    write_script(
        tmp_path / "s.jsonl",
        [
            {
                "text": "## Plan\n\nI will write it.",
                "tool_calls": [
                    {"id": "w", "name": "write", "arguments": {"path": "a.txt", "content": "x\n"}},
                    {"id": "g", "name": "glob", "arguments": {"pattern": "*.md"}},
                    {
                        "id": "e",
                        "name": "edit",
                        "arguments": {"path": "zz.txt", "old_string": "a", "new_string": "b"},
                    },
                ],
                "usage": {"input_tokens": 10100, "output_tokens": 20},
            },
            {"text": "Done."},
        ],
    )
    monkeypatch.setenv("CLAWNB_APPROVAL", "allow")
    shell.run_cell("%%claw --model scripted:s.jsonl\nwrite a.txt")
    out = capsys.readouterr().out
    assert "$0.0000" not in out  # a scripted model has no price: no price is shown
    shell.run_line_magic("claw", "status")
    assert "1 prompt\n" in capsys.readouterr().out
    shell.run_line_magic("claw", "cost")
    cost = capsys.readouterr().out
    assert "10,100 in" in cost and "not priced" in cost and "$" not in cost
    shell.run_line_magic("claw", "history")
    history = capsys.readouterr().out.splitlines()
    # numbered by the cell that sent it (In [n]), not 1, 2, 3
    assert re.fullmatch(r"In \[\d+\] you: write a\.txt", history[0]), history[0]
    assert history[1] == "    claw: ## Plan …"
    assert history[2] == "      ✓ write a.txt · wrote a.txt"
    assert history[3].startswith("      ✓ glob *.md")
    assert history[4].startswith("      ✗ edit zz.txt · error: ")
    assert history[5] == "    claw: Done."


def test_undo_names_the_cell_as_its_prompt_shows_it(shell, tmp_path, capsys, monkeypatch) -> None:
    from tests.conftest import write_script

    call = {"id": "w", "name": "write", "arguments": {"path": "b.txt", "content": "x\n"}}
    write_script(tmp_path / "s.jsonl", [{"tool_calls": [call]}, {"text": "ok"}])
    monkeypatch.setenv("CLAWNB_APPROVAL", "allow")
    shell.run_cell("1 + 1", store_history=True)
    result = shell.run_cell("%%claw --model scripted:s.jsonl\nwrite b.txt", store_history=True)
    shell.run_line_magic("claw", "undo")
    assert f"undo cell {result.execution_count}:" in capsys.readouterr().out
