"""PlanAgent beyond the book's suite: what the model is shown, events, errors, invariants."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawnb.errors import ProviderError
from clawnb.events import AgentEvent
from clawnb.planning import DEFAULT_PLAN_PROMPT, PlanAgent, exit_plan_definition
from clawnb.providers.mock import MockProvider, MockStreamProvider
from clawnb.tools.bash import BashTool
from clawnb.tools.read import ReadTool
from clawnb.tools.write import WriteTool
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall


class Recording(MockStreamProvider):
    """Remembers the tool names each request showed the model."""

    def __init__(self, turns):
        super().__init__(turns)
        self.shown: list[list[str]] = []

    async def stream_chat(self, messages, tools, on_event=None):
        self.shown.append(sorted(t.name for t in tools))
        return await super().stream_chat(messages, tools, on_event)


def calls(*items: tuple[str, str, dict], text: str | None = None) -> AssistantTurn:
    return AssistantTurn(text, [ToolCall(*i) for i in items], StopReason.TOOL_USE)


def stop(text: str) -> AssistantTurn:
    return AssistantTurn(text, [], StopReason.STOP)


def test_default_prompt_is_the_books():
    assert DEFAULT_PLAN_PROMPT == (
        "You are in PLANNING MODE. Explore the codebase using the available tools and create a "
        "plan. You can read files, run shell commands, and ask the user questions \u2014 but you "
        "CANNOT write, edit, or create files.\n\nWhen your plan is ready, call the `exit_plan` "
        "tool to submit it for review."
    )
    d = exit_plan_definition()
    assert d.name == "exit_plan" and d.parameters["properties"] == {}


async def test_tools_shown_in_each_phase(tmp_path: Path):
    provider = Recording([stop("plan"), stop("done")])
    agent = PlanAgent(provider, tools=[ReadTool(), WriteTool(), BashTool()])
    messages = [Message.User("task")]
    await agent.plan(messages)
    await agent.execute(messages)
    assert provider.shown == [["bash", "exit_plan", "read"], ["bash", "read", "write"]]


async def test_read_only_override_changes_what_is_shown():
    provider = Recording([stop("plan")])
    agent = PlanAgent(provider, tools=[ReadTool(), BashTool()]).read_only(["read"])
    await agent.plan([Message.User("task")])
    assert provider.shown == [["exit_plan", "read"]]
    assert agent.read_only_tools == {"read"}
    with pytest.raises(TypeError):
        agent.read_only("read")


async def test_plan_events(tmp_path: Path):
    f = tmp_path / "a.txt"
    f.write_text("data")
    turns = [
        calls(("r", "read", {"path": str(f)}), ("w", "write", {"path": str(f), "content": "x"})),
        stop("ok"),
    ]
    events: list = []
    agent = PlanAgent(MockStreamProvider(turns), tools=[ReadTool(), WriteTool()])
    messages = [Message.User("plan")]
    await agent.plan(messages, events.append)
    # unlike the book, the refused write is reported (front ends show what was refused)
    outcomes = {e.name: e.outcome for e in events if isinstance(e, AgentEvent.ToolResult)}
    assert outcomes == {"read": "ok", "write": "blocked"}
    running = [e.name for e in events if isinstance(e, AgentEvent.ToolRunning)]
    assert running == ["read"]
    assert "".join(e.text for e in events if isinstance(e, AgentEvent.TextDelta)) == "ok"
    assert isinstance(events[-1], AgentEvent.Done) and events[-1].text == "ok"
    assert f.read_text() == "data"


async def test_provider_error_is_reported_then_raised():
    events: list = []
    agent = PlanAgent(MockStreamProvider([]))
    with pytest.raises(ProviderError, match="no more responses"):
        await agent.plan([Message.User("plan")], events.append)
    assert events == [AgentEvent.Error("MockProvider: no more responses")]
    with pytest.raises(ProviderError):
        await agent.execute([Message.User("go")], events.append)


async def test_exit_plan_with_other_calls_keeps_the_history_valid(tmp_path: Path):
    f = tmp_path / "a.txt"
    f.write_text("data")
    turns = [
        calls(
            ("r", "read", {"path": str(f)}),
            ("x", "exit_plan", {}),
            ("w", "write", {"path": str(tmp_path / "b.txt"), "content": "x"}),
            text="Plan: B",
        ),
    ]
    agent = PlanAgent(MockStreamProvider(turns), tools=[ReadTool(), WriteTool()])
    messages = [Message.User("plan")]
    assert await agent.plan(messages) == "Plan: B"
    assert [type(m).__name__ for m in messages] == [
        "System",
        "User",
        "Assistant",
        "ToolResult",
        "ToolResult",
        "ToolResult",
    ]
    assert [m.id for m in messages[3:]] == ["r", "x", "w"]
    assert [m.content for m in messages[3:]] == [
        "data",
        "Plan submitted for review.",
        "error: tool 'write' is not available in planning mode",
    ]
    assert not (tmp_path / "b.txt").exists()


async def test_a_plain_provider_works_too():
    agent = PlanAgent(MockProvider([stop("plan")]))
    assert await agent.plan([Message.User("task")]) == "plan"


async def test_a_new_plan_after_exit_plan_starts_fresh():
    turns = [
        calls(("x", "exit_plan", {}), text="A"),
        calls(("r", "read", {"path": "/nope"})),
        stop("B"),
    ]
    agent = PlanAgent(MockStreamProvider(turns), tools=[ReadTool()])
    messages = [Message.User("plan")]
    assert await agent.plan(messages) == "A"
    messages.append(Message.User("again"))
    assert await agent.plan(messages) == "B"  # the earlier exit_plan does not end this one
