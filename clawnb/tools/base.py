"""What every tool shares: :class:`ToolError`, argument helpers, path resolution and the
per-session :class:`FileState` (which files the agent has read, and when).

A tool is any object with a ``definition`` and an ``async call(args) -> str`` (see
:class:`clawnb.types.Tool`). Subclassing :class:`BaseTool` is optional; it only supplies the
fail-closed metadata defaults: not read-only, and concurrency-safe only when read-only.

A tool that changes files can also offer ``async preview(args) -> ChangePreview``
(:class:`Previewing`): it runs the same checks as ``call`` and computes the exact change,
without touching the disk. A front end shows that change *before* asking the user, and a
failing check becomes the call's result without a question (see
:func:`clawnb.gates.GatePipeline`).
"""

from __future__ import annotations

import asyncio
import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..types import JSON, ToolDefinition

__all__ = [
    "BaseTool",
    "ChangePreview",
    "Previewing",
    "FileState",
    "ToolError",
    "optional_int",
    "optional_str",
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
    # the class default; an instance may differ (bash in plan mode is a read-only bash)
    read_only: bool = False

    @property
    def concurrency_safe(self) -> bool:
        """Whether the executor may run this tool's calls alongside others: by default a tool
        that only reads may. A tool where that does not hold sets the attribute on its class
        (``ask_user``: a person answers one question at a time)."""
        return self.read_only

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


class FileState:
    """Remembers which files the agent read in this session, and how they looked then.

    Read-before-edit (seed 002): the ReadTool :meth:`record` s every file it returns; the
    WriteTool and EditTool call :meth:`check_fresh` before changing an *existing* file, so the
    model never overwrites a file it has not seen, nor one that changed on disk since (an
    editor, a formatter, ``git checkout``). A successful write or edit records the new state.
    The stamp is (mtime in ns, size): a same-tick rewrite that changes the length is caught
    even on file systems with coarse timestamps.
    """

    def __init__(self) -> None:
        self._stamps: dict[str, tuple[int, int]] = {}

    @staticmethod
    def _key(path: Path) -> str:
        return os.path.realpath(path)

    @staticmethod
    def _stamp(path: Path) -> tuple[int, int]:
        st = os.stat(path)
        return st.st_mtime_ns, st.st_size

    def record(self, path: Path) -> None:
        """Note that the agent has seen ``path`` as it is on disk now."""
        try:
            self._stamps[self._key(path)] = self._stamp(path)
        except OSError:
            self._stamps.pop(self._key(path), None)

    def forget(self, path: Path) -> None:
        self._stamps.pop(self._key(path), None)

    def seen_mtime(self, path: Path) -> int | None:
        stamp = self._stamps.get(self._key(path))
        return stamp[0] if stamp is not None else None

    def check_fresh(self, path: Path, action: str, shown: str | None = None) -> None:
        """Raise :class:`ToolError` unless ``path`` is new, or was read and is unchanged.

        ``action`` is the verb for the message (``"editing"``, ``"overwriting"``); ``shown``
        is the path as the model wrote it.
        """
        shown = shown if shown is not None else str(path)
        try:
            current = self._stamp(path)
        except FileNotFoundError:
            return  # a new file needs no read
        except OSError:
            return  # the tool itself will report the real problem
        seen = self._stamps.get(self._key(path))
        if seen is None:
            raise ToolError(
                f"you must read '{shown}' before {action} it; use the read tool first "
                "to see its current contents"
            )
        if seen != current:
            raise ToolError(
                f"'{shown}' was modified on disk since you last read it; read it again "
                f"before {action} it"
            )

    def __contains__(self, path: object) -> bool:
        return isinstance(path, Path | str) and self._key(Path(path)) in self._stamps
