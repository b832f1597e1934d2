"""A session of the person's own (``%%claw --agent``) whose code blocks the kernel's event loop
(``time.sleep`` inside ``async def``) used to hold the kernel until the call ended: ipykernel's
interrupt is a callback on that very loop. Now the interrupt stops it where it blocks, says why
in one line, and the kernel is free at once; an agent that awaits is interrupted as before.
Judged in a real kernel, by the cell's outputs and the time to idle."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, write_script
from tests.notebook.kernelclient import Kernel, kernel_env

AGENTS = """
import asyncio, contextlib, time

from clawnb.types import AssistantTurn, Message


class Blocks:
    mode = "default"

    def __init__(self, provider, workspace, history):
        self.history = history

    async def send(self, prompt, on_event=None, *, review=None):
        self.history.append(Message.User(prompt))
        await self.wait(60)
        self.history.append(Message.Assistant(AssistantTurn(text="late")))
        return "late"

    async def wait(self, seconds):
        time.sleep(seconds)  # the learner's mistake: the event loop stops for a minute

    def handlers(self, *, approve=None, ask=None):
        return contextlib.nullcontext()

    def configure(self, *, mode=None, max_turns=None, model=None):
        pass


class Awaits(Blocks):
    async def wait(self, seconds):
        await asyncio.sleep(seconds)


def make_session(provider, workspace, history):
    return Blocks(provider, workspace, history)


def make_patient(provider, workspace, history):
    return Awaits(provider, workspace, history)
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory):
    ws: Path = tmp_path_factory.mktemp("blocking_ws")
    (ws / "learner_agents.py").write_text(AGENTS)
    write_script(ws / "s.jsonl", [{"text": "unused"}])
    k = Kernel(ws, kernel_env(ws, PYTHONPATH=f"{ROOT}:{ws}"))
    assert k.execute("%load_ext clawnb").status == "ok"
    yield k
    k.close()


def test_interrupting_an_agent_that_blocks_the_loop_frees_the_kernel_and_says_why(kernel) -> None:
    start = time.monotonic()
    run = kernel.execute(
        "%%claw --agent learner_agents --model scripted:s.jsonl\nhello",
        interrupt_after=2.5,
        timeout=50,
    )
    assert time.monotonic() - start < 20, "the kernel waited for the blocking call to end"
    assert run.interrupt_to_idle is not None and run.interrupt_to_idle < 5
    assert "your agent blocked the event loop for" in run.text
    assert "time.sleep, subprocess.run" in run.text
    after = kernel.execute("print('free')", timeout=10)
    assert after.text.strip() == "free"


def test_interrupting_an_agent_that_awaits_is_an_ordinary_interrupt(kernel) -> None:
    run = kernel.execute(
        "%%claw --agent learner_agents:make_patient --new --model scripted:s.jsonl\nhello",
        interrupt_after=2.5,
        timeout=30,
    )
    assert run.interrupt_to_idle is not None and run.interrupt_to_idle < 5
    assert "blocked the event loop" not in run.text
    assert "interrupted" in run.text.lower()
