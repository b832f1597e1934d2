"""Faults against a real loopback server: rate limits, server errors, resets, stalls, error
objects mid-stream, cancellation. We assert what the caller sees and that history stays valid."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest
from provider_helpers import KEY
from provider_variants import body, data, delta, finish, tc

from clawnb.agent import INTERRUPTED_REPLY_NOTE, StreamingAgent
from clawnb.course._http_fixture import (
    RESET,
    LoopbackServer,
    Pause,
    chunk,
    chunked_head,
    http_response,
)
from clawnb.errors import (
    AuthenticationError,
    BadRequestError,
    ProviderConnectionError,
    ProviderError,
    ProviderHTTPError,
    ProviderTimeout,
    RateLimitError,
    ServerError,
    StreamError,
)
from clawnb.events import AgentEvent, StreamEvent
from clawnb.providers.openai import OpenAICompatProvider
from clawnb.tools.read import ReadTool
from clawnb.types import AssistantTurn, Message

OK_BODY = body(data(delta("Hello")), data(delta(" world")), data(finish("stop")), "data: [DONE]")


async def _until(condition) -> None:
    while not condition():
        await asyncio.sleep(0.01)


def ok() -> bytes:
    return http_response(OK_BODY)


def err(status: int, message: str, code=None, headers=None) -> bytes:
    error = {"message": message}
    if code is not None:
        error["code"] = code
    return http_response(json.dumps({"error": error}), status, "application/json", headers)


def provider(server: LoopbackServer, **options) -> OpenAICompatProvider:
    options.setdefault("retry_backoff", 0.01)
    return OpenAICompatProvider("m", KEY, server.url, **options)


async def stream(p: OpenAICompatProvider):
    events: list = []
    turn = await p.stream_chat([Message.User("hi")], [], events.append)
    return turn, events


# --- retries before the first byte --------------------------------------------------------------


async def test_429_honours_retry_after_then_succeeds():
    async with LoopbackServer(err(429, "slow down", 429, {"Retry-After": "1"}), ok()) as server:
        started = time.monotonic()
        turn, events = await stream(provider(server))
        elapsed = time.monotonic() - started
    assert turn.text == "Hello world"
    assert server.connections == 2
    assert elapsed >= 0.9  # waited as told, not the 10 ms backoff
    assert events[0] == StreamEvent.TextDelta("Hello")


async def test_429_with_a_wait_longer_than_allowed_is_raised_at_once():
    async with LoopbackServer(
        err(429, "quota exhausted", "rate_limited", {"Retry-After": "3600"})
    ) as server:
        with pytest.raises(RateLimitError) as info:
            await stream(provider(server, max_retry_wait=5))
    assert server.connections == 1
    assert info.value.status == 429
    assert info.value.retry_after == 3600
    assert info.value.code == "rate_limited"
    assert "quota exhausted" in str(info.value)


async def test_500_then_200_is_retried():
    async with LoopbackServer(err(500, "internal"), ok()) as server:
        turn, _ = await stream(provider(server))
    assert turn.text == "Hello world"
    assert server.connections == 2


async def test_persistent_503_gives_up_after_max_retries_with_the_server_message():
    async with LoopbackServer(err(503, "model overloaded", 503)) as server:
        with pytest.raises(ServerError, match="model overloaded") as info:
            await stream(provider(server, max_retries=2))
    assert server.connections == 3
    assert info.value.status == 503


async def test_chat_retries_too():
    completion = {"choices": [{"message": {"content": "fine"}, "finish_reason": "stop"}]}
    reply = http_response(json.dumps(completion), content_type="application/json")
    async with LoopbackServer(err(502, "bad gateway"), reply) as server:
        turn = await provider(server).chat([Message.User("hi")], [])
    assert turn.text == "fine"
    assert server.connections == 2


@pytest.mark.parametrize(
    ("status", "cls", "code"),
    [
        (400, BadRequestError, "context_length_exceeded"),
        (401, AuthenticationError, 401),
        (403, AuthenticationError, "forbidden"),
        (404, BadRequestError, "model_not_found"),
        (418, ProviderHTTPError, None),
    ],
)
async def test_client_errors_are_typed_and_not_retried(status, cls, code):
    async with LoopbackServer(err(status, f"server says {status}", code)) as server:
        with pytest.raises(cls) as info:
            await stream(provider(server))
    assert server.connections == 1
    assert info.value.status == status
    assert info.value.code == code
    assert f"server says {status}" in str(info.value)


async def test_error_body_variants_give_the_servers_message():
    replies = [
        http_response('{"detail": "Not Found: model x"}', 404, "application/json"),
        http_response("upstream timed out", 400, "text/plain"),
        http_response(
            json.dumps(
                {
                    "error": {
                        "message": "Provider returned error",
                        "code": 400,
                        "metadata": {"raw": "invalid tool schema", "provider_name": "X"},
                    }
                }
            ),
            400,
            "application/json",
        ),
    ]
    messages = []
    for reply in replies:
        async with LoopbackServer(reply) as server:
            with pytest.raises(ProviderHTTPError) as info:
                await provider(server).chat([Message.User("hi")], [])
        messages.append(info.value.message)
    assert messages[0] == "Not Found: model x"
    assert messages[1] == "upstream timed out"
    assert "Provider returned error" in messages[2] and "invalid tool schema" in messages[2]


async def test_connection_refused_is_a_connection_error_naming_the_host():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = OpenAICompatProvider("m", KEY, f"http://127.0.0.1:{port}", retry_backoff=0.01)
    with pytest.raises(ProviderConnectionError, match="127.0.0.1"):
        await p.stream_chat([Message.User("hi")], [])


# --- after output started: never retried -------------------------------------------------------


async def test_reset_mid_stream_after_output_is_reported_not_retried():
    steps = [chunked_head(), chunk(data(delta("Hel")) + "\n\n"), Pause(0.05), RESET]
    async with LoopbackServer(steps, ok()) as server:
        events: list = []
        with pytest.raises(ProviderConnectionError, match="broke off"):
            await provider(server).stream_chat([Message.User("hi")], [], events.append)
    assert server.connections == 1
    assert events == [StreamEvent.TextDelta("Hel")]


async def test_reset_before_any_output_is_retried():
    steps = [chunked_head(), chunk(": OPENROUTER PROCESSING\n\n"), Pause(0.05), RESET]
    async with LoopbackServer(steps, ok()) as server:
        turn, events = await stream(provider(server))
    assert turn.text == "Hello world"
    assert server.connections == 2
    assert events.count(StreamEvent.Done()) == 1


async def test_stall_between_chunks_times_out():
    steps = [chunked_head(), chunk(data(delta("Hel")) + "\n\n"), Pause(5), chunk(b"")]
    async with LoopbackServer(steps) as server:
        started = time.monotonic()
        with pytest.raises(ProviderTimeout):
            await stream(provider(server, read_timeout=0.3))
        assert time.monotonic() - started < 3


async def test_error_object_mid_stream_is_a_stream_error_with_the_servers_words():
    lines = [
        data(delta("partial ")),
        data(
            {
                "error": {"message": "Upstream provider crashed", "code": "server_error"},
                "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
            }
        ),
    ]
    steps = [chunked_head()] + [chunk(line + "\n\n") for line in lines] + [chunk(b"")]
    async with LoopbackServer(steps, ok()) as server:
        with pytest.raises(StreamError, match="Upstream provider crashed") as info:
            await stream(provider(server))
    assert info.value.code == "server_error"
    assert server.connections == 1


# --- the loop keeps the history valid ----------------------------------------------------------


async def test_agent_history_stays_valid_when_the_stream_fails():
    steps = [chunked_head(), chunk(data(delta("half")) + "\n\n"), RESET]
    async with LoopbackServer(steps) as server:
        agent = StreamingAgent(provider(server))
        messages = [Message.User("hi")]
        events: list = []
        with pytest.raises(ProviderConnectionError):
            await agent.chat(messages, events.append)
    assert messages == [Message.User("hi")]  # no half turn was appended
    assert events[0] == AgentEvent.TextDelta("half")
    assert isinstance(events[-1], AgentEvent.Error) and "broke off" in events[-1].message


async def test_invalid_json_arguments_reach_the_model_as_an_error_result(tmp_path):
    first = body(
        data(delta(tool_calls=[tc(0, "c1", "read", '{"path": ')])),
        data(finish("tool_calls")),
        "data: [DONE]",
    )
    second = body(data(delta("I will fix my JSON.")), "data: [DONE]")
    async with LoopbackServer(http_response(first), http_response(second)) as server:
        agent = StreamingAgent(provider(server)).tool(ReadTool())
        messages = [Message.User("read it")]
        answer = await agent.chat(messages, None)
        followup = server.requests[1].json()
    assert answer == "I will fix my JSON."
    assert [type(m).__name__ for m in messages] == ["User", "Assistant", "ToolResult", "Assistant"]
    call = messages[1].turn.tool_calls[0]
    assert call.arguments is None and call.invalid_arguments == '{"path": '
    assert messages[2].id == "c1"
    assert "not valid JSON" in messages[2].content
    wire = followup["messages"]
    assert wire[1]["tool_calls"][0]["function"]["arguments"] == "{}"
    assert wire[2] == {"role": "tool", "content": messages[2].content, "tool_call_id": "c1"}


# --- cancellation -----------------------------------------------------------------------------


async def test_cancelling_the_task_closes_the_http_stream_promptly():
    steps = [chunked_head(), chunk(data(delta("first")) + "\n\n"), Pause(10), chunk(b"")]
    async with LoopbackServer(steps) as server:
        got_first = asyncio.Event()

        def on_event(event):
            if event == StreamEvent.TextDelta("first"):
                got_first.set()

        task = asyncio.create_task(provider(server).stream_chat([Message.User("hi")], [], on_event))
        await asyncio.wait_for(got_first.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        started = time.monotonic()
        await asyncio.wait_for(server.client_gone.wait(), 2)
        assert time.monotonic() - started < 2


# --- server quirks at the HTTP level -----------------------------------------------------------


async def test_stream_options_refused_is_retried_without_it():
    refusal = err(400, "Unrecognized request argument supplied: stream_options")
    async with LoopbackServer(refusal, ok()) as server:
        p = provider(server)
        turn, _ = await stream(p)
        assert turn.text == "Hello world"
        assert "stream_options" in server.requests[0].json()
        assert "stream_options" not in server.requests[1].json()
        assert p.stream_usage is False


async def test_json_answer_to_a_stream_request_is_replayed_as_events():
    completion = {
        "choices": [
            {
                "message": {
                    "content": "whole",
                    "tool_calls": [
                        {
                            "id": "t1",
                            "type": "function",
                            "function": {"name": "read", "arguments": '{"path":"a"}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2},
    }
    reply = http_response(json.dumps(completion), content_type="application/json")
    async with LoopbackServer(reply) as server:
        turn, events = await stream(provider(server))
    assert turn.text == "whole"
    assert turn.tool_calls[0].arguments == {"path": "a"}
    assert events[0] == StreamEvent.TextDelta("whole")
    assert StreamEvent.ToolCallStart(0, "t1", "read") in events
    assert events[-1] == StreamEvent.Done()


async def test_a_web_page_instead_of_a_stream_is_a_clear_error():
    page = http_response("<html><body>Welcome to the UI</body></html>", content_type="text/html")
    async with LoopbackServer(page) as server:
        with pytest.raises(ProviderError, match="did not answer with server-sent events") as info:
            await stream(provider(server))
    assert "text/html" in str(info.value) and "Welcome to the UI" in str(info.value)
    assert server.connections == 1


async def test_a_stream_of_comments_only_is_retried_then_reported():
    empty = http_response(": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n")
    async with LoopbackServer(empty, ok()) as server:
        turn, _ = await stream(provider(server))
    assert turn.text == "Hello world" and server.connections == 2
    async with LoopbackServer(empty) as server:
        with pytest.raises(ProviderConnectionError, match="without sending any data"):
            await stream(provider(server, max_retries=1))


async def test_404_names_the_endpoint_and_a_pasted_endpoint_is_forgiven():
    async with LoopbackServer(http_response("404 page not found", 404, "text/plain")) as server:
        with pytest.raises(
            BadRequestError,
            match=r"404 page not found \[POST http://127\.0\.0\.1:\d+/chat/completions\]",
        ):
            await stream(provider(server))
    async with LoopbackServer(ok()) as server:
        p = OpenAICompatProvider("m", KEY, server.url + "/v1/chat/completions/")
        await p.stream_chat([Message.User("x")], [])
    assert server.requests[0].path == "/v1/chat/completions"


async def test_error_object_before_any_output_is_retried_when_its_code_is_retryable():
    first = http_response(
        body(data({"error": {"message": "Rate limit exceeded upstream", "code": 429}}))
    )
    async with LoopbackServer(first, ok()) as server:
        turn, _ = await stream(provider(server))
    assert turn.text == "Hello world" and server.connections == 2
    fatal = http_response(body(data({"error": {"message": "Invalid model", "code": 400}})))
    async with LoopbackServer(fatal, ok()) as server:
        with pytest.raises(StreamError, match="Invalid model"):
            await stream(provider(server))
    assert server.connections == 1


async def test_chat_200_with_a_retryable_error_object_is_retried():
    busy = http_response(
        json.dumps({"error": {"message": "busy", "code": "503"}}), content_type="application/json"
    )
    fine = http_response(
        json.dumps({"choices": [{"message": {"content": "ok"}}]}), content_type="application/json"
    )
    async with LoopbackServer(busy, fine) as server:
        turn = await provider(server).chat([Message.User("x")], [])
    assert turn.text == "ok" and server.connections == 2


async def test_cancelled_agent_turn_keeps_the_streamed_text_as_the_assistants_reply():
    steps = [
        chunked_head(),
        chunk(data(delta("thinking about it")) + "\n\n"),
        Pause(10),
        chunk(b""),
    ]
    async with LoopbackServer(steps) as server:
        messages = [Message.User("hi")]
        started = asyncio.Event()

        def on_event(event):
            if isinstance(event, AgentEvent.TextDelta):
                started.set()

        task = asyncio.create_task(StreamingAgent(provider(server)).chat(messages, on_event))
        await asyncio.wait_for(started.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(server.client_gone.wait(), 2)
    # the words the person saw stay, marked as cut short (as a kill -9 recovery keeps them),
    # so the next message is not a second user message in a row
    assert messages == [
        Message.User("hi"),
        Message.Assistant(AssistantTurn(text=f"thinking about it\n\n{INTERRUPTED_REPLY_NOTE}")),
    ]


async def test_cancelled_agent_turn_before_any_text_keeps_nothing():
    steps = [chunked_head(), chunk(data(delta("")) + "\n\n"), Pause(10), chunk(b"")]
    async with LoopbackServer(steps) as server:
        messages = [Message.User("hi")]
        task = asyncio.create_task(StreamingAgent(provider(server)).chat(messages))
        await asyncio.wait_for(_until(lambda: server.requests), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert messages == [Message.User("hi")]
