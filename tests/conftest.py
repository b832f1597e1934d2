"""Helpers every test directory shares: scripted models, and waiting on processes and other
conditions instead of sleeping.

Import them as ``from tests.conftest import …`` (the repository root is on ``pythonpath``).
Benchmarks that watch processes import them too (after putting the root on ``sys.path``), so
this module imports nothing beyond the standard library (and pytest, when it is there) at its
top.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

try:  # the benchmarks import these helpers where pytest may be missing
    import pytest
except ImportError:  # pragma: no cover
    pytest = None  # type: ignore[assignment]

if pytest is not None:

    @pytest.fixture(autouse=True)
    def _private_data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Every test's own ``XDG_DATA_HOME`` (where clawnb keeps sessions and their undo
        checkpoints), never the machine's. It is ``tmp_path/home/.local/share``: what the
        default would be for the ``HOME`` the subprocess helpers below give a chat, so a
        test and the chat it starts agree on where sessions are."""
        monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home" / ".local" / "share"))


def session_files(workspace: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """The session files clawnb saved for ``workspace``, oldest name first: its store in the
    data directory that ``env`` (default: this process's environment) names
    (:func:`clawnb.session.log.sessions_root`)."""
    from clawnb.session.log import sessions_root

    return sorted(sessions_root(workspace, env=env).glob("*.jsonl"))


def write_script(path: Path, turns: list[dict[str, Any]]) -> Path:
    """Write a scripted model: one assistant turn per JSON line (``ScriptedProvider``)."""
    path.write_text("".join(json.dumps(turn) + "\n" for turn in turns), encoding="utf-8")
    return path


def scripted_model(path: Path, turns: list[dict[str, Any]]) -> str:
    """:func:`write_script`, returned as the model name that selects it (``scripted:PATH``)."""
    return f"scripted:{write_script(path, turns)}"


def call_turn(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    """A scripted assistant turn that makes one tool call."""
    return {"tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}


def write_reading_script(path: Path, turns: int, detail_words: int) -> Path:
    """A scripted model for long sessions: every user turn is answered by a turn that reads
    ``notes.txt`` and then by ``Part I says: detail detail …`` (``detail_words`` words)."""
    answers: list[dict[str, Any]] = []
    for i in range(turns):
        answers.append(
            {"text": f"Reading part {i}.", **call_turn(f"r{i}", "read", path="notes.txt")}
        )
        answers.append({"text": f"Part {i} says: " + "detail " * detail_words})
    return write_script(path, answers)


def pids_with(marker: str) -> list[int]:
    """Host pids of live processes whose command line contains ``marker``. Zombies do not
    count (an unreaped corpse runs nothing); neither does a pid printed inside the bash
    sandbox, which is a PID-namespace number, meaningless out here."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and running(int(entry)):
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return found


def running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    try:
        return stat.rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except IndexError:
        return False


def kill_escaped(pid: int) -> None:
    """SIGKILL an escaped process with its whole group (a marked ``bash -c`` has an unmarked
    ``sleep`` child) — unless it shares our own group, then only the process."""
    group = os.getpgid(pid)
    if group != os.getpgrp():
        os.killpg(group, signal.SIGKILL)
    else:
        os.kill(pid, signal.SIGKILL)


def wait_until(predicate: Callable[[], object], timeout: float = 5.0) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` seconds pass; its last answer.

    For "this must stop happening" assertions: ``assert wait_until(lambda: not pids_with(m))``
    passes as soon as the condition holds and fails only after the deadline — no fixed sleep
    that is too short on a loaded machine and wasted time on an idle one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return bool(predicate())


async def async_wait_until(predicate: Callable[[], object], timeout: float = 5.0) -> bool:
    """:func:`wait_until` for coroutines: the event loop keeps running while it waits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return bool(predicate())


ROOT = Path(__file__).resolve().parent.parent


def spawn_chat(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 15
) -> Any:
    """``python -m clawnb chat ARGS`` in a pseudo-terminal (pexpect, 40×200), as a person
    would run it: a clean environment (no keys), ``HOME``, ``XDG_CONFIG_HOME`` and
    ``XDG_DATA_HOME`` under ``tmp_path``, this checkout on ``PYTHONPATH``, ``TERM=dumb``;
    ``env`` adds or overrides."""
    import sys

    import pexpect

    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "XDG_DATA_HOME": str(tmp_path / "home" / ".local" / "share"),
        "PYTHONPATH": str(ROOT),
        "TERM": "dumb",
        **(env or {}),
    }
    return pexpect.spawn(
        sys.executable,
        ["-m", "clawnb", "chat", *args],
        env=environment,
        encoding="utf-8",
        timeout=timeout,
        dimensions=(40, 200),
    )


def chat_with_server(tmp_path: Path, url: str, *args: str) -> Any:
    """:func:`spawn_chat` on ``local-model`` at ``url`` (a fake server on 127.0.0.1), in a
    fresh workspace ``tmp_path/ws``, no colours, nothing saved; ``args`` add flags. Returns
    once the first prompt shows (``child.before`` holds the banner)."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    child = spawn_chat(
        tmp_path,
        "--workspace",
        str(ws),
        "--no-color",
        "--no-save",
        "--model",
        "local-model",
        "--base-url",
        url,
        *args,
        timeout=20,
    )
    child.expect("you> ")
    return child


def end_chat(child: Any) -> None:
    """Ctrl-D at the prompt: the chat must end, with status 0."""
    import pexpect

    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
