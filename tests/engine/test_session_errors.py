"""Corrupt, truncated and odd session files are reported with path and line (issue 10 item 9)."""

from __future__ import annotations

import json
import os
import warnings

import pytest

from clawnb.session.log import SessionError, SessionLog, SessionStore
from clawnb.types import Message

ODD_RECORDS = [
    {"type": "message", "message": "x"},
    {"type": "message", "message": None},
    {"type": "messages", "records": [1]},
    {"type": "insert", "index": "a", "message": {"role": "user", "content": "x"}},
    {"type": "snapshot", "messages": [[]]},
    {"type": "message", "message": {"role": "assistant", "turn": "x"}},
    {"type": "message", "message": {"role": "assistant", "turn": {"tool_calls": [{"id": 1}]}}},
    {"type": "message", "message": {"role": "assistant", "turn": {"stop_reason": "nope"}}},
    {"type": "commit", "count": "x"},
    {"type": "mystery"},
    [1, 2],
    "text",
]


@pytest.mark.parametrize("record", ODD_RECORDS, ids=lambda r: json.dumps(r)[:40])
def test_an_unknown_record_shape_is_an_error_naming_file_and_line(tmp_path, record):
    path = tmp_path / "s.jsonl"
    SessionLog(path).append(Message.User("hi"))
    with path.open("a") as fh:
        fh.write(json.dumps(record) + "\n")
        fh.write(json.dumps({"type": "message", "message": {"role": "user", "content": "z"}}))
        fh.write("\n")
    with pytest.raises(SessionError, match=rf"{path}: line 3 is corrupt"):
        SessionLog.read(path)


def test_latest_never_silently_resumes_an_older_session(tmp_path):
    store = SessionStore(tmp_path)
    older = store.create()
    older.append(Message.User("older"))
    newer = store.create()
    newer.append(Message.User("newer"))
    with newer.path.open("a") as fh:
        fh.write("{not json\n")
        fh.write(json.dumps({"type": "message", "message": {"role": "user", "content": "z"}}))
        fh.write("\n")
    stamp = older.path.stat().st_mtime + 5
    os.utime(newer.path, (stamp, stamp))
    with pytest.raises(SessionError, match="latest session cannot be resumed") as info:
        store.resume("latest")
    assert str(newer.path) in str(info.value) and "line 3" in str(info.value)
    assert store.resume(older.id)[0].content == "older"  # by id it still works


def test_a_session_id_is_a_prefix_never_a_pattern(tmp_path):
    store = SessionStore(tmp_path)
    store.create().append(Message.User("one"))
    for pattern in ("*", "?*", "[0-9]*"):
        with pytest.raises(SessionError, match="no session"):
            store.resume(pattern)


def test_a_truncated_last_line_is_recovered_with_a_warning(tmp_path):
    path = tmp_path / "s.jsonl"
    SessionLog(path).append(Message.User("kept"))
    with path.open("a") as fh:
        fh.write('{"type": "message", "mess')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [m.content for m in SessionLog.read(path)] == ["kept"]
    assert any("line 3 is incomplete" in str(w.message) for w in caught)
