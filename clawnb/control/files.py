"""Reading a file the workspace supplies, when nobody asked for it: instruction files first.

A cloned repository decides what its files *are*. ``AGENTS.md -> /proc/self/environ`` is an
instruction file that holds every key in the environment; ``CLAUDE.md -> ../../.ssh/id_rsa``
one that holds a private key; ``CLAUDE.md`` made a FIFO blocks the reader forever; a 2 GiB
``CLAUDE.md`` fills the prompt. Such files are read before the first request, with no tool call
and no question to anyone, so :func:`read_workspace_text` applies the ``read`` tool's path rule
and more, **before opening anything**:

* the file, links resolved, stays inside ``root`` (the directory it was found in): a link that
  stays inside is fine, one that leads out is refused;
* nothing under ``/proc``, ``/sys`` or ``/dev`` (files there are views of processes and
  devices, whatever ``stat`` says);
* a regular file only: directories, FIFOs, sockets and devices are refused by ``stat``, then
  opened with ``O_NOFOLLOW | O_NONBLOCK`` (a FIFO swapped in after the check cannot block the
  open) and checked again on the open descriptor (``fstat``; on Linux also the path the kernel
  opened, ``/proc/self/fd/N``), so a file swapped between the checks and the open is refused
  too;
* at most ``max_bytes`` are read, whatever the file's size claims.

A refusal raises :class:`~clawnb.errors.UnsafeFileError`, whose message says in one line why
(it names the file, never its content); a file that is simply missing raises the usual
:class:`FileNotFoundError`.

Writing has one home here too: :func:`replace_file` swaps a file's content in one step, for the
``write`` and ``edit`` tools and for putting a control file back (:mod:`clawnb.control.trust`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import uuid
from pathlib import Path

from ..errors import UnsafeFileError

__all__ = ["INSTRUCTION_MAX_BYTES", "read_workspace_bytes", "read_workspace_text", "replace_file"]

INSTRUCTION_MAX_BYTES = 256 * 1024
"""An instruction file larger than this is refused (no project needs a longer one, and a
bigger one would crowd the conversation out of the model's context)."""

# Pseudo file systems: their "regular files" are views of processes, the kernel and devices.
_PSEUDO = ("/proc", "/sys", "/dev")

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def _size(n: int) -> str:
    return f"{n // 1024} KiB" if n >= 1024 else f"{n} bytes"


def read_workspace_bytes(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str], max_bytes: int
) -> bytes:
    """The bytes of ``path`` if it is a regular file inside ``root`` of at most ``max_bytes``;
    else :class:`~clawnb.errors.UnsafeFileError` (see the module docstring)."""
    shown = os.fspath(path)
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)  # every link resolved, the last one too
    if not _inside(real, real_root):
        raise UnsafeFileError(f"{shown} is a link that leads out of {real_root}")
    if any(_inside(real, pseudo) for pseudo in _PSEUDO):
        raise UnsafeFileError(f"{shown} is a view of the system ({real}), not a file")
    before = os.stat(real)  # FileNotFoundError for a dangling link or a missing file
    if not stat.S_ISREG(before.st_mode):
        raise UnsafeFileError(f"{shown} is {_kind(before.st_mode)}, not a regular file")
    if before.st_size > max_bytes:
        raise UnsafeFileError(f"{shown} is larger than {_size(max_bytes)}")
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW: it became a link after realpath (a swap)
            raise UnsafeFileError(f"{shown} changed into a link while it was being read") from None
        raise
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode):
            raise UnsafeFileError(f"{shown} is {_kind(now.st_mode)}, not a regular file")
        if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            raise UnsafeFileError(f"{shown} was replaced while it was being read")
        opened = _opened_path(fd)
        if opened is not None and not _inside(opened, real_root):
            raise UnsafeFileError(f"{shown} is a link that leads out of {real_root}")
        # read one byte more than allowed: a file that grew since the stat is still caught
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 64 * 1024))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise UnsafeFileError(f"{shown} is larger than {_size(max_bytes)}")
    return data


def read_workspace_text(
    path: str | os.PathLike[str],
    *,
    root: str | os.PathLike[str],
    max_bytes: int = INSTRUCTION_MAX_BYTES,
) -> str:
    """:func:`read_workspace_bytes` decoded as UTF-8 (undecodable bytes replaced)."""
    return read_workspace_bytes(path, root=root, max_bytes=max_bytes).decode(
        "utf-8", errors="replace"
    )


def _opened_path(fd: int) -> str | None:
    """Where the kernel says descriptor ``fd`` points (Linux), ``None`` where it cannot say.
    The check before the open resolved the path by name; a directory swapped for a link in
    between would have sent the open elsewhere, and this is where that shows."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return os.path.realpath(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return None


def replace_file(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` all at once: a new file beside it is written and synced,
    then renamed into place. A reader sees the old file or the new one, never half of either;
    a failure leaves the old file and no temporary one; the rename replaces whatever stands at
    ``path`` (a link included) and never writes through it.

    The new file gets the permission bits ``mode``; without it, those of the file it replaces
    (``os.stat``: a link is followed), or for a new file the usual ``0o666 & ~umask``. The
    directory must exist."""
    if mode is None:
        with contextlib.suppress(FileNotFoundError):
            mode = stat.S_IMODE(os.stat(path).st_mode)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.clawnb-tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(tmp, flags, 0o600 if mode is not None else 0o666)  # os.open applies the umask
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
