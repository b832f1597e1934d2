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
        wait = kernel.execute(
            "import asyncio, pathlib\n"
            f"memo = pathlib.Path({str(config / 'memory' / 'plots.md')!r})\n"
            "for _ in range(200):\n"
            "    if memo.is_file():\n"
            "        break\n"
            "    await asyncio.sleep(0.05)\n"
            "print(memo.read_text())",
            timeout=30,
        )
    finally:
        kernel.close()
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
