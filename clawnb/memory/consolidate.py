"""Consolidation: tidying a memory folder now and then, behind a chain of gates and a lock.

Every session start asks :func:`consolidate_if_due`; the cheap gates come first, so most
starts stop at the first or second:

1. the memory folder exists;
2. more than :data:`MIN_INTERVAL` (24 h) since the last consolidation (``.consolidated``,
   a small JSON file in the folder);
3. not scanned in the last :data:`SCAN_INTERVAL` (10 minutes) — the scan of gate 4 is the
   one that reads a directory, so it is not repeated at every start;
4. at least :data:`MIN_SESSIONS` (5) sessions since the last consolidation (session files
   changed since then);
5. the lock: ``.consolidate.lock`` holding the PID and time of its holder, made with
   ``O_EXCL`` while an ``flock`` on ``.consolidate.guard`` keeps the check-and-take atomic
   between processes. A lock whose process is dead, or older than :data:`LOCK_MAX_AGE`
   (an hour), is taken over.

The work, under the lock, is ``tidy`` (:func:`consolidate_if_due`'s argument). With a model
(a session), :meth:`clawnb.memory.extract.MemoryKeeper.consolidate_with` runs it as a
**read-only child session**: it is shown every memory of the folder in full (with the ones
whose evidence changed marked possibly stale, :data:`CONSOLIDATE_PROMPT`), may read and grep
the workspace to check them, and answers with the review's JSON operations — merge, drop the
stale, settle contradictions — which the review's own code path applies (redacted, confined
to this folder). Without a model (offline), or when the model's consolidation fails, it is
:func:`consolidate`, the store's own work: duplicates merged (same name or near-same
description, the newest kept), and the index rebuilt within its caps. That runs after the
model's operations too, so the caps always hold.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from .store import Memory, MemoryStore, is_stale, same_memory

__all__ = [
    "CONSOLIDATE_PROMPT",
    "LOCK_MAX_AGE",
    "MIN_INTERVAL",
    "MIN_SESSIONS",
    "SCAN_INTERVAL",
    "ConsolidationLock",
    "consolidate",
    "consolidate_if_due",
    "consolidation_prompt",
]

MIN_INTERVAL = 24 * 3600.0
SCAN_INTERVAL = 600.0
MIN_SESSIONS = 5
LOCK_MAX_AGE = 3600.0
STATE = ".consolidated"
LOCK = ".consolidate.lock"
GUARD = ".consolidate.guard"

CONSOLIDATE_PROMPT = """\
You tidy the long-term memory of a coding assistant. Below is every memory of one folder, \
newest first, with when it was learnt and what it was learnt from. Make the set right:
- merge memories that say the same thing into one (update one, delete the others);
- where two memories contradict each other, keep the one that is true now (usually the \
newer; check the files when you can) and update or delete the other;
- a memory marked POSSIBLY STALE was learnt from a file that changed since: read the file; \
delete the memory if it no longer holds, or update it (give "file" again so its evidence is \
recorded anew);
- delete what is no longer worth keeping. Keep everything else as it is.
Every memory is here in full. You may read, grep and glob the workspace's files to check \
one; you cannot change anything yourself. Finish with \
JSON only, no prose: {{"operations": [{{"op": "update", "name": "...", "description": "one \
line", "type": "project", "body": "...", "file": "path"}}, {{"op": "delete", "name": "..."}}]}} \
and {{"operations": []}} when the folder is fine as it is.

<memories-to-consolidate>
{memories}
</memories-to-consolidate>"""
_MEMORY_CHARS = 2_000  # one memory's body in the prompt
_PROMPT_MEMORIES = 200


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


@dataclass
class ConsolidationLock:
    """``.consolidate.lock`` in ``folder``: :meth:`acquire` is True for exactly one process
    at a time; a dead holder's lock, or one older than :data:`LOCK_MAX_AGE`, is taken over."""

    folder: Path
    held: bool = False

    @property
    def path(self) -> Path:
        return self.folder / LOCK

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        fd = os.open(self.folder / GUARD, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the flock

    def holder(self) -> tuple[int, float] | None:
        """(pid, time) of the lock's holder, or ``None`` when it is free (or unreadable)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return int(data["pid"]), float(data["time"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            return (0, 0.0)  # a broken lock: nobody holds it

    def acquire(self, *, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        with self._guard():
            holder = self.holder()
            if holder is not None:
                pid, since = holder
                if _alive(pid) and now - since < LOCK_MAX_AGE and pid != os.getpid():
                    return False
                self.path.unlink(missing_ok=True)  # dead, too old, or broken: taken over
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            except FileExistsError:  # made by a process that skipped the guard
                return False
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"pid": os.getpid(), "time": now}, fh)
        self.held = True
        return True

    def release(self) -> None:
        if not self.held:
            return
        with self._guard():
            holder = self.holder()
            if holder is not None and holder[0] == os.getpid():
                self.path.unlink(missing_ok=True)
        self.held = False


def _state(folder: Path) -> dict[str, float]:
    try:
        data = json.loads((folder / STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: float(v) for k, v in data.items() if isinstance(v, int | float)}


def _save_state(folder: Path, state: dict[str, float]) -> None:
    from ..control.files import replace_file

    replace_file(folder / STATE, json.dumps(state).encode(), 0o600)


def sessions_since(sessions: Path | None, since: float) -> int:
    """Session files in ``sessions`` changed after ``since``."""
    if sessions is None or not sessions.is_dir():
        return 0
    count = 0
    for path in sessions.glob("*.jsonl"):
        with contextlib.suppress(OSError):
            if path.stat().st_mtime > since:
                count += 1
    return count


def consolidation_prompt(store: MemoryStore, workspace: Path) -> str:
    """What the consolidating model is shown: every memory of ``store`` (they passed the
    redactor when written), the possibly stale marked."""
    entries: list[str] = []
    for memory in store.all()[:_PROMPT_MEMORIES]:
        head = f"## {memory.name} ({memory.type}; learnt {memory.learnt[:19]})"
        if memory.evidence_path:
            head += f"; from {memory.evidence_path}"
            if is_stale(memory, workspace):
                head += " — POSSIBLY STALE: that file changed since"
        body = memory.body.strip()[:_MEMORY_CHARS]
        entries.append(f"{head}\n{memory.description}" + (f"\n{body}" if body else ""))
    return CONSOLIDATE_PROMPT.format(memories="\n\n".join(entries) or "(none)")


def consolidate(store: MemoryStore) -> list[str]:
    """Merge duplicates — each into the oldest of its kind, which keeps its name and takes
    the newest description and body — and rebuild the index within its caps; returns what
    was done, one phrase per change."""
    done: list[str] = []
    kept: list[Memory] = []
    for memory in reversed(store.all()):  # oldest first
        first = next((k for k in kept if same_memory(memory, k)), None)
        if first is None:
            kept.append(memory)
            continue
        merged = replace(
            memory, name=first.name, body=memory.body or first.body, source=memory.source
        )
        (store.root / f"{memory.slug}.md").unlink(missing_ok=True)
        store.save(merged)
        done.append(f"merged {memory.name} into {first.name}")
    trimmed = store.trim_index()
    if trimmed:
        done.append(f"index trimmed by {trimmed} lines")
    return done


def consolidate_if_due(
    store: MemoryStore,
    sessions: Path | None,
    *,
    now: float | None = None,
    tidy: Callable[[MemoryStore], list[str]] = consolidate,
) -> list[str] | None:
    """Consolidate ``store`` with ``tidy`` (default :func:`consolidate`, no model) if every
    gate passes (see the module docstring), holding the lock; ``None`` when a gate stopped
    it, else what was done (maybe nothing)."""
    now = time.time() if now is None else now
    folder = store.root
    if not store.exists():
        return None
    state = _state(folder)
    last = state.get("last", 0.0)
    if now - last <= MIN_INTERVAL:
        return None
    if now - state.get("scanned", 0.0) < SCAN_INTERVAL:
        return None
    state["scanned"] = now
    _save_state(folder, state)
    if sessions_since(sessions, last) < MIN_SESSIONS:
        return None
    lock = ConsolidationLock(folder)
    if not lock.acquire(now=now):
        return None
    try:
        done = tidy(store)
        state["last"] = now
        _save_state(folder, state)
        return done
    finally:
        lock.release()
