"""Book chapter 1 (and 4): MockProvider — ``mock.rs``, 14 tests, and one of ours."""

from __future__ import annotations

from ..types import AssistantTurn, Message, StopReason, ToolCall, ToolDefinition
from ._helpers import raises, text_turn
from ._suite import Suite

suite = Suite("mock", "MockProvider", chapters=["ch01", "ch04"])


@suite.test
async def test_mock_returns_text(impl, tmp):
    provider = impl.MockProvider([text_turn("Hello, world!")])
    turn = await provider.chat([Message.User("Hi")], [])
    assert turn.text == "Hello, world!"
    assert turn.tool_calls == []


@suite.test
async def test_mock_returns_tool_calls(impl, tmp):
    call = ToolCall("call_1", "read", {"path": "test.txt"})
    provider = impl.MockProvider(
        [AssistantTurn(text=None, tool_calls=[call], stop_reason=StopReason.TOOL_USE)]
    )
    turn = await provider.chat([Message.User("Read test.txt")], [])
    assert turn.text is None
    assert len(turn.tool_calls) == 1
    assert turn.tool_calls[0].name == "read"
    assert turn.tool_calls[0].id == "call_1"


@suite.test
async def test_mock_steps_through_sequence(impl, tmp):
    provider = impl.MockProvider([text_turn("First"), text_turn("Second"), text_turn("Third")])
    for expected in ("First", "Second", "Third"):
        assert (await provider.chat([], [])).text == expected


@suite.test
async def test_mock_empty_responses_exhausted(impl, tmp):
    provider = impl.MockProvider([])
    assert await raises(provider.chat([Message.User("Hi")], []))


@suite.test
async def test_mock_returns_none_text(impl, tmp):
    provider = impl.MockProvider([text_turn(None)])
    assert (await provider.chat([], [])).text is None


@suite.test
async def test_mock_text_with_tool_calls(impl, tmp):
    call = ToolCall("call_1", "read", {"path": "f.txt"})
    provider = impl.MockProvider(
        [AssistantTurn("I'll read that file", [call], StopReason.TOOL_USE)]
    )
    turn = await provider.chat([], [])
    assert turn.text == "I'll read that file"
    assert len(turn.tool_calls) == 1


@suite.test
async def test_mock_multiple_tool_calls_in_one_turn(impl, tmp):
    calls = [
        ToolCall("call_1", "read", {"path": "a.txt"}),
        ToolCall("call_2", "read", {"path": "b.txt"}),
        ToolCall("call_3", "bash", {"command": "ls"}),
    ]
    provider = impl.MockProvider([AssistantTurn(None, calls, StopReason.TOOL_USE)])
    turn = await provider.chat([], [])
    assert [c.id for c in turn.tool_calls[:2]] == ["call_1", "call_2"]
    assert turn.tool_calls[2].name == "bash"


@suite.test
async def test_mock_exhausted_after_all_consumed(impl, tmp):
    provider = impl.MockProvider([text_turn("only one")])
    assert (await provider.chat([], [])).text == "only one"
    assert await raises(provider.chat([], []))


@suite.test
async def test_mock_ignores_messages_and_tools(impl, tmp):
    provider = impl.MockProvider([text_turn("fixed")])
    messages = [Message.System("sys"), Message.User("anything"), Message.ToolResult("x", "y")]
    tools = [ToolDefinition("read", "Read a file").param("path", "string", "p", True)]
    assert (await provider.chat(messages, tools)).text == "fixed"


@suite.test
async def test_mock_tool_call_arguments_preserved(impl, tmp):
    args = {"path": "deep.txt", "options": {"nested": [1, 2, {"k": "v"}], "flag": True}}
    provider = impl.MockProvider(
        [AssistantTurn(None, [ToolCall("c", "read", args)], StopReason.TOOL_USE)]
    )
    turn = await provider.chat([], [])
    assert turn.tool_calls[0].arguments == args


@suite.test
async def test_mock_stop_reason_stop(impl, tmp):
    provider = impl.MockProvider([text_turn("done")])
    assert (await provider.chat([], [])).stop_reason == StopReason.STOP


@suite.test
async def test_mock_stop_reason_tool_use(impl, tmp):
    call = ToolCall("c", "read", {"path": "x"})
    provider = impl.MockProvider([AssistantTurn(None, [call], StopReason.TOOL_USE)])
    assert (await provider.chat([], [])).stop_reason == StopReason.TOOL_USE


@suite.test
async def test_mock_empty_text_is_some(impl, tmp):
    provider = impl.MockProvider([text_turn("")])
    assert (await provider.chat([], [])).text == ""


@suite.test
async def test_mock_long_sequence(impl, tmp):
    provider = impl.MockProvider([text_turn(f"response_{i}") for i in range(10)])
    for i in range(10):
        assert (await provider.chat([], [])).text == f"response_{i}"
    assert await raises(provider.chat([], []))


@suite.test
async def test_mock_leaves_the_callers_list_alone(impl, tmp):
    # Not in the book (a Rust mock owns the queue it is given): in Python the caller keeps
    # its list, and may build a second mock from it; taking turns must not empty it.
    script = [text_turn("First"), text_turn("Second")]
    first = impl.MockProvider(script)
    assert (await first.chat([], [])).text == "First"
    assert [turn.text for turn in script] == ["First", "Second"]
    again = impl.MockProvider(script)
    assert (await again.chat([], [])).text == "First"
