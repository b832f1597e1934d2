"""Book chapter 3 (and 7): SimpleAgent — ``simple_agent.rs``, 12 tests."""

from __future__ import annotations

from ..types import Message
from ._helpers import (
    Recorder,
    file_with,
    kinds,
    raises,
    read_call,
    text_turn,
    tool_results,
    tool_turn,
    tree,
)
from ._suite import Suite

suite = Suite("simple_agent", "SimpleAgent", chapters=["ch03", "ch07"])


def _agent(impl, *responses):
    """An agent with the read tool whose model answers with ``responses``, in order."""
    return _reader(impl, impl.MockProvider(list(responses)))


def _reader(impl, model):
    """A SimpleAgent on ``model`` with the read tool."""
    return impl.SimpleAgent(model).tool(impl.ReadTool())


@suite.test
async def test_simple_agent_text_response(impl, tmp):
    assert await _agent(impl, text_turn("Hello!")).run("Hi") == "Hello!"


@suite.test
async def test_simple_agent_single_tool_call(impl, tmp):
    f = file_with(tmp / "test.txt", "file content")
    agent = _agent(
        impl, tool_turn(read_call("call_1", f)), text_turn("The file contains: file content")
    )
    assert await agent.run("Read test.txt") == "The file contains: file content"


@suite.test
async def test_simple_agent_unknown_tool(impl, tmp):
    provider = impl.MockProvider(
        [tool_turn(("call_1", "nonexistent", {})), text_turn("Sorry, that tool doesn't exist.")]
    )
    agent = impl.SimpleAgent(provider)
    assert await agent.run("Use a fake tool") == "Sorry, that tool doesn't exist."


@suite.test
async def test_simple_agent_multi_step_loop(impl, tmp):
    a = file_with(tmp / "a.txt", "first")
    b = file_with(tmp / "b.txt", "second")
    model = Recorder(
        [
            tool_turn(read_call("call_1", a)),
            tool_turn(read_call("call_2", b)),
            text_turn("Done reading twice"),
        ]
    )
    assert await _reader(impl, model).run("Read both, one at a time") == "Done reading twice"
    # One round per call: after each result the loop asks the model again, with it added.
    first, second = ("call_1", "first"), ("call_2", "second")
    assert [tool_results(sent) for sent in model.sent] == [[], [first], [first, second]]


@suite.test
async def test_simple_agent_empty_response(impl, tmp):
    assert await _agent(impl, text_turn(None)).run("Hi") == ""


@suite.test
async def test_simple_agent_builder_chain(impl, tmp):
    agent = _agent(impl, text_turn("ok")).tool(impl.ReadTool())
    assert await agent.run("Hi") == "ok"


@suite.test
async def test_simple_agent_three_step_loop(impl, tmp):
    f = file_with(tmp / "f.txt", "data")
    reads = [tool_turn(read_call(f"call_{n}", f)) for n in (1, 2, 3)]
    agent = _agent(impl, *reads, text_turn("Read three times"))
    assert await agent.run("Read thrice") == "Read three times"


@suite.test
async def test_simple_agent_provider_error(impl, tmp):
    assert await raises(_agent(impl).run("Hi"))


@suite.test
async def test_simple_agent_tool_error_propagates(impl, tmp):
    missing = tmp / "missing.txt"
    agent = _agent(impl, tool_turn(read_call("call_1", missing)), text_turn("File not found"))
    assert await agent.run("Read missing") == "File not found"


@suite.test
async def test_simple_agent_multiple_tool_calls_single_turn(impl, tmp):
    tree(tmp, {"a.txt": "A", "b.txt": "B"})
    both = tool_turn(read_call("call_1", tmp / "a.txt"), read_call("call_2", tmp / "b.txt"))
    model = Recorder([both, text_turn("Read both")])
    assert await _reader(impl, model).run("Read a and b") == "Read both"
    # Both calls ran in the one round: one assistant turn, then a result for each, in order.
    assert kinds(model.sent[-1]) == ["User", "Assistant", "ToolResult", "ToolResult"]
    assert tool_results(model.sent[-1]) == [("call_1", "A"), ("call_2", "B")]


@suite.test
async def test_simple_agent_unknown_among_known(impl, tmp):
    f = file_with(tmp / "f.txt", "x")
    both = tool_turn(read_call("call_1", f), ("call_2", "bogus", {}))
    assert await _agent(impl, both, text_turn("handled")).run("Mixed") == "handled"


@suite.test
async def test_simple_agent_text_in_tool_use_turn(impl, tmp):
    f = file_with(tmp / "f.txt", "data")
    agent = _agent(
        impl,
        tool_turn(read_call("call_1", f), text="Let me check the file."),
        text_turn("The file contains: data"),
    )
    assert await agent.run("What's in f?") == "The file contains: data"


@suite.test
async def test_simple_agent_chat_appends_final_turn(impl, tmp):
    # Not in the book: after chat() the history ends with the final answer, ready to go on.
    messages = [Message.User("Hi")]
    agent = impl.SimpleAgent(impl.MockProvider([text_turn("Hello!")]))
    assert await agent.chat(messages) == "Hello!"
    assert kinds(messages) == ["User", "Assistant"]
    assert messages[-1].turn.text == "Hello!"
