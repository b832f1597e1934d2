"""The terminal chat (pexpect) against fake local servers on 127.0.0.1: what it says when the
server reports no usage, and how it recovers when the conversation outgrows the context."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from clawnb.types import TokenUsage
from clawnb.usage import CostTracker
from tests.fake_servers import FakeServer, Reply

pexpect = pytest.importorskip("pexpect")

ROOT = Path(__file__).resolve().parents[2]


def _chat(tmp_path: Path, url: str, *args: str):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    child = pexpect.spawn(
        sys.executable,
        [
            "-m",
            "clawnb",
            "chat",
            "--workspace",
            str(ws),
            "--no-color",
            "--no-save",
            "--model",
            "local-model",
            "--base-url",
            url,
            *args,
        ],  # fmt: skip
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path / "home"),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "PYTHONPATH": str(ROOT),
            "TERM": "dumb",
        },
        encoding="utf-8",
        timeout=20,
        dimensions=(40, 200),
    )
    child.expect("you> ")
    return child


def _bye(child) -> None:
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_cost_says_not_reported_when_the_server_sends_no_usage(tmp_path):
    with FakeServer("llama.cpp", [Reply("hi there", usage=None)]) as server:
        child = _chat(tmp_path, server.url)
        child.sendline("hello")
        child.expect("hi there")
        child.expect("you> ")
        child.sendline("/cost")
        child.expect("you> ")
        cost = child.before
        _bye(child)
    assert "tokens: not reported" in cost and "0 in + 0 out" not in cost


def test_cost_tracker_counts_unreported_turns_apart():
    tracker = CostTracker(1.0, 2.0, model="m")
    tracker.record(None)
    assert tracker.summary() == "tokens: not reported | cost: unknown (no usage reported)"
    tracker.record(TokenUsage(1000, 500))
    assert tracker.summary() == "tokens: 1000 in + 500 out (+ 1 turn not reported) | cost: $0.0020"
    tracker.reset()
    tracker.record(TokenUsage(0, 0))  # the book: a reported zero is a zero
    assert tracker.summary() == "tokens: 0 in + 0 out | cost: $0.0000"
