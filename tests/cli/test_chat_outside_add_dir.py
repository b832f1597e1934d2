"""The terminal chat outside the workspace, in a real pseudo-terminal: a read of
``../data/sales.csv`` asks, naming "outside the workspace" and the resolved path, and runs once
the person answers y; after ``/add-dir ../data`` a write there runs in accept_edits mode
without a question; a folder that does not exist is one line, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import call_turn, spawn_chat, write_script

pexpect = pytest.importorskip("pexpect")

QUESTION = r"\[y\]es / \[n\]o(?: / \[a\]lways)?: "  # no [a]lways for an outside read


def test_outside_read_asks_and_add_dir_makes_the_folder_writable(tmp_path: Path) -> None:
    ws, data = tmp_path / "ws", tmp_path / "data"
    ws.mkdir()
    data.mkdir()
    (data / "sales.csv").write_text("region,total\nnorth,12\n")
    script = write_script(
        tmp_path / "s.jsonl",
        [
            call_turn("r1", "read", path="../data/sales.csv"),
            {"text": "Read it."},
            call_turn("w1", "write", path="../data/summary.txt", content="north\n"),
            {"text": "Wrote it."},
        ],
    )
    child = spawn_chat(
        tmp_path,
        "--model",
        f"scripted:{script}",
        "--workspace",
        str(ws),
        "--mode",
        "accept_edits",
        "--no-save",
        "--no-color",
    )
    child.expect("you> ")
    child.sendline("read the sales")
    child.expect(QUESTION)
    asked = str(child.before)
    assert "outside the workspace" in asked and str(data / "sales.csv") in asked
    child.sendline("y")
    child.expect("Read it.")
    child.expect("you> ")
    child.sendline("/add-dir ../nowhere")
    child.expect("no such folder")
    child.expect("you> ")
    assert "Traceback" not in str(child.before)
    child.sendline("/add-dir ../data")
    child.expect(f"added for this session: {data}")
    child.expect("you> ")
    child.sendline("write the summary")
    i = child.expect([QUESTION, "Wrote it."])
    assert i == 1, "the write into the added folder was asked about"
    child.expect("you> ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert (data / "summary.txt").read_text() == "north\n"
