"""The decoder, the normaliser in front of the book's accumulator, and the book's parser."""

from __future__ import annotations

import json

import pytest
from provider_helpers import assemble_payloads

from clawnb.errors import StreamError
from clawnb.events import StreamEvent
from clawnb.providers.sse import (
    ChunkNormaliser,
    SSEDecoder,
    StreamAccumulator,
    parse_arguments,
    parse_sse_line,
)
from clawnb.types import StopReason, TokenUsage

# --- SSEDecoder -------------------------------------------------------------------------------


def decode(*chunks: bytes) -> list[bytes]:
    decoder = SSEDecoder()
    out = []
    for c in chunks:
        out += decoder.feed(c)
    return out + decoder.flush()


def test_decoder_data_with_and_without_space():
    assert decode(b"data: a\ndata:b\ndata:  c\n") == [b"a", b"b", b" c"]


def test_decoder_ignores_comments_and_other_fields():
    assert decode(b": keep-alive\nevent: message\nid: 7\nretry: 100\ndata: x\n\n") == [b"x"]


def test_decoder_crlf_split_across_chunks():
    assert decode(b"data: a\r", b"\ndata: b\r\n\r\n") == [b"a", b"b"]


def test_decoder_lone_cr_line_ends():
    assert decode(b"data: a\rdata: b\r") == [b"a", b"b"]


def test_decoder_line_split_in_the_middle_of_a_multibyte_character():
    raw = 'data: {"c":"héllo"}\n'.encode()
    cut = raw.index("é".encode()) + 1
    assert decode(raw[:cut], raw[cut:]) == ['{"c":"héllo"}'.encode()]


def test_decoder_flush_handles_last_line_without_newline():
    decoder = SSEDecoder()
    assert decoder.feed(b"data: [DONE]") == []
    assert decoder.flush() == [b"[DONE]"]


def test_decoder_strips_bom():
    assert decode(b"\xef\xbb\xbfdata: a\n") == [b"a"]
    assert decode(b"\xef", b"\xbb", b"\xbfdata: b\n") == [b"b"]  # split across chunks
    assert decode(b"", b"d", b"ata: c\n") == [b"c"]


def test_decoder_hands_out_a_line_as_soon_as_it_ends():
    decoder = SSEDecoder()
    assert decoder.feed(b"data: first\n") == [b"first"]  # no waiting for the blank line
    assert decoder.feed(b"\ndata: sec") == []
    assert decoder.feed(b"ond\n") == [b"second"]


# --- ChunkNormaliser → StreamAccumulator -------------------------------------------------------


def assemble(*payloads):
    return assemble_payloads(p if isinstance(p, (str, bytes)) else json.dumps(p) for p in payloads)


def chunk(**delta):
    return {"choices": [{"index": 0, "delta": delta}]}


def test_normaliser_error_object_raises_with_server_message():
    normaliser = ChunkNormaliser()
    normaliser.feed(json.dumps(chunk(content="partial")))
    with pytest.raises(StreamError, match="Provider disconnected") as info:
        normaliser.feed(json.dumps({"error": {"message": "Provider disconnected", "code": 502}}))
    assert info.value.code == 502


def test_normaliser_error_string_and_object_error_forms():
    with pytest.raises(StreamError, match="overloaded"):
        ChunkNormaliser().feed('{"error": "overloaded"}')
    with pytest.raises(StreamError, match="bad things") as info:
        ChunkNormaliser().feed('{"object": "error", "message": "bad things", "code": "E42"}')
    assert info.value.code == "E42"


def test_normaliser_finish_reason_error_raises():
    with pytest.raises(StreamError):
        ChunkNormaliser().feed(json.dumps({"choices": [{"delta": {}, "finish_reason": "error"}]}))


def test_normaliser_json_split_over_two_data_lines():
    turn, _ = assemble('{"choices":[{"delta":', '{"content":"joined"}}]}')
    assert turn.text == "joined"


def test_normaliser_garbage_is_ignored():
    turn, events = assemble("{not json", "[1,2]", "null", '"str"', chunk(content="ok"))
    assert turn.text == "ok"
    assert events == [StreamEvent.TextDelta("ok"), StreamEvent.Done()]


def test_normaliser_gives_a_call_without_arguments_an_empty_object():
    _, events = assemble(chunk(tool_calls=[{"index": 0, "id": "c", "function": {"name": "now"}}]))
    assert events == [
        StreamEvent.ToolCallStart(0, "c", "now"),
        StreamEvent.ToolCallDelta(0, "{}"),
        StreamEvent.Done(),
    ]


def test_normaliser_hands_on_arguments_encoded_twice_decoded_once():
    encoded = json.dumps(json.dumps({"path": "a"}))
    turn, events = assemble(
        chunk(tool_calls=[{"index": 0, "id": "c", "function": {"name": "read"}}]),
        chunk(tool_calls=[{"index": 0, "function": {"arguments": encoded[:5]}}]),
        chunk(tool_calls=[{"index": 0, "function": {"arguments": encoded[5:]}}]),
    )
    assert turn.tool_calls[0].arguments == {"path": "a"}
    deltas = [e for e in events if isinstance(e, StreamEvent.ToolCallDelta)]
    assert deltas == [StreamEvent.ToolCallDelta(0, '{"path":"a"}')]  # one, at the end


def test_normaliser_streams_ordinary_arguments_as_they_arrive():
    normaliser = ChunkNormaliser()
    normaliser.feed(
        json.dumps(chunk(tool_calls=[{"index": 0, "id": "c", "function": {"name": "w"}}]))
    )
    piece = chunk(tool_calls=[{"index": 0, "function": {"arguments": '{"a":'}}])
    assert normaliser.feed(json.dumps(piece)) == [StreamEvent.ToolCallDelta(0, '{"a":')]


def test_deeply_nested_json_never_raises():
    deep = "[" * 100_000
    assert parse_sse_line("data: " + deep) is None
    turn, _ = assemble(deep, "{" * 50_000, chunk(content="still fine"))
    assert turn.text == "still fine"
    args = '{"a":' * 100_000
    assert parse_arguments(args) == (None, args)
    acc = StreamAccumulator()
    acc.feed(StreamEvent.ToolCallStart(0, "c", "f"))
    acc.feed(StreamEvent.ToolCallDelta(0, "[" * 100_000 + "]" * 100_000))
    assert acc.finish().tool_calls[0].invalid_arguments is not None


def test_falsy_error_fields_are_not_errors():
    turn, _ = assemble({"error": None, **chunk(content="a")}, {"error": {}, **chunk(content="b")})
    assert turn.text == "ab"


def test_normaliser_odd_usage_values_are_ignored():
    for usage in (
        '{"prompt_tokens": Infinity}',
        '{"prompt_tokens": "x"}',
        "[]",
        '{"prompt_tokens": {"a": 1}}',
    ):
        turn, _ = assemble('{"choices": [], "usage": ' + usage + "}")
        assert turn.usage is None


def test_normaliser_usage_then_done_once():
    normaliser = ChunkNormaliser()
    normaliser.feed(
        json.dumps({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}})
    )
    assert normaliser.feed("[DONE]") == [StreamEvent.Usage(TokenUsage(3, 4)), StreamEvent.Done()]
    assert normaliser.close() == []
    assert normaliser.feed("[DONE]") == []


def test_normaliser_empty_arguments_mean_no_arguments():
    turn, _ = assemble(chunk(tool_calls=[{"index": 0, "id": "c", "function": {"name": "now"}}]))
    assert turn.tool_calls[0].arguments == {}
    assert turn.tool_calls[0].invalid_arguments is None
    assert turn.stop_reason == StopReason.TOOL_USE


def test_normaliser_arguments_sent_as_an_object():
    turn, events = assemble(
        chunk(tool_calls=[{"id": "c", "function": {"name": "read", "arguments": {"path": "a"}}}])
    )
    assert turn.tool_calls[0].arguments == {"path": "a"}
    assert StreamEvent.ToolCallDelta(0, '{"path":"a"}') in events


def test_normaliser_nameless_call_is_dropped_and_never_started():
    turn, events = assemble(chunk(tool_calls=[{"index": 0, "function": {"arguments": "{}"}}]))
    assert turn.tool_calls == []
    assert not any(isinstance(e, StreamEvent.ToolCallStart) for e in events)


def test_normaliser_arguments_before_name_are_delivered_after_start():
    turn, events = assemble(
        chunk(tool_calls=[{"index": 0, "id": "c", "function": {"arguments": '{"a":'}}]),
        chunk(tool_calls=[{"index": 0, "function": {"name": "f", "arguments": "1}"}}]),
    )
    assert turn.tool_calls[0].arguments == {"a": 1}
    assert events[:2] == [
        StreamEvent.ToolCallStart(0, "c", "f"),
        StreamEvent.ToolCallDelta(0, '{"a":1}'),
    ]


def test_two_parallel_calls_with_the_same_id_stay_two_calls():
    # A server that reused "call_1" for a second parallel call (index 1) had both calls
    # merged into one, with the arguments '{"path": "a.txt"}{"path": "b.txt"}'.
    def call(index: int, name: str | None, args: str) -> dict:
        fn = {"arguments": args} | ({"name": name} if name else {})
        return chunk(
            tool_calls=[{"index": index, "id": "call_1", "type": "function", "function": fn}]
        )

    turn, _ = assemble(
        call(0, "read", '{"path": '),
        call(1, "read", '{"path": "b.txt"}'),
        call(0, None, '"a.txt"}'),
    )
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [
        ("read", {"path": "a.txt"}),
        ("read", {"path": "b.txt"}),
    ]
    assert len({c.id for c in turn.tool_calls}) == 2 and turn.tool_calls[0].id == "call_1"


def test_normaliser_mistral_content_parts_with_thinking():
    turn, _ = assemble(
        chunk(content=[{"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}]),
        chunk(content=[{"type": "text", "text": "answer"}]),
    )
    assert turn.text == "answer"
    assert turn.reasoning == "hmm"


def test_parse_arguments():
    assert parse_arguments("") == ({}, None)
    assert parse_arguments('{"a": 1}') == ({"a": 1}, None)
    assert parse_arguments('"{\\"a\\": 1}"') == ({"a": 1}, None)  # encoded twice
    assert parse_arguments("{oops") == (None, "{oops")


# --- the book's parser and accumulator: exact semantics ----------------------------------------


def test_book_parser_needs_the_space_after_data():
    assert parse_sse_line('data:{"choices":[{"delta":{"content":"x"}}]}') is None


def test_book_parser_rejects_schema_violations():
    assert parse_sse_line('data: {"choices":[{"finish_reason":"stop"}]}') is None  # no delta
    assert parse_sse_line('data: {"choices":[]}') is None
    assert parse_sse_line('data: {"choices":[{"delta":{"content":5}}]}') is None
    bad_index = '{"choices":[{"delta":{"tool_calls":[{"id":"x","function":{"name":"f"}}]}}]}'
    assert parse_sse_line("data: " + bad_index) is None


def test_book_parser_start_with_empty_name_when_function_is_missing():
    line = 'data: {"choices":[{"delta":{"tool_calls":[{"index":2,"id":"x"}]}}]}'
    assert parse_sse_line(line) == [StreamEvent.ToolCallStart(2, "x", "")]


def test_book_accumulator_pads_and_ignores_unknown_delta():
    acc = StreamAccumulator()
    acc.feed(StreamEvent.ToolCallDelta(0, "{}"))  # no call 0 yet: ignored
    acc.feed(StreamEvent.ToolCallStart(1, "b", "read"))
    acc.feed(StreamEvent.ToolCallDelta(1, '{"path": "x"}'))
    turn = acc.finish()
    assert [(c.id, c.arguments) for c in turn.tool_calls] == [("b", {"path": "x"})]


def test_book_accumulator_invalid_json_gives_null_and_keeps_the_text():
    acc = StreamAccumulator()
    acc.feed(StreamEvent.ToolCallStart(0, "a", "read"))
    acc.feed(StreamEvent.ToolCallStart(1, "b", "read"))
    acc.feed(StreamEvent.ToolCallDelta(1, "{broken"))
    first, second = acc.finish().tool_calls
    assert first.arguments is None and first.invalid_arguments is None  # "" -> null (book)
    assert second.arguments is None and second.invalid_arguments == "{broken"


def test_book_accumulator_keeps_reasoning_and_usage():
    acc = StreamAccumulator()
    acc.feed(StreamEvent.ReasoningDelta("why"))
    acc.feed(StreamEvent.TextDelta("so"))
    acc.feed(StreamEvent.Usage(TokenUsage(1, 2)))
    turn = acc.finish()
    assert (turn.text, turn.reasoning, turn.usage) == ("so", "why", TokenUsage(1, 2))


def test_book_accumulator_takes_a_long_streamed_write_in_linear_time():
    # Production streams through this class: a 10 MB write in 4 KiB deltas took 14 s when
    # each delta was appended with += (quadratic); pieces joined once take milliseconds.
    import time

    acc = StreamAccumulator()
    acc.feed(StreamEvent.ToolCallStart(0, "c", "write"))
    acc.feed(StreamEvent.ToolCallDelta(0, '{"content": "'))
    start = time.perf_counter()
    for _ in range(2500):
        acc.feed(StreamEvent.ToolCallDelta(0, "x" * 4096))
    acc.feed(StreamEvent.ToolCallDelta(0, '"}'))
    turn = acc.finish()
    assert time.perf_counter() - start < 2.0  # linear: ~0.01 s; quadratic: ~14 s
    assert len(turn.tool_calls[0].arguments["content"]) == 2500 * 4096
