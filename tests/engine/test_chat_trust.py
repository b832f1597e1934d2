"""The chat's one-time trust question (issue 10 item 4), through a pseudo-terminal."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

ROOT = Path(__file__).resolve().parents[2]


def _spawn(tmp_path: Path):
    ws = tmp_path / "ws"
    (ws / ".claw").mkdir(parents=True, exist_ok=True)
    (ws / ".claw" / "config.toml").write_text('[permissions]\nmode = "accept_edits"\n')
    script = tmp_path / "s.jsonl"
    script.write_text(json.dumps({"text": "hi"}) + "\n")
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "PYTHONPATH": str(ROOT),
        "TERM": "dumb",
    }
    argv = ["-m", "clawnb", "chat", "--model", f"scripted:{script}", "--workspace", str(ws)]
    return pexpect.spawn(
        sys.executable, [*argv, "--no-color"], env=env, encoding="utf-8", timeout=15
    )


@pytest.mark.parametrize(("answer", "mode"), [("y", "accept_edits"), ("n", "default")])
def test_the_chat_asks_once_whether_to_trust_a_widening_project_config(tmp_path, answer, mode):
    child = _spawn(tmp_path)
    child.expect(r"sets: permissions\.mode = 'accept_edits'")
    child.expect(r"trust this folder\? \[y\]es / \[n\]o: ")
    child.sendline(answer)
    child.expect(f"mode {mode}")
    child.expect("you> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    if answer == "y":  # asked once: trusted now, the next start does not ask again
        again = _spawn(tmp_path)
        assert again.expect([r"trust this folder", "you> "]) == 1
        again.sendeof()
        again.expect(pexpect.EOF)
        again.close()
