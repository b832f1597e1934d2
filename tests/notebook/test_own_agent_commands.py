"""A session of the person's own (``--agent``, the course's capstone) offers only the Session
protocol; the front ends' commands that need nothing more work with it — ``/plan``, ``/mode``,
``/model``, ``/history``, ``/cost`` (its own ``TurnEnd`` events) — in the chat and in
``%claw``, and a mode the agent does not take (``--mode plan`` with an agent that cannot plan)
is refused in one line instead of being accepted and ignored. Judged by what the person sees
and by the agent's history."""

from __future__ import annotations

from pathlib import Path

import pexpect

from tests.conftest import ROOT, spawn_chat, write_script

AGENTS = '''
import contextlib

from clawnb.events import AgentEvent, emit
from clawnb.types import AssistantTurn, Message, TokenUsage

SESSIONS = []


class Planner:
    """Answers "[MODE] PROMPT" and says so in one TurnEnd of 120 + 7 tokens."""

    mode = "default"

    def __init__(self, provider, workspace, history):
        self.history = history
        self.model = "scripted"
        SESSIONS.append(self)

    async def send(self, prompt, on_event=None, *, review=None):
        self.history.append(Message.User(prompt))
        answer = f"[{self.mode}] {prompt}"
        turn = AssistantTurn(text=answer, usage=TokenUsage(120, 7))
        self.history.append(Message.Assistant(turn))
        await emit(on_event, AgentEvent.TextDelta(answer))
        await emit(on_event, AgentEvent.TurnEnd(turn))
        return answer

    def handlers(self, *, approve=None, ask=None):
        return contextlib.nullcontext()

    def configure(self, *, mode=None, max_turns=None, model=None):
        if mode is not None:
            self.mode = mode
        if model is not None:
            self.model = model


class CannotPlan(Planner):
    """Its configure takes no mode: it always works as in default mode."""

    def configure(self, *, mode=None, max_turns=None, model=None):
        pass


def make_session(provider, workspace, history):
    return Planner(provider, workspace, history)


def make_rigid(provider, workspace, history):
    return CannotPlan(provider, workspace, history)
'''


def _workspace(tmp_path: Path) -> Path:
    (tmp_path / "own_agents.py").write_text(AGENTS)
    write_script(tmp_path / "s.jsonl", [{"text": "unused"}])
    return tmp_path


def _sessions(shell):
    import sys

    return sys.modules["own_agents"].SESSIONS


# -- the notebook ------------------------------------------------------------------------------


def test_claw_mode_plan_with_an_agent_that_cannot_plan_is_refused_and_nothing_is_sent(
    shell, tmp_path, monkeypatch
) -> None:
    monkeypatch.syspath_prepend(str(_workspace(tmp_path)))
    cell = "%%claw --agent own_agents:make_rigid --mode plan --model scripted:s.jsonl\ntidy up"
    result = shell.run_cell(cell)
    assert not result.success
    said = str(result.error_in_exec)
    assert "--agent own_agents:make_rigid cannot work in plan mode" in said
    assert "its mode stayed 'default'" in said
    assert _sessions(shell)[-1].history == [], "the prompt must not run in a mode it ignores"


def test_claw_plan_cost_mode_and_history_work_with_a_learners_agent(
    shell, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.syspath_prepend(str(_workspace(tmp_path)))
    first = shell.run_cell("%%claw --agent own_agents --model scripted:s.jsonl\nhello")
    assert first.success, first.error_in_exec
    agent = _sessions(shell)[-1]
    capsys.readouterr()

    shell.run_line_magic("claw", "plan tidy up")
    assert agent.history[-1].turn.text == "[plan] tidy up", "the turn ran in plan mode"
    assert agent.mode == "default", "and the mode it had came back afterwards"

    shell.run_line_magic("claw", "cost")
    out = capsys.readouterr().out
    assert "tokens: 240 in + 14 out | cost: not priced" in out, out
    assert "2 replies" in out

    shell.run_line_magic("claw", "mode accept_edits")
    assert "mode: accept_edits" in capsys.readouterr().out
    assert agent.mode == "accept_edits"

    shell.run_line_magic("claw", "history")
    out = capsys.readouterr().out
    assert "hello" in out and "tidy up" in out

    undo = shell.run_cell("%claw undo")
    assert "%claw undo needs clawnb's own agent" in str(undo.error_in_exec)


def test_claw_mode_plan_command_with_an_agent_that_cannot_plan_is_one_line(
    shell, tmp_path, monkeypatch
) -> None:
    monkeypatch.syspath_prepend(str(_workspace(tmp_path)))
    cell = "%%claw --agent own_agents:make_rigid --model scripted:s.jsonl\nhello"
    assert shell.run_cell(cell).success
    result = shell.run_cell("%claw mode plan")
    assert "cannot work in plan mode" in str(result.error_in_exec)
    plan = shell.run_cell("%claw plan tidy up")
    assert "cannot work in plan mode" in str(plan.error_in_exec)
    texts = [m.turn.text for m in _sessions(shell)[-1].history if hasattr(m, "turn")]
    assert texts == ["[default] hello"], "the refused plan sent nothing"


def test_an_agent_that_names_its_modes_is_refused_any_other_before_configure_runs(
    tmp_path, monkeypatch
) -> None:
    import importlib

    import pytest

    from clawnb.errors import ClawError
    from clawnb.session.custom import set_mode

    monkeypatch.syspath_prepend(str(_workspace(tmp_path)))
    agent = importlib.import_module("own_agents").make_session(None, str(tmp_path), [])
    agent.modes = ("default", "accept_edits")
    with pytest.raises(
        ClawError, match=r"cannot work in plan mode \(it offers default, accept_edits\)"
    ):
        set_mode(agent, "plan")
    assert agent.mode == "default", "configure was never called with a mode it does not offer"
    set_mode(agent, "accept_edits")
    assert agent.mode == "accept_edits"


# -- the chat ----------------------------------------------------------------------------------


def _chat(tmp_path: Path, *args: str):
    ws = _workspace(tmp_path)
    return spawn_chat(
        tmp_path,
        *args,
        "--model",
        f"scripted:{ws / 's.jsonl'}",
        "--workspace",
        str(ws),
        "--no-color",
        env={"PYTHONPATH": f"{ws}:{ROOT}"},
    )


def test_chat_mode_plan_with_an_agent_that_cannot_plan_is_refused_at_start(tmp_path) -> None:
    child = _chat(tmp_path, "--agent", "own_agents:make_rigid", "--mode", "plan")
    child.expect(pexpect.EOF)
    child.close()
    said = str(child.before)
    assert "error: --agent own_agents:make_rigid cannot work in plan mode" in said
    assert child.exitstatus == 2


def test_chat_plan_and_cost_work_with_a_learners_agent(tmp_path) -> None:
    child = _chat(tmp_path, "--agent", "own_agents")
    child.expect("you> ")
    child.sendline("hello")
    child.expect(r"\[default\] hello")
    child.expect("you> ")
    child.sendline("/plan tidy up")
    child.expect(r"\[plan\] tidy up")
    child.expect("you> ")
    child.sendline("/mode")  # a wrong use is its usage line
    child.expect("usage: /mode")
    child.expect("you> ")
    child.sendline("/cost")
    child.expect(r"tokens: 240 in \+ 14 out \| cost: not priced \(your agent's TurnEnd events: 2")
    child.expect("you> ")
    child.sendline("/compact")
    child.expect("/compact needs clawnb's own agent")
    child.expect("you> ")
    child.sendline("again")
    child.expect(r"\[default\] again", timeout=10)  # plan mode ended with its turn
    child.expect("you> ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
