"""Auto memory in the terminal chat (a real pty, a model server on 127.0.0.1): the chat's
loop runs only during a turn, yet the review (a thread and a loop of its own) finishes while
the chat waits for input; what it keeps is listed by /memory, and the chat ends cleanly."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from clawnb.config import trust_workspace
from tests.conftest import end_chat, spawn_chat, wait_until

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_memory", ROOT / "benchmarks" / "bench_memory.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_chat_keeps_a_memory_and_lists_it(tmp_path, monkeypatch):
    pytest.importorskip("pexpect")
    server, url = _bench().serve(0.01, 0.01)  # a turn and a review answered at once
    ws = tmp_path / "ws"
    ws.mkdir()
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    trust_workspace(ws)
    (xdg / "clawnb" / "config.toml").write_text('memory = "on"\n')
    child = spawn_chat(
        tmp_path,
        "--workspace",
        str(ws),
        "--no-color",
        "--no-save",
        "--model",
        "local-model",
        "--base-url",
        url,
        timeout=30,
    )
    try:
        child.expect("you> ")
        child.sendline("the id column is key")
        child.expect("you> ")
        child.sendline("and the next question")  # the first turn's review runs meanwhile
        child.expect("you> ")
        memory = ws / ".claw" / "memory"
        assert wait_until(lambda: (memory / "fact-0.md").is_file(), timeout=10)
        child.sendline("/memory")
        child.expect("you> ")
        assert "fact 0 [project] — column 0 of table 0" in child.before
        end_chat(child)
    finally:
        server.shutdown()
        server.server_close()
    assert "Task was destroyed" not in (child.before or "")
