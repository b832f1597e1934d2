"""``%%claw --agent MODULE`` (a learner's own session, which offers only the Session protocol)
is saved to a session file of the workspace's store from its first cell, as clawnb's own
session is — as it was before the one-session change. Judged by the file on disk."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import session_files, write_script

LEARNER = '''
import contextlib

from clawnb.types import AssistantTurn, Message


class EchoSession:
    """The smallest session: it answers every prompt with the prompt, shouted."""

    mode = "default"

    def __init__(self, provider, workspace, history):
        self.history = history

    async def send(self, prompt, on_event=None, *, review=None):
        self.history.append(Message.User(prompt))
        answer = prompt.upper()
        self.history.append(Message.Assistant(AssistantTurn(text=answer)))
        return answer

    def handlers(self, *, approve=None, ask=None):
        return contextlib.nullcontext()

    def configure(self, *, mode=None, max_turns=None, model=None):
        pass


def make_session(provider, workspace, history):
    return EchoSession(provider, workspace, history)
'''


def _saved(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_a_learners_session_is_saved_to_a_session_file(shell, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "echo_agent.py").write_text(LEARNER)
    write_script(tmp_path / "s.jsonl", [{"text": "unused"}])
    assert session_files(tmp_path) == []
    result = shell.run_cell("%%claw --agent echo_agent --model scripted:s.jsonl\nhello there")
    assert result.success, result.error_in_exec
    files = session_files(tmp_path)
    assert len(files) == 1
    first = _saved(files[0])
    assert "hello there" in first and "HELLO THERE" in first
    header = json.loads(first.splitlines()[0])
    assert "echo_agent" in json.dumps(header)  # the file says whose agent wrote it
    # the next cell appends to the same file
    assert shell.run_cell("%%claw --agent echo_agent\nagain").success
    assert session_files(tmp_path) == files
    assert "AGAIN" in _saved(files[0])
