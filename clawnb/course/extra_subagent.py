"""Book extra: SubagentTool — ``subagent.rs``, 12 tests (``#[ignore]``-d in the starter as a
bonus; here they run). Starter-era semantics: running out of turns *returns*
``error: max turns exceeded``; a failing child provider raises."""

from __future__ import annotations

from ..types import AssistantTurn, Message, StopReason, ToolCall, ToolSet
from ._suite import Suite

suite = Suite("subagent", "SubagentTool", chapters=["extras"])


def _text(text: str) -> AssistantTurn:
    return AssistantTurn(text=text, tool_calls=[], stop_reason=StopReason.STOP)


def _call(call_id: str, name: str, args: dict) -> AssistantTurn:
    return AssistantTurn(
        text=None, tool_calls=[ToolCall(call_id, name, args)], stop_reason=StopReason.TOOL_USE
    )


async def _raises(coro) -> BaseException | None:
    try:
        await coro
    except Exception as exc:
        return exc
    return None


@suite.test
async def test_subagent_subagent_text_response(impl, tmp):
    provider = impl.MockProvider([_text("Child result")])
    tool = impl.SubagentTool(provider, lambda: ToolSet())
    assert await tool.call({"task": "Do something"}) == "Child result"


@suite.test
async def test_subagent_subagent_with_tool(impl, tmp):
    path = tmp / "data.txt"
    path.write_text("secret data")
    provider = impl.MockProvider(
        [_call("c1", "read", {"path": str(path)}), _text("The file says: secret data")]
    )
    tool = impl.SubagentTool(provider, lambda: ToolSet([impl.ReadTool()]))
    assert await tool.call({"task": "Read the file"}) == "The file says: secret data"


@suite.test
async def test_subagent_subagent_multi_step(impl, tmp):
    (tmp / "a.txt").write_text("alpha")
    (tmp / "b.txt").write_text("beta")
    provider = impl.MockProvider(
        [
            _call("c1", "read", {"path": str(tmp / "a.txt")}),
            _call("c2", "read", {"path": str(tmp / "b.txt")}),
            _text("alpha and beta"),
        ]
    )
    tool = impl.SubagentTool(provider, lambda: ToolSet([impl.ReadTool()]))
    assert await tool.call({"task": "Read both files"}) == "alpha and beta"


@suite.test
async def test_subagent_max_turns_exceeded(impl, tmp):
    provider = impl.MockProvider([_call(f"c{i}", "read", {"path": "/dev/null"}) for i in (1, 2, 3)])
    tool = impl.SubagentTool(provider, lambda: ToolSet([impl.ReadTool()])).max_turns(2)
    assert await tool.call({"task": "Loop forever"}) == "error: max turns exceeded"


@suite.test
async def test_subagent_subagent_missing_task(impl, tmp):
    tool = impl.SubagentTool(impl.MockProvider([]), lambda: ToolSet())
    error = await _raises(tool.call({}))
    assert error is not None
    assert "missing required parameter: task" in str(error)


@suite.test
async def test_subagent_subagent_child_provider_error(impl, tmp):
    tool = impl.SubagentTool(impl.MockProvider([]), lambda: ToolSet())
    assert await _raises(tool.call({"task": "Do something"})) is not None


@suite.test
async def test_subagent_subagent_unknown_tool_in_child(impl, tmp):
    provider = impl.MockProvider(
        [_call("c1", "nonexistent", {}), _text("Tool not found, but I can still answer.")]
    )
    tool = impl.SubagentTool(provider, lambda: ToolSet())
    assert await tool.call({"task": "Try unknown"}) == "Tool not found, but I can still answer."


@suite.test
def test_subagent_builder_pattern(impl, tmp):
    tool = (
        impl.SubagentTool(impl.MockProvider([]), lambda: ToolSet([impl.ReadTool()]))
        .system_prompt("You are a helper.")
        .max_turns(5)
    )
    assert tool is not None


@suite.test
async def test_subagent_system_prompt_in_child(impl, tmp):
    provider = impl.MockProvider([_text("Audited.")])
    tool = impl.SubagentTool(provider, lambda: ToolSet()).system_prompt(
        "You are a security auditor."
    )
    assert await tool.call({"task": "Audit this code"}) == "Audited."


@suite.test
async def test_subagent_subagent_with_write_tool(impl, tmp):
    path = tmp / "output.txt"
    provider = impl.MockProvider(
        [
            _call("p1", "subagent", {"task": "Write hello to the file"}),
            _call("c1", "write", {"path": str(path), "content": "hello"}),
            _text("File written."),
            _text("Subagent completed the write."),
        ]
    )
    from ..tools.write import WriteTool  # a helper here, not the component under test

    agent = impl.SimpleAgent(provider).tool(
        impl.SubagentTool(provider, lambda: ToolSet([WriteTool()]))
    )
    assert await agent.run("Write a file via subagent") == "Subagent completed the write."
    assert path.read_text() == "hello"


@suite.test
async def test_subagent_parent_continues_after_subagent(impl, tmp):
    path = tmp / "info.txt"
    path.write_text("important")
    provider = impl.MockProvider(
        [
            _call("p1", "subagent", {"task": "Summarize the file"}),
            _call("c1", "read", {"path": str(path)}),
            _text("File contains: important"),
            _call("p2", "read", {"path": str(path)}),
            _text("Confirmed: important"),
        ]
    )
    agent = (
        impl.SimpleAgent(provider)
        .tool(impl.ReadTool())
        .tool(impl.SubagentTool(provider, lambda: ToolSet([impl.ReadTool()])))
    )
    assert await agent.run("Verify file contents") == "Confirmed: important"


@suite.test
async def test_subagent_isolated_message_history(impl, tmp):
    provider = impl.MockProvider(
        [
            _call("p1", "subagent", {"task": "Do child work"}),
            _call("c1", "read", {"path": "/dev/null"}),
            _text("Child done"),
            _text("All done"),
        ]
    )
    agent = impl.SimpleAgent(provider).tool(
        impl.SubagentTool(provider, lambda: ToolSet([impl.ReadTool()]))
    )
    messages = [Message.User("Test isolation")]
    assert await agent.chat(messages) == "All done"
    assert len(messages) == 4
    assert messages[0] == Message.User("Test isolation")
    assert isinstance(messages[1], Message.Assistant)
    assert isinstance(messages[2], Message.ToolResult) and messages[2].content == "Child done"
    assert isinstance(messages[3], Message.Assistant)
