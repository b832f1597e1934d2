"""In a real kernel: a ``%%claw`` cell with memory on returns before its review ends, and the
review's one line, ``noted: …``, fills in an output of that cell when it does; the memory
records the cell it was learnt from."""

from __future__ import annotations

import json

import pytest

from tests.conftest import write_script
from tests.notebook.kernelclient import Kernel, kernel_env

pytestmark = pytest.mark.timeout(120)

REVIEW = {
    "operations": [
        {
            "op": "create",
            "name": "plots",
            "description": "the person wants seaborn plots",
            "type": "user",
        }
    ]
}


def test_a_cell_shows_noted_when_its_memory_review_ends(tmp_path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    config = tmp_path / ".config" / "clawnb"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('memory = "on"\n')
    # the scripted model answers the turn, then the review (a tool-less request)
    write_script(
        ws / "s.jsonl", [{"text": "noted the plotting style"}, {"text": json.dumps(REVIEW)}]
    )
    kernel = Kernel(ws, kernel_env(tmp_path))
    try:
        assert kernel.execute("%load_ext clawnb").status == "ok"
        cell = kernel.execute("%%claw --model scripted:s.jsonl\nI always want seaborn plots")
        assert cell.status == "ok", cell.text
        # wait, in the kernel, until the review has finished (its tasks done)
        wait = kernel.execute(
            "import asyncio, pathlib\n"
            "from clawnb.notebook.runner import get_session\n"
            "keeper = get_session(get_ipython()).agent.memory\n"
            "for _ in range(400):\n"
            "    if not keeper.tasks:\n"
            "        break\n"
            "    await asyncio.sleep(0.05)\n"
            f"print(pathlib.Path({str(config / 'memory' / 'plots.md')!r}).read_text())",
            timeout=30,
        )
        listing = kernel.execute("%claw memory")
        shown = kernel.execute("%claw memory show plots")
        forgot = kernel.execute("%claw memory forget plots")
    finally:
        kernel.close()
    assert "auto memory: on" in listing.text
    assert "plots [user] — the person wants seaborn plots" in listing.text
    assert "%claw memory show NAME" in listing.text  # typed the notebook's way
    assert "type: user" in shown.text
    assert forgot.text.startswith("forgot plots")
    assert not (config / "memory" / "plots.md").exists()
    assert "description: the person wants seaborn plots" in wait.text
    assert "from: cell" in wait.text  # learnt from the cell that ran
    messages = cell.all_messages + wait.all_messages

    def display_id(m: dict) -> str | None:
        return m["content"].get("transient", {}).get("display_id")

    noted = [
        m
        for m in messages
        if m["msg_type"] in ("display_data", "update_display_data")
        and m["content"]["data"].get("text/plain") == "noted: new plots"
    ]
    assert len(noted) == 1
    ident = display_id(noted[0])
    placed = [m for m in messages if m["msg_type"] == "display_data" and display_id(m) == ident]
    assert len(placed) == 1  # one output for the line, in the %%claw cell's output
    assert placed[0]["parent_header"]["msg_id"] == cell.all_messages[0]["parent_header"]["msg_id"]


class _Shown:
    def __init__(self, log: list[str], text: str) -> None:
        self.log = log
        log.append(f"show {text!r}")

    def update(self, text: str) -> None:
        self.log.append(f"update {text!r}")


def test_the_noted_line_fills_in_a_placed_output_or_shows_a_finished_review_at_once() -> None:
    from clawnb.memory.notice import NotedLine

    log: list[str] = []
    line = NotedLine(lambda text: _Shown(log, text))
    line.place(pending=True)  # the cell ends while the review runs
    line("noted: new plots")
    assert log == ["show ''", "update 'noted: new plots'"]
    log.clear()
    early = NotedLine(lambda text: _Shown(log, text))
    early("noted: new dates")  # finished before the cell ended
    early.place(pending=False)
    assert log == ["show 'noted: new dates'"]
    log.clear()
    NotedLine(lambda text: _Shown(log, text)).place(pending=False)  # nothing to say
    assert log == []
