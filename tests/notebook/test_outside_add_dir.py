"""Outside the workspace in a real kernel: a ``%%claw`` read of ``../data/sales.csv`` asks with
"outside the workspace" and the resolved path, and runs once the person says yes; after
``%claw add-dir ../data`` the same folder is read unasked and written in accept_edits mode —
also after the session is rebuilt for another model."""

from __future__ import annotations

import pytest

from tests.conftest import call_turn, write_script

from .kernelclient import Kernel, kernel_env

pytestmark = pytest.mark.timeout(120)


def test_outside_read_asks_then_add_dir_makes_the_folder_the_workspaces(tmp_path) -> None:
    ws, data = tmp_path / "ws", tmp_path / "data"
    ws.mkdir()
    data.mkdir()
    (data / "sales.csv").write_text("region,total\nnorth,12\n")
    write_script(
        ws / "s.jsonl",
        [call_turn("r1", "read", path="../data/sales.csv"), {"text": "north leads"}],
    )
    write_script(
        ws / "s2.jsonl",
        [
            {
                "tool_calls": [
                    {"id": "r2", "name": "read", "arguments": {"path": "../data/sales.csv"}},
                    {
                        "id": "w2",
                        "name": "write",
                        "arguments": {"path": "../data/summary.txt", "content": "north\n"},
                    },
                ]
            },
            {"text": "summary written"},
        ],
    )
    kernel = Kernel(ws, kernel_env(tmp_path, CLAWNB_FRONTEND_TIMEOUT="5"))
    try:
        assert kernel.execute("%load_ext clawnb").status == "ok"
        run = kernel.execute(
            "%%claw --model scripted:s.jsonl --approve stdin\nsales?", stdin_reply="y"
        )
        assert run.status == "ok" and "north leads" in run.text, run.text
        assert len(run.prompts) == 1
        assert "outside the workspace" in run.prompts[0]
        assert str(data / "sales.csv") in run.prompts[0]
        added = kernel.execute("%claw add-dir ../data")
        assert f"added for this session: {data}" in added.text, added.text
        listed = kernel.execute("%claw add-dir")
        assert str(data) in listed.text
        # another model: the session is rebuilt, and the added folder stays added
        run = kernel.execute(
            "%%claw --model scripted:s2.jsonl --mode accept_edits --approve stdin\nsummarise",
            stdin_reply="n",
        )
        assert run.status == "ok" and "summary written" in run.text, run.text
        assert run.prompts == []  # neither the read nor the write was asked
        assert (data / "summary.txt").read_text() == "north\n"
        refused = kernel.execute("%claw add-dir ../nowhere")
        assert "no such folder" in refused.text and "Traceback" not in refused.text
    finally:
        kernel.close()
