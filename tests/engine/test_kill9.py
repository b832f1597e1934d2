"""kill -9 of the chat (and of a kernel running %%claw) while it streams, while a tool runs
and while it waits for approval:
resume loses nothing that was shown, every call has a result, no process is left behind.
The same runs as ``benchmarks/kill9_loop.py`` (which does ≥ 20 of them for the figure in
docs/sessions.md); here a fast handful."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

pytest.importorskip("pexpect")

_SPEC = importlib.util.spec_from_file_location(
    "kill9_loop", Path(__file__).resolve().parents[2] / "benchmarks" / "kill9_loop.py"
)
assert _SPEC is not None and _SPEC.loader is not None
kill9 = importlib.util.module_from_spec(_SPEC)
sys.modules["kill9_loop"] = kill9  # its dataclass looks its module up while being defined
_SPEC.loader.exec_module(kill9)


@pytest.fixture(scope="module")
def model_url():
    server, url = kill9.start_server()
    yield url
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    ("phase", "seed"), [("stream", 1), ("stream", 2), ("tool", 3), ("approval", 4)]
)
def test_kill_9_then_resume_loses_nothing_shown_and_leaves_no_orphan(
    phase, seed, model_url, tmp_path
):
    outcome = kill9.one_run(phase, random.Random(seed), model_url, tmp_path)
    assert (outcome.lost, outcome.unanswered, outcome.orphans) == (0, 0, 0), outcome.line()
    if phase == "stream":
        assert outcome.shown_words >= 3  # the kill really came mid-stream
    # the banner said once how bash runs
    assert "(bash: " in outcome.screen


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("phase", "seed"), [("stream", 5), ("approval", 6)])
def test_kill_9_of_a_kernel_then_resume_loses_nothing_shown(phase, seed, model_url, tmp_path):
    pytest.importorskip("jupyter_client")
    outcome = kill9.one_kernel_run(phase, random.Random(seed), model_url, tmp_path)
    assert (outcome.lost, outcome.unanswered, outcome.orphans) == (0, 0, 0), outcome.line()
    if phase == "stream":
        assert outcome.shown_words >= 3
