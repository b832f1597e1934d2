"""Book chapter 3: ``single_turn`` — ``single_turn.rs``, 14 tests, and three of ours."""

from __future__ import annotations

from ..tools.base import ToolError
from ..types import ToolDefinition, ToolSet
from . import _helpers as h
from ._suite import Suite

suite = Suite("single_turn", "single_turn", chapters=["ch03", "ch07"])


def _tools(impl) -> ToolSet:
    return ToolSet().with_(impl.ReadTool())


async def _answer(impl, prompt, *responses):
    """What ``single_turn`` returns for ``prompt`` with the read tool, when the model answers
    with ``responses`` in order."""
    return await impl.single_turn(impl.MockProvider(list(responses)), _tools(impl), prompt)


@suite.test
async def test_single_turn_direct_response(impl, tmp):
    assert await _answer(impl, "Hi", h.text_turn("Hello!")) == "Hello!"


@suite.test
async def test_single_turn_one_tool_call(impl, tmp):
    f = h.file_with(tmp / "test.txt", "file content")
    final = h.text_turn("The file contains: file content")
    result = await _answer(impl, "Read test.txt", h.tool_turn(h.read_call("call_1", f)), final)
    assert result == "The file contains: file content"


@suite.test
async def test_single_turn_unknown_tool(impl, tmp):
    fake = h.tool_turn(("call_1", "nonexistent", {}))
    sorry = h.text_turn("Sorry, that tool doesn't exist.")
    assert await _answer(impl, "Use a fake tool", fake, sorry) == "Sorry, that tool doesn't exist."


@suite.test
async def test_single_turn_empty_text_response(impl, tmp):
    assert await _answer(impl, "Hi", h.text_turn(None)) == ""


@suite.test
async def test_single_turn_tool_call_with_text(impl, tmp):
    f = h.file_with(tmp / "data.txt", "data")
    turn = h.tool_turn(h.read_call("call_1", f), text="Let me read that.")
    result = await _answer(impl, "Read it", turn, h.text_turn("The data is: data"))
    assert result == "The data is: data"


@suite.test
async def test_single_turn_multiple_tool_calls_one_round(impl, tmp):
    a = h.file_with(tmp / "a.txt", "alpha")
    b = h.file_with(tmp / "b.txt", "beta")
    both = h.tool_turn(h.read_call("call_1", a), h.read_call("call_2", b))
    assert await _answer(impl, "Read both", both, h.text_turn("Both read")) == "Both read"


@suite.test
async def test_single_turn_tool_error_propagates(impl, tmp):
    missing = h.tool_turn(h.read_call("call_1", tmp / "missing.txt"))
    result = await _answer(impl, "Read missing", missing, h.text_turn("File not found"))
    assert result == "File not found"


@suite.test
async def test_single_turn_no_tools_registered(impl, tmp):
    provider = impl.MockProvider([h.text_turn("I can answer without tools")])
    result = await impl.single_turn(provider, ToolSet(), "Question")
    assert result == "I can answer without tools"


@suite.test
async def test_single_turn_provider_error_propagates(impl, tmp):
    assert await h.raises(_answer(impl, "Hi"))


@suite.test
async def test_single_turn_final_response_none_text(impl, tmp):
    f = h.file_with(tmp / "f.txt", "x")
    assert (
        await _answer(impl, "Read", h.tool_turn(h.read_call("call_1", f)), h.text_turn(None)) == ""
    )


@suite.test
async def test_single_turn_tool_call_missing_arg(impl, tmp):
    no_path = h.tool_turn(("call_1", "read", {}))
    result = await _answer(impl, "Read nothing", no_path, h.text_turn("Missing path argument"))
    assert result == "Missing path argument"


@suite.test
async def test_single_turn_mixed_known_and_unknown_tools(impl, tmp):
    f = h.file_with(tmp / "known.txt", "known")
    mixed = h.tool_turn(h.read_call("call_1", f), ("call_2", "unknown_tool", {}))
    assert await _answer(impl, "Mixed", mixed, h.text_turn("done")) == "done"


@suite.test
async def test_single_turn_long_prompt(impl, tmp):
    assert await _answer(impl, "x" * 10_000, h.text_turn("Got it")) == "Got it"


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
    provider = impl.MockProvider([h.text_turn("hello")])
    assert await impl.single_turn(provider, tools, "Hi") == "hello"


@suite.test
async def test_single_turn_sends_a_valid_history(impl, tmp):
    # Not in the book: the second request must carry the turn, then its results, in order.
    f = h.file_with(tmp / "a.txt", "alpha")
    provider = h.Recorder([h.tool_turn(h.read_call("c1", f)), h.text_turn("done")])
    assert await impl.single_turn(provider, _tools(impl), "Read a.txt") == "done"
    assert h.kinds(provider.sent[1]) == ["User", "Assistant", "ToolResult"]


@suite.test
async def test_single_turn_files_each_result_under_its_call_id(impl, tmp):
    # Not in the book: the API pairs a result with its call by the call's id (two calls to
    # the same tool share a name, never an id).
    a = h.file_with(tmp / "a.txt", "alpha")
    b = h.file_with(tmp / "b.txt", "beta")
    provider = h.Recorder(
        [h.tool_turn(h.read_call("c1", a), h.read_call("c2", b)), h.text_turn("done")]
    )
    assert await impl.single_turn(provider, _tools(impl), "Read both") == "done"
    assert h.tool_results(provider.sent[1]) == [("c1", "alpha"), ("c2", "beta")]


class _BrokenTool:
    """A tool that always fails, with a message the model needs to read."""

    definition = ToolDefinition("fetch_report", "Fetch the weekly report.")

    async def call(self, args):
        raise ToolError("the report server is down until 9:00")


@suite.test
async def test_single_turn_keeps_the_tools_error_message(impl, tmp):
    # Not in the book's tests, but its rule: a failing tool's result is "error: {message}",
    # so the model can tell why and react (wait, try another way), not just that it failed.
    provider = h.Recorder([h.tool_turn(("c1", "fetch_report", {})), h.text_turn("I'll wait.")])
    tools = ToolSet().with_(_BrokenTool())
    assert await impl.single_turn(provider, tools, "Get the report") == "I'll wait."
    told = [content for _, content in h.tool_results(provider.sent[1])]
    assert told == ["error: the report server is down until 9:00"]
