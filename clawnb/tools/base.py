"""What every tool shares: :class:`ToolError`, argument helpers, path resolution and the
per-session :class:`FileState` (which files the agent has read, and when).

A tool is any object with a ``definition`` and an ``async call(args) -> str`` (see
:class:`clawnb.types.Tool`). Subclassing :class:`BaseTool` is optional; it only supplies the
fail-closed metadata defaults: not read-only, and concurrency-safe only when read-only.

Every file tool opens files through :func:`open_regular` (or :func:`read_regular`): a FIFO, a
socket, a device or a ``/proc``/``/sys`` pseudo-file is refused *before* it is opened for
reading — never a read that blocks the process or one that returns a different answer each
time.

A tool that changes files can also offer ``async preview(args) -> ChangePreview``
(:class:`Previewing`): it runs the same checks as ``call`` and computes the exact change,
without touching the disk. A front end shows that change *before* asking the user, and a
failing check becomes the call's result without a question (see
:func:`clawnb.gates.GatePipeline`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import inspect
import os
import stat
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO, Protocol, runtime_checkable

from ..types import CAUTIOUS, JSON, ToolDefinition, ToolTraits

# the names a capability used to be declared under; now `traits` holds them all
_TRAIT_ATTRIBUTES = frozenset({"always_ask", "auto_allowed", "deferred", "open_world"})
# the book's own flags: a subclass may still write them as class attributes
_BOOK_FLAGS = ("read_only", "concurrency_safe")

__all__ = [
    "BaseTool",
    "ChangePreview",
    "Previewing",
    "FileStamp",
    "FileState",
    "ToolError",
    "check_regular",
    "optional_int",
    "open_regular",
    "optional_str",
    "read_regular",
    "report_output",
    "require_str",
    "resolve_path",
]


def report_output(text: str) -> None:
    """Output a running tool produced so far (bash's pipes as they fill), sent as
    :class:`~clawnb.events.AgentEvent.ToolOutput` to whoever watches the call that is running
    (:data:`clawnb.executor.current_call`); redacted like a result. Nobody watching: nothing
    happens, the output only ends up in the result."""
    if not text:
        return
    from ..executor import current_call

    context = current_call.get()
    if context is None or context.on_event is None:
        return
    from ..control.secrets import redact
    from ..events import AgentEvent

    delivered = context.on_event(AgentEvent.ToolOutput(context.call_id, redact(text)))
    if inspect.isawaitable(delivered):
        asyncio.ensure_future(delivered)


class ToolError(Exception):
    """A tool failed; the loop shows the model ``error: {message}``."""


@dataclass(frozen=True)
class ChangePreview:
    """The change a mutating call will make, computed before it runs.

    ``summary`` is one line for a person ("new file, 3 lines", "overwrites 12 lines",
    "2 lines changed"); ``diff`` is a unified diff with line numbers and context against the
    file as it is on disk now (for a new file: every line as an addition); ``before`` is the
    current text (``None`` for a new file) and ``after`` the text the call will leave.
    ``call`` produces exactly ``after`` while the file is unchanged (the read-before-edit
    stamp refuses a file that changed since it was read).
    """

    path: str
    kind: str  # "edit" | "create" | "overwrite"
    summary: str
    diff: str
    after: str
    before: str | None = None


@runtime_checkable
class Previewing(Protocol):
    """A tool whose calls can be previewed (see :class:`ChangePreview`). ``preview`` raises
    :class:`ToolError` with the message ``call`` would fail with, so a call that is bound to
    fail is never put to the user."""

    async def preview(self, args: JSON) -> ChangePreview: ...


class BaseTool:
    """Convenience base class. Subclasses set ``definition`` on the class — one definition
    per tool, built once — or in ``__init__`` when it depends on the arguments (bash's default
    timeout). Definitions are shared: extend a tool's by building a new one, never in place."""

    definition: ToolDefinition
    # What the tool declares about itself (the fail-closed defaults unless a subclass says
    # otherwise); an instance may differ (bash in plan mode is a read-only bash).
    traits: ToolTraits = CAUTIOUS

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # The book's two flags, written as class attributes (as the course teaches), are
        # folded into `traits`; every other capability is declared there and nowhere else — a
        # stray (or misspelt) attribute used to be read by some parts and ignored by others.
        stray = _TRAIT_ATTRIBUTES & set(vars(cls))
        if stray:
            raise TypeError(
                f"{cls.__name__} sets {', '.join(sorted(stray))}: declare "
                "traits = ToolTraits(...) instead"
            )
        book = {}
        for name in _BOOK_FLAGS:
            if name in vars(cls):
                value = vars(cls)[name]
                if not isinstance(value, bool):
                    continue  # a property of the subclass's own: it decides
                book[name] = value
                delattr(cls, name)
        inherited = cls.traits
        if book and isinstance(inherited, ToolTraits):
            cls.traits = dataclasses.replace(inherited, **book)

    @property
    def read_only(self) -> bool:
        """The book's name for ``traits.read_only`` (plan mode and the course read it)."""
        return self.traits.read_only

    @read_only.setter
    def read_only(self, value: bool) -> None:
        self.traits = dataclasses.replace(self.traits, read_only=value)

    @property
    def open_world(self) -> bool:
        """``traits.open_world``: reaches beyond this machine (web_fetch) — even when read-only
        it is asked about, since what it sends out (a URL can carry anything the model read)
        is not "just a read"."""
        return self.traits.open_world

    @property
    def concurrency_safe(self) -> bool:
        """Whether the executor may run this tool's calls alongside others: by default a tool
        that only reads may (``traits.concurrency_safe`` says otherwise: ``ask_user``, a
        person answers one question at a time)."""
        return self.traits.parallel

    @concurrency_safe.setter
    def concurrency_safe(self, value: bool) -> None:
        self.traits = dataclasses.replace(self.traits, concurrency_safe=value)

    async def call(self, args: JSON) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class FileTool(BaseTool):
    """A tool that works on files: relative paths are anchored at ``workspace`` (default: the
    process cwd), and a ``file_state`` shared by read, write and edit turns on the
    read-before-edit guard."""

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None = None,
        file_state: FileState | None = None,
    ) -> None:
        self.workspace = workspace
        self.file_state = file_state


def require_str(args: JSON, key: str, message: str | None = None) -> str:
    """``args[key]`` if it is a string, else :class:`ToolError` (``missing '{key}' argument``)."""
    value = args.get(key) if isinstance(args, dict) else None
    if not isinstance(value, str):
        raise ToolError(message or f"missing '{key}' argument")
    return value


def optional_str(args: JSON, key: str) -> str | None:
    """An optional string argument; ``None`` when absent or null, an error for other types."""
    value = args.get(key) if isinstance(args, dict) else None
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolError(f"'{key}' must be a string, got {value!r}")
    return value


def optional_int(args: JSON, key: str, *, minimum: int | None = None) -> int | None:
    """An optional integer argument; a bool, float or string is a clear error, not a guess."""
    value = args.get(key) if isinstance(args, dict) else None
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"'{key}' must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ToolError(f"'{key}' must be at least {minimum}, got {value}")
    return value


def resolve_path(path: str, workspace: str | os.PathLike[str] | None = None) -> Path:
    """``path`` as given when absolute, else joined to ``workspace`` (default: the process cwd).

    This is only where relative paths are anchored; the safety layer's PathValidator decides
    whether a path is *allowed*.
    """
    p = Path(path).expanduser() if path.startswith("~") else Path(path)
    if p.is_absolute() or workspace is None:
        return p
    return Path(workspace) / p


# -- regular files only -----------------------------------------------------------------------

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)
# Kernel pseudo-file systems: their "regular" files (/proc/self/environ, /sys/…) report a size
# of 0 or 4096 whatever they hold, may block or change on every read, and hold the process's
# environment and the machine's state, not the project's.
_PSEUDO_ROOTS = ("/proc", "/sys")


@cache
def _pseudo_devices() -> frozenset[int]:
    devices = set()
    for root in _PSEUDO_ROOTS:
        try:
            devices.add(os.stat(root).st_dev)
        except OSError:
            pass
    return frozenset(devices)


def _is_pseudo(path: Path, st: os.stat_result) -> bool:
    if st.st_dev in _pseudo_devices():
        return True
    real = os.path.realpath(path)
    return any(real == root or real.startswith(root + "/") for root in _PSEUDO_ROOTS)


def check_regular(path: Path, st: os.stat_result, shown: str | None = None) -> None:
    """Raise :class:`ToolError` (``'x' is not a regular file (it is a FIFO …)``) unless
    ``st`` (the stat of ``path``) is a regular file outside ``/proc`` and ``/sys``."""
    shown = shown if shown is not None else str(path)
    kind = next((name for test, name in _KINDS if test(st.st_mode)), None)
    if kind is None and not stat.S_ISREG(st.st_mode):
        kind = "not a file"
    if kind is None and _is_pseudo(path, st):
        kind = "a pseudo-file of /proc or /sys"
    if kind is not None:
        raise ToolError(
            f"'{shown}' is not a regular file (it is {kind}); file tools only open regular files"
        )


def open_regular(path: Path, shown: str | None = None) -> BinaryIO:
    """``path`` opened for reading in binary, refused with :class:`ToolError` when it is not a
    regular file (:func:`check_regular`) — checked *before* opening, so a FIFO never blocks
    and a device is never touched, and again on the opened descriptor (``O_NONBLOCK``), so a
    file swapped for a FIFO in between is caught too. ``OSError`` (missing, no permission)
    is left to the caller."""
    check_regular(path, os.stat(path), shown)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    try:
        check_regular(path, os.fstat(fd), shown)
        os.set_blocking(fd, True)  # a regular file: the flag only mattered for the open
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path, shown: str | None = None) -> bytes:
    """The whole content of a regular file (see :func:`open_regular`)."""
    with open_regular(path, shown) as fh:
        return fh.read()


# -- read-before-edit -------------------------------------------------------------------------


def content_digest(data: bytes) -> bytes:
    """The content hash a :class:`FileStamp` keeps (SHA-256: the fastest of hashlib's here,
    hardware-assisted on current CPUs — about 1 GB/s)."""
    return hashlib.sha256(data).digest()


_HASH_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class FileStamp:
    """How a file looked when the agent saw it: modification time (ns), size, and a hash of
    its content (``None`` only for a file too large to hash, see
    :attr:`FileState.max_hash_bytes`). Time and size alone miss a same-size rewrite whose
    mtime was put back (``touch -r``, ``os.utime``); the hash does not."""

    mtime_ns: int
    size: int
    digest: bytes | None

    @classmethod
    def of(cls, fh: BinaryIO, data: bytes | None = None, *, limit: int) -> FileStamp:
        """The stamp of the open file ``fh``: its fstat now, and the hash of ``data`` (the
        bytes just read from it or written to it) or, without ``data``, of its content read
        from the start in chunks (not when it is larger than ``limit``)."""
        st = os.fstat(fh.fileno())
        if data is not None:
            return cls(st.st_mtime_ns, st.st_size, content_digest(data))
        if st.st_size > limit:
            return cls(st.st_mtime_ns, st.st_size, None)
        fh.seek(0)
        hasher = hashlib.sha256()
        seen = 0
        while chunk := fh.read(_HASH_CHUNK):
            seen += len(chunk)
            if seen > limit:  # grew while being hashed
                return cls(st.st_mtime_ns, st.st_size, None)
            hasher.update(chunk)
        return cls(st.st_mtime_ns, st.st_size, hasher.digest())


class FileState:
    """Remembers which files the agent read in this session, and how they looked then.

    Read-before-edit (seed 002): the ReadTool :meth:`record` s every file it returns; the
    WriteTool and EditTool call :meth:`check_fresh` before changing an *existing* file, so the
    model never overwrites a file it has not seen, nor one that changed on disk since (an
    editor, a formatter, ``git checkout``). A successful write or edit records the new state.

    The stamp (:class:`FileStamp`) is mtime, size *and a hash of the content*: a change between
    the read and the edit — or between an edit's preview, which the person approves, and its
    apply — is caught even when it keeps the size and puts the mtime back, so no call writes
    text computed from a file nobody saw. The hash is taken of the bytes the tool read or wrote
    anyway; a windowed read of a large file hashes it in one more pass, up to
    :attr:`max_hash_bytes` (a bigger file gets no hash and cannot be edited or overwritten
    with these tools: its changes could not be checked).
    """

    #: files up to this size are hashed; edit and write refuse bigger ones (256 MiB: about a
    #: quarter of a second of hashing, far more than edit's whole-file diff can show anyway)
    max_hash_bytes: int = 256 * 1024 * 1024

    def __init__(self) -> None:
        self._stamps: dict[str, FileStamp] = {}

    @staticmethod
    def _key(path: Path) -> str:
        return os.path.realpath(path)

    def record(self, path: Path, data: bytes | None = None) -> None:
        """Note that the agent has seen ``path`` as it is on disk now: ``data`` is the content
        just read or written (hashed as is), else the file is read to hash it."""
        try:
            with open_regular(path) as fh:
                stamp = FileStamp.of(fh, data, limit=self.max_hash_bytes)
        except (OSError, ToolError):
            self._stamps.pop(self._key(path), None)
            return
        self._stamps[self._key(path)] = stamp

    def remember(self, path: Path, stamp: FileStamp) -> None:
        """Record a stamp a tool took from its own open file (what it read is what it hashed)."""
        self._stamps[self._key(path)] = stamp

    def forget(self, path: Path) -> None:
        self._stamps.pop(self._key(path), None)

    def seen_mtime(self, path: Path) -> int | None:
        stamp = self._stamps.get(self._key(path))
        return stamp.mtime_ns if stamp is not None else None

    def check_fresh(
        self, path: Path, action: str, shown: str | None = None, data: bytes | None = None
    ) -> None:
        """Raise :class:`ToolError` unless ``path`` is new, or was read and is unchanged.

        ``action`` is the verb for the message (``"editing"``, ``"overwriting"``); ``shown``
        is the path as the model wrote it. ``data``: the content the caller has just read and
        is about to change (compared as it is, so what it changes is what the agent saw);
        without it the file is read again to compare.
        """
        shown = shown if shown is not None else str(path)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return  # a new file needs no read
        except OSError:
            return  # the tool itself will report the real problem
        check_regular(path, st, shown)
        seen = self._stamps.get(self._key(path))
        if seen is None:
            raise ToolError(
                f"you must read '{shown}' before {action} it; use the read tool first "
                "to see its current contents"
            )
        changed = ToolError(
            f"'{shown}' was modified on disk since you last read it; read it again "
            f"before {action} it"
        )
        if (st.st_mtime_ns, st.st_size) != (seen.mtime_ns, seen.size):
            raise changed
        if seen.digest is None:
            raise ToolError(
                f"'{shown}' is larger than {self.max_hash_bytes // (1024 * 1024)} MiB, too large "
                f"to check for changes since you read it; {action} it is refused (use bash if "
                "you must)"
            )
        current: bytes | None
        if data is not None:
            current = content_digest(data)
        else:
            try:
                with open_regular(path, shown) as fh:
                    current = FileStamp.of(fh, limit=self.max_hash_bytes).digest
            except OSError:
                return  # the tool itself will report the real problem
        if current != seen.digest:
            raise changed

    def __contains__(self, path: object) -> bool:
        return isinstance(path, Path | str) and self._key(Path(path)) in self._stamps
