"""Book chapters 5a/5b: streaming — ``streaming.rs``, 23 tests.

``parse_sse_line`` and ``StreamAccumulator`` (5a), ``MockStreamProvider``, ``StreamingAgent``
and ``stream_chat`` of the OpenAI-compatible provider (5b). The ``stream_chat`` tests talk to a
real HTTP/1.1 server on 127.0.0.1 that the test starts, like the book's raw TCP listener.
The book's mpsc channel is an ``on_event`` callback here: ``events.append`` collects them.
"""

from __future__ import annotations

import json

from ..types import Message, StopReason, ToolDefinition
from ._helpers import text_turn, tool_turn
from ._suite import Suite

suite = Suite(
    "streaming", "SSE parsing, StreamAccumulator, StreamingAgent", chapters=["ch05a", "ch05b"]
)


# --- StreamAccumulator ------------------------------------------------------------------------


def _accumulate(impl, *events):
    """The turn a fresh accumulator assembles from ``events``."""
    acc = impl.StreamAccumulator()
    for event in events:
        acc.feed(event)
    return acc.finish()


def _calls(turn):
    """``(id, name, arguments)`` of each call a turn asks for: one comparison shows them all."""
    return [(call.id, call.name, call.arguments) for call in turn.tool_calls]


def _parts(turn):
    """``(text, calls, stop reason)`` of a turn: the whole turn in one comparison."""
    return turn.text, _calls(turn), turn.stop_reason


@suite.test
def test_streaming_accumulator_text(impl, tmp):
    ev = impl.StreamEvent
    turn = _accumulate(impl, ev.TextDelta("Hello"), ev.TextDelta(" world"), ev.Done())
    assert _parts(turn) == ("Hello world", [], StopReason.STOP)


@suite.test
def test_streaming_accumulator_tool_call(impl, tmp):
    ev = impl.StreamEvent
    turn = _accumulate(
        impl,
        ev.ToolCallStart(index=0, id="call_1", name="read"),
        ev.ToolCallDelta(index=0, arguments='{"pa'),
        ev.ToolCallDelta(index=0, arguments='th": "f.txt"}'),
        ev.Done(),
    )
    # The argument pieces join into one JSON object before it is parsed.
    assert _parts(turn) == (None, [("call_1", "read", {"path": "f.txt"})], StopReason.TOOL_USE)


@suite.test
def test_streaming_accumulator_empty(impl, tmp):
    assert _parts(impl.StreamAccumulator().finish()) == (None, [], StopReason.STOP)


@suite.test
def test_streaming_accumulator_text_and_tool(impl, tmp):
    ev = impl.StreamEvent
    turn = _accumulate(
        impl,
        ev.TextDelta("Thinking..."),
        ev.ToolCallStart(index=0, id="c1", name="bash"),
        ev.ToolCallDelta(index=0, arguments='{"command": "ls"}'),
        ev.Done(),
    )
    # Both kept: the text said before the call, and the call itself.
    expected = ("Thinking...", [("c1", "bash", {"command": "ls"})], StopReason.TOOL_USE)
    assert _parts(turn) == expected


@suite.test
def test_streaming_accumulator_multiple_tool_calls(impl, tmp):
    ev = impl.StreamEvent
    # Two calls whose argument pieces arrive interleaved: each index collects its own.
    events = [
        ev.ToolCallStart(index=0, id="c1", name="read"),
        ev.ToolCallStart(index=1, id="c2", name="read"),
        ev.ToolCallDelta(index=1, arguments='{"path": "b.txt"}'),
        ev.ToolCallDelta(index=0, arguments='{"path": "a.txt"}'),
        ev.Done(),
    ]
    turn = _accumulate(impl, *events)
    assert _calls(turn) == [("c1", "read", {"path": "a.txt"}), ("c2", "read", {"path": "b.txt"})]


@suite.test
def test_streaming_accumulator_default(impl, tmp):
    # Rust's ``Default`` is Python's no-argument constructor.
    turn = impl.StreamAccumulator().finish()
    assert turn.text is None
    assert turn.tool_calls == []


# --- parse_sse_line ---------------------------------------------------------------------------


@suite.test
def test_streaming_parse_text_delta(impl, tmp):
    line = 'data: {"choices":[{"delta":{"content":"Hello"},"finish_reason":null}]}'
    assert impl.parse_sse_line(line) == [impl.StreamEvent.TextDelta("Hello")]


@suite.test
def test_streaming_parse_tool_call_start(impl, tmp):
    line = (
        'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function",'
        '"function":{"name":"read","arguments":""}}]},"finish_reason":null}]}'
    )
    events = impl.parse_sse_line(line)
    # Only the start: the empty arguments make no delta.
    assert events == [impl.StreamEvent.ToolCallStart(index=0, id="call_1", name="read")]


@suite.test
def test_streaming_parse_tool_call_delta(impl, tmp):
    line = (
        'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":'
        '{"arguments":"{\\"path\\""}}]},"finish_reason":null}]}'
    )
    assert impl.parse_sse_line(line) == [
        impl.StreamEvent.ToolCallDelta(index=0, arguments='{"path"')
    ]


@suite.test
def test_streaming_parse_done(impl, tmp):
    assert impl.parse_sse_line("data: [DONE]") == [impl.StreamEvent.Done()]


@suite.test
def test_streaming_parse_non_data_lines(impl, tmp):
    assert impl.parse_sse_line("") is None
    assert impl.parse_sse_line(": comment") is None
    assert impl.parse_sse_line("event: ping") is None
    assert impl.parse_sse_line("id: 123") is None


@suite.test
def test_streaming_parse_empty_delta(impl, tmp):
    # finish_reason set but no content or tool calls: the end-of-stream marker
    line = 'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}'
    assert impl.parse_sse_line(line) is None


@suite.test
def test_streaming_parse_invalid_json(impl, tmp):
    assert impl.parse_sse_line("data: {not json}") is None


def _feed_lines(impl, lines):
    """The turn assembled from what ``parse_sse_line`` makes of each line."""
    return _accumulate(
        impl, *(event for line in lines for event in impl.parse_sse_line(line) or [])
    )


@suite.test
def test_streaming_parse_multiple_text_chunks(impl, tmp):
    turn = _feed_lines(
        impl,
        [
            'data: {"choices":[{"delta":{"content":"Hello"},"finish_reason":null}]}',
            'data: {"choices":[{"delta":{"content":" world"},"finish_reason":null}]}',
        ],
    )
    assert turn.text == "Hello world"


TOOL_CALL_LINES = [
    # the call starts with empty arguments
    'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"tc_1","type":"function",'
    '"function":{"name":"read","arguments":""}}]},"finish_reason":null}]}',
    # argument pieces
    'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":'
    '{"arguments":"{\\"path\\":"}}]},"finish_reason":null}]}',
    'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":'
    '{"arguments":" \\"test.txt\\"}"}}]},"finish_reason":null}]}',
    # finish
    'data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}',
    "data: [DONE]",
]


@suite.test
def test_streaming_parse_tool_call_full_sequence(impl, tmp):
    turn = _feed_lines(impl, TOOL_CALL_LINES)
    assert turn.text is None
    assert _calls(turn) == [("tc_1", "read", {"path": "test.txt"})]
    assert turn.stop_reason == StopReason.TOOL_USE


# --- stream_chat against a local HTTP server --------------------------------------------------


def _chunk(delta, finish_reason=None):
    """One data line of an OpenAI-style stream: a chunk carrying ``delta``."""
    return "data: " + json.dumps({"choices": [{"delta": delta, "finish_reason": finish_reason}]})


def _sse(*lines):
    """The book's bodies: each data line followed by a blank line, joined with ``\\n``."""
    out = []
    for line in lines:
        out += [line, ""]
    return "\n".join(out)


async def _stream(impl, body, messages, tools=()):
    from ._http_fixture import LoopbackServer, http_response

    events = []
    async with LoopbackServer(http_response(body)) as server:
        provider = impl.OpenRouterProvider(api_key="fake-key", model="fake-model").base_url(
            server.url
        )
        turn = await provider.stream_chat(messages, list(tools), events.append)
    return turn, events


@suite.test
async def test_streaming_stream_chat_text(impl, tmp):
    body = _sse(
        'data: {"choices":[{"delta":{"role":"assistant","content":""},"finish_reason":null}]}',
        'data: {"choices":[{"delta":{"content":"Hello"},"finish_reason":null}]}',
        'data: {"choices":[{"delta":{"content":" world"},"finish_reason":null}]}',
        'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}',
        "data: [DONE]",
    )
    turn, events = await _stream(impl, body, [Message.User("Hi")])
    assert turn.text == "Hello world"
    assert turn.tool_calls == []
    assert turn.stop_reason == StopReason.STOP
    ev = impl.StreamEvent
    assert ev.TextDelta("Hello") in events
    assert ev.TextDelta(" world") in events
    assert ev.Done() in events


@suite.test
async def test_streaming_stream_chat_tool_call(impl, tmp):
    body = _sse(
        'data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function",'
        '"function":{"name":"read","arguments":""}}]},"finish_reason":null}]}',
        *TOOL_CALL_LINES[1:],
    )
    read = ToolDefinition("read", "Read file").param("path", "string", "Path", True)
    turn, _ = await _stream(impl, body, [Message.User("Read test.txt")], [read])
    assert turn.text is None
    assert _calls(turn) == [("call_1", "read", {"path": "test.txt"})]
    assert turn.stop_reason == StopReason.TOOL_USE


# --- MockStreamProvider -----------------------------------------------------------------------


@suite.test
async def test_streaming_mock_stream_provider_text(impl, tmp):
    provider = impl.MockStreamProvider([text_turn("Hello")])
    events = []
    result = await provider.stream_chat([Message.User("Hi")], [], events.append)
    assert result.text == "Hello"
    ev = impl.StreamEvent
    assert len(events) == 6  # H, e, l, l, o, Done: one TextDelta per character
    assert events[0] == ev.TextDelta("H")
    assert events[4] == ev.TextDelta("o")
    assert events[5] == ev.Done()


@suite.test
async def test_streaming_mock_stream_provider_tool_call(impl, tmp):
    provider = impl.MockStreamProvider([tool_turn(("c1", "read", {"path": "f.txt"}))])
    events = []
    result = await provider.stream_chat([Message.User("Read f.txt")], [], events.append)
    assert len(result.tool_calls) == 1
    assert result.tool_calls[0].name == "read"
    ev = impl.StreamEvent
    assert isinstance(events[0], ev.ToolCallStart) and events[0].index == 0
    assert isinstance(events[1], ev.ToolCallDelta) and events[1].index == 0
    assert events[2] == ev.Done()


# --- StreamingAgent ---------------------------------------------------------------------------


@suite.test
async def test_streaming_streaming_agent_text_response(impl, tmp):
    agent = impl.StreamingAgent(impl.MockStreamProvider([text_turn("Hi there")]))
    events = []
    assert await agent.run("Hello", events.append) == "Hi there"
    # The answer streams as text deltas; Done, carrying it whole, comes last.
    streamed = "".join(e.text for e in events if isinstance(e, impl.AgentEvent.TextDelta))
    assert streamed == "Hi there"
    assert events[-1] == impl.AgentEvent.Done("Hi there")


@suite.test
async def test_streaming_streaming_agent_tool_loop(impl, tmp):
    provider = impl.MockStreamProvider(
        [tool_turn(("c1", "read", {"path": "test.txt"})), text_turn("The file says hello")]
    )
    agent = impl.StreamingAgent(provider).tool(impl.ReadTool())
    (tmp / "test.txt").write_text("hello")
    # The mock ignores the conversation; the relative path may fail to read, which is fine:
    # the loop must still go round and finish.
    events = []
    assert await agent.run("Read test.txt", events.append) == "The file says hello"
    # The loop went round: the model's call was announced, and the next turn's answer ended it.
    calls = [(e.id, e.name) for e in events if isinstance(e, impl.AgentEvent.ToolCall)]
    assert calls == [("c1", "read")]
    assert events[-1] == impl.AgentEvent.Done("The file says hello")


@suite.test
async def test_streaming_streaming_agent_chat_history(impl, tmp):
    agent = impl.StreamingAgent(impl.MockStreamProvider([text_turn("Reply")]))
    messages = [Message.User("Hello")]
    assert await agent.chat(messages, lambda event: None) == "Reply"
    assert len(messages) == 2
    assert isinstance(messages[1], Message.Assistant)


@suite.test
async def test_streaming_stream_chat_events_order(impl, tmp):
    # One chunk per letter, then a stop chunk and the [DONE] line.
    body = _sse(*(_chunk({"content": c}) for c in "ABC"), _chunk({}, "stop"), "data: [DONE]")
    turn, events = await _stream(impl, body, [Message.User("Hi")])
    assert turn.text == "ABC"
    ev = impl.StreamEvent
    # In order, and exactly one Done: it comes from the [DONE] line only.
    assert events == [ev.TextDelta("A"), ev.TextDelta("B"), ev.TextDelta("C"), ev.Done()]
