"""Book extra: AskTool and its input handlers — ``ask.rs``, the 10 tests that need no
notebook. The book's ``ChannelInputHandler`` sends a request with a oneshot reply channel;
here it puts a ``UserInputRequest`` on an ``asyncio.Queue`` and awaits its ``response``
future."""

from __future__ import annotations

import asyncio

from ..types import ToolDefinition
from ._helpers import (
    Recorder,
    error_of,
    file_with,
    read_call,
    text_turn,
    tool_results,
    tool_turn,
)
from ._suite import Suite

suite = Suite("ask", "AskTool and InputHandler", chapters=["extras"])


@suite.test
def test_ask_ask_tool_definition(impl, tmp):
    d = impl.AskTool(impl.MockInputHandler([])).definition
    assert d.name == "ask_user"
    required = d.parameters["required"]
    assert "question" in required
    props = d.parameters["properties"]
    assert props["question"]["type"] == "string"
    assert props["options"]["type"] == "array"
    assert props["options"]["items"]["type"] == "string"
    assert "options" not in required


@suite.test
async def test_ask_ask_question_only(impl, tmp):
    tool = impl.AskTool(impl.MockInputHandler(["Yes"]))
    assert await tool.call({"question": "Should I proceed?"}) == "Yes"


@suite.test
async def test_ask_ask_with_options(impl, tmp):
    tool = impl.AskTool(impl.MockInputHandler(["Option B"]))
    args = {"question": "Which approach?", "options": ["Option A", "Option B", "Option C"]}
    assert await tool.call(args) == "Option B"


@suite.test
async def test_ask_ask_missing_question(impl, tmp):
    tool = impl.AskTool(impl.MockInputHandler([]))
    error = await error_of(tool.call({"options": ["a", "b"]}))
    assert error is not None
    assert "missing required parameter" in str(error)


@suite.test
async def test_ask_mock_handler_exhausted(impl, tmp):
    tool = impl.AskTool(impl.MockInputHandler([]))
    error = await error_of(tool.call({"question": "Anything?"}))
    assert error is not None
    assert "no more answers" in str(error)


@suite.test
async def test_ask_agent_ask_then_continue(impl, tmp):
    provider = impl.MockProvider(
        [
            tool_turn(("c1", "ask_user", {"question": "Which approach?"})),
            text_turn("Using approach A as requested."),
        ]
    )
    agent = impl.SimpleAgent(provider).tool(impl.AskTool(impl.MockInputHandler(["Use approach A"])))
    assert await agent.run("Help me refactor") == "Using approach A as requested."


@suite.test
async def test_ask_ask_then_tool(impl, tmp):
    path = file_with(tmp / "target.txt", "hello world")
    model = Recorder(
        [
            tool_turn(("c1", "ask_user", {"question": "Which file should I read?"})),
            tool_turn(read_call("c2", path)),
            text_turn("The file contains: hello world"),
        ]
    )
    agent = (
        impl.SimpleAgent(model)
        .tool(impl.AskTool(impl.MockInputHandler([str(path)])))
        .tool(impl.ReadTool())
    )
    assert await agent.run("Read a file for me") == "The file contains: hello world"
    # The user's answer came back to the model as the ask's result; the read then found the file.
    assert tool_results(model.sent[-1]) == [("c1", str(path)), ("c2", "hello world")]


@suite.test
async def test_ask_multiple_asks(impl, tmp):
    provider = impl.MockProvider(
        [
            tool_turn(
                (
                    "c1",
                    "ask_user",
                    {"question": "What language?", "options": ["Rust", "Python", "Go"]},
                )
            ),
            tool_turn(
                (
                    "c2",
                    "ask_user",
                    {"question": "What framework?", "options": ["Django", "FastAPI"]},
                )
            ),
            text_turn("Setting up Python with FastAPI."),
        ]
    )
    handler = impl.MockInputHandler(["Python", "FastAPI"])
    agent = impl.SimpleAgent(provider).tool(impl.AskTool(handler))
    assert await agent.run("Set up a project for me") == "Setting up Python with FastAPI."


@suite.test
async def test_ask_channel_handler_roundtrip(impl, tmp):
    queue: asyncio.Queue = asyncio.Queue()
    handler = impl.ChannelInputHandler(queue)

    async def user():
        request = await queue.get()
        assert request.question == "Pick one"
        assert request.options == ["A", "B"]
        request.response.set_result("B")

    answering = asyncio.create_task(user())
    assert await handler.ask("Pick one", ["A", "B"]) == "B"
    await answering


@suite.test
def test_ask_param_raw(impl, tmp):
    schema = {"type": "array", "items": {"type": "string"}, "description": "A list of items"}
    d = ToolDefinition("test", "A test tool").param_raw("items", schema, False)
    assert d.parameters["properties"]["items"]["type"] == "array"
    assert d.parameters["properties"]["items"]["items"]["type"] == "string"
    assert "items" not in d.parameters["required"]
    d2 = ToolDefinition("test2", "Another test").param_raw(
        "tags", {"type": "array", "items": {"type": "string"}}, True
    )
    assert "tags" in d2.parameters["required"]
