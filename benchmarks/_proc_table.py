"""The process table, as the kill -9 loop and the sandbox-effects benchmark read it: which
processes carry a marker, and how to end one that escaped."""

from __future__ import annotations

import os
import signal
from pathlib import Path


def kill_escaped(pid: int) -> None:
    """SIGKILL an escaped process with its whole group (a marked ``bash -c`` has an unmarked
    ``sleep`` child) — unless it shares our own group, then only the process."""
    group = os.getpgid(pid)
    if group != os.getpgrp():
        os.killpg(group, signal.SIGKILL)
    else:
        os.kill(pid, signal.SIGKILL)


def pids_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in cmdline and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found
