"""Memory files: one Markdown file per memory, an index of one-line pointers.

A memory file (``<folder>/<slug>.md``)::

    ---
    name: dataset-id-column
    description: the id column of the dataset is 'key', never 'id'
    type: project
    learnt: 2026-12-02T07:10:00+00:00
    from: cell 4
    evidence: data/schema.md sha256:1f2e…
    ---
    The body: what was learnt, in a few lines.

``type`` is one of :data:`TYPES`: ``user`` and ``feedback`` (the person's preferences and
corrections) live in the user's folder (``$XDG_CONFIG_HOME/clawnb/memory``), ``project`` and
``reference`` in the project's (``<workspace>/.claw/memory``). Both folders are control files
(:func:`clawnb.control.trust.is_control_file`: everything under ``.claw`` and the user config
directory), so the model's ``write``/``edit``/``bash`` cannot change them; only this module
writes there, and every text passes the redactor first (a key never lands in memory).

The index ``MEMORY.md`` holds one line per memory, newest first, capped at
:data:`INDEX_MAX_LINES` lines and :data:`INDEX_MAX_BYTES` bytes: when over, the oldest lines
are left out (their files stay). The indexes are what the context gets
(:func:`memory_section`), read through :func:`clawnb.control.files.read_workspace_text` (no
link leads out, a size cap); the project's only in a trusted workspace, since memory from a
repository is instructions from the repository.

**Evidence** (item 5): a memory learnt from a file records its path and content hash; when
the file changes (or is gone) the memory is marked *possibly stale* in the context and in
``/memory``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from difflib import SequenceMatcher
from pathlib import Path

from ..control.files import read_workspace_bytes, read_workspace_text, replace_file
from ..control.secrets import redact
from ..errors import UnsafeFileError

__all__ = [
    "INDEX",
    "INDEX_MAX_BYTES",
    "INDEX_MAX_LINES",
    "TYPES",
    "Memory",
    "MemoryStore",
    "content_hash",
    "memory_section",
    "project_memory_dir",
    "user_memory_dir",
]

INDEX = "MEMORY.md"
INDEX_MAX_LINES = 200
INDEX_MAX_BYTES = 25 * 1024
TYPES = ("user", "feedback", "project", "reference")
USER_TYPES = ("user", "feedback")
MEMORY_MAX_BYTES = 16 * 1024  # one memory file, read back
BODY_MAX_CHARS = 4000
_SLUG = re.compile(r"[^a-z0-9]+")
_SIMILAR = 0.85  # descriptions this alike are one memory


def user_memory_dir(config_home: str | os.PathLike[str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/clawnb/memory``: the person's own memories."""
    from ..control.trust import user_config_dir

    return user_config_dir(config_home) / "memory"


def project_memory_dir(workspace: str | os.PathLike[str]) -> Path:
    """``<workspace>/.claw/memory``: the project's memories."""
    return Path(workspace) / ".claw" / "memory"


def slug(name: str) -> str:
    """A memory's file name from its name: lower-case letters, digits and dashes only, so
    no name can be a path (``../../etc/x`` is ``etc-x``)."""
    text = _SLUG.sub("-", name.casefold()).strip("-")[:60].strip("-")
    return text or "memory"


def content_hash(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()[:16]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _one_line(text: str, limit: int = 200) -> str:
    words = " ".join(str(text).split())
    return words if len(words) <= limit else words[: limit - 1] + "…"


@dataclass(frozen=True)
class Memory:
    """One memory. ``source`` says where it was learnt (``cell 4``, a file); ``evidence`` the
    file and its content hash when it was learnt from one."""

    name: str
    description: str
    type: str
    body: str = ""
    learnt: str = field(default_factory=_now)
    source: str = ""
    evidence_path: str = ""
    evidence_hash: str = ""
    evidence_cell: str = ""  # a notebook cell's id, when the evidence is one cell of it

    @property
    def slug(self) -> str:
        return slug(self.name)

    def to_text(self) -> str:
        lines = [
            "---",
            f"name: {_one_line(self.name, 80)}",
            f"description: {_one_line(self.description)}",
            f"type: {self.type}",
            f"learnt: {self.learnt}",
        ]
        if self.source:
            lines.append(f"from: {_one_line(self.source, 200)}")
        if self.evidence_path:
            lines.append(f"evidence: {_one_line(self.evidence_path, 300)} {self.evidence_hash}")
            if self.evidence_cell:
                lines.append(f"cell: {_one_line(self.evidence_cell, 80)}")
        body = self.body.strip()[:BODY_MAX_CHARS]
        return redact("\n".join(lines) + "\n---\n" + (body + "\n" if body else ""))

    @classmethod
    def parse(cls, text: str) -> Memory | None:
        """A memory file's text → a :class:`Memory`, or ``None`` for one without frontmatter."""
        if not text.startswith("---\n"):
            return None
        head, sep, body = text[4:].partition("\n---\n")
        if not sep:
            head, sep, body = text[4:].partition("\n---")
            if not sep:
                return None
        fields: dict[str, str] = {}
        for line in head.splitlines():
            key, colon, value = line.partition(":")
            if colon:
                fields[key.strip()] = value.strip()
        name = fields.get("name", "")
        kind = fields.get("type", "project")
        if not name or kind not in TYPES:
            return None
        path, _, digest = fields.get("evidence", "").rpartition(" ")
        return cls(
            name=name,
            description=fields.get("description", ""),
            type=kind,
            body=body.strip(),
            learnt=fields.get("learnt", ""),
            source=fields.get("from", ""),
            evidence_path=path,
            evidence_hash=digest if path else "",
            evidence_cell=fields.get("cell", "") if path else "",
        )


def same_memory(a: Memory, b: Memory) -> bool:
    """The same memory: the same name (file), or descriptions at least :data:`_SIMILAR`
    alike (case and spacing aside)."""
    if a.slug == b.slug:
        return True
    one = " ".join(a.description.casefold().split())
    two = " ".join(b.description.casefold().split())
    return bool(one and two) and SequenceMatcher(None, one, two).ratio() >= _SIMILAR


class MemoryStore:
    """The memories of one folder (the user's or the project's): read, write, the index."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def exists(self) -> bool:
        return self.root.is_dir() and not self.root.is_symlink()

    def _file(self, name: str) -> Path:
        return self.root / f"{slug(name)}.md"

    def read(self, path: Path) -> Memory | None:
        try:
            text = read_workspace_text(path, root=self.root, max_bytes=MEMORY_MAX_BYTES)
        except (OSError, UnsafeFileError):
            return None
        return Memory.parse(text)

    def all(self) -> list[Memory]:
        """Every readable memory of the folder, newest first."""
        if not self.exists():
            return []
        found = []
        for path in sorted(self.root.glob("*.md")):
            if path.name == INDEX or path.is_symlink():
                continue
            memory = self.read(path)
            if memory is not None:
                found.append(memory)
        found.sort(key=lambda m: m.learnt, reverse=True)
        return found

    def get(self, name: str) -> Memory | None:
        path = self._file(name)
        return self.read(path) if path.is_file() else None

    def find_duplicate(self, memory: Memory) -> Memory | None:
        """An existing memory that is the same one (:func:`same_memory`): the same name
        first, else a near-same description."""
        others = self.all()
        for other in others:
            if other.slug == memory.slug:
                return other
        return next((other for other in others if same_memory(memory, other)), None)

    def save(self, memory: Memory) -> tuple[Memory, bool]:
        """Write ``memory`` (redacted), merged into a duplicate when there is one (the
        duplicate's file and name are kept, the newer description and body win); returns
        ``(what was written, whether it was merged)``. The index is rewritten."""
        duplicate = self.find_duplicate(memory)
        merged = duplicate is not None
        if duplicate is not None:
            body = memory.body.strip() or duplicate.body
            memory = replace(
                memory,
                name=duplicate.name,
                body=body,
                source=memory.source or duplicate.source,
                evidence_path=memory.evidence_path or duplicate.evidence_path,
                evidence_hash=memory.evidence_hash or duplicate.evidence_hash,
                evidence_cell=memory.evidence_cell
                if memory.evidence_path
                else duplicate.evidence_cell,
            )
        self._write(self._file(memory.name), memory.to_text().encode("utf-8"))
        self.write_index()
        written = Memory.parse(memory.to_text())
        return (written if written is not None else memory), merged

    def delete(self, name: str) -> bool:
        path = self._file(name)
        if not path.is_file() or path.is_symlink():
            return False
        path.unlink()
        self.write_index()
        return True

    def _write(self, path: Path, data: bytes) -> None:
        if self.root.is_symlink() or self.root.parent.is_symlink():
            raise UnsafeFileError(f"{self.root} is a link: memory is never written through one")
        self.root.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            path.unlink()  # never write through a link planted in the folder
        replace_file(path, data, 0o600)

    def index_lines(self) -> list[str]:
        """The index's lines, newest first, within :data:`INDEX_MAX_LINES` and
        :data:`INDEX_MAX_BYTES` (the oldest left out)."""
        lines: list[str] = []
        size = 0
        for memory in self.all():
            line = redact(
                f"- [{_one_line(memory.name, 80)}]({memory.slug}.md) ({memory.type}) — "
                f"{_one_line(memory.description)}"
            )
            size += len(line.encode("utf-8")) + 1
            if len(lines) >= INDEX_MAX_LINES or size > INDEX_MAX_BYTES:
                break
            lines.append(line)
        return lines

    def write_index(self) -> None:
        lines = self.index_lines()
        self._write(self.root / INDEX, ("\n".join(lines) + "\n" if lines else "").encode())

    def trim_index(self) -> int:
        """Bring an index that grew past its caps (by hand, an older version) back within
        them; returns how many lines went."""
        path = self.root / INDEX
        try:
            before = read_workspace_text(path, root=self.root, max_bytes=4 * INDEX_MAX_BYTES)
        except (OSError, UnsafeFileError):
            before = ""
        self.write_index()
        return max(len(before.splitlines()) - len(self.index_lines()), 0)

    def index_text(self) -> str:
        """The index as it is on disk, capped (a longer file is cut to its first lines)."""
        try:
            text = read_workspace_text(
                self.root / INDEX, root=self.root, max_bytes=MEMORY_MAX_BYTES * 4
            )
        except (OSError, UnsafeFileError):
            return ""
        lines = text.splitlines()[:INDEX_MAX_LINES]
        out: list[str] = []
        size = 0
        for line in lines:
            size += len(line.encode("utf-8")) + 1
            if size > INDEX_MAX_BYTES:
                break
            out.append(line)
        return "\n".join(out)


def evidence_of(workspace: Path, path: str, cell: str = "") -> tuple[str, str]:
    """``(relative path, content hash)`` of a file inside ``workspace`` — of one cell's source
    when ``cell`` names a cell (its id, or its index) of a notebook — or ``("", "")`` when it
    is not one (outside the workspace, missing, no such cell)."""
    try:
        root = workspace.resolve()
        target = (workspace / path).resolve()
        relative = target.relative_to(root)
        if not target.is_file() or target.stat().st_size > 64 * 1024 * 1024:
            return "", ""
        data = read_workspace_bytes(target, root=root, max_bytes=64 * 1024 * 1024)
    except (OSError, ValueError, UnsafeFileError):
        return "", ""
    if cell:
        source = _cell_source(data, cell)
        if source is None:
            return "", ""
        data = source.encode("utf-8")
    return relative.as_posix(), content_hash(data)


def _cell_source(notebook: bytes, cell: str) -> str | None:
    try:
        cells = json.loads(notebook).get("cells", [])
    except (ValueError, AttributeError):
        return None
    if not isinstance(cells, list):
        return None
    for i, entry in enumerate(cells):
        if isinstance(entry, dict) and (entry.get("id") == cell or str(i) == cell):
            source = entry.get("source", "")
            return "".join(source) if isinstance(source, list) else str(source)
    return None


def is_stale(memory: Memory, workspace: Path) -> bool:
    """Has the file (or notebook cell) a memory was learnt from changed, or gone, since?"""
    if not memory.evidence_path or not memory.evidence_hash:
        return False
    _, now = evidence_of(workspace, memory.evidence_path, memory.evidence_cell)
    return now != memory.evidence_hash


def memory_section(workspace: Path, *, trusted: bool, config_home: str | None = None) -> str:
    """The memory text for the context: the user's index, then the project's (only when the
    workspace is trusted), with the memories whose evidence changed marked possibly stale."""
    parts: list[str] = []
    folders = [("the person's", MemoryStore(user_memory_dir(config_home)))]
    if trusted:
        folders.append(("this project's", MemoryStore(project_memory_dir(workspace))))
    for who, store in folders:
        if not store.exists():
            continue
        text = store.index_text()
        if not text.strip():
            continue
        stale = [m.name for m in store.all() if is_stale(m, workspace)]
        block = f"Memory — {who} ({store.root}; read a file there for the details):\n{text}"
        if stale:
            block += "\nPossibly stale (the file it was learnt from changed since): " + ", ".join(
                stale
            )
        parts.append(block)
    return redact("\n\n".join(parts))
