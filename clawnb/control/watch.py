"""Has anything happened to these paths since I last looked? One system call for all of them.

The secrets redactor and the skills keep what they made from files (the needles from ``.env``
files, a skill's redacted body) and must see a change on the very next use. A ``stat`` per
file answers that, but each one walks the path, and right after a network round trip the first
``stat`` of a turn costs ~30 µs on a virtual machine (bench_skills.py). This module asks the
kernel instead: Linux's inotify queues an event, within the writer's own system call, for each
change to a watched inode, and a private epoll says in one call whether any event is queued
(~2 µs then: the event loop keeps that call warm). No event since a :meth:`Watch.mark` means
nothing that a ``stat`` of the path would have seen has changed.

What :meth:`Watch.mark` watches for a path: the file or folder it names now (a file's content,
attributes, deletion, a move — through any hard link; a folder's entries), and each directory
from ``/`` down to it for the one entry name on the way (created, deleted, renamed into place),
so a path that comes to name another file (an editor's save by rename, a folder swapped for
another or for a link) is seen as a ``stat`` would see it. A change of permissions on a
directory on the way counts too. A path that is itself a link gets no mark (what it leads to
can change without an event on the path).

Where it cannot promise that, :meth:`Watch.mark` returns ``None`` and the caller keeps using
``stat``: not Linux, no inotify or no watches left, a path on a filesystem that is not known to
be local (NFS, SMB, FUSE, 9p: changes made on another machine raise no event there). An event
queue that overflowed counts as every path changed. A filesystem mounted over a directory on
the way after the mark raises no event: the one change a ``stat`` sees and this does not.
"""

from __future__ import annotations

import errno
import os
import select
import stat
import struct
import sys
import threading
from typing import Any

__all__ = ["Mark", "Watch", "watch"]

# inotify(7)
_MODIFY, _ATTRIB, _CLOSE_WRITE = 0x2, 0x4, 0x8
_MOVED_FROM, _MOVED_TO, _CREATE, _DELETE = 0x40, 0x80, 0x100, 0x200
_DELETE_SELF, _MOVE_SELF = 0x400, 0x800
_UNMOUNT, _Q_OVERFLOW, _IGNORED = 0x2000, 0x4000, 0x8000
_ONLYDIR, _DONT_FOLLOW = 0x01000000, 0x02000000
_SELF = _DELETE_SELF | _MOVE_SELF | _UNMOUNT | _IGNORED
_ENTRY = _MOVED_FROM | _MOVED_TO | _CREATE | _DELETE
# a directory is watched for its entries (and its own fate); a file for its content too. One
# inode is always one kind, so its watch always has the same mask (a second add replaces it).
_DIR_MASK = _ENTRY | _ATTRIB | _DELETE_SELF | _MOVE_SELF | _ONLYDIR
_FILE_MASK = _MODIFY | _ATTRIB | _CLOSE_WRITE | _DELETE_SELF | _MOVE_SELF | _DONT_FOLLOW
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name

# filesystems where every change to an inode goes through this kernel, from statfs(2)'s f_type:
# ext2/3/4, xfs, btrfs, tmpfs, overlay, f2fs, zfs, ramfs, squashfs, bcachefs
_LOCAL_FILESYSTEMS = frozenset(
    {
        0xEF53,
        0x58465342,
        0x9123683E,
        0x01021994,
        0x794C7630,
        0xF2F52010,
        0x2FC12FC1,
        0x858458F6,
        0x73717368,
        0xCA451A4E,
    }
)


class Mark:
    """What :meth:`Watch.unchanged` compares: the path, the count of events seen for it when
    the mark was taken, and the inotify instance that counts them (a forked child's marks are
    never its parent's)."""

    __slots__ = ("key", "count", "owner")

    def __init__(self, key: str, count: int, owner: object) -> None:
        self.key, self.count, self.owner = key, count, owner


class _Watched:
    """One watch descriptor: the paths that change when its inode does (changed, moved, gone,
    re-permitted); for a directory, the paths that change with one entry of it (the next name
    on their way), and the marked directories themselves, which change with any entry."""

    __slots__ = ("whole", "names", "entries")

    def __init__(self) -> None:
        self.whole: set[str] = set()
        self.names: dict[str, set[str]] = {}
        self.entries: set[str] = set()


class Watch:
    """The process's inotify instance: :meth:`mark` a path, later :meth:`unchanged` says
    whether anything that path depends on changed since. Thread-safe; a process made by
    ``fork`` starts a watch of its own (the two would otherwise share, and split, one queue:
    the module's :data:`watch` forgets the parent's in the child)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd = -1
        self._poll: select.epoll | None = None
        self._off = sys.platform != "linux"
        self._libc: Any = None  # ctypes' libc, loaded on first use (import clawnb stays cheap)
        self._counts: dict[str, int] = {}  # events seen, by path
        self._by_wd: dict[int, _Watched] = {}

    # -- the hot path --------------------------------------------------------------------------

    def unchanged(self, mark: Mark | None) -> bool:
        """True when no event touched ``mark``'s path since it was taken (``None``: False)."""
        return mark is not None and self.unchanged_all((mark,))

    def unchanged_all(self, marks: tuple[Mark, ...] | None) -> bool:
        """:meth:`unchanged` for each of ``marks``, with one look at the queue."""
        if marks is None:
            return False
        with self._lock:
            poll = self._poll
            if poll is None:
                return False
            if poll.poll(0):
                self._drain()
            counts = self._counts
            for m in marks:
                if m.owner is not poll or counts.get(m.key, -1) != m.count:
                    return False
            return True

    # -- marks ---------------------------------------------------------------------------------

    def mark(self, path: str | os.PathLike[str]) -> Mark | None:
        """Watch ``path`` (a file or a directory; it need not exist) and the directories on
        its way; the mark to give :meth:`unchanged` later, or ``None`` where a change could go
        unseen. Take it *before* the look (``stat``, read) whose result it is to keep."""
        key = os.path.abspath(os.fspath(path))
        with self._lock:
            if not self._ready():
                return None
            self._drain()
            try:
                self._watch_path(key)
            except OSError:
                self._counts[key] = self._counts.get(key, 0) + 1  # partly watched: not kept
                return None
            return Mark(key, self._counts.setdefault(key, 0), self._poll)

    def _watch_path(self, key: str) -> None:
        parts = [p for p in key.split(os.sep) if p]
        directory = os.sep
        for name in parts:
            self._add(directory, key, name)
            directory = os.path.join(directory, name)
        try:
            st = os.stat(key, follow_symlinks=False)
        except FileNotFoundError:
            return  # not there (yet): its directory's watch sees it arrive
        if stat.S_ISDIR(st.st_mode):
            self._add(key, key, None).entries.add(key)  # a file created, deleted, renamed in it
        elif stat.S_ISREG(st.st_mode):
            self._add(key, key, None, file=True)
        else:  # a link: what it leads to may change with no event here (a FIFO, a device: no)
            raise OSError(errno.EOPNOTSUPP, "not a regular file or a folder", key)

    def _add(self, path: str, key: str, name: str | None, *, file: bool = False) -> _Watched:
        if not self._local(path):
            raise OSError(errno.EOPNOTSUPP, "not a local filesystem", path)
        import ctypes

        mask = _FILE_MASK if file else _DIR_MASK
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), mask)
        if wd < 0:
            number = ctypes.get_errno()
            raise OSError(number, os.strerror(number), path)
        watched = self._by_wd.setdefault(wd, _Watched())
        watched.whole.add(key)  # the inode itself changed, moved, went away, re-permitted
        if name is not None:  # a directory on the way: its entry ``name``
            watched.names.setdefault(name, set()).add(key)
        return watched

    def _local(self, path: str) -> bool:
        import ctypes

        buffer = ctypes.create_string_buffer(256)  # struct statfs: f_type first
        if self._libc.statfs(os.fsencode(path), buffer) != 0:
            return False
        kind = ctypes.c_long.from_buffer(buffer).value & 0xFFFFFFFF
        return kind in _LOCAL_FILESYSTEMS

    def _forked(self) -> None:
        """In a child made by ``fork``: forget the parent's instance (reading its queue would
        take the parent's events); the next :meth:`mark` starts one of the child's own."""
        self._lock = threading.Lock()  # it may have been held by another thread at the fork
        if self._poll is not None:
            self._poll.close()
            os.close(self._fd)
        self._poll, self._fd = None, -1
        self._by_wd, self._counts = {}, {}

    def _ready(self) -> bool:
        if self._off:
            return False
        if self._poll is not None:
            return True
        try:
            import ctypes

            if self._libc is None:
                self._libc = ctypes.CDLL(None, use_errno=True)  # the C library already loaded
            fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
            if fd < 0:
                raise OSError(ctypes.get_errno(), "inotify_init1")
            poll = select.epoll()
            poll.register(fd, select.EPOLLIN)
        except (OSError, AttributeError):
            self._off = True
            return False
        self._fd, self._poll = fd, poll
        return True

    def close(self) -> None:
        """Stop watching (a :class:`Watch` of its own, in a test); marks no longer stand."""
        with self._lock:
            if self._poll is not None:
                self._poll.close()
                os.close(self._fd)
            self._poll, self._fd, self._off = None, -1, True

    # -- events --------------------------------------------------------------------------------

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                self._everything_changed()
                return
            if not data:
                return
            self._apply(data)

    def _apply(self, data: bytes) -> None:
        at, size = 0, _EVENT.size
        while at + size <= len(data):
            wd, mask, _cookie, length = _EVENT.unpack_from(data, at)
            name = data[at + size : at + size + length].split(b"\0", 1)[0]
            at += size + length
            if mask & _Q_OVERFLOW:
                self._everything_changed()
                continue
            watched = self._by_wd.get(wd)
            if watched is None:
                continue
            keys: set[str] | frozenset[str]
            if name and not mask & _SELF:
                keys = watched.names.get(os.fsdecode(name), frozenset()) | watched.entries
            else:
                keys = watched.whole
            for key in keys:
                self._counts[key] = self._counts.get(key, 0) + 1
            if mask & _IGNORED:  # the inode is gone: a later mark adds a new watch
                del self._by_wd[wd]

    def _everything_changed(self) -> None:
        for key in self._counts:
            self._counts[key] += 1


watch = Watch()
"""The process's one :class:`Watch`."""

if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=watch._forked)
