"""Sessions that survive a crash or a kernel restart (seed 001).

A session is a JSON Lines file. :class:`SessionLog` is a ``list`` of messages that writes
every change to that file **before** the change is visible in memory: the record is written,
flushed and ``fsync``-ed, and only then does ``append`` return. So any message a loop has seen
acknowledged is on disk, and the loops need no changes — they just get a ``SessionLog`` where
they used to get a list.

Records (one JSON object per line, each with ``ts``, an ISO-8601 UTC timestamp):

* ``{"type": "session", "id", "created", "meta"}`` — the header, first line;
* ``{"type": "message", "message": {...}, "usage": {...}?}`` — one appended message
  (``usage`` is repeated at top level for assistant turns that reported it);
* ``{"type": "messages", "records": [{"message": ..., "usage": ...?}, ...]}`` — several
  appended at once (``extend``), in one line so that a crash keeps all or none;
* ``{"type": "insert", "index": n, "message": {...}}`` — e.g. a system prompt put in front;
* ``{"type": "snapshot", "reason": "...", "messages": [...]}`` — any other change (compaction,
  deletion, reordering) rewrites the whole list in one record.

**Write-ahead records** keep what happens *inside* a turn, before the loop appends it:

* ``{"type": "partial", "text"}`` — text the person has already seen streaming (written, not
  fsync-ed: it survives a ``kill -9`` of the process; dropped from the file once the turn is
  recorded properly);
* ``{"type": "pending", "message"}`` — the assistant turn with its tool calls, fsync-ed
  **before any of its tools runs**;
* ``{"type": "pending_result", "message"}`` — one tool result, fsync-ed as it finishes;
* ``{"type": "commit", "count"}`` — the loop appended exactly that turn and those results.

Replaying a file that ends inside a turn recovers it: streamed text becomes the assistant's
message (marked as interrupted); a pending turn comes back with the results that finished and
``error: interrupted: the process ended before this call finished`` for each call that did not
— so the history is valid and says what may have happened. :func:`write_ahead` feeds these
records from the loop's events (``AgentSession`` calls it for every event).

Reading replays the records in order. A crash can leave only the *last* line incomplete; such
a line is dropped with a :class:`SessionRecoveryWarning` and everything before it is kept (and
the file is trimmed back to its last complete line before anything new is written). A broken
line anywhere else is real corruption and raises :class:`SessionError` naming file and line —
so does a record of a shape no writer makes: nested deeper than :data:`MAX_RECORD_DEPTH`, a
line longer than :data:`MAX_RECORD_BYTES`, a header whose fields are not strings. Whatever a
session file holds, reading it is one ``SessionError`` line or a history, never a traceback.

:class:`SessionStore` keeps sessions in a directory: create, list, resume by id or
``"latest"``. :func:`sessions_root` says which directory — by default one per workspace in the
user's data directory (``~/.local/share/clawnb/sessions/<folder>-<hash>/``), never inside the
workspace: a session carries undo checkpoints that name files to write, and a folder in the
workspace is a folder a repository can ship. Sessions found in the workspace's old
``.claw/sessions`` are listed as such (:meth:`SessionStore.workspace_notice`) and never resumed.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import secrets
import stat
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, SupportsIndex

from ..control.secrets import StreamRedactor, redact
from ..control.trust import user_data_dir
from ..errors import SessionError
from ..types import Message

__all__ = [
    "INTERRUPTED_SESSION_RESULT",
    "MAX_RECORD_BYTES",
    "MAX_RECORD_DEPTH",
    "WORKSPACE_SESSIONS",
    "SessionError",
    "SessionInfo",
    "SessionLog",
    "SessionRecoveryWarning",
    "SessionStore",
    "sessions_root",
    "write_ahead",
]

# No writer makes a record longer or deeper than these; past them a line is corrupt (a
# repository's file, a runaway writer), reported as such instead of exhausting the parser.
MAX_RECORD_BYTES = 32 << 20
MAX_RECORD_DEPTH = 200

# The replay's note of the last record that changed the messages (not a header field).
LAST_CHANGE = "_last_change"

# Where sessions used to live: inside the workspace, where a repository can ship them.
WORKSPACE_SESSIONS = ".claw/sessions"


def sessions_root(
    workspace: str | os.PathLike[str],
    configured: str | None = None,
    *,
    env: Any = None,
) -> Path:
    """The session store of ``workspace``: ``configured`` (the ``sessions_dir`` key, which
    only the user config or a trusted project config can set; ``~`` expanded, a relative
    path inside the workspace), else ``<data dir>/sessions/<folder name>-<hash>`` —
    :func:`clawnb.control.trust.user_data_dir`, keyed by the workspace's real path, so two
    folders of the same name keep apart and a repository can never put a session there.
    The one rule every front end (chat, ``%claw``, the Python API) follows."""
    if configured:
        root = Path(os.path.expanduser(configured))
        return root if root.is_absolute() else Path(workspace).absolute() / root
    real = os.path.realpath(workspace)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", os.path.basename(real)).strip("-.")[:40] or "root"
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:12]
    return user_data_dir(env=env) / "sessions" / f"{slug}-{digest}"


class SessionRecoveryWarning(UserWarning):
    """A session file ended in an incomplete line (a crash mid-write); that line was dropped."""


def _now() -> str:
    # microseconds: sessions created in the same millisecond still list in creation order
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _message_record(msg: Message) -> dict[str, Any]:
    if not isinstance(msg, Message):
        raise TypeError(f"a session holds Message objects, got {type(msg).__name__}")
    record: dict[str, Any] = {"type": "message", "ts": _now(), "message": msg.to_dict()}
    if isinstance(msg, Message.Assistant) and msg.turn.usage is not None:
        record["usage"] = msg.turn.usage.to_dict()
    return record


class SessionLog(list[Message]):
    """A message list persisted to ``path``; every mutation is durable before it returns."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        messages: Iterable[Message] = (),
        *,
        meta: dict[str, Any] | None = None,
        session_id: str | None = None,
        durable: bool = True,
    ) -> None:
        """Start a **new** session file at ``path`` (it must not exist yet) holding
        ``messages``. Use :meth:`resume` to continue an existing file."""
        super().__init__()
        self.path = Path(path)
        self.durable = durable
        self.id = session_id or self.path.stem
        self.meta = dict(meta or {})
        self.created = _now()
        self.last_change = self.created
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        except FileExistsError:
            raise SessionError(f"{self.path}: session file already exists; use resume()") from None
        os.close(fd)
        self._closed = False
        self._records = 0
        self._partial_at: int | None = None
        self._partial_text = StreamRedactor()
        self._pending: list[Message] | None = None
        header = {
            "type": "session",
            "ts": self.created,
            "id": self.id,
            "created": self.created,
            "meta": self.meta,
        }
        self._write([header])
        if durable:
            _fsync_dir(self.path.parent)
        initial = list(messages)
        if initial:
            self.extend(initial)

    # ----------------------------------------------------------------- reading

    @classmethod
    def resume(cls, path: str | os.PathLike[str], *, durable: bool = True) -> SessionLog:
        """Reopen a session file: replay its records, drop an incomplete last line (with a
        warning), and continue appending to the same file."""
        path = Path(path)
        header, messages, recovered, good_bytes, total = _replay(path)
        repairs = _missing_results(messages + recovered)
        log = list.__new__(cls)
        list.__init__(log, messages)
        log.path = path
        log.durable = durable
        log.id = header.get("id") or path.stem
        log.meta = dict(header.get("meta") or {})
        log.created = header.get("created") or header.get("ts") or ""
        log.last_change = header.get(LAST_CHANGE) or log.created
        if good_bytes < total:
            with open(path, "r+b") as fh:
                fh.truncate(good_bytes)
                fh.flush()
                if durable:
                    os.fsync(fh.fileno())
        log._closed = False
        log._records = 1  # an existing session is never discarded as empty
        log._partial_at = None
        log._partial_text = StreamRedactor()
        log._pending = None
        if recovered:
            # The process died inside a turn: what was shown (streamed text) or already run
            # (a turn's calls and the results that finished) becomes part of the history.
            log.extend(recovered)
        if repairs:
            # The process died between a tool call and its results: answer the calls so the
            # history is valid again (and say so, for the model and for the person).
            log.extend(repairs)
        return log

    @staticmethod
    def read(path: str | os.PathLike[str]) -> list[Message]:
        """The messages a session file holds, with a turn the process died in recovered as
        :meth:`resume` would (read-only; nothing is written or trimmed)."""
        _, messages, recovered, _, _ = _replay(Path(path))
        messages = messages + recovered
        return messages + _missing_results(messages)

    def idle_seconds(self, now: datetime | None = None) -> float | None:
        """How long ago the conversation last changed, as its file records it: the time of
        the last message record when the session was resumed (``None`` when that time is
        not readable). What a resume after a long break is told about."""
        try:
            then = datetime.fromisoformat(self.last_change)
        except (TypeError, ValueError):
            return None
        if then.tzinfo is None:
            then = then.replace(tzinfo=UTC)
        return ((now or datetime.now(UTC)) - then).total_seconds()

    # ----------------------------------------------------------------- writing

    def _write(self, records: list[dict[str, Any]]) -> None:
        # Every known key becomes *** before it reaches the disk (clawnb.control.secrets): a model that
        # echoes a key, or a prompt that quotes one, must not leave it in a file that outlives
        # the session. "***" is plain JSON string content, so a record stays valid.
        data = b"".join(
            redact(json.dumps(r, ensure_ascii=False, separators=(",", ":"))).encode("utf-8") + b"\n"
            for r in records
        )
        if self._closed:
            raise SessionError(f"{self.path}: session is closed")
        if self._partial_at is not None:
            # streamed text is now recorded properly (or was superseded): drop its records
            with open(self.path, "r+b") as fh:
                fh.truncate(self._partial_at)
            self._partial_at = None
        self._partial_text = StreamRedactor()  # the next answer streams afresh
        # Opened per write: no file handle outlives a call, so a forgotten close() leaks
        # nothing, and the cost (one open) is small next to the fsync.
        with open(self.path, "ab") as fh:
            fh.write(data)
            fh.flush()
            if self.durable:
                os.fsync(fh.fileno())
        self._records += len(records)

    def _snapshot(self, new: list[Message], reason: str) -> None:
        self._pending = None
        for msg in new:
            if not isinstance(msg, Message):
                raise TypeError(f"a session holds Message objects, got {type(msg).__name__}")
        self._write(
            [
                {
                    "type": "snapshot",
                    "ts": _now(),
                    "reason": reason,
                    "messages": [m.to_dict() for m in new],
                }
            ]
        )

    def append(self, msg: Message) -> None:
        if not self._commit([msg]):
            self._write([_message_record(msg)])
        super().append(msg)

    # -- write-ahead ----------------------------------------------------------------------
    def write_ahead_text(self, text: str) -> None:
        """Record streamed text as it is shown (no fsync: it is for a killed process, not a
        power cut; the records are dropped once the turn itself is written)."""
        if self._closed or not text:
            return
        # redacted as a stream: a key the model echoes arrives cut across deltas, so the end
        # that may be the start of a key waits for the next delta (a killed process loses it)
        text = self._partial_text.feed(text)
        if not text:
            return
        if self._partial_at is None:
            self._partial_at = self.path.stat().st_size
        line = json.dumps({"type": "partial", "text": text}, ensure_ascii=False)
        with open(self.path, "ab") as fh:
            fh.write(line.encode("utf-8") + b"\n")

    def write_ahead_turn(self, turn: Any) -> None:
        """Record an assistant turn with tool calls, durably, before any of its tools runs."""
        msg = Message.Assistant(turn)
        self._write([{"type": "pending", "ts": _now(), "message": msg.to_dict()}])
        self._pending = [msg]

    def write_ahead_result(self, call_id: str, content: str) -> None:
        """Record one result of the pending turn as soon as it is known."""
        if self._pending is None:
            return
        msg = Message.ToolResult(call_id, content)
        pending = self._pending
        self._write([{"type": "pending_result", "ts": _now(), "message": msg.to_dict()}])
        self._pending = [*pending, msg]

    def _commit(self, items: list[Message]) -> bool:
        """If ``items`` are exactly the pending turn and its results, write a small commit
        record instead of all of them again. Any other write ends the pending turn."""
        pending, self._pending = self._pending, None
        if pending is None or not items or items[0] != pending[0]:
            return False
        done = {m.id: m for m in pending[1:] if isinstance(m, Message.ToolResult)}
        for msg in items[1:]:
            if not isinstance(msg, Message.ToolResult) or done.get(msg.id) != msg:
                return False
        if len(items) - 1 != len(done):
            return False
        self._write([{"type": "commit", "ts": _now(), "count": len(items)}])
        return True

    def extend(self, msgs: Iterable[Message]) -> None:
        """Several messages in **one** record, so a crash keeps all of them or none (a tool
        round's results must not be half-recovered)."""
        items = list(msgs)
        if len(items) == 1:
            self.append(items[0])
        elif items and self._commit(items):
            super().extend(items)
        elif items:
            records = [_message_record(m) for m in items]
            self._write(
                [
                    {
                        "type": "messages",
                        "ts": records[0]["ts"],
                        "records": [
                            {k: v for k, v in r.items() if k not in ("type", "ts")} for r in records
                        ],
                    }
                ]
            )
            super().extend(items)

    # ``+=`` must stay in place (and logged); ``+`` still gives a plain list, which mypy
    # reports as an unsafe pair.
    def __iadd__(self, msgs: Iterable[Message]) -> SessionLog:  # type: ignore[override, misc]
        self.extend(msgs)
        return self

    def insert(self, index: SupportsIndex, msg: Message) -> None:
        self._pending = None
        record = _message_record(msg)
        n = len(self)
        i = int(index)
        i = max(0, min(n, i + n if i < 0 else i))
        record.update(type="insert", index=i)
        self._write([record])
        super().insert(i, msg)

    def _replace_all(self, new: list[Message], reason: str) -> None:
        self._snapshot(new, reason)
        list.__setitem__(self, slice(None), new)

    def __setitem__(self, index: Any, value: Any) -> None:
        new = list(self)
        new[index] = value
        self._replace_all(new, "compaction" if isinstance(index, slice) else "edit")

    def __delitem__(self, index: Any) -> None:
        new = list(self)
        del new[index]
        self._replace_all(new, "delete")

    def pop(self, index: SupportsIndex = -1) -> Message:
        new = list(self)
        item = new.pop(index)
        self._replace_all(new, "delete")
        return item

    def remove(self, value: Message) -> None:
        new = list(self)
        new.remove(value)
        self._replace_all(new, "delete")

    def clear(self) -> None:
        self._replace_all([], "clear")

    def sort(self, *args: Any, **kwargs: Any) -> None:
        new = list(self)
        new.sort(*args, **kwargs)
        self._replace_all(new, "reorder")

    def reverse(self) -> None:
        self._replace_all(list(reversed(self)), "reorder")

    def __imul__(self, n: SupportsIndex) -> SessionLog:
        self._replace_all(list(self) * int(n), "edit")
        return self

    def close(self, *, discard_if_empty: bool = False) -> None:
        """Refuse further changes (the file itself is never held open between writes).

        ``discard_if_empty`` deletes the file of a new session that never got a message, so
        that opening and quitting a chat leaves no clutter behind."""
        self._closed = True
        if discard_if_empty and self._records <= 1 and not self:
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass

    def __enter__(self) -> SessionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __reduce__(self) -> Any:  # pickling gives a plain list: the file stays with its owner
        return (list, (list(self),))

    def __repr__(self) -> str:
        return f"SessionLog({str(self.path)!r}, {len(self)} messages)"


INTERRUPTED_SESSION_RESULT = "error: interrupted: the process ended before this call finished"
INTERRUPTED_TEXT_NOTE = "[interrupted: the process ended while this reply was being written]"


def write_ahead(history: Any, event: Any) -> None:
    """Feed one loop event to a :class:`SessionLog`'s write-ahead records (a plain list is
    left alone): streamed text, the assembled turn before its tools run, each result as it
    finishes. Nested (subagent) events are not the conversation's and are ignored."""
    if not isinstance(history, SessionLog):
        return
    from ..events import AgentEvent

    if isinstance(event, AgentEvent.TextDelta):
        history.write_ahead_text(event.text)
    elif isinstance(event, AgentEvent.TurnEnd):
        if event.turn.tool_calls:
            history.write_ahead_turn(event.turn)
    elif isinstance(event, AgentEvent.ToolResult):
        history.write_ahead_result(event.id, event.content)


def _missing_results(messages: list[Message]) -> list[Message]:
    """ToolResults missing after the last Assistant turn with tool calls, if any."""
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        if isinstance(msg, Message.Assistant) and msg.turn.tool_calls:
            answered = {m.id for m in messages[i + 1 :] if isinstance(m, Message.ToolResult)}
            return [
                Message.ToolResult(call.id, INTERRUPTED_SESSION_RESULT)
                for call in msg.turn.tool_calls
                if call.id not in answered
            ]
        if isinstance(msg, Message.User | Message.System):
            return []
    return []


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class _Turn:
    """Replay state of a turn that was written ahead but not (yet) appended."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.pending: list[Message] = []

    def clear(self) -> None:
        self.text.clear()
        self.pending.clear()

    def recovered(self) -> list[Message]:
        """What the history gets when the file ends inside this turn."""
        if self.pending:
            turn = self.pending[0]
            done = {m.id: m for m in self.pending[1:] if isinstance(m, Message.ToolResult)}
            calls = turn.turn.tool_calls if isinstance(turn, Message.Assistant) else []
            return [
                turn,
                *(
                    done.get(c.id) or Message.ToolResult(c.id, INTERRUPTED_SESSION_RESULT)
                    for c in calls
                ),
            ]
        if self.text:
            from ..types import AssistantTurn

            text = "".join(self.text).rstrip() + "\n\n" + INTERRUPTED_TEXT_NOTE
            return [Message.Assistant(AssistantTurn(text=text))]
        return []


def _replay(path: Path) -> tuple[dict[str, Any], list[Message], list[Message], int, int]:
    """(header, messages, recovered in-flight turn, bytes of complete valid lines, size)."""
    try:
        # O_NONBLOCK: a FIFO named like a session must not hang the reader
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise SessionError(f"{path}: no such session file") from None
    except OSError as exc:
        raise SessionError(f"{path}: cannot read ({exc.strerror or exc})") from None
    with open(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise SessionError(f"{path}: not a regular file")
        return _replay_lines(path, fh, info.st_size)


def _replay_lines(
    path: Path, fh: Any, size: int
) -> tuple[dict[str, Any], list[Message], list[Message], int, int]:
    header: dict[str, Any] = {}
    messages: list[Message] = []
    turn = _Turn()
    good = 0
    lineno = 0
    while raw := fh.readline(MAX_RECORD_BYTES + 1):
        lineno += 1
        complete = raw.endswith(b"\n")
        if not complete and len(raw) > MAX_RECORD_BYTES:
            raise SessionError(
                f"{path}: line {lineno} is corrupt: longer than {MAX_RECORD_BYTES >> 20} MiB"
            )
        try:
            if not complete:
                raise ValueError("line has no newline: incomplete write")
            try:
                record = json.loads(raw.decode("utf-8"))
            except RecursionError:
                raise ValueError("nested too deeply") from None
            if not isinstance(record, dict):
                raise ValueError("record is not a JSON object")
            if _depth_over(record, MAX_RECORD_DEPTH):
                raise ValueError(f"nested more than {MAX_RECORD_DEPTH} levels deep")
            _apply(record, header, messages, turn)
        except (
            ValueError,
            KeyError,
            TypeError,
            AttributeError,
            IndexError,
            OverflowError,
            RecursionError,
        ) as exc:
            # any record shape we do not know is an error naming the line, never a traceback
            if not complete or not fh.read(1):  # the last line: a writer stopped mid-record
                warnings.warn(
                    f"{path}: line {lineno} is incomplete (the writer stopped mid-record); "
                    f"it was dropped and the {len(messages)} messages before it were kept",
                    SessionRecoveryWarning,
                    stacklevel=4,
                )
                return header, messages, turn.recovered(), good, size
            what = f"{type(exc).__name__}: {exc}" if isinstance(exc, KeyError) else exc
            if isinstance(exc, RecursionError):
                what = "nested too deeply"
            raise SessionError(f"{path}: line {lineno} is corrupt: {what}") from None
        good += len(raw)
    return header, messages, turn.recovered(), good, size


def _depth_over(value: Any, limit: int) -> bool:
    """Is a parsed record nested deeper than ``limit``? (Iterative: a deep record must not
    overflow the checker either.)"""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            pending.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            pending.extend((v, depth + 1) for v in item)
    return False


def _apply(
    record: dict[str, Any], header: dict[str, Any], messages: list[Message], turn: _Turn
) -> None:
    kind = record.get("type")
    if kind == "partial":
        turn.text.append(str(record["text"]))
        return
    if kind == "pending":
        turn.clear()
        turn.pending.append(Message.from_dict(record["message"]))
        return
    if kind == "pending_result":
        if turn.pending:
            turn.pending.append(Message.from_dict(record["message"]))
        return
    if kind == "commit":
        count = int(record["count"])
        if not turn.pending or count != len(turn.pending):
            raise ValueError("commit record without the turn it commits")
        first = turn.pending[0]
        calls = first.turn.tool_calls if isinstance(first, Message.Assistant) else []
        done = {m.id: m for m in turn.pending[1:] if isinstance(m, Message.ToolResult)}
        messages.append(first)
        messages.extend(done[c.id] for c in calls if c.id in done)
        turn.clear()
        if isinstance(record.get("ts"), str):
            header[LAST_CHANGE] = record["ts"]
        return
    # Any ordinary record: a turn written ahead was superseded (the live process went on).
    turn.clear()
    if kind != "session" and isinstance(record.get("ts"), str):
        header[LAST_CHANGE] = record["ts"]  # when the conversation last changed
    if kind == "session":
        for key in ("id", "created", "ts"):
            if key in record and not isinstance(record[key], str):
                raise ValueError(f"the header's {key!r} is not a string")
        if not isinstance(record.get("meta") or {}, dict):
            raise ValueError("the header's 'meta' is not an object")
        header.update(record)
    elif kind == "message":
        messages.append(Message.from_dict(record["message"]))
    elif kind == "messages":
        messages.extend(Message.from_dict(r["message"]) for r in record["records"])
    elif kind == "insert":
        messages.insert(int(record["index"]), Message.from_dict(record["message"]))
    elif kind == "snapshot":
        messages[:] = [Message.from_dict(m) for m in record["messages"]]
    else:
        raise ValueError(f"unknown record type {kind!r}")


@dataclass(frozen=True)
class SessionInfo:
    """One saved session, as :meth:`SessionStore.list` reports it."""

    id: str
    path: Path
    created: str
    updated: str
    messages: int
    title: str  # the first prompt, shortened for a one-line listing
    prompt: str = ""  # the whole first prompt (whitespace collapsed), for front ends to title

    def __str__(self) -> str:
        return f"{self.id}  {self.updated[:19]}  {self.messages:4d} msgs  {self.title}"


def _quote(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))


def _refuse_linked_control_dir(root: Path) -> None:
    """A project's ``.claw`` comes with the repository: a symlink at ``.claw`` or below it
    (``.claw/sessions -> ~/somewhere``) would make the agent write its session files wherever
    the repository chose, outside the workspace. Such a store is refused, not followed."""
    parts = Path(os.path.abspath(root)).parts
    if ".claw" not in parts:
        return
    start = parts.index(".claw")
    for end in range(start + 1, len(parts) + 1):
        path = Path(*parts[:end])
        if path.is_symlink():
            raise SessionError(
                f"{path} is a symbolic link (to {os.readlink(path)}): session files are not "
                "written through a link in the project's .claw directory; remove the link, "
                "or set sessions_dir in your user config"
            )


class SessionStore:
    """Session files in one directory, named ``{id}.jsonl``.

    ``workspace``, when given, is the folder these sessions belong to: sessions found in its
    old ``.claw/sessions`` (where a repository can ship them) are named by
    :meth:`workspace_notice` and never resumed."""

    def __init__(
        self, root: str | os.PathLike[str], *, workspace: str | os.PathLike[str] | None = None
    ) -> None:
        self.root = Path(root)
        self.workspace = Path(workspace).absolute() if workspace is not None else None

    @classmethod
    def for_workspace(
        cls, workspace: str | os.PathLike[str], configured: str | None = None
    ) -> SessionStore:
        """The store of ``workspace`` (:func:`sessions_root`; ``configured`` is the
        ``sessions_dir`` config key): what the chat, ``%claw`` and the Python API all use."""
        return cls(sessions_root(workspace, configured), workspace=workspace)

    def workspace_files(self) -> list[Path]:
        """Session files in the workspace's ``.claw/sessions`` when that is not this store:
        a person's sessions from before the store moved, or a repository's. Not resumed."""
        if self.workspace is None:
            return []
        legacy = self.workspace / WORKSPACE_SESSIONS
        try:
            if os.path.samefile(legacy, self.root):
                return []
        except OSError:
            pass
        if legacy.is_symlink() or (self.workspace / ".claw").is_symlink() or not legacy.is_dir():
            return []
        return sorted(p for p in legacy.glob("*.jsonl") if not p.is_symlink())

    def workspace_notice(self) -> str | None:
        """One line about :meth:`workspace_files`, with the command that adopts them, or
        ``None`` when there are none."""
        found = self.workspace_files()
        if not found:
            return None
        legacy = found[0].parent
        count = f"{len(found)} session file{'s' if len(found) != 1 else ''}"
        return (
            f"{count} found in {legacy} {'were' if len(found) != 1 else 'was'} not resumed "
            f"(a repository can ship that folder; clawnb keeps sessions in {self.root}). If "
            f"they are yours, move them: mkdir -p {_quote(self.root)} && mv "
            f"{_quote(legacy)}/* {_quote(self.root)}/"
        )

    def _missing(self, what: str) -> SessionError:
        notice = self.workspace_notice()
        return SessionError(f"{what}; {notice}" if notice else what)

    def new_id(self) -> str:
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        return f"{stamp}-{secrets.token_hex(3)}"

    def create(
        self,
        messages: Iterable[Message] = (),
        *,
        meta: dict[str, Any] | None = None,
        durable: bool = True,
    ) -> SessionLog:
        _refuse_linked_control_dir(self.root)
        try:
            # conversations are private: the store is the user's alone
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            pass  # SessionLog says what is wrong with the folder
        session_id = self.new_id()
        return SessionLog(
            self.root / f"{session_id}.jsonl",
            messages,
            meta=meta,
            session_id=session_id,
            durable=durable,
        )

    def path_of(self, session_id: str) -> Path:
        if session_id == "latest":
            sessions = self.list()
            self._refuse_newer_unreadable(sessions[-1] if sessions else None)
            if not sessions:
                raise self._missing(f"no sessions in {self.root}")
            return sessions[-1].path
        candidate = Path(session_id)
        if candidate.suffix == ".jsonl" and (candidate.exists() or candidate.is_symlink()):
            # a file given by its path must be one of this store's: a session file from
            # elsewhere (a repository's .claw/sessions) carries checkpoints nobody made here
            real = Path(os.path.realpath(candidate))
            if real.parent != Path(os.path.realpath(self.root)) or candidate.is_symlink():
                raise self._missing(
                    f"{candidate} is not in the session store {self.root}, so it is not "
                    "resumed (a session file from elsewhere may come from a repository)"
                )
            return real
        # an id is a prefix, never a pattern: "*" must not pick some session
        matches = sorted(self.root.glob(f"{glob.escape(session_id)}*.jsonl"))
        if not matches:
            raise self._missing(f"no session {session_id!r} in {self.root}")
        if len(matches) > 1:
            names = ", ".join(p.stem for p in matches[:5])
            raise SessionError(f"session id {session_id!r} is ambiguous: {names}")
        return matches[0]

    def _refuse_newer_unreadable(self, newest: SessionInfo | None) -> None:
        """``"latest"`` must never quietly mean "the newest one that still reads": if a newer
        file is corrupt, say which and why instead of resuming an older session."""
        readable = {i.path for i in self.list()} if newest is not None else set()
        floor = newest.path.stat().st_mtime if newest is not None else float("-inf")
        for path in sorted(self.root.glob("*.jsonl")) if self.root.is_dir() else []:
            if path in readable or path.stat().st_mtime < floor:
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", SessionRecoveryWarning)
                    _replay(path)
            except SessionError as exc:
                raise SessionError(
                    f"the latest session cannot be resumed: {exc}; resume another one by its "
                    "id, or move that file away"
                ) from None

    def resume(self, session_id: str = "latest", *, durable: bool = True) -> SessionLog:
        """Reopen a session by id, id prefix, file path or ``"latest"``."""
        return SessionLog.resume(self.path_of(session_id), durable=durable)

    def list(self) -> list[SessionInfo]:
        """Saved sessions, oldest first (by last change). Unreadable files are skipped."""
        infos = []
        if not self.root.is_dir():
            return []
        for path in self.root.glob("*.jsonl"):
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", SessionRecoveryWarning)
                    header, messages, recovered, _, _ = _replay(path)
                    messages = messages + recovered
            except SessionError:
                continue
            title = next((m.shown for m in messages if isinstance(m, Message.User)), "(no prompt)")
            title = " ".join(title.split())
            updated = datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(
                timespec="seconds"
            )
            infos.append(
                SessionInfo(
                    id=header.get("id") or path.stem,
                    path=path,
                    created=header.get("created", ""),
                    updated=updated,
                    messages=len(messages),
                    title=title[:60],
                    prompt=title,
                )
            )
        infos.sort(key=lambda i: (i.updated, i.created, i.id))
        return infos
