"""Consolidation behind its gates (folder exists, > 24 h since the last, not scanned in the
last 10 minutes, >= 5 sessions since) and its lock file (PID + time): two real processes
racing for it (exactly one wins), a stale lock of a dead process and one over an hour old
taken over, a live one respected."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from clawnb.memory.consolidate import (
    LOCK,
    STATE,
    ConsolidationLock,
    consolidate,
    consolidate_if_due,
)
from clawnb.memory.store import INDEX, Memory, MemoryStore

ROOT = Path(__file__).resolve().parents[2]
DAY = 24 * 3600


def _store(tmp_path: Path) -> MemoryStore:
    store = MemoryStore(tmp_path / "memory")
    store.save(Memory("tabs", "the person indents with four spaces", "user", learnt="2026-01-01"))
    store.save(Memory("dates", "dates are ISO 8601 in every table", "project", learnt="2026-01-02"))
    return store


def _sessions(
    tmp_path: Path, count: int, mtime: float | None = None, name: str = "sessions"
) -> Path:
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    for i in range(count):
        path = folder / f"s{i}.jsonl"
        path.write_text("{}\n")
        if mtime is not None:
            os.utime(path, (mtime, mtime))
    return folder


def _duplicate(store: MemoryStore) -> None:
    """A duplicate written behind the store's back (an older clawnb, a hand edit)."""
    twin = Memory("indent", "the person indents with four spaces.", "user", learnt="2026-02-01")
    (store.root / "indent.md").write_text(twin.to_text())


def test_consolidation_merges_duplicates_and_trims_the_index(tmp_path):
    store = _store(tmp_path)
    _duplicate(store)
    assert len(store.all()) == 3
    done = consolidate(store)
    assert done == ["merged indent into tabs", *done[1:]]
    assert sorted(m.name for m in store.all()) == ["dates", "tabs"]
    assert "(indent.md)" not in (store.root / INDEX).read_text()


def test_each_gate_stops_consolidation(tmp_path):
    now = time.time()
    missing = MemoryStore(tmp_path / "none")
    assert consolidate_if_due(missing, _sessions(tmp_path, 9, name="x"), now=now) is None
    store = _store(tmp_path)
    _duplicate(store)
    sessions = _sessions(tmp_path, 4)
    # four sessions since: not yet — and that scan is not repeated for ten minutes
    assert consolidate_if_due(store, sessions, now=now) is None
    _sessions(tmp_path, 6)
    assert consolidate_if_due(store, sessions, now=now + 60) is None  # scanned a minute ago
    assert len(store.all()) == 3
    # ten minutes later, six sessions: it runs
    assert consolidate_if_due(store, sessions, now=now + 601) == ["merged indent into tabs"]
    # and not again within a day, whatever happens
    _duplicate(store)
    _sessions(tmp_path, 20, mtime=now + 700)
    assert consolidate_if_due(store, sessions, now=now + 601 + DAY - 10) is None
    state = json.loads((store.root / STATE).read_text())
    assert state["last"] == now + 601
    # a day later: sessions since then count, the old ones do not
    later = now + 601 + DAY + 1
    assert consolidate_if_due(store, sessions, now=later) == ["merged indent into tabs"]


def test_sessions_before_the_last_consolidation_do_not_count(tmp_path):
    now = time.time()
    store = _store(tmp_path)
    (store.root / STATE).write_text(json.dumps({"last": now - 2 * DAY}))
    sessions = _sessions(tmp_path, 9, mtime=now - 3 * DAY)
    assert consolidate_if_due(store, sessions, now=now) is None


RACER = """
import sys, time, pathlib
sys.path.insert(0, {root!r})
from clawnb.memory.consolidate import ConsolidationLock
folder = pathlib.Path({folder!r})
go = folder / "go"
while not go.exists():
    time.sleep(0.001)
lock = ConsolidationLock(folder)
won = lock.acquire()
print("won" if won else "lost", flush=True)
if won:
    while not (folder / "done").exists():
        time.sleep(0.01)
    lock.release()
"""


def test_two_processes_racing_for_the_lock_exactly_one_wins(tmp_path):
    folder = tmp_path / "memory"
    folder.mkdir()
    code = RACER.format(root=str(ROOT), folder=str(folder))
    for _ in range(5):
        racers = [
            subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        time.sleep(0.2)  # both started and waiting for the go
        (folder / "go").touch()
        # both answer while the winner still holds the lock
        answers = sorted(p.stdout.readline().strip() for p in racers)  # type: ignore[union-attr]
        assert answers == ["lost", "won"]
        assert json.loads((folder / LOCK).read_text())["pid"] in {p.pid for p in racers}
        (folder / "done").touch()
        for p in racers:
            p.communicate(timeout=20)
        assert not (folder / LOCK).exists()  # released
        (folder / "go").unlink()
        (folder / "done").unlink()


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_stale_lock_of_a_dead_process_is_taken_over(tmp_path):
    folder = tmp_path / "memory"
    folder.mkdir()
    pid = _dead_pid()
    (folder / LOCK).write_text(json.dumps({"pid": pid, "time": time.time()}))
    lock = ConsolidationLock(folder)
    assert lock.acquire()
    assert json.loads((folder / LOCK).read_text())["pid"] == os.getpid()
    lock.release()
    assert not (folder / LOCK).exists()


def test_a_live_lock_is_respected_until_it_is_an_hour_old(tmp_path):
    folder = tmp_path / "memory"
    folder.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        now = time.time()
        (folder / LOCK).write_text(json.dumps({"pid": holder.pid, "time": now}))
        assert not ConsolidationLock(folder).acquire(now=now + 60)
        assert json.loads((folder / LOCK).read_text())["pid"] == holder.pid
        assert ConsolidationLock(folder).acquire(now=now + 3601)  # too old: taken over
    finally:
        holder.kill()
        holder.wait()


async def test_a_session_start_consolidates_when_due(trusted_ws, tmp_path):
    from clawnb.config import Config
    from clawnb.memory.store import project_memory_dir
    from clawnb.session.assemble import build_agent
    from clawnb.session.log import sessions_root
    from tests.memory.conftest import MemoryModel

    store = MemoryStore(project_memory_dir(trusted_ws))
    store.save(Memory("tabs", "the person indents with four spaces", "project"))
    twin = Memory("indent", "the person indents with four spaces.", "project", learnt="2099")
    (store.root / "indent.md").write_text(twin.to_text())
    sessions = sessions_root(trusted_ws)
    sessions.mkdir(parents=True)
    for i in range(5):
        (sessions / f"s{i}.jsonl").write_text("{}\n")
    session = build_agent(
        Config(memory="on"), workspace=trusted_ws, provider=MemoryModel(), skills=False
    )
    await session.memory_settled()  # with a model, in a child session of its own thread
    assert [m.name for m in store.all()] == ["tabs"]
    session.close()
