"""What goes over the wire, non-streaming answers, and record → replay."""

from __future__ import annotations

import json

import pytest
from provider_helpers import KEY
from provider_variants import USAGE, body, data, delta, finish, tc

from clawnb.agent import StreamingAgent
from clawnb.course._http_fixture import LoopbackServer, http_response
from clawnb.errors import ProviderConfigError, ProviderError, StreamError
from clawnb.events import StreamEvent
from clawnb.providers.openai import OpenAICompatProvider, OpenRouterProvider, parse_completion
from clawnb.providers.replay import RecordingProvider, ScriptedProvider, load_script
from clawnb.types import AssistantTurn, Message, StopReason, TokenUsage, ToolCall, ToolDefinition

READ = ToolDefinition("read", "Read a file").param("path", "string", "path", True)


def json_reply(obj) -> bytes:
    return http_response(json.dumps(obj), content_type="application/json")


async def test_stream_request_body():
    async with LoopbackServer(http_response(body("data: [DONE]"))) as server:
        p = OpenAICompatProvider(
            "my-model",
            KEY,
            server.url,
            temperature=0.2,
            max_tokens=64,
            tool_choice="auto",
            extra_body={"provider": {"sort": "price"}, "top_k": 5},
        )
        await p.stream_chat([Message.System("sys"), Message.User("hi")], [READ])
    request = server.requests[0]
    sent = request.json()
    assert request.method == "POST" and request.path == "/chat/completions"
    assert sent["model"] == "my-model"
    assert sent["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "hi"},
    ]
    assert sent["tools"] == [{"type": "function", "function": READ.to_dict()}]
    assert sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True}
    assert (sent["temperature"], sent["max_tokens"], sent["tool_choice"]) == (0.2, 64, "auto")
    assert sent["provider"] == {"sort": "price"} and sent["top_k"] == 5


async def test_chat_request_omits_stream_and_empty_tools():
    reply = json_reply({"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}]})
    async with LoopbackServer(reply) as server:
        await (
            OpenRouterProvider(api_key=KEY, model="m")
            .base_url(server.url)
            .chat([Message.User("q")], [])
        )
    sent = server.requests[0].json()
    assert set(sent) == {"model", "messages"}
    assert server.requests[0].headers["x-title"] == "clawnb"


async def test_chat_usage_reasoning_and_invalid_arguments():
    reply = json_reply(
        {
            "choices": [
                {
                    "message": {
                        "content": None,
                        "reasoning_content": "let me think",
                        "tool_calls": [
                            {
                                "id": "a",
                                "type": "function",
                                "function": {"name": "read", "arguments": "{bad"},
                            },
                            {
                                "id": "b",
                                "type": "function",
                                "function": {"name": "read", "arguments": '{"path": "x"}'},
                            },
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ],
            "usage": USAGE,
        }
    )
    async with LoopbackServer(reply) as server:
        turn = await OpenAICompatProvider("m", KEY, server.url).chat([Message.User("q")], [READ])
    assert turn.stop_reason == StopReason.TOOL_USE
    assert turn.usage == TokenUsage(12, 7)
    assert turn.reasoning == "let me think"
    assert turn.tool_calls[0].arguments is None and turn.tool_calls[0].invalid_arguments == "{bad"
    assert turn.tool_calls[1].arguments == {"path": "x"}


def test_parse_completion_errors():
    with pytest.raises(ProviderError, match="no choices"):
        parse_completion({"choices": []})
    with pytest.raises(StreamError, match="quota"):
        parse_completion({"error": {"message": "quota"}})
    with pytest.raises(ProviderError, match="not a JSON object"):
        parse_completion([1])
    usage_absent = parse_completion({"choices": [{"message": {"content": "t"}}]})
    assert usage_absent.usage is None and usage_absent.stop_reason == StopReason.STOP


async def test_chat_non_json_body_is_a_clear_error():
    async with LoopbackServer(
        http_response("<html>oops</html>", content_type="text/html")
    ) as server:
        with pytest.raises(ProviderError, match="not JSON: <html>oops"):
            await OpenAICompatProvider("m", KEY, server.url).chat([Message.User("q")], [])


def test_bad_base_url_is_a_config_error():
    import asyncio

    p = OpenAICompatProvider("m", KEY, "localhost:8000/v1")
    with pytest.raises(ProviderConfigError, match="bad base URL"):
        asyncio.run(p.chat([Message.User("q")], []))


def test_model_is_required_for_the_generic_provider(monkeypatch):
    with pytest.raises(ProviderConfigError):
        OpenAICompatProvider()


async def test_injected_client_is_used_and_not_closed():
    import httpx

    seen = []

    def handler(request):
        seen.append(request.url)
        return httpx.Response(200, json={"choices": [{"message": {"content": "via client"}}]})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        p = OpenAICompatProvider("m", KEY, "http://x.invalid/v1", client=client)
        assert (await p.chat([Message.User("q")], [])).text == "via client"
        assert (await p.chat([Message.User("q")], [])).text == "via client"
        assert not client.is_closed
    assert str(seen[0]) == "http://x.invalid/v1/chat/completions"


# --- record and replay ------------------------------------------------------------------------


async def test_record_a_streamed_session_and_replay_it_offline(tmp_path):
    path = tmp_path / "session.jsonl"
    first = body(
        data(delta("Reading.")),
        data(delta(tool_calls=[tc(0, "c1", "read", '{"path": "notes.txt"}')])),
        data({**finish("tool_calls"), "usage": USAGE}),
        "data: [DONE]",
    )
    second = body(data(delta("It says hi.")), "data: [DONE]")
    (tmp_path / "notes.txt").write_text("hi")
    async with LoopbackServer(http_response(first), http_response(second)) as server:
        live = RecordingProvider(OpenAICompatProvider("m", KEY, server.url), path)
        from clawnb.tools.read import ReadTool

        live_events: list = []
        answer = await StreamingAgent(live).tool(ReadTool()).run("read notes", live_events.append)
    assert answer == "It says hi."
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [entry["request"]["messages"] for entry in lines] == [1, 3]
    assert lines[0]["request"]["tools"] == ["read"]
    assert lines[0]["turn"]["usage"] == {"input_tokens": 12, "output_tokens": 7}

    turns = load_script(path)
    assert turns[0].tool_calls == [ToolCall("c1", "read", {"path": "notes.txt"})]
    replay = ScriptedProvider.from_file(path)
    events: list = []
    replayed = await replay.stream_chat([Message.User("read notes")], [], events.append)
    assert replayed.to_dict() == turns[0].to_dict()
    assert StreamEvent.ToolCallStart(0, "c1", "read") in events
    assert (await replay.chat([], [])).text == "It says hi."


async def test_recording_wraps_chat_and_skips_failures(tmp_path):
    path = tmp_path / "r.jsonl"
    reply = json_reply({"choices": [{"message": {"content": "pong"}, "finish_reason": "stop"}]})
    failing = http_response('{"error": {"message": "nope"}}', 400, "application/json")
    async with LoopbackServer(reply, failing) as server:
        recorder = RecordingProvider(OpenAICompatProvider("m", KEY, server.url), path)
        assert (await recorder.chat([Message.User("ping")], [])).text == "pong"
        with pytest.raises(ProviderError):
            await recorder.chat([Message.User("again")], [])
    lines = path.read_text().splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert entry["request"] == {
        "provider": "OpenAICompatProvider",
        "stream": False,
        "messages": 1,
        "tools": [],
        "model": "m",
        "last_user": "ping",
    }
    assert AssistantTurn.from_dict(entry["turn"]).text == "pong"


async def test_cacheable_system_prefix_on_the_wire():
    from clawnb.prompt import DYNAMIC_BOUNDARY

    system = Message.System(f"static rules\n\n{DYNAMIC_BOUNDARY}\n\ncwd: /tmp")
    async with LoopbackServer(
        http_response(body("data: [DONE]")), http_response(body("data: [DONE]"))
    ) as server:
        await OpenAICompatProvider("m", KEY, server.url).stream_chat(
            [system, Message.User("q")], []
        )
        cached = OpenAICompatProvider("m", KEY, server.url, cache_prompt=True)
        await cached.stream_chat([system, Message.User("q")], [])
    plain = server.requests[0].json()["messages"][0]
    assert plain == {"role": "system", "content": "static rules\n\ncwd: /tmp"}
    parts = server.requests[1].json()["messages"][0]["content"]
    assert parts[0] == {
        "type": "text",
        "text": "static rules",
        "cache_control": {"type": "ephemeral"},
    }
    assert parts[1] == {"type": "text", "text": "cwd: /tmp"}


async def test_streaming_agent_shows_reasoning_apart_from_the_answer():
    from clawnb.events import AgentEvent

    reply = http_response(
        body(data(delta(reasoning="weighing options")), data(delta("Use a dict.")), "data: [DONE]")
    )
    async with LoopbackServer(reply) as server:
        events: list = []
        messages = [Message.User("q")]
        answer = await StreamingAgent(OpenAICompatProvider("m", KEY, server.url)).chat(
            messages, events.append
        )
    assert answer == "Use a dict."
    assert AgentEvent.ReasoningDelta("weighing options") in events
    assert [e.text for e in events if isinstance(e, AgentEvent.TextDelta)] == ["Use a dict."]
    assert messages[1].turn.reasoning == "weighing options"
    assert messages[1].turn.text == "Use a dict."


def test_book_constructor_order_and_repr():
    p = OpenRouterProvider.new("k-book", "some/model")
    assert p.model == "some/model" and p.has_key
    assert p.api_base == "https://openrouter.ai/api/v1"
    assert "k-book" not in repr(p)
    assert OpenRouterProvider.from_env_with_model is not None
