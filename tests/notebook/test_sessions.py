"""Notebook conversations are saved like chat sessions: they survive a kernel restart and a
``kill -9`` of the kernel (``%claw sessions``, ``%claw resume``), and so do ``%claw undo``
checkpoints. Real kernels through jupyter_client."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from clawnb.control.sandbox import bwrap_path
from clawnb.session.log import INTERRUPTED_SESSION_RESULT, SessionLog
from clawnb.types import Message
from tests.conftest import pids_with, session_files, write_script

from .kernelclient import Kernel, kernel_env

pytestmark = pytest.mark.timeout(120)


def _kernel(ws: Path) -> Kernel:
    k = Kernel(ws, kernel_env(ws))
    run = k.execute("%load_ext clawnb")
    assert run.status == "ok", run.text
    return k


def test_conversation_and_undo_survive_a_kernel_restart(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("v1\n")
    write_script(
        ws / "w.jsonl",
        [
            {
                "text": "Reading first.",
                "tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "notes.txt"}}],
            },
            {
                "text": "Updating.",
                "tool_calls": [
                    {
                        "id": "w1",
                        "name": "write",
                        "arguments": {"path": "notes.txt", "content": "v2\n"},
                    }
                ],
            },
            {"text": "Updated the notes."},
        ],
    )
    first = _kernel(ws)
    try:
        run = first.execute("%%claw --model scripted:w.jsonl --approve allow\nupdate the notes")
        assert run.status == "ok", run.text
        assert (ws / "notes.txt").read_text() == "v2\n"
        run = first.execute("%claw status")
        [saved] = session_files(ws)  # in the user's data directory, not the workspace
        assert "session: " in run.text and str(saved) in run.text, run.text
        how = "sandboxed: workspace-write, no network" if bwrap_path() else "not sandboxed"
        assert f"bash: {how}" in run.text, run.text
        run = first.execute("%claw sessions")
        assert run.status == "ok" and "update the notes" in run.text, run.text
        assert run.text.lstrip().startswith("*")  # this kernel's session is marked
    finally:
        first.close()  # a restart: nothing of the kernel's memory survives

    second = _kernel(ws)
    try:
        run = second.execute("%claw resume")
        assert run.status == "ok", run.text
        assert "resumed session" in run.text and "1 prompt" in run.text
        assert "1 undo step" in run.text, run.text
        run = second.execute("%claw history")
        assert "update the notes" in run.text and "Updated the notes." in run.text, run.text
        run = second.execute("%claw undo")
        assert run.status == "ok" and "restored" in run.text, run.text
        assert (ws / "notes.txt").read_text() == "v1\n"
        run = second.execute("%claw undo")
        assert "nothing to undo" in run.text
    finally:
        second.close()


def test_kill_9_of_the_kernel_during_a_tool_resumes_with_the_call_and_no_orphan(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    marker = f"clawnb-kernel-kill-{os.getpid()}-{time.monotonic_ns()}"
    command = f"touch ran; bash -c 'sleep 1000; : {marker}'"
    write_script(
        ws / "b.jsonl",
        [
            {
                "text": "Starting the job.",
                "tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": command}}],
            },
            {"text": "never reached"},
        ],
    )
    first = _kernel(ws)
    try:
        first.kc.execute("%%claw --model scripted:b.jsonl --approve allow\nstart the job")
        deadline = time.monotonic() + 30
        while not (ws / "ran").exists():
            assert time.monotonic() < deadline, "the bash call never started"
            time.sleep(0.05)
        os.kill(first.km.provisioner.process.pid, signal.SIGKILL)  # the kernel dies mid-tool
        deadline = time.monotonic() + 10
        while pids_with(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not pids_with(marker), "the tool's process outlived the kernel"
    finally:
        first.close()

    [saved] = session_files(ws)
    history = SessionLog.read(saved)
    assert history[-2].turn.tool_calls[0].arguments["command"] == command
    assert history[-1] == Message.ToolResult("b1", INTERRUPTED_SESSION_RESULT)

    second = _kernel(ws)
    try:
        run = second.execute("%claw resume")
        assert run.status == "ok" and "resumed session" in run.text, run.text
        run = second.execute("%claw history")
        assert "start the job" in run.text and "bash" in run.text, run.text
    finally:
        second.close()
