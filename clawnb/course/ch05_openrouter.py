"""Book chapter 5b: the OpenAI-compatible provider — ``openrouter.rs``, 19 tests.

The book's ``OpenRouterProvider::new(key, model).base_url(url)`` reads
``OpenRouterProvider(api_key=key, model=model).base_url(url)`` here; ``convert_messages`` and
``convert_tools`` are static methods returning the wire format as plain dicts, where the book's
``None`` fields are keys left out (``msg.get("tool_calls") is None``). The ``chat`` tests talk to
a real HTTP/1.1 server on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager

from ..types import Message, StopReason, ToolDefinition
from ._helpers import read_call, text_turn, tool_turn, write_call
from ._suite import Skipped, Suite

suite = Suite("openrouter", "OpenRouterProvider", chapters=["ch05b"])


@contextmanager
def _env(name, value):
    """Set an environment variable for the duration of a test, then restore it."""
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


async def _chat(impl, response, messages, tools=()):
    from ._http_fixture import LoopbackServer, http_response

    reply = http_response(json.dumps(response), content_type="application/json")
    async with LoopbackServer(reply) as server:
        provider = impl.OpenRouterProvider(api_key="fake-key", model="fake-model").base_url(
            server.url
        )
        return await provider.chat(messages, list(tools))


@suite.test
def test_openrouter_new(impl, tmp):
    impl.OpenRouterProvider(api_key="test-key", model="test-model")


@suite.test
def test_openrouter_base_url(impl, tmp):
    impl.OpenRouterProvider(api_key="key", model="model").base_url("http://localhost:1234")


@suite.test
def test_openrouter_from_env_with_model(impl, tmp):
    with _env("OPENROUTER_API_KEY", "test-key-ch6"):
        assert impl.OpenRouterProvider.from_env("custom-model") is not None


@suite.test
def test_openrouter_from_env(impl, tmp):
    with _env("OPENROUTER_API_KEY", "test-key-ch6"):
        assert impl.OpenRouterProvider.from_env() is not None


@suite.test
def test_openrouter_convert_messages(impl, tmp):
    converted = impl.OpenRouterProvider.convert_messages(
        [Message.User("hello"), Message.ToolResult("call_1", "result")]
    )
    assert len(converted) == 2
    assert converted[0]["role"] == "user"
    assert converted[0]["content"] == "hello"
    assert converted[1]["role"] == "tool"
    assert converted[1]["content"] == "result"
    assert converted[1]["tool_call_id"] == "call_1"


@suite.test
def test_openrouter_convert_tools(impl, tmp):
    definition = ToolDefinition("test_tool", "A test tool", {"type": "object"})
    converted = impl.OpenRouterProvider.convert_tools([definition])
    assert len(converted) == 1
    assert converted[0]["type"] == "function"
    assert converted[0]["function"]["name"] == "test_tool"
    assert converted[0]["function"]["description"] == "A test tool"


@suite.test
async def test_openrouter_chat_mock_server(impl, tmp):
    response = {
        "choices": [
            {
                "message": {"content": "Hello from mock!", "tool_calls": None},
                "finish_reason": "stop",
            }
        ]
    }
    turn = await _chat(impl, response, [Message.User("Hi")])
    assert turn.text == "Hello from mock!"
    assert turn.tool_calls == []


@suite.test
async def test_openrouter_live_api(impl, tmp):
    # Runs only with a real key (not a test placeholder), like the book.
    key = os.environ.get("OPENROUTER_API_KEY", "")
    if not key or key.startswith("test-"):
        raise Skipped("live: needs a real OPENROUTER_API_KEY")
    provider = impl.OpenRouterProvider.from_env()
    turn = await provider.chat([Message.User("Say exactly 'hello' and nothing else.")], [])
    assert turn.text is not None


@suite.test
def test_openrouter_convert_messages_user(impl, tmp):
    converted = impl.OpenRouterProvider.convert_messages([Message.User("test message")])
    assert len(converted) == 1
    assert converted[0]["role"] == "user"
    assert converted[0]["content"] == "test message"
    assert converted[0].get("tool_calls") is None
    assert converted[0].get("tool_call_id") is None


@suite.test
def test_openrouter_convert_messages_assistant_with_text(impl, tmp):
    turn = text_turn("response")
    converted = impl.OpenRouterProvider.convert_messages([Message.Assistant(turn)])
    assert len(converted) == 1
    assert converted[0]["role"] == "assistant"
    assert converted[0]["content"] == "response"
    assert converted[0].get("tool_calls") is None  # absent, not an empty list


@suite.test
def test_openrouter_convert_messages_assistant_with_tool_calls(impl, tmp):
    turn = tool_turn(read_call("tc_1", "file.txt"))
    converted = impl.OpenRouterProvider.convert_messages([Message.Assistant(turn)])
    assert len(converted) == 1
    assert converted[0]["role"] == "assistant"
    assert converted[0].get("content") is None
    tool_calls = converted[0]["tool_calls"]
    assert len(tool_calls) == 1
    assert tool_calls[0]["id"] == "tc_1"
    assert tool_calls[0]["type"] == "function"
    assert tool_calls[0]["function"]["name"] == "read"


@suite.test
def test_openrouter_convert_messages_full_conversation(impl, tmp):
    messages = [
        Message.User("Read file.txt"),
        Message.Assistant(tool_turn(read_call("tc_1", "file.txt"))),
        Message.ToolResult("tc_1", "file contents"),
        Message.Assistant(text_turn("The file contains: file contents")),
    ]
    converted = impl.OpenRouterProvider.convert_messages(messages)
    assert [m["role"] for m in converted] == ["user", "assistant", "tool", "assistant"]


@suite.test
def test_openrouter_convert_empty_messages(impl, tmp):
    assert impl.OpenRouterProvider.convert_messages([]) == []


@suite.test
def test_openrouter_convert_empty_tools(impl, tmp):
    assert impl.OpenRouterProvider.convert_tools([]) == []


@suite.test
def test_openrouter_convert_multiple_tools(impl, tmp):
    read = ToolDefinition("read", "Read a file").param("path", "string", "File path", True)
    bash = ToolDefinition("bash", "Run a command").param("command", "string", "Command", True)
    converted = impl.OpenRouterProvider.convert_tools([read, bash])
    assert len(converted) == 2
    assert converted[0]["function"]["name"] == "read"
    assert converted[1]["function"]["name"] == "bash"


@suite.test
def test_openrouter_convert_tool_preserves_parameters(impl, tmp):
    definition = (
        ToolDefinition("test", "desc")
        .param("arg1", "string", "first", True)
        .param("arg2", "number", "second", False)
    )
    params = impl.OpenRouterProvider.convert_tools([definition])[0]["function"]["parameters"]
    assert isinstance(params["properties"]["arg1"], dict)
    assert isinstance(params["properties"]["arg2"], dict)
    assert "arg1" in params["required"]
    assert "arg2" not in params["required"]


@suite.test
async def test_openrouter_chat_mock_server_tool_calls(impl, tmp):
    response = {
        "choices": [
            {
                "message": {
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "tc_1",
                            "type": "function",
                            "function": {"name": "read", "arguments": '{"path": "test.txt"}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    read = ToolDefinition("read", "Read file").param("path", "string", "Path", True)
    turn = await _chat(impl, response, [Message.User("Read test.txt")], [read])
    assert turn.text is None
    assert turn.stop_reason == StopReason.TOOL_USE
    assert len(turn.tool_calls) == 1
    assert turn.tool_calls[0].name == "read"
    assert turn.tool_calls[0].arguments["path"] == "test.txt"


@suite.test
def test_openrouter_convert_assistant_multiple_tool_calls(impl, tmp):
    turn = tool_turn(
        read_call("tc_1", "a.txt"), read_call("tc_2", "b.txt"), text="Let me read both"
    )
    converted = impl.OpenRouterProvider.convert_messages([Message.Assistant(turn)])
    assert len(converted) == 1
    assert converted[0]["content"] == "Let me read both"
    tool_calls = converted[0]["tool_calls"]
    assert [c["id"] for c in tool_calls] == ["tc_1", "tc_2"]


@suite.test
def test_openrouter_convert_tool_call_arguments_serialized(impl, tmp):
    turn = tool_turn(write_call("tc_1", "out.txt", "hello"))
    converted = impl.OpenRouterProvider.convert_messages([Message.Assistant(turn)])
    arguments = converted[0]["tool_calls"][0]["function"]["arguments"]
    assert isinstance(arguments, str)  # a JSON *string*, not an object
    parsed = json.loads(arguments)
    assert parsed["path"] == "out.txt"
    assert parsed["content"] == "hello"
