"""Learning from a turn, off the critical path.

After a turn of the person's ends, :meth:`MemoryKeeper.after_turn` starts the review in a
thread with an event loop of its own and returns at once: the next prompt is never kept
waiting for it, and the review goes on whatever the caller's loop does (the chat's runs only
during a turn). After :data:`START_DELAY` it makes one model call with **no tools** (nothing the model answers can run, read or write anything) that
reviews the turn next to the memories already kept and answers with JSON operations::

    {"operations": [
      {"op": "create", "name": "...", "description": "...", "type": "project",
       "body": "...", "file": "data/schema.md"},
      {"op": "update", "name": "...", ...},
      {"op": "delete", "name": "..."}
    ]}

Only :class:`~clawnb.memory.store.MemoryStore` writes, inside the memory folders: a name is
turned into a file name of letters, digits and dashes (no name is a path); a duplicate (same
name, near-same description) is merged instead of added; every text passes the redactor.
``file`` records the evidence (path and content hash) when it is a file inside the workspace.
``user``/``feedback`` memories go to the person's folder; ``project``/``reference`` ones to
the project's, only in a trusted workspace. What was noted is said in one line
(``on_noted``: ``noted: …``).

The system prompt's memory section is read once, at the session's start, and never
rewritten (that would change the first bytes of every later request and lose the prompt
cache). What a review changes mid-session reaches the model instead as a reminder after the
history, with the person's next message (:meth:`MemoryKeeper.reminder`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..control.secrets import redact
from ..types import AnyProvider, Message, complete
from .store import (
    TYPES,
    USER_TYPES,
    Memory,
    MemoryStore,
    evidence_of,
    project_memory_dir,
    user_memory_dir,
)

__all__ = ["EXTRACT_PROMPT", "MemoryKeeper", "parse_operations"]

log = logging.getLogger(__name__)

EXTRACT_PROMPT = """\
You keep the long-term memory of a coding assistant that works in Jupyter notebooks. Below \
are the memories already kept and one turn of the conversation. Decide what from this turn \
is worth remembering in later sessions: the person's preferences and corrections (type \
"user" or "feedback"), facts about the project, its data and conventions (type "project"), \
and where things are (type "reference"). Do not keep what the code or the files already say, \
passing details, or anything secret. Update a memory that the turn changed, delete one the \
turn proved wrong; never add a memory that is already there.
Answer with JSON only, no prose:
{{"operations": [{{"op": "create", "name": "short-name", "description": "one line", \
"type": "project", "body": "a few lines", "file": "path it was learnt from, if any", \
"cell": "the notebook cell id, when it was learnt from one cell of a notebook"}}, \
{{"op": "delete", "name": "short-name"}}]}}
Answer {{"operations": []}} when nothing is worth keeping.

<memories>
{memories}
</memories>

<turn>
{turn}
</turn>"""

_TURN_CHARS = 24_000
START_DELAY = 0.25  # seconds: a prompt sent right after the turn goes out before the review
_MAX_OPERATIONS = 10
_CONSOLIDATE_TOOLS = ("read", "grep", "glob")  # a consolidation looks, never touches


def parse_operations(text: str | None) -> list[dict[str, Any]]:
    """The operations of an answer: the first JSON object in it (a fenced block too);
    anything that is not a list of objects is no operation."""
    if not text:
        return []
    start = text.find("{")
    end = text.rfind("}")
    if start < 0 or end <= start:
        return []
    try:
        data = json.loads(text[start : end + 1])
    except ValueError:
        match = re.search(r"\{.*?\}\s*\]\s*\}", text, re.DOTALL)
        if match is None:
            return []
        try:
            data = json.loads(match.group(0))
        except ValueError:
            return []
    ops = data.get("operations") if isinstance(data, dict) else None
    if not isinstance(ops, list):
        return []
    return [op for op in ops if isinstance(op, dict)][:_MAX_OPERATIONS]


@dataclass
class MemoryKeeper:
    """A session's memory: where it lives, and the extraction after each turn."""

    provider: AnyProvider
    workspace: Path
    trusted: bool
    config_home: str | None = None
    on_noted: Callable[[str], object] | None = None
    on_usage: Callable[[Any], object] | None = None  # the session's cost tracker
    start_delay: float = START_DELAY
    tasks: set[Future[list[str]]] = field(default_factory=set)  # the reviews running
    last_noted: list[str] = field(default_factory=list)
    # what the review is shown as kept: read once, then refreshed by apply()/forget()
    _known: str | None = field(default=None, repr=False)
    # one review writes at a time (two finishing together must not both add a memory)
    _writing: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # what changed since the model was last told (the next message's reminder); its own
    # lock, held only to add or take: the next prompt never waits for a review's writes
    _untold: list[str] = field(default_factory=list, repr=False)
    _telling: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def user(self) -> MemoryStore:
        return MemoryStore(user_memory_dir(self.config_home))

    @property
    def project(self) -> MemoryStore:
        return MemoryStore(project_memory_dir(self.workspace))

    def stores(self) -> list[MemoryStore]:
        return [self.user, self.project] if self.trusted else [self.user]

    def store_for(self, kind: str) -> MemoryStore | None:
        if kind in USER_TYPES:
            return self.user
        return self.project if self.trusted else None

    # -- after a turn ---------------------------------------------------------------------------
    def after_turn(self, turn: list[Message], source: str = "") -> Future[list[str]] | None:
        """Start reviewing ``turn`` in a thread of its own, on an event loop of its own, and
        return at once (``None`` when there is nothing to review). Its own loop: the chat's
        runs only during a turn and ``asyncio.run`` cancels what is left when it returns,
        so a review on the caller's loop would stall or vanish. Never raises, never waits."""
        if not turn:
            return None
        messages = list(turn)
        return self._in_thread("review", lambda: asyncio.run(self.review(messages, source)))

    def _in_thread(self, what: str, work: Callable[[], list[str]]) -> Future[list[str]]:
        """``work()`` in a daemon thread of its own; its future (result or exception) is
        returned at once and kept in :attr:`tasks` until it is done."""
        future: Future[list[str]] = Future()

        def run() -> None:
            try:
                future.set_result(work())
            except BaseException as exc:  # noqa: BLE001 - handed to whoever waits
                future.set_exception(exc)

        self.tasks.add(future)
        future.add_done_callback(self.tasks.discard)
        threading.Thread(target=run, name=f"clawnb-memory-{what}", daemon=True).start()
        return future

    async def settled(self) -> None:
        """Wait for the reviews still running (tests, the API before its loop ends)."""
        while self.tasks:
            await asyncio.wait([asyncio.wrap_future(f) for f in list(self.tasks)])

    async def review(self, turn: list[Message], source: str = "") -> list[str]:
        """One tool-less call over ``turn``; the operations it answers applied. Returns what
        was noted, in words; a failure is logged, never raised."""
        from ..context import full_transcript

        def request() -> str:
            known = self.known()
            text = redact(full_transcript(turn))[-_TURN_CHARS:]
            return EXTRACT_PROMPT.format(memories=known or "(none)", turn=text)

        try:
            # a prompt sent at once builds and sends its request first (the review's own
            # request would take the loop for a millisecond or two just then); the files and
            # the redaction run in a thread, the loop being the next prompt's
            await asyncio.sleep(self.start_delay)
            prompt = await asyncio.to_thread(request)
            answer = await complete(self.provider, [Message.User(prompt)], [])
            if answer.usage is not None and self.on_usage is not None:
                self.on_usage(answer.usage)
            operations = parse_operations(answer.text)
            noted = await asyncio.to_thread(self.apply, operations, source)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - memory must never fail a session
            log.info("memory extraction failed: %s", exc)
            return []
        self.last_noted = noted
        if noted and self.on_noted is not None:
            try:
                self.on_noted("noted: " + "; ".join(noted))
            except Exception:  # noqa: BLE001 - a front end's listener
                log.exception("memory on_noted listener failed")
        return noted

    def reminder(self) -> str | None:
        """What the reviews changed since the last call, for the reminder that travels with
        the person's next message (the system prompt's memory section stays as it was at
        the start); ``None`` when nothing changed. Each change is told once."""
        with self._telling:
            lines, self._untold = self._untold, []
        if not lines:
            return None
        return (
            "Memory changed during this session (the memory section above is as it was at the start):\n"
            + "\n".join(f"- {line}" for line in lines)
        )

    def _tell(self, line: str) -> None:
        with self._telling:
            self._untold.append(line)

    def known(self) -> str:
        """The memories kept, one line each, as the review is shown them."""
        if self._known is None:
            self._known = "\n".join(
                f"- {m.name} ({m.type}): {m.description}" for s in self.stores() for m in s.all()
            )
        return self._known

    def apply(
        self, operations: list[dict[str, Any]], source: str = "", only: MemoryStore | None = None
    ) -> list[str]:
        """Carry out create/update/delete operations; returns one phrase per change made.
        ``only``: the one folder they may change (a consolidation's); an operation aimed at
        another is skipped."""
        with self._writing:
            noted = self._apply(operations, source, only)
            if noted:
                self._known = None
        return noted

    def _apply(
        self, operations: list[dict[str, Any]], source: str, only: MemoryStore | None = None
    ) -> list[str]:
        noted: list[str] = []
        stores = self.stores() if only is None else [only]
        for op in operations:
            kind = str(op.get("op", "")).lower()
            # a key never lands in memory, its file name included: redacted before anything
            name = " ".join(redact(str(op.get("name", ""))).split())[:80]
            if not name:
                continue
            if kind == "delete":
                for store in stores:
                    if store.delete(name):
                        noted.append(f"forgot {name}")
                        self._tell(f"forgotten: {name}")
                continue
            if kind not in ("create", "update", "add"):
                continue
            mtype = str(op.get("type", "project")).lower()
            if mtype not in TYPES:
                mtype = "project"
            target = self.store_for(mtype)
            if only is not None and (target is None or target.root != only.root):
                continue  # a consolidation changes its own folder only
            description = " ".join(redact(str(op.get("description", ""))).split())
            if target is None or not description:
                continue
            path, digest = ("", "")
            cell = str(op.get("cell", "") or "").strip()[:80]
            if isinstance(op.get("file"), str) and op["file"].strip():
                path, digest = evidence_of(self.workspace, op["file"].strip(), cell)
            memory = Memory(
                name=name,
                description=description,
                type=mtype,
                body=redact(str(op.get("body", ""))),
                source=redact(source) or path,
                evidence_path=path,
                evidence_hash=digest,
                evidence_cell=cell if path else "",
            )
            try:
                written, merged = target.save(memory)
            except OSError as exc:
                log.info("memory %s not written: %s", name, exc)
                continue
            noted.append(f"{'updated' if merged else 'new'} {written.name}")
            self._tell(
                f"{'updated' if merged else 'new'} ({written.type}): {written.name} — "
                f"{written.description}"
            )
        return noted

    def consolidate_if_due(
        self, sessions: Path | None, session: Any | None = None
    ) -> list[str] | Future[list[str]]:
        """Consolidate each memory folder whose gates pass
        (:func:`clawnb.memory.consolidate.consolidate_if_due`). Without ``session`` (offline)
        the store's own tidying, now; returns what was done. With one (an
        :class:`~clawnb.session.assemble.AgentSession`), the gates and the work run in a
        thread of their own, the work by the model in a read-only child session
        (:meth:`consolidate_with`): returns its future at once, which
        :meth:`settled` waits for too."""
        from .consolidate import consolidate, consolidate_if_due

        def model_tidy(store: MemoryStore) -> list[str]:  # in the thread: a loop of its own
            return asyncio.run(self.consolidate_with(store, session))

        def tidy_all(by_model: bool) -> list[str]:
            done: list[str] = []
            for store in self.stores():
                tidy = model_tidy if by_model else consolidate
                try:
                    done += consolidate_if_due(store, sessions, tidy=tidy) or []
                except OSError as exc:  # a folder that cannot be tidied now is tidied later
                    log.info("memory consolidation of %s skipped: %s", store.root, exc)
            return done

        if session is None:
            return tidy_all(False)
        return self._in_thread("consolidate", lambda: tidy_all(True))

    async def consolidate_with(self, store: MemoryStore, session: Any) -> list[str]:
        """Consolidate ``store`` by the model, in a **read-only** child of ``session``
        (``read``, ``grep``, ``glob``; the session's gate and its rules): it is shown every
        memory (:func:`~clawnb.memory.consolidate.consolidation_prompt`) and answers with
        operations, applied by :meth:`apply` to this folder only (redacted, names never
        paths). Then — and instead, when the child fails — the store's own tidying
        (:func:`~clawnb.memory.consolidate.consolidate`). Returns what was done."""
        from .consolidate import consolidate, consolidation_prompt

        done: list[str] = []
        try:
            prompt = consolidation_prompt(store, self.workspace)
            child = session.child(read_only=True, tools=_CONSOLIDATE_TOOLS, max_turns=8)
            answer = await child.send(prompt)
            done = self.apply(parse_operations(answer), "consolidation", only=store)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - memory must never fail a session
            log.info("memory consolidation by the model failed, tidied without it: %s", exc)
        with self._writing:
            done += consolidate(store)
            self._known = None
        return done

    def changed(self) -> None:
        """The folders changed behind the keeper's back (``/memory forget``, a hand edit):
        the next review reads them again."""
        self._known = None

    def forget(self, name: str) -> bool:
        with self._writing:
            self._known = None
            return any(store.delete(name) for store in self.stores())

    def find(self, name: str) -> tuple[MemoryStore, Memory] | None:
        for store in self.stores():
            memory = store.get(name)
            if memory is not None:
                return store, memory
        return None
