"""AskTool's handlers beyond the book suite: terminal prompt, queue handler edge cases."""

from __future__ import annotations

import asyncio
import io

import pytest

from clawnb.tools import AskTool, ChannelInputHandler, CliInputHandler, MockInputHandler, ToolError


async def test_cli_handler_prints_numbered_options_and_maps_numbers():
    out = io.StringIO()
    prompts: list[str] = []

    def answer(prompt: str) -> str:
        prompts.append(prompt)
        return " 2 \n"

    handler = CliInputHandler(input_fn=answer, output=out)
    assert await handler.ask("Which one?", ["red", "blue"]) == "blue"
    assert out.getvalue() == "\n  Which one?\n    1) red\n    2) blue\n"
    assert prompts == ["  > "]


async def test_cli_handler_free_text_and_out_of_range():
    handler = CliInputHandler(input_fn=lambda _: "7", output=io.StringIO())
    assert await handler.ask("Pick", ["a", "b"]) == "7"
    handler = CliInputHandler(input_fn=lambda _: "something else", output=io.StringIO())
    assert await handler.ask("Pick", ["a"]) == "something else"


async def test_cli_handler_eof_is_a_clear_error():
    def eof(_: str) -> str:
        raise EOFError

    with pytest.raises(ToolError, match="no answer"):
        await CliInputHandler(input_fn=eof, output=io.StringIO()).ask("Q?", [])


async def test_options_are_cleaned():
    handler = MockInputHandler(["ok"])
    await AskTool(handler).call({"question": "Q", "options": ["a", 3, None, "b"]})
    await AskTool(MockInputHandler(["x"])).call({"question": "Q", "options": "not a list"})
    assert handler.questions == [("Q", ["a", "b"])]


async def test_missing_question_message():
    with pytest.raises(ToolError, match="^missing required parameter: question$"):
        await AskTool(MockInputHandler([])).call({"question": 5})


async def test_channel_handler_withdrawn_question():
    handler, queue = ChannelInputHandler.channel()

    async def front_end():
        request = await queue.get()
        request.response.cancel()

    task = asyncio.create_task(front_end())
    with pytest.raises(ToolError, match="withdrawn"):
        await handler.ask("Still there?", [])
    await task


async def test_channel_handler_respond_helper_and_cancellation():
    handler, queue = ChannelInputHandler.channel()
    asking = asyncio.create_task(handler.ask("Q", ["x"]))
    request = await queue.get()
    request.respond("x")
    request.respond("ignored: already answered")
    assert await asking == "x"

    # the asking task itself is cancelled (kernel interrupt): cancellation propagates
    asking = asyncio.create_task(handler.ask("Q2", []))
    request = await queue.get()
    asking.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asking
    assert request.response.cancelled()


def test_ask_metadata():
    tool = AskTool(MockInputHandler([]))
    assert tool.read_only is True
    assert tool.concurrency_safe is False
