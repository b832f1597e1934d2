"""An "Always allow" answer holds for the notebook's session even when the session is rebuilt
for the same folder (the config changed between cells), and not for another folder. (On stdin
"always" is the first scoped choice: ``write(notes/**)`` for this session.)"""

from __future__ import annotations

import pytest

from tests.conftest import call_turn, write_script

from .kernelclient import Kernel, kernel_env

pytestmark = pytest.mark.timeout(120)


def test_always_allow_outlives_a_config_change_but_not_a_new_folder(tmp_path) -> None:
    ws = tmp_path / "ws"
    other = tmp_path / "other"
    ws.mkdir()
    other.mkdir()
    config = tmp_path / ".config" / "clawnb"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("max_turns = 20\n")
    write_script(
        ws / "s.jsonl",
        [
            call_turn("w1", "write", path="notes/a.txt", content="1"),
            {"text": "first"},
        ],
    )
    write_script(
        ws / "s2.jsonl",
        [call_turn("w2", "write", path="notes/b.txt", content="2"), {"text": "second"}],
    )
    kernel = Kernel(ws, kernel_env(tmp_path, CLAWNB_FRONTEND_TIMEOUT="5"))
    try:
        assert kernel.execute("%load_ext clawnb").status == "ok"
        run = kernel.execute(
            "%%claw --model scripted:s.jsonl --approve stdin\none", stdin_reply="always"
        )
        assert run.status == "ok" and run.prompts, run.text
        assert (ws / "notes" / "a.txt").read_text() == "1"
        (config / "config.toml").write_text("max_turns = 30\n")  # the session is rebuilt
        run = kernel.execute(
            "%%claw --model scripted:s2.jsonl --approve stdin\ntwo", stdin_reply="n"
        )
        assert run.status == "ok" and "second" in run.text, run.text
        assert not run.prompts  # not asked again
        assert (ws / "notes" / "b.txt").read_text() == "2"
        write_script(
            other / "t.jsonl", [call_turn("w3", "write", path="c.txt", content="3"), {"text": "x"}]
        )
        run = kernel.execute(
            f"%%claw --cwd {other} --model scripted:{other / 't.jsonl'} --approve stdin\nthree",
            stdin_reply="n",
        )
        assert run.prompts, run.text  # another folder: asked
        assert not (other / "c.txt").exists()
    finally:
        kernel.close()
