"""Per-turn checkpoints of the files the agent writes, so ``%claw undo`` can put them back.

The session's gate calls :meth:`Checkpoints.before_tool` once a file-changing call is
allowed, for the agent's own calls and its subagents' alike: it snapshots the file about to be
touched (its bytes, or the fact that it did not exist) into the current turn's checkpoint
(a ``%%claw`` cell, a chat message) — only the first snapshot per path per turn counts, so undo
returns to the state before the turn. ``undo()`` restores the most recent turn's files and
drops that checkpoint.

**Undo is a write like any other**, and what it writes was decided long before the person
types ``undo`` — the agent may have moved things around since. So :meth:`Checkpoint.restore`:

* stays inside the workspace: a path outside it is refused (a checkpoint names absolute
  paths, and one the person did not make could name any);
* never follows a link: every folder from the workspace down is opened with ``O_NOFOLLOW``
  (a folder swapped for a link — ``notes -> ~/.config/clawnb`` — is refused, not written
  through), a file is written as a new file beside it and renamed into place (which replaces a
  link there instead of writing where it points), and a removal unlinks the entry itself;
* obeys the control-file rule: a control file (:func:`clawnb.control.trust.is_control_file`)
  is put back only when the call that changed it in that turn was approved by a person as a
  change to a control file (the gate's "asked every time" question, recorded with the
  snapshot). Such a restore only returns the file to what it was before that approved call;
  any other write, removal or creation of a control file by undo — a file that has become a
  control file since, a checkpoint naming ``.claw/config.toml`` that no approved call wrote —
  is refused, so undo cannot plant one;
* says, one line per file, what it put back, what it removed, and what it refused and why.

With a ``directory`` (a notebook session's ``<session>.checkpoints`` folder in the session
store, :func:`clawnb.session.log.sessions_root`) every snapshot is also written to disk —
fsync-ed before the tool changes the file — and :meth:`Checkpoints.open` reads the stack back,
so ``%claw undo`` still works after a kernel restart or crash. Layout: one folder per
checkpoint (``0001``, ``0002`` …) holding ``label``, one ``N.bin`` per saved file and
``files.jsonl`` (``{"path", "blob", "approved"}``; ``blob`` ``null`` when the file did not
exist; ``{"path", "approved": true}`` alone when a later approved call wrote a file already
saved). The store lives in the user's data directory, never in the workspace, so a repository
cannot ship checkpoints for undo to apply.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..instructions import DEFAULT_INSTRUCTION_FILES
from ..types import JSON
from .trust import control_change_approved, is_control_file

__all__ = ["Checkpoint", "Checkpoints", "FILE_TOOLS", "target_path"]

# tools that change a file named by their ``path`` argument
FILE_TOOLS = frozenset({"write", "edit", "multi_edit", "notebook_edit"})
_MAX_SNAPSHOT = 20 * 1024 * 1024
_BLOB_NAME = re.compile(r"[0-9]{1,9}\.bin")
_MAX_LABEL = 200

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def target_path(
    name: str, arguments: JSON, workspace: str | os.PathLike[str] | None
) -> Path | None:
    """The file a file-changing call will touch, or ``None`` for other calls."""
    if name not in FILE_TOOLS or not isinstance(arguments, dict):
        return None
    raw = arguments.get("path") or arguments.get("file_path") or arguments.get("notebook_path")
    if not isinstance(raw, str) or not raw:
        return None
    path = Path(raw).expanduser()
    if not path.is_absolute() and workspace is not None:
        path = Path(workspace) / path
    return path.absolute()


def _where_written(path: Path, workspace: Path | None) -> Path:
    """The file a write to ``path`` really changes: a link that leads to a file inside the
    workspace is followed now, at snapshot time, so undo later puts back *that* file (and
    never has to follow the link again)."""
    if workspace is None:
        return path
    try:
        real = Path(os.path.realpath(path))
        root = Path(os.path.realpath(workspace))
    except (OSError, ValueError):
        return path
    return real if real.is_relative_to(root) else path


class _Refused(Exception):
    """Undo will not touch this path; the message says why."""


class _Workspace:
    """Writes and removals confined to one folder tree, never through a link."""

    def __init__(self, workspace: str | os.PathLike[str]) -> None:
        self.lexical = Path(os.path.normpath(os.path.abspath(workspace)))
        self.real = Path(os.path.realpath(workspace))

    def parts(self, path: Path) -> tuple[str, ...]:
        """``path`` relative to the workspace, or :class:`_Refused`."""
        normal = Path(os.path.normpath(path))
        for base in (self.lexical, self.real):
            if normal != base and normal.is_relative_to(base):
                return normal.relative_to(base).parts
        raise _Refused("it is outside the workspace")

    def show(self, path: Path) -> str:
        try:
            return "/".join(self.parts(path))
        except _Refused:
            return str(path)

    def _parent(self, parts: tuple[str, ...], *, create: bool) -> int:
        """An open descriptor of the folder that holds ``parts[-1]``, reached from the
        workspace one ``O_NOFOLLOW`` step at a time (missing folders made when ``create``)."""
        fd = os.open(self.real, _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
        try:
            for depth, part in enumerate(parts[:-1]):
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(part, 0o777, dir_fd=fd)
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                        where = "/".join(parts[: depth + 1])
                        raise _Refused(
                            f"{where} is a symbolic link or not a folder now (undo never "
                            "writes through a link)"
                        ) from None
                    raise
                os.close(fd)
                fd = child
            return fd
        except BaseException:
            os.close(fd)
            raise

    def remove(self, path: Path) -> bool:
        """Unlink the file (or link) at ``path``; False when there is nothing to remove."""
        parts = self.parts(path)
        try:
            fd = self._parent(parts, create=False)
        except FileNotFoundError:
            return False
        try:
            try:
                info = os.lstat(parts[-1], dir_fd=fd)
            except FileNotFoundError:
                return False
            if stat.S_ISDIR(info.st_mode):
                raise _Refused("it is a folder now; left as it is")
            os.unlink(parts[-1], dir_fd=fd)
            return True
        finally:
            os.close(fd)

    def write(self, path: Path, data: bytes) -> None:
        """Put ``data`` at ``path``: a new file beside it, fsync-ed, renamed into place."""
        parts = self.parts(path)
        fd = self._parent(parts, create=True)
        name = parts[-1]
        tmp = f".{name}.clawnb-undo-{os.getpid()}-{os.urandom(4).hex()}"
        try:
            try:
                info: os.stat_result | None = os.lstat(name, dir_fd=fd)
            except FileNotFoundError:
                info = None
            if info is not None and stat.S_ISDIR(info.st_mode):
                raise _Refused("it is a folder now; left as it is")
            keep = info is not None and stat.S_ISREG(info.st_mode)
            mode = stat.S_IMODE(info.st_mode) if info is not None and keep else 0o644
            out = os.open(tmp, _NEW_FILE_FLAGS, 0o600, dir_fd=fd)
            try:
                with os.fdopen(out, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fchmod(fh.fileno(), mode)
                    os.fsync(fh.fileno())
                # rename replaces whatever is at `name` — a link too — and follows nothing
                os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
            except BaseException:
                try:
                    os.unlink(tmp, dir_fd=fd)
                except OSError:
                    pass
                raise
        finally:
            os.close(fd)


@dataclass
class Checkpoint:
    label: str
    # bytes: the file's content; None: it did not exist; a Path: the content saved on disk
    files: dict[Path, bytes | None | Path] = field(default_factory=dict)
    directory: Path | None = None
    # the files a call approved as a control-file change wrote (only those may be put back
    # if they are control files)
    approved: set[Path] = field(default_factory=set)
    # files too big to keep a copy of: undo says so instead of leaving them silently
    unkept: set[Path] = field(default_factory=set)
    workspace: Path | None = None

    def snapshot(self, path: Path, *, approved: bool = False) -> None:
        if path in self.files or path in self.unkept:
            if approved and path not in self.approved:
                self.approved.add(path)
                if self.directory is not None:
                    self._append({"path": str(path), "approved": True})
            return
        try:
            info = os.stat(path)
        except FileNotFoundError:
            data: bytes | None = None
        except OSError:
            return  # unreadable: nothing we could restore anyway
        else:
            if not stat.S_ISREG(info.st_mode):
                return  # a folder, FIFO or device: not a file a tool writes
            if info.st_size > _MAX_SNAPSHOT:
                self.unkept.add(path)
                if self.directory is not None:
                    self._append({"path": str(path), "blob": None, "unkept": True})
                return
            try:
                data = path.read_bytes()
            except OSError:
                return
        self.files[path] = data
        if approved:
            self.approved.add(path)
        if self.directory is not None:
            self._save(path, data, approved)

    def _save(self, path: Path, data: bytes | None, approved: bool) -> None:
        """Write one snapshot durably (before the tool that changes ``path`` runs)."""
        assert self.directory is not None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            label = self.directory / "label"
            if not label.exists():
                label.write_text(self.label, encoding="utf-8")
            blob = None
            if data is not None:
                blob = f"{len(self.files)}.bin"
                _write_durably(self.directory / blob, data)
            self._append({"path": str(path), "blob": blob, "approved": approved})
        except OSError:
            pass  # undo still works from memory in this process

    def _append(self, entry: dict[str, Any]) -> None:
        assert self.directory is not None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            line = json.dumps(entry, ensure_ascii=False) + "\n"
            with open(self.directory / "files.jsonl", "a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError:
            pass

    @classmethod
    def load(cls, directory: Path) -> Checkpoint:
        """A checkpoint saved under ``directory``. A line of another shape (a path that is
        not absolute, a blob that is not ``N.bin`` in this folder) is a
        :class:`ValueError`: nothing of such a checkpoint is applied."""
        with open(directory / "label", encoding="utf-8") as fh:
            label = fh.read(_MAX_LABEL)
        checkpoint = cls(label, {}, directory)
        with open(directory / "files.jsonl", encoding="utf-8") as fh:
            for line in fh:
                try:
                    entry = json.loads(line)
                except RecursionError:
                    raise ValueError("a line nested too deeply") from None
                except ValueError:
                    break  # a line cut off by a crash: the file it named was not touched yet
                checkpoint._load_entry(entry)
        return checkpoint

    def _load_entry(self, entry: Any) -> None:
        if not isinstance(entry, dict):
            raise ValueError("a line that is not a JSON object")
        raw, blob = entry.get("path"), entry.get("blob")
        if not isinstance(raw, str) or "\x00" in raw or not os.path.isabs(raw):
            raise ValueError(f"not an absolute path: {raw!r}")
        if blob is not None and (not isinstance(blob, str) or not _BLOB_NAME.fullmatch(blob)):
            raise ValueError(f"not a blob of this checkpoint: {blob!r}")
        path = Path(raw)
        if entry.get("approved") is True:
            self.approved.add(path)
        if entry.get("unkept") is True:
            self.unkept.add(path)
        elif "blob" in entry:
            assert self.directory is not None
            self.files.setdefault(path, self.directory / blob if blob else None)

    def restore(
        self,
        workspace: str | os.PathLike[str] | None = None,
        *,
        config_home: str | os.PathLike[str] | None = None,
        instruction_files: Iterable[str] = DEFAULT_INSTRUCTION_FILES,
    ) -> list[str]:
        """Put every file back inside ``workspace`` (default: the one recorded with the
        snapshots, else the current directory); one line per file saying what was done or
        why it was refused (see the module docstring for the rules)."""
        ws = Path(workspace or self.workspace or os.getcwd()).absolute()
        root = _Workspace(ws)
        lines = []
        for path in [*self.files, *self.unkept]:
            shown = root.show(path)
            try:
                root.parts(path)
                if path in self.unkept:
                    lines.append(f"not restored {shown}: it was over 20 MiB, no copy was kept")
                    continue
                control = is_control_file(
                    path, ws, config_home=config_home, instruction_files=instruction_files
                )
                if control and path not in self.approved:
                    raise _Refused(
                        "it is a control file (it steers the agent), and no call you approved "
                        "as a change to the agent's own configuration wrote it"
                    )
                data = self.files[path]
                if data is None:
                    if root.remove(path):
                        lines.append(f"removed {shown}")
                else:
                    content = data.read_bytes() if isinstance(data, Path) else data
                    root.write(path, content)
                    lines.append(f"restored {shown}")
            except _Refused as exc:
                lines.append(f"refused {shown}: {exc}")
            except OSError as exc:
                lines.append(f"could not restore {shown}: {exc.strerror or exc}")
        return lines

    def discard(self) -> None:
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)


def _write_durably(path: Path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


class Checkpoints:
    """A stack of per-turn checkpoints (turns that changed no file leave none)."""

    def __init__(
        self,
        limit: int = 50,
        *,
        directory: str | os.PathLike[str] | None = None,
        workspace: str | os.PathLike[str] | None = None,
    ) -> None:
        self._stack: list[Checkpoint] = []
        self._current: Checkpoint | None = None
        self.limit = limit
        self.directory = Path(directory) if directory is not None else None
        # where checkpoints read back from disk are applied (they do not record it)
        self.workspace = Path(workspace).absolute() if workspace is not None else None
        self._next = 1

    @classmethod
    def open(
        cls,
        directory: str | os.PathLike[str],
        limit: int = 50,
        *,
        workspace: str | os.PathLike[str] | None = None,
    ) -> Checkpoints:
        """The checkpoints saved under ``directory`` (none yet if it does not exist), which
        new ones are saved to as well; ``workspace`` is where undo applies them."""
        cps = cls(limit, directory=directory, workspace=workspace)
        assert cps.directory is not None
        if cps.directory.is_dir() and not cps.directory.is_symlink():
            for sub in sorted(p for p in cps.directory.iterdir() if p.name.isdigit()):
                cps._next = max(cps._next, int(sub.name) + 1)
                try:
                    checkpoint = Checkpoint.load(sub)
                except (OSError, ValueError, KeyError, TypeError):
                    continue  # cut off before its first file was saved, or not one of ours
                checkpoint.workspace = cps.workspace
                if checkpoint.files or checkpoint.unkept:
                    cps._stack.append(checkpoint)
        return cps

    def reopen(
        self,
        directory: str | os.PathLike[str] | None,
        *,
        workspace: str | os.PathLike[str] | None = None,
        keep: bool = False,
    ) -> None:
        """Make this stack the one saved under ``directory`` (none: an empty stack in memory),
        in place, so the gate that holds it sees the change: a resumed conversation's undo
        steps. ``keep``: the steps in memory stay (a conversation saved from now on) unless
        some are saved there already."""
        if directory is None:
            fresh = Checkpoints(self.limit, workspace=workspace)
        else:
            fresh = Checkpoints.open(directory, self.limit, workspace=workspace)
        if keep and self._stack and not fresh._stack:
            self.directory = fresh.directory
            return
        self._stack, self._next = fresh._stack, fresh._next
        self.directory, self.workspace = fresh.directory, fresh.workspace

    def begin(self, label: str) -> None:
        self._current = Checkpoint(label)

    def before_tool(self, name: str, arguments: JSON, workspace: Any) -> None:
        path = target_path(name, arguments, workspace)
        if path is None or self._current is None:
            return
        ws = Path(workspace).absolute() if workspace is not None else None
        if not self._current.files and not self._current.unkept:
            if self.directory is not None:
                self._current.directory = self.directory / f"{self._next:04d}"
                self._next += 1
            self._current.workspace = ws
            self._stack.append(self._current)
            for dropped in self._stack[: -self.limit]:
                dropped.discard()
            del self._stack[: -self.limit]
        # the gate has just decided: True only if a person approved this very call as a
        # change to a control file
        self._current.snapshot(_where_written(path, ws), approved=control_change_approved.get())

    def end(self) -> None:
        self._current = None

    @property
    def active(self) -> bool:
        """Whether a turn's checkpoint is open."""
        return self._current is not None

    @contextmanager
    def turn(self, label: str) -> Iterator[None]:
        """A checkpoint for one turn, unless the front end already opened one (a notebook
        cell labels it ``cell N`` and may run plan and execute inside it)."""
        if self.active:
            yield
            return
        self.begin(label)
        try:
            yield
        finally:
            self.end()

    def __len__(self) -> int:
        return len(self._stack)

    def undo(
        self,
        workspace: str | os.PathLike[str] | None = None,
        *,
        config_home: str | os.PathLike[str] | None = None,
        instruction_files: Iterable[str] = DEFAULT_INSTRUCTION_FILES,
    ) -> str:
        """Restore the last turn's files (inside ``workspace``: default the one the turn
        ran in) and drop its checkpoint; the report names every file."""
        if not self._stack:
            return "nothing to undo"
        checkpoint = self._stack.pop()
        lines = checkpoint.restore(
            workspace, config_home=config_home, instruction_files=instruction_files
        )
        checkpoint.discard()
        refused = sum(1 for line in lines if line.startswith("refused "))
        if refused:
            lines.append(f"({refused} refused: nothing was written or removed for them)")
        if not lines:
            lines = ["(the files were already as before the turn)"]
        return f"undo {checkpoint.label}:\n" + "\n".join("  " + line for line in lines)
