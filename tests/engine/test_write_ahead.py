"""The write-ahead conversation log: a turn is on disk before its tools run, each result as it
finishes, streamed text as it is shown; a process that dies inside a turn resumes valid."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from clawnb.events import AgentEvent
from clawnb.session.log import INTERRUPTED_SESSION_RESULT, SessionLog, write_ahead
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall
from tests.conftest import pids_with, session_files

ROOT = Path(__file__).resolve().parents[2]


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _turn(*ids: str, text: str | None = None) -> AssistantTurn:
    calls = [ToolCall(i, "bash", {"command": f"echo {i}"}) for i in ids]
    return AssistantTurn(text, calls, StopReason.TOOL_USE)


def test_a_turn_is_on_disk_before_its_tools_run_and_each_result_as_it_finishes(tmp_path):
    log = SessionLog(tmp_path / "s.jsonl")
    log.append(Message.User("go"))
    turn = _turn("c1", "c2", text="running two")
    write_ahead(log, AgentEvent.TurnEnd(turn))
    assert _records(log.path)[-1]["type"] == "pending"  # before any tool ran
    write_ahead(log, AgentEvent.ToolResult("c1", "bash", "c1\n"))
    assert _records(log.path)[-1]["type"] == "pending_result"
    # the process dies here: c2 never finished
    resumed = SessionLog.resume(log.path)
    assert resumed[1:] == [
        Message.Assistant(turn),
        Message.ToolResult("c1", "c1\n"),
        Message.ToolResult("c2", INTERRUPTED_SESSION_RESULT),
    ]
    assert INTERRUPTED_SESSION_RESULT == (
        "error: interrupted: the process ended before this call finished"
    )
    # the recovery is written down: a second resume reads the same history
    assert list(SessionLog.resume(log.path)) == list(resumed)


def test_a_completed_round_is_committed_without_writing_it_twice(tmp_path):
    log = SessionLog(tmp_path / "s.jsonl")
    log.append(Message.User("go"))
    turn = _turn("c1")
    write_ahead(log, AgentEvent.TurnEnd(turn))
    write_ahead(log, AgentEvent.ToolResult("c1", "bash", "x" * 5000))
    log.extend([Message.Assistant(turn), Message.ToolResult("c1", "x" * 5000)])
    assert [r["type"] for r in _records(log.path)] == [
        "session",
        "message",
        "pending",
        "pending_result",
        "commit",
    ]
    assert log.path.read_text().count("x" * 5000) == 1
    assert SessionLog.read(log.path) == list(log)


def test_streamed_text_survives_a_kill_and_is_marked_interrupted(tmp_path):
    log = SessionLog(tmp_path / "s.jsonl")
    log.append(Message.User("tell me"))
    for piece in ("The ", "answer ", "is "):
        write_ahead(log, AgentEvent.TextDelta(piece))
    resumed = SessionLog.resume(log.path)
    last = resumed[-1]
    assert isinstance(last, Message.Assistant)
    assert last.turn.text.startswith("The answer is")
    assert "interrupted: the process ended while this reply was being written" in last.turn.text


def test_streamed_text_records_are_dropped_once_the_turn_is_written(tmp_path):
    log = SessionLog(tmp_path / "s.jsonl")
    log.append(Message.User("tell me"))
    for piece in ("The ", "answer."):
        write_ahead(log, AgentEvent.TextDelta(piece))
    log.append(Message.Assistant(AssistantTurn("The answer.")))
    assert [r["type"] for r in _records(log.path)] == ["session", "message", "message"]
    assert SessionLog.read(log.path)[-1].turn.text == "The answer."


def test_a_superseded_pending_turn_is_not_replayed(tmp_path):
    # the live process went on without appending the turn (e.g. the loop failed): its
    # in-memory history is the truth, and resume must agree with it
    log = SessionLog(tmp_path / "s.jsonl")
    log.append(Message.User("a"))
    write_ahead(log, AgentEvent.TurnEnd(_turn("c1")))
    log.append(Message.User("b"))
    assert SessionLog.read(log.path) == [Message.User("a"), Message.User("b")]


def test_write_ahead_ignores_plain_lists_and_nested_events():
    history: list[Message] = []
    write_ahead(history, AgentEvent.TurnEnd(_turn("c1")))
    assert history == []


_AGENT = textwrap.dedent(
    """
    import asyncio, sys
    from clawnb.session.assemble import build_agent
    from clawnb.config import Config
    ws, script = sys.argv[1:3]
    bundle = build_agent(Config(), workspace=ws, model="scripted:" + script, session="new",
                         gate=False)
    print(bundle.session_id, flush=True)
    asyncio.run(bundle.send("clean up"))
    """
)


def test_kill_9_during_a_tool_keeps_the_call_and_says_it_was_interrupted(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    marker = f"clawnb-wal-{os.getpid()}-{time.monotonic_ns()}"
    script = tmp_path / "s.jsonl"
    command = f"rm -f victim.txt; touch ran; bash -c 'sleep 1000; : {marker}'"
    script.write_text(
        json.dumps(
            {
                "text": "Removing it.",
                "tool_calls": [{"id": "c1", "name": "bash", "arguments": {"command": command}}],
            }
        )
        + "\n"
        + json.dumps({"text": "never reached"})
        + "\n"
    )
    (ws / "victim.txt").write_text("precious\n")
    agent = subprocess.Popen(
        [sys.executable, "-c", _AGENT, str(ws), str(script)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "xdg")},
    )
    try:
        session_id = agent.stdout.readline().strip()
        deadline = time.monotonic() + 10
        while not (ws / "ran").exists():
            assert time.monotonic() < deadline, "the tool never ran"
            time.sleep(0.02)
    finally:
        agent.send_signal(signal.SIGKILL)
        agent.wait()
        agent.stdout.close()
    assert not (ws / "victim.txt").exists()  # the rm happened…
    (path,) = [p for p in session_files(ws) if p.stem == session_id]
    history = SessionLog.read(path)
    turn = history[-2]
    assert isinstance(turn, Message.Assistant) and turn.turn.text == "Removing it."
    assert turn.turn.tool_calls[0].arguments["command"] == command  # …and the log says so
    assert history[-1] == Message.ToolResult("c1", INTERRUPTED_SESSION_RESULT)
    deadline = time.monotonic() + 5
    while pids_with(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not pids_with(marker), "the tool's process outlived the agent"
