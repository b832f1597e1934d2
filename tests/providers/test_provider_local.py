"""Local OpenAI-compatible servers through the real provider over HTTP on 127.0.0.1: the
message shape every server's template accepts, recorded context-length errors recognised as
such, and the failures that must not be retried or misnamed."""

from __future__ import annotations

import json
import pickle

import httpx
import pytest

from clawnb.course._http_fixture import RESET, LoopbackServer, chunked_head, http_response
from clawnb.errors import (
    BadRequestError,
    ContextOverflowError,
    ProviderConnectionError,
    ProviderError,
)
from clawnb.providers.openai import OpenAICompatProvider, convert_messages
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall, ToolDefinition
from tests.fake_servers import ERRORS, KINDS, FakeServer, Reply

READ = ToolDefinition("read", "Read a file.", {"type": "object", "properties": {}})


def _after_a_tool_call() -> list[Message]:
    """A conversation whose last assistant turn called a tool without saying anything."""
    call = ToolCall("call_1", "read", {"path": "notes.txt"})
    return [
        Message.System("You are terse."),
        Message.User("What is in notes.txt?"),
        Message.Assistant(AssistantTurn(None, [call], StopReason.TOOL_USE)),
        Message.ToolResult("call_1", "buy milk"),
    ]


@pytest.mark.parametrize("kind", ["llama-cpp-python", "llama.cpp", "vllm", "ollama"])
@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
async def test_the_turn_after_a_tool_call_is_accepted_by_every_servers_template(kind, stream):
    with FakeServer(kind, [Reply("It says: buy milk.")]) as server:
        provider = OpenAICompatProvider("m", base_url=server.url, max_retries=0)
        if stream:
            turn = await provider.stream_chat(_after_a_tool_call(), [READ])
        else:
            turn = await provider.chat(_after_a_tool_call(), [READ])
    assert turn.text == "It says: buy milk."
    sent = server.requests[0]["messages"][2]
    assert sent["content"] == "" and sent["tool_calls"][0]["id"] == "call_1"


@pytest.mark.parametrize(
    ("kind", "shape", "status"),
    [
        ("llama-cpp-python", "missing", 500),
        ("llama-cpp-python", None, 500),
        ("ollama", "missing", 400),
        ("ollama", None, 400),
    ],
)
def test_the_fake_servers_refuse_what_the_real_ones_refuse(kind, shape, status):
    # Guards the fixture: without these rules the test above would prove nothing.
    wire = convert_messages(_after_a_tool_call())
    assert "content" not in wire[2]  # the book's shape leaves the key out
    if shape is None:
        wire[2]["content"] = None
    with FakeServer(kind) as server:
        response = httpx.post(
            server.url + "/chat/completions", json={"model": "m", "messages": wire}
        )
    assert response.status_code == status


async def test_llama_cpp_python_template_failure_while_streaming_is_one_clear_error():
    # What the issue saw: the streaming request ends as an empty 200. It is not retried
    # (each retry pays for the whole prompt again) and the message points at the server log.
    wire_breaking = {"role": "assistant", "tool_calls": []}  # no content key at all
    with FakeServer("llama-cpp-python") as server:
        async with httpx.AsyncClient() as client:
            raw = await client.post(
                server.url + "/chat/completions",
                json={"model": "m", "stream": True, "messages": [wire_breaking]},
            )
        assert raw.status_code == 200 and raw.content == b""
        provider = OpenAICompatProvider("m", base_url=server.url, max_retries=2)
        provider.build_request = lambda *a, **k: {  # type: ignore[method-assign]
            "model": "m",
            "stream": True,
            "messages": [wire_breaking],
        }
        with pytest.raises(ProviderError, match="empty stream") as caught:
            await provider.stream_chat([Message.User("x")], [])
    assert not isinstance(caught.value, ProviderConnectionError)
    assert len(server.requests) == 2  # the probe above, then exactly one attempt


_OVERFLOWS = sorted(ERRORS["context_overflow"].items())
_OTHERS = sorted(ERRORS["not_overflow"].items())


@pytest.mark.parametrize(("server", "recorded"), _OVERFLOWS, ids=[k for k, _ in _OVERFLOWS])
async def test_recorded_context_length_errors_are_context_overflow(server, recorded):
    reply = http_response(
        json.dumps(recorded["body"]), recorded["status"], content_type="application/json"
    )
    async with LoopbackServer(reply) as loopback:
        provider = OpenAICompatProvider("m", base_url=loopback.url, max_retries=0)
        with pytest.raises(ContextOverflowError) as caught:
            await provider.stream_chat([Message.User("a long story")], [])
    error = caught.value
    assert isinstance(error, BadRequestError) and error.status == recorded["status"]
    assert error.context_window == recorded["context_window"]
    assert pickle.loads(pickle.dumps(error)).context_window == error.context_window


@pytest.mark.parametrize(("server", "recorded"), _OTHERS, ids=[k for k, _ in _OTHERS])
async def test_other_refusals_are_not_mistaken_for_context_overflow(server, recorded):
    reply = http_response(
        json.dumps(recorded["body"]), recorded["status"], content_type="application/json"
    )
    async with LoopbackServer(reply) as loopback:
        provider = OpenAICompatProvider("m", base_url=loopback.url, max_retries=0)
        with pytest.raises(BadRequestError) as caught:
            await provider.chat([Message.User("x")], [])
    assert not isinstance(caught.value, ContextOverflowError)


@pytest.mark.parametrize("kind", KINDS)
async def test_each_fake_server_overflows_with_its_own_recorded_words(kind):
    # llama-cpp-python overflows inside a stream as an empty 200: recognised only when the
    # server's window is known (here: given, as its --n_ctx)
    window = 50 if kind == "llama-cpp-python" else None
    with FakeServer(kind, n_ctx=50) as server:
        provider = OpenAICompatProvider(
            "m", base_url=server.url, max_retries=2, context_window=window
        )
        with pytest.raises(ContextOverflowError):
            await provider.stream_chat([Message.User("word " * 400)], [])
    assert len(server.requests) == 1  # a prompt that does not fit is never retried as is


async def test_a_default_output_cap_the_server_refuses_is_dropped_once():
    cap_error = ERRORS["not_overflow"]["vllm output cap too large"]
    refused = http_response(json.dumps(cap_error["body"]), 400, content_type="application/json")
    ok = http_response('data: {"choices":[{"delta":{"content":"fine"}}]}\n\ndata: [DONE]\n\n')
    async with LoopbackServer(refused, ok) as loopback:
        provider = OpenAICompatProvider(
            "m", base_url=loopback.url, max_tokens=8192, default_cap=True
        )
        turn = await provider.stream_chat([Message.User("x")], [])
    assert turn.text == "fine"
    first, second = (r.json() for r in loopback.requests)
    assert first["max_tokens"] == 8192 and "max_tokens" not in second


async def test_an_output_cap_the_user_chose_is_kept_and_the_refusal_reported():
    cap_error = ERRORS["not_overflow"]["vllm output cap too large"]
    refused = http_response(json.dumps(cap_error["body"]), 400, content_type="application/json")
    async with LoopbackServer(refused) as loopback:
        provider = OpenAICompatProvider("m", base_url=loopback.url, max_tokens=8192)
        with pytest.raises(BadRequestError, match="is too large"):
            await provider.stream_chat([Message.User("x")], [])
    assert len(loopback.requests) == 1


async def test_a_stream_that_breaks_before_its_first_byte_says_the_server_was_reached():
    async with LoopbackServer([chunked_head(), RESET], [chunked_head(), RESET]) as loopback:
        provider = OpenAICompatProvider("m", base_url=loopback.url, max_retries=1)
        with pytest.raises(ProviderConnectionError) as caught:
            await provider.stream_chat([Message.User("x")], [])
    message = str(caught.value)
    assert "could not reach" not in message
    assert "broke off before any data" in message
    assert len(loopback.requests) == 2  # nothing was shown yet, so it was retried once


async def test_a_connection_closed_before_the_answer_is_not_could_not_reach():
    async with LoopbackServer([RESET]) as loopback:
        provider = OpenAICompatProvider("m", base_url=loopback.url, max_retries=0)
        with pytest.raises(ProviderConnectionError) as caught:
            await provider.stream_chat([Message.User("x")], [])
    assert "closed the connection without answering" in str(caught.value)


async def test_a_closed_port_is_could_not_reach():
    with FakeServer() as server:
        url = server.url
    provider = OpenAICompatProvider("m", base_url=url, max_retries=0)
    with pytest.raises(ProviderConnectionError, match="could not reach http://127.0.0.1:"):
        await provider.stream_chat([Message.User("x")], [])
