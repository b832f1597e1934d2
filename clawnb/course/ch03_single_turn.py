"""Book chapter 3: ``single_turn`` — ``single_turn.rs``, 14 tests."""

from __future__ import annotations

from ..types import ToolDefinition, ToolSet
from ._helpers import Recorder, kinds, raises, text_turn, tool_turn
from ._suite import Suite

suite = Suite("single_turn", "single_turn", chapters=["ch03", "ch07"])


def _tools(impl) -> ToolSet:
    return ToolSet().with_(impl.ReadTool())


@suite.test
async def test_single_turn_direct_response(impl, tmp):
    provider = impl.MockProvider([text_turn("Hello!")])
    assert await impl.single_turn(provider, _tools(impl), "Hi") == "Hello!"


@suite.test
async def test_single_turn_one_tool_call(impl, tmp):
    f = tmp / "test.txt"
    f.write_text("file content")
    provider = impl.MockProvider(
        [
            tool_turn(("call_1", "read", {"path": str(f)})),
            text_turn("The file contains: file content"),
        ]
    )
    result = await impl.single_turn(provider, _tools(impl), "Read test.txt")
    assert result == "The file contains: file content"


@suite.test
async def test_single_turn_unknown_tool(impl, tmp):
    provider = impl.MockProvider(
        [
            tool_turn(("call_1", "nonexistent", {})),
            text_turn("Sorry, that tool doesn't exist."),
        ]
    )
    result = await impl.single_turn(provider, _tools(impl), "Use a fake tool")
    assert result == "Sorry, that tool doesn't exist."


@suite.test
async def test_single_turn_empty_text_response(impl, tmp):
    provider = impl.MockProvider([text_turn(None)])
    assert await impl.single_turn(provider, _tools(impl), "Hi") == ""


@suite.test
async def test_single_turn_tool_call_with_text(impl, tmp):
    f = tmp / "data.txt"
    f.write_text("data")
    provider = impl.MockProvider(
        [
            tool_turn(("call_1", "read", {"path": str(f)}), text="Let me read that."),
            text_turn("The data is: data"),
        ]
    )
    assert await impl.single_turn(provider, _tools(impl), "Read it") == "The data is: data"


@suite.test
async def test_single_turn_multiple_tool_calls_one_round(impl, tmp):
    (tmp / "a.txt").write_text("alpha")
    (tmp / "b.txt").write_text("beta")
    provider = impl.MockProvider(
        [
            tool_turn(
                ("call_1", "read", {"path": str(tmp / "a.txt")}),
                ("call_2", "read", {"path": str(tmp / "b.txt")}),
            ),
            text_turn("Both read"),
        ]
    )
    assert await impl.single_turn(provider, _tools(impl), "Read both") == "Both read"


@suite.test
async def test_single_turn_tool_error_propagates(impl, tmp):
    provider = impl.MockProvider(
        [
            tool_turn(("call_1", "read", {"path": str(tmp / "missing.txt")})),
            text_turn("File not found"),
        ]
    )
    assert await impl.single_turn(provider, _tools(impl), "Read missing") == "File not found"


@suite.test
async def test_single_turn_no_tools_registered(impl, tmp):
    provider = impl.MockProvider([text_turn("I can answer without tools")])
    result = await impl.single_turn(provider, ToolSet(), "Question")
    assert result == "I can answer without tools"


@suite.test
async def test_single_turn_provider_error_propagates(impl, tmp):
    provider = impl.MockProvider([])
    assert await raises(impl.single_turn(provider, _tools(impl), "Hi"))


@suite.test
async def test_single_turn_final_response_none_text(impl, tmp):
    f = tmp / "f.txt"
    f.write_text("x")
    provider = impl.MockProvider([tool_turn(("call_1", "read", {"path": str(f)})), text_turn(None)])
    assert await impl.single_turn(provider, _tools(impl), "Read") == ""


@suite.test
async def test_single_turn_tool_call_missing_arg(impl, tmp):
    provider = impl.MockProvider(
        [tool_turn(("call_1", "read", {})), text_turn("Missing path argument")]
    )
    result = await impl.single_turn(provider, _tools(impl), "Read nothing")
    assert result == "Missing path argument"


@suite.test
async def test_single_turn_mixed_known_and_unknown_tools(impl, tmp):
    f = tmp / "known.txt"
    f.write_text("known")
    provider = impl.MockProvider(
        [
            tool_turn(
                ("call_1", "read", {"path": str(f)}),
                ("call_2", "unknown_tool", {}),
            ),
            text_turn("done"),
        ]
    )
    assert await impl.single_turn(provider, _tools(impl), "Mixed") == "done"


@suite.test
async def test_single_turn_long_prompt(impl, tmp):
    provider = impl.MockProvider([text_turn("Got it")])
    assert await impl.single_turn(provider, _tools(impl), "x" * 10_000) == "Got it"


class _EchoTool:
    """A second tool, so the model is offered more than one."""

    definition = ToolDefinition("echo", "Echo the text back.").param(
        "text", "string", "Text to echo", True
    )

    async def call(self, args):
        return str(args.get("text", ""))


@suite.test
async def test_single_turn_multiple_tools_available(impl, tmp):
    tools = ToolSet().with_(impl.ReadTool()).with_(_EchoTool())
    assert len(tools.definitions()) == 2
    provider = impl.MockProvider([text_turn("hello")])
    assert await impl.single_turn(provider, tools, "Hi") == "hello"


@suite.test
async def test_single_turn_sends_a_valid_history(impl, tmp):
    # Not in the book: the second request must carry the turn, then its results, in order.
    f = tmp / "a.txt"
    f.write_text("alpha")
    provider = Recorder([tool_turn(("c1", "read", {"path": str(f)})), text_turn("done")])
    assert await impl.single_turn(provider, _tools(impl), "Read a.txt") == "done"
    assert kinds(provider.sent[1]) == ["User", "Assistant", "ToolResult"]
