"""Sessions: every message on disk before it is acknowledged; crash recovery; list/resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from clawnb.session.log import (
    SessionError,
    SessionLog,
    SessionRecoveryWarning,
    SessionStore,
)
from clawnb.types import AssistantTurn, Message, StopReason, TokenUsage, ToolCall

ROOT = Path(__file__).resolve().parents[2]


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _tool_turn(*ids: str, usage: TokenUsage | None = None) -> Message:
    calls = [ToolCall(i, "read", {"path": f"{i}.txt"}) for i in ids]
    return Message.Assistant(AssistantTurn(None, calls, StopReason.TOOL_USE, usage))


def test_records_have_timestamps_and_usage(tmp_path):
    log = SessionLog(tmp_path / "s.jsonl", meta={"model": "m"})
    log.append(Message.User("hi"))
    log.append(_tool_turn("c1", usage=TokenUsage(12, 3)))
    log.close()
    header, user, assistant = _records(tmp_path / "s.jsonl")
    assert header["type"] == "session" and header["meta"] == {"model": "m"}
    assert user["message"] == {"role": "user", "content": "hi"}
    for record in (header, user, assistant):
        assert record["ts"].endswith("+00:00")
    assert assistant["usage"] == {"input_tokens": 12, "output_tokens": 3}
    assert assistant["message"]["turn"]["usage"] == {"input_tokens": 12, "output_tokens": 3}


def test_each_append_is_fsynced_before_it_returns(tmp_path, monkeypatch):
    log = SessionLog(tmp_path / "s.jsonl")
    synced: list[int] = []
    real_fsync = os.fsync

    def spy(fd: int) -> None:
        real_fsync(fd)
        synced.append(len((tmp_path / "s.jsonl").read_bytes()))

    monkeypatch.setattr(os, "fsync", spy)
    log.append(Message.User("one"))
    assert len(synced) == 1 and synced[0] == len((tmp_path / "s.jsonl").read_bytes())
    log.extend([Message.ToolResult("a", "x"), Message.ToolResult("b", "y")])
    assert len(synced) == 2  # one record, one fsync for the batch
    log.close()


def test_failed_write_leaves_memory_unchanged(tmp_path):
    log = SessionLog(tmp_path / "s.jsonl")
    log.close()
    with pytest.raises(SessionError, match="closed"):
        log.append(Message.User("lost"))
    assert list(log) == []
    with pytest.raises(TypeError):
        SessionLog(tmp_path / "t.jsonl").append("not a message")  # type: ignore[arg-type]


def test_every_mutation_round_trips(tmp_path):
    path = tmp_path / "s.jsonl"
    log = SessionLog(path, [Message.User("a"), Message.User("b")])
    log.insert(0, Message.System("sys"))
    log += [Message.User("c")]
    log.append(Message.User("d"))
    log[1] = Message.User("A")
    del log[2]
    assert log.pop() == Message.User("d")
    log.extend([Message.User("e"), Message.User("f")])
    log.remove(Message.User("e"))
    log[1:2] = [Message.User("x"), Message.User("y")]
    expected = list(log)
    log.close()
    assert SessionLog.read(path) == expected
    assert expected == [
        Message.System("sys"),
        Message.User("x"),
        Message.User("y"),
        Message.User("c"),
        Message.User("f"),
    ]


def test_clear_sort_reverse_persist(tmp_path):
    path = tmp_path / "s.jsonl"
    log = SessionLog(path, [Message.User("b"), Message.User("a")])
    log.sort(key=lambda m: m.content)
    assert SessionLog.read(path) == [Message.User("a"), Message.User("b")]
    log.reverse()
    assert SessionLog.read(path) == [Message.User("b"), Message.User("a")]
    log.clear()
    assert SessionLog.read(path) == []


def test_new_session_refuses_to_overwrite(tmp_path):
    SessionLog(tmp_path / "s.jsonl").close()
    with pytest.raises(SessionError, match="already exists"):
        SessionLog(tmp_path / "s.jsonl")


def test_truncated_last_line_is_dropped_with_warning_and_trimmed(tmp_path):
    path = tmp_path / "s.jsonl"
    log = SessionLog(path, [Message.User("kept 1"), Message.User("kept 2")])
    log.close()
    good_size = path.stat().st_size
    with open(path, "ab") as fh:
        fh.write(b'{"type":"message","ts":"2026","message":{"role":"us')
    with pytest.warns(SessionRecoveryWarning, match="line 3 is incomplete"):
        resumed = SessionLog.resume(path)
    assert list(resumed) == [Message.User("kept 1"), Message.User("kept 2")]
    assert path.stat().st_size == good_size  # the partial line is gone before new writes
    resumed.append(Message.User("after crash"))
    resumed.close()
    assert SessionLog.read(path)[-1] == Message.User("after crash")


def test_corrupt_line_in_the_middle_is_an_error(tmp_path):
    path = tmp_path / "s.jsonl"
    SessionLog(path, [Message.User("a")]).close()
    lines = path.read_text().splitlines()
    lines.insert(1, "{garbage")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SessionError, match=r"line 2 is corrupt"):
        SessionLog.read(path)


def test_resume_answers_calls_left_without_results(tmp_path):
    path = tmp_path / "s.jsonl"
    log = SessionLog(path, [Message.User("go"), _tool_turn("c1", "c2")])
    log.append(Message.ToolResult("c1", "done"))
    log.close()
    resumed = SessionLog.resume(path)
    assert resumed[-1] == Message.ToolResult(
        "c2", "error: interrupted: the process ended before this call finished"
    )
    resumed.close()
    assert SessionLog.read(path)[-1].id == "c2"  # the repair is persisted too


def test_store_lists_and_resumes(tmp_path):
    store = SessionStore(tmp_path / "sessions")
    first = store.create([Message.User("first   task\nwith lines")])
    first.close()
    second = store.create([Message.User("second")], meta={"model": "m"})
    second.close()
    infos = store.list()
    assert [i.id for i in infos] == [first.id, second.id]
    assert infos[0].title == "first task with lines"
    assert infos[1].messages == 1
    assert store.resume("latest").id == second.id
    assert store.resume(first.id[:-2]).id == first.id
    with pytest.raises(SessionError, match="no session"):
        store.resume("nope")


def test_store_ambiguous_prefix(tmp_path):
    store = SessionStore(tmp_path)
    a = store.create()
    b = store.create()
    a.close()
    b.close()
    with pytest.raises(SessionError, match="ambiguous"):
        store.resume("20")


def test_empty_store(tmp_path):
    assert SessionStore(tmp_path / "none").list() == []
    with pytest.raises(SessionError, match="no sessions"):
        SessionStore(tmp_path / "none").resume()


WRITER = r"""
import sys
from clawnb.session.log import SessionLog
from clawnb.types import Message
log = SessionLog(sys.argv[1])
i = 0
while True:
    log.append(Message.User(f"message {i} " + "x" * 4000))
    print(f"ack {i}", flush=True)
    i += 1
"""


def test_sigkilled_writer_loses_no_acknowledged_message(tmp_path):
    path = tmp_path / "crash.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    acked = -1
    assert proc.stdout is not None
    for line in proc.stdout:
        acked = int(line.split()[1])
        if acked >= 200:
            break
    proc.send_signal(signal.SIGKILL)  # mid-turn: the writer never stops on its own
    proc.wait()
    proc.stdout.close()
    with pytest.warns(SessionRecoveryWarning) if _ends_mid_line(path) else _nothing():
        resumed = SessionLog.resume(path)
    assert len(resumed) >= acked + 1
    for i in range(acked + 1):
        assert resumed[i].content.startswith(f"message {i} ")
    resumed.append(Message.User("resumed fine"))
    resumed.close()
    assert SessionLog.read(path)[-1] == Message.User("resumed fine")


def _ends_mid_line(path: Path) -> bool:
    data = path.read_bytes()
    return bool(data) and not data.endswith(b"\n")


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_empty_new_session_can_be_discarded(tmp_path):
    empty = SessionLog(tmp_path / "empty.jsonl")
    empty.close(discard_if_empty=True)
    assert not (tmp_path / "empty.jsonl").exists()
    used = SessionLog(tmp_path / "used.jsonl", [Message.User("hi")])
    used.close(discard_if_empty=True)
    assert (tmp_path / "used.jsonl").exists()
    resumed = SessionLog.resume(tmp_path / "used.jsonl")
    resumed.clear()
    resumed.close(discard_if_empty=True)  # an old session is history, even when emptied
    assert (tmp_path / "used.jsonl").exists()
