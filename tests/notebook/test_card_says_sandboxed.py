"""A bash card waiting for approval says whether the command will run sandboxed (the chat says
it in its banner; the card said nothing until the call ran). A real ``run_claw`` over a
scripted model, the real gate and bash tool, the widget view as a frontend renders it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clawnb.notebook.approval import sandbox_note
from clawnb.notebook.transcript import WAITING
from tests.conftest import call_turn, write_script

from .test_widgets import buttons, click, fake_shell, make_view, shown_html


def test_the_note_is_the_sandbox_part_of_the_reason_and_only_when_sandboxed() -> None:
    asks = "`bash` can change things, so default mode asks first"
    assert sandbox_note(f"{asks}; sandboxed: workspace-write, no network") == (
        "sandboxed: workspace-write, no network"
    )
    assert sandbox_note(f"{asks}; not sandboxed (bubblewrap not found)") == ""
    assert sandbox_note(asks) == ""


async def test_a_waiting_bash_card_says_it_runs_sandboxed(tmp_path: Path, monkeypatch) -> None:
    from clawnb.notebook.runner import CellOptions, run_claw

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    write_script(
        tmp_path / "s.jsonl",
        [call_turn("b1", "bash", command="touch ran"), {"text": "Understood."}],
    )
    shell = fake_shell(tmp_path)
    view, _sink = make_view()
    view.root._view_count = 1  # a frontend rendered it: the card gets buttons
    task = asyncio.ensure_future(
        run_claw(shell, CellOptions(model="scripted:s.jsonl"), "go", view=view)
    )
    for _ in range(500):
        card = view.card("b1")
        if card is not None and card.status == WAITING and "b1" in view._buttons:
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError("the bash card never waited for approval")
    described = shell._clawnb_session.agent.sandbox_description()
    if not described.startswith("sandboxed"):
        click(buttons(view, "b1")["Deny"])
        await asyncio.wait_for(task, 10)
        pytest.skip(f"no sandbox on this machine: {described}")
    assert card.note == described  # "sandboxed: workspace-write, no network"
    view._flush()
    block = view.transcript.block_of(card)
    assert described in shown_html(block.widget)
    click(buttons(view, "b1")["Deny"])
    await asyncio.wait_for(task, 10)
    assert not (tmp_path / "ran").exists()
