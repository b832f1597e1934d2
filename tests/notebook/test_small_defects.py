"""Small things a user sees in the notebook layer (issue 12, item 10)."""

from __future__ import annotations

from clawnb.notebook.magic import parse_options
from clawnb.secrets import mask


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
