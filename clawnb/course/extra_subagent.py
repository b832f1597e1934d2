"""Book extra: SubagentTool — ``subagent.rs``, 12 tests (``#[ignore]``-d in the starter as a
bonus; here they run). Starter-era semantics: running out of turns *returns*
``error: max turns exceeded``; a failing child provider raises."""

from __future__ import annotations

from ..types import Message, ToolSet
from ._helpers import error_of, file_with, read_call, text_turn, tool_turn, write_call
from ._suite import Suite

suite = Suite("subagent", "SubagentTool", chapters=["extras"])


@suite.test
async def test_subagent_subagent_text_response(impl, tmp):
    provider = impl.MockProvider([text_turn("Child result")])
    tool = impl.SubagentTool(provider, lambda: ToolSet())
    assert await tool.call({"task": "Do something"}) == "Child result"


@suite.test
async def test_subagent_subagent_with_tool(impl, tmp):
    path = file_with(tmp / "data.txt", "secret data")
    provider = impl.MockProvider(
        [tool_turn(read_call("c1", path)), text_turn("The file says: secret data")]
    )
    tool = impl.SubagentTool(provider, lambda: ToolSet([impl.ReadTool()]))
    assert await tool.call({"task": "Read the file"}) == "The file says: secret data"


@suite.test
async def test_subagent_subagent_multi_step(impl, tmp):
    (tmp / "a.txt").write_text("alpha")
    (tmp / "b.txt").write_text("beta")
    provider = impl.MockProvider(
        [
            tool_turn(read_call("c1", tmp / "a.txt")),
            tool_turn(read_call("c2", tmp / "b.txt")),
            text_turn("alpha and beta"),
        ]
    )
    tool = impl.SubagentTool(provider, lambda: ToolSet([impl.ReadTool()]))
    assert await tool.call({"task": "Read both files"}) == "alpha and beta"


@suite.test
async def test_subagent_max_turns_exceeded(impl, tmp):
    provider = impl.MockProvider(
        [tool_turn((f"c{i}", "read", {"path": "/dev/null"})) for i in (1, 2, 3)]
    )
    tool = impl.SubagentTool(provider, lambda: ToolSet([impl.ReadTool()])).max_turns(2)
    assert await tool.call({"task": "Loop forever"}) == "error: max turns exceeded"


@suite.test
async def test_subagent_subagent_missing_task(impl, tmp):
    tool = impl.SubagentTool(impl.MockProvider([]), lambda: ToolSet())
    error = await error_of(tool.call({}))
    assert error is not None
    assert "missing required parameter: task" in str(error)


@suite.test
async def test_subagent_subagent_child_provider_error(impl, tmp):
    tool = impl.SubagentTool(impl.MockProvider([]), lambda: ToolSet())
    assert await error_of(tool.call({"task": "Do something"})) is not None


@suite.test
async def test_subagent_subagent_unknown_tool_in_child(impl, tmp):
    provider = impl.MockProvider(
        [tool_turn(("c1", "nonexistent", {})), text_turn("Tool not found, but I can still answer.")]
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
    provider = impl.MockProvider([text_turn("Audited.")])
    tool = impl.SubagentTool(provider, lambda: ToolSet()).system_prompt(
        "You are a security auditor."
    )
    assert await tool.call({"task": "Audit this code"}) == "Audited."


@suite.test
async def test_subagent_subagent_with_write_tool(impl, tmp):
    path = tmp / "output.txt"
    provider = impl.MockProvider(
        [
            tool_turn(("p1", "subagent", {"task": "Write hello to the file"})),
            tool_turn(write_call("c1", path, "hello")),
            text_turn("File written."),
            text_turn("Subagent completed the write."),
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
    path = file_with(tmp / "info.txt", "important")
    provider = impl.MockProvider(
        [
            tool_turn(("p1", "subagent", {"task": "Summarize the file"})),
            tool_turn(read_call("c1", path)),
            text_turn("File contains: important"),
            tool_turn(read_call("p2", path)),
            text_turn("Confirmed: important"),
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
            tool_turn(("p1", "subagent", {"task": "Do child work"})),
            tool_turn(("c1", "read", {"path": "/dev/null"})),
            text_turn("Child done"),
            text_turn("All done"),
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
