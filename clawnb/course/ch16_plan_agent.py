"""Book chapter 16: plan mode — ``plan_agent.rs``, 18 tests (over MockStreamProvider)."""

from __future__ import annotations

from ..events import AgentEvent
from ..types import Message
from ._helpers import (
    Recorder,
    bash_call,
    file_with,
    raises,
    read_call,
    text_turn,
    tool_turn,
    write_call,
)
from ._suite import Suite

suite = Suite("plan_agent", "PlanAgent", chapters=["ch16"])


def _results(messages):
    return [m for m in messages if isinstance(m, Message.ToolResult)]


def _systems(messages):
    return [m for m in messages if isinstance(m, Message.System)]


def _planner(impl, *responses):
    """A plan agent with the read tool whose model streams ``responses``."""
    return impl.PlanAgent(impl.MockStreamProvider(list(responses))).tool(impl.ReadTool())


def _read_write_planner(impl, *responses):
    """``_planner`` with the write tool too: one that planning must refuse, execution may use."""
    return _planner(impl, *responses).tool(impl.WriteTool())


def _exit_plan(id):
    """The call that ends planning and submits the plan (its text) for review."""
    return (id, "exit_plan", {})


async def _system_prompt_of_a_plan(agent, task):
    """Plan ``task``; the text of the first message, which must be the system prompt."""
    messages = [Message.User(task)]
    await agent.plan(messages)
    assert isinstance(messages[0], Message.System)
    return messages[0].content


async def _approve(agent, messages, approval):
    """The user approves the plan in ``messages``; the agent executes it."""
    messages.append(Message.User(approval))
    return await agent.execute(messages)


@suite.test
async def test_plan_agent_plan_text_response(impl, tmp):
    agent = _read_write_planner(impl, text_turn("Here is my plan."))
    messages = [Message.User("Plan something")]
    assert await agent.plan(messages) == "Here is my plan."
    assert len(messages) == 3  # the injected System, the User, the Assistant
    assert isinstance(messages[0], Message.System)


@suite.test
async def test_plan_agent_plan_with_read_tool(impl, tmp):
    path = file_with(tmp / "info.txt", "important data")
    agent = _read_write_planner(
        impl, tool_turn(read_call("c1", path)), text_turn("File contains: important data")
    )
    result = await agent.plan([Message.User("Read the file")])
    assert result == "File contains: important data"


@suite.test
async def test_plan_agent_plan_blocks_write_tool(impl, tmp):
    path = tmp / "blocked.txt"
    agent = _read_write_planner(
        impl, tool_turn(write_call("c1", path, "hacked")), text_turn("Cannot write in plan mode.")
    )
    messages = [Message.User("Write a file")]
    assert await agent.plan(messages) == "Cannot write in plan mode."
    assert not path.exists()
    results = _results(messages)
    assert results
    assert "not available in planning mode" in results[0].content


@suite.test
async def test_plan_agent_plan_blocks_edit_tool(impl, tmp):
    path = file_with(tmp / "target.txt", "original")
    provider = impl.MockStreamProvider(
        [
            tool_turn(("c1", "edit", {"path": str(path), "old": "original", "new": "modified"})),
            text_turn("Edit blocked."),
        ]
    )
    agent = impl.PlanAgent(provider).tool(impl.ReadTool()).tool(impl.EditTool())
    assert await agent.plan([Message.User("Edit the file")]) == "Edit blocked."
    assert path.read_text() == "original"


@suite.test
async def test_plan_agent_execute_allows_write_tool(impl, tmp):
    path = tmp / "output.txt"
    agent = _read_write_planner(
        impl, tool_turn(write_call("c1", path, "written!")), text_turn("File written.")
    )
    assert await agent.execute([Message.User("Approved. Execute.")]) == "File written."
    assert path.read_text() == "written!"


@suite.test
async def test_plan_agent_full_plan_then_execute(impl, tmp):
    read_path = file_with(tmp / "source.txt", "source data")
    write_path = tmp / "dest.txt"
    agent = _read_write_planner(
        impl,
        tool_turn(read_call("c1", read_path)),
        text_turn("Plan: copy source data to dest.txt"),
        tool_turn(write_call("c2", write_path, "source data")),
        text_turn("Done. Copied to dest.txt"),
    )
    messages = [Message.User("Copy source.txt to dest.txt")]
    assert await agent.plan(messages) == "Plan: copy source data to dest.txt"
    assert not write_path.exists()  # nothing is written before the approval
    assert await _approve(agent, messages, "Approved. Execute.") == "Done. Copied to dest.txt"
    assert write_path.read_text() == "source data"


@suite.test
async def test_plan_agent_message_continuity(impl, tmp):
    agent = _planner(impl, text_turn("My plan"), text_turn("Executed"))
    messages = [Message.User("Task")]
    await agent.plan(messages)
    assert len(messages) == 3  # System, User, Assistant
    messages.append(Message.User("Approved"))
    assert len(messages) == 4
    await agent.execute(messages)
    assert len(messages) == 5  # System, User, Assistant, User, Assistant


@suite.test
async def test_plan_agent_read_only_override(impl, tmp):
    agent = _planner(impl, tool_turn(bash_call("c1", "rm -rf /")), text_turn("Bash blocked."))
    agent = agent.tool(impl.BashTool()).read_only(["read"])
    messages = [Message.User("Plan")]
    assert await agent.plan(messages) == "Bash blocked."
    results = _results(messages)
    assert results
    assert "not available in planning mode" in results[0].content


@suite.test
async def test_plan_agent_streaming_events_during_plan(impl, tmp):
    agent = _planner(impl, text_turn("Plan text"))
    events = []
    await agent.plan([Message.User("Plan")], events.append)
    assert any(isinstance(e, AgentEvent.TextDelta) for e in events)
    assert any(isinstance(e, AgentEvent.Done) for e in events)


@suite.test
async def test_plan_agent_plan_provider_error(impl, tmp):
    agent = _planner(impl)
    assert await raises(agent.plan([Message.User("Plan")]))


@suite.test
def test_plan_agent_builder_pattern(impl, tmp):
    agent = (
        impl.PlanAgent(impl.MockStreamProvider([]))
        .tool(impl.ReadTool())
        .tool(impl.WriteTool())
        .tool(impl.EditTool())
        .tool(impl.BashTool())
        .read_only(["read", "bash"])
        .plan_prompt("Custom planning instructions.")
    )
    assert agent is not None


@suite.test
async def test_plan_agent_system_prompt_injected(impl, tmp):
    agent = _planner(impl, text_turn("ok"))
    assert "PLANNING MODE" in await _system_prompt_of_a_plan(agent, "Task")


@suite.test
async def test_plan_agent_system_prompt_not_duplicated(impl, tmp):
    agent = _planner(impl, text_turn("Plan A"), text_turn("Plan B"))
    messages = [Message.User("Task")]
    await agent.plan(messages)
    messages.append(Message.User("Try again"))
    await agent.plan(messages)
    assert len(_systems(messages)) == 1


@suite.test
async def test_plan_agent_caller_system_prompt_respected(impl, tmp):
    agent = _planner(impl, text_turn("ok"))
    messages = [Message.System("You are a helpful assistant."), Message.User("Task")]
    await agent.plan(messages)
    assert isinstance(messages[0], Message.System)
    assert "helpful assistant" in messages[0].content
    assert len(_systems(messages)) == 1


@suite.test
async def test_plan_agent_exit_plan_tool(impl, tmp):
    path = file_with(tmp / "code.rs", "fn main() {}")
    plan = "Plan: add error handling to main"
    agent = _planner(impl, tool_turn(read_call("c1", path)), tool_turn(_exit_plan("c2"), text=plan))
    messages = [Message.User("Refactor this")]
    assert await agent.plan(messages) == plan
    assert any("submitted for review" in r.content for r in _results(messages))


@suite.test
async def test_plan_agent_exit_plan_not_in_execute(impl, tmp):
    agent = _planner(impl, tool_turn(_exit_plan("c1")), text_turn("ok"))
    messages = [Message.User("Execute")]
    assert await agent.execute(messages) == "ok"
    assert any("unknown tool" in r.content for r in _results(messages))


@suite.test
async def test_plan_agent_custom_plan_prompt(impl, tmp):
    auditor = "You are a security auditor. Read code and report vulnerabilities."
    agent = _planner(impl, text_turn("ok")).plan_prompt(auditor)
    assert "security auditor" in await _system_prompt_of_a_plan(agent, "Audit")


@suite.test
async def test_plan_agent_full_flow_with_exit_plan(impl, tmp):
    read_path = file_with(tmp / "src.txt", "hello world")
    write_path = tmp / "out.txt"
    plan = "Plan: uppercase the content and write to out.txt"
    agent = _read_write_planner(
        impl,
        tool_turn(read_call("c1", read_path)),
        tool_turn(_exit_plan("c2"), text=plan),  # the plan comes with the exit_plan call
        tool_turn(write_call("c3", write_path, "HELLO WORLD")),
        text_turn("Done."),
    )
    messages = [Message.User("Uppercase src.txt into out.txt")]
    assert await agent.plan(messages) == plan
    assert not write_path.exists()
    assert await _approve(agent, messages, "Approved.") == "Done."
    assert write_path.read_text() == "HELLO WORLD"


@suite.test
async def test_plan_agent_plan_tool_definitions_filtered(impl, tmp):
    # Not in the book: planning offers only the read-only tools (and exit_plan) to the model.
    provider = Recorder([text_turn("plan"), text_turn("done")])
    agent = impl.PlanAgent(provider).tool(impl.ReadTool()).tool(impl.WriteTool())
    messages = [Message.User("Plan")]
    await agent.plan(messages)
    assert sorted(provider.offered[0]) == ["exit_plan", "read"]
    await _approve(agent, messages, "Go")
    assert sorted(provider.offered[1]) == ["read", "write"]
