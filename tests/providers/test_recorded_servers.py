"""clawnb against the bytes real local servers sent (issue 27).

``tests/providers/data/recorded_exchanges.json`` holds exchanges recorded from llama-cpp-python
0.3.36's server and from the ``llama-server`` built from the llama.cpp it vendors, with
SmolLM2-135M-Instruct (``record_real_servers.py`` says how; ``docs/local-models.md`` lists the
commands). :class:`tests.fake_servers.RecordedServer` answers each request with the recording
of the case the real server answered that way, through the real provider over HTTP on
127.0.0.1. ``test_real_local_servers.py`` runs the same cases against the real servers when
``CLAWNB_REAL_LLAMA`` names them.
"""

from __future__ import annotations

import json

import httpx
import pytest

from clawnb.agent import INTERRUPTED_REPLY_NOTE
from clawnb.course._http_fixture import RESET, LoopbackServer, chunk, chunked_head, http_response
from clawnb.errors import BadRequestError, ContextOverflowError
from clawnb.providers.openai import OpenAICompatProvider, convert_messages
from clawnb.providers.profiles import detect, models_context_window
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall, ToolDefinition
from tests.fake_servers import ALTERNATION_MESSAGE, RecordedServer, recorded_exchanges

READ = ToolDefinition(
    "read",
    "Read a text file and return its contents.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)
QUESTION = [Message.System("Answer briefly."), Message.User("What is the capital of France?")]
LONG = [Message.User("Please remember these words: " + "apple banana cherry " * 300)]
EXCHANGES = recorded_exchanges()


def streamed_text(case: str) -> str:
    """The text a recorded stream carried, read straight from its ``data:`` lines."""
    out = []
    for line in EXCHANGES[case]["body"].splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:]).get("choices") or ():
                out.append((choice.get("delta") or {}).get("content") or "")
    return "".join(out)


def provider(peer: RecordedServer, **options) -> OpenAICompatProvider:
    options.setdefault("server", "auto")  # what the chat and %%claw use
    options.setdefault("retry_backoff", 0.01)
    return OpenAICompatProvider("smollm2", base_url=peer.url, **options)


def test_the_recordings_hold_every_case_the_issue_names():
    # the real servers, as recorded: what the fakes and these tests rest on
    assert EXCHANGES["lcp/stream_tools_auto"]["status"] == 200
    assert EXCHANGES["lcp/stream_tools_auto"]["body"] == ""  # the empty 200
    assert EXCHANGES["lcp512/stream_overflow"]["body"] == ""  # overflow inside a stream
    assert EXCHANGES["lcp512/json_overflow"]["status"] == 400  # ... and outside it
    assert EXCHANGES["ls512/stream_overflow"]["status"] == 400  # llama-server: 400 both ways
    for case in ("nemo/two_users", "nemo/two_systems", "nemo/tool_round_no_answer"):
        assert EXCHANGES[case]["status"] == 400
        assert ALTERNATION_MESSAGE in EXCHANGES[case]["body"]
    assert "length 9" in EXCHANGES["nemo/long_tool_id"]["body"]
    assert EXCHANGES["nemo/nine_char_tool_id"]["status"] == 200
    props = json.loads(EXCHANGES["ls512/props"]["body"])
    assert props["default_generation_settings"]["n_ctx"] == 512


# -- llama-cpp-python ---------------------------------------------------------------------------


async def test_llama_cpp_python_is_never_asked_to_stream_an_auto_tool_choice():
    with RecordedServer("lcp") as server:
        # what the server does with such a request: HTTP 200, not a byte
        raw = httpx.post(
            server.url + "/chat/completions",
            json={"messages": [], "stream": True, "tools": [{}], "tool_choice": "auto"},
        )
        assert (raw.status_code, raw.content) == (200, b"")
        p = provider(server)
        turn = await p.stream_chat(QUESTION, [READ])
    sent = server.requests[-1]
    assert "stream" not in sent and sent["tool_choice"] == "auto"
    assert server.cases[-1] == "lcp/json_tools_auto"
    # SmolLM2 picks a function even for this question, with the server's own long id
    assert turn.tool_calls and turn.tool_calls[0].name == "read"
    assert turn.tool_calls[0].id.startswith("call__0_read_cmpl-")


async def test_llama_cpp_python_streams_a_plain_question_without_usage():
    with RecordedServer("lcp") as server:
        turn = await provider(server).stream_chat(QUESTION, [])
    assert server.cases == ["lcp/models", "lcp/stream"]  # /v1/models said which server
    assert turn.text == streamed_text("lcp/stream") and turn.text
    assert turn.usage is None  # it sends no usage in streams


async def test_llama_cpp_python_streams_a_forced_tool_call():
    forced = {"type": "function", "function": {"name": "read"}}
    with RecordedServer("lcp") as server:
        turn = await provider(server, tool_choice=forced).stream_chat(QUESTION, [READ])
    assert server.cases[-1] == "lcp/stream_tools_forced"
    assert [c.name for c in turn.tool_calls] == ["read"]
    assert turn.stop_reason == StopReason.TOOL_USE


async def test_an_overflow_inside_a_llama_cpp_python_stream_is_recognised_with_its_window():
    with RecordedServer("lcp512") as server:
        p = provider(server)
        with pytest.raises(ContextOverflowError) as info:
            await p.stream_chat(LONG, [])
    # the empty stream, then the same request once unstreamed for the server's reason
    assert server.cases[1:] == ["lcp512/stream_overflow", "lcp512/json_overflow"]
    assert info.value.context_window == 512 and p.context_window == 512


async def test_once_the_window_is_known_an_empty_stream_past_it_is_an_overflow_at_once():
    with RecordedServer("lcp512") as server:
        p = provider(server, context_window=512)
        with pytest.raises(ContextOverflowError):
            await p.stream_chat(LONG, [])
    assert server.cases[1:] == ["lcp512/stream_overflow"]


# -- llama.cpp's llama-server -----------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
async def test_llama_server_overflow_names_its_window_in_and_out_of_streams(stream):
    with RecordedServer("ls512") as server:
        p = provider(server)
        ask = p.stream_chat if stream else p.chat
        with pytest.raises(ContextOverflowError) as info:
            await ask(LONG, [])
    assert info.value.context_window == 512
    assert "exceeds the available context size (512 tokens)" in str(info.value)


async def test_llama_server_names_itself_and_its_window_in_v1_models():
    models = json.loads(EXCHANGES["ls512/models"]["body"])
    assert detect(models, EXCHANGES["ls512/models"]["headers"]["server"]) == "llama.cpp"
    assert models_context_window(models, "smollm2") == 512  # meta.n_ctx, not n_ctx_train
    with RecordedServer("ls512") as server:
        p = provider(server)
        profile = await p.detect_server()
    assert profile is not None and profile.kind == "llama.cpp"
    assert p.context_window == 512


async def test_llama_server_ends_a_stream_with_a_usage_only_chunk():
    with RecordedServer("ls") as server:
        turn = await provider(server).stream_chat(QUESTION, [])
    assert turn.text == streamed_text("ls/stream") and turn.text
    assert turn.usage is not None and turn.usage.input_tokens == 30


async def test_llama_server_without_a_tool_format_answers_a_required_choice_in_text():
    # SmolLM2 under the Qwen2.5 template: "required" does not force a call, and the reply is
    # cut at the cap — shown as cut off, not as a finished answer
    with RecordedServer("ls") as server:
        p = provider(server, tool_choice="required", max_tokens=48)
        turn = await p.stream_chat(QUESTION, [READ])
    assert not turn.tool_calls and turn.stop_reason == StopReason.LENGTH
    assert turn.cut_off_note() == "cut off at the output limit (48 tokens)"


# -- llama-server with the Mistral-Nemo template -----------------------------------------------


@pytest.mark.parametrize(
    "history",
    [
        [*QUESTION, Message.User("And of Italy?")],
        [QUESTION[0], Message.System("[summary] none"), QUESTION[1]],
        [
            *QUESTION,
            Message.Assistant(AssistantTurn(f"The capital is\n\n{INTERRUPTED_REPLY_NOTE}")),
            Message.User("And of Italy?"),
        ],
    ],
    ids=["two users", "two systems", "stopped mid-reply"],
)
async def test_the_mistral_nemo_template_accepts_what_clawnb_sends(history):
    with RecordedServer("nemo") as server:
        wire = convert_messages(history)  # the book's conversion, as it was sent before
        raw = httpx.post(server.url + "/chat/completions", json={"messages": wire, "stream": True})
        refused = raw.status_code == 400 and ALTERNATION_MESSAGE in raw.json()["error"]["message"]
        turn = await provider(server).stream_chat(history, [])
    assert refused or len(wire) == len(history) == 4  # the stopped reply alternates as stored
    assert server.cases[-1] == "nemo/stream"
    assert (turn.text or "") == streamed_text("nemo/stream")  # SmolLM2 ends at once here


async def test_the_mistral_nemo_template_gets_nine_character_ids_after_refusing_others():
    call = ToolCall("call__0_read_cmpl-4e4d9343-db94-4d56-8287-19457e3a2e5c", "read", {})
    history = [
        Message.User("Read notes.txt"),
        Message.Assistant(AssistantTurn("", [call], StopReason.TOOL_USE)),
        Message.ToolResult(call.id, "buy milk"),
        Message.User("What did it say?"),  # straight after the result: no answer came
    ]
    with RecordedServer("nemo") as server:
        p = provider(server, server="llama.cpp", max_retries=0)
        turn = await p.stream_chat(history, [READ])
        assert server.cases == ["nemo/long_tool_id", "nemo/nine_char_tool_id"]
        assert (turn.text or "") == streamed_text("nemo/nine_char_tool_id")
        silent = OpenAICompatProvider(
            "smollm2", base_url=server.url, short_tool_ids=False, max_retries=0
        )
        with pytest.raises(BadRequestError, match="length 9"):
            await silent.stream_chat(history, [READ])


async def test_the_question_asked_once_after_an_empty_stream_survives_a_dropped_connection():
    # Against the real llama-cpp-python server (CLAWNB_REAL_LLAMA), the unstreamed request
    # after an empty stream met the kept-alive connection the server had just dropped:
    # "closed the connection without answering", instead of the overflow it would have said.
    empty = [chunked_head(), chunk(b"")]
    overflow = EXCHANGES["lcp512/json_overflow"]
    answer = http_response(overflow["body"], 400, "application/json")
    async with LoopbackServer(empty, [RESET], answer) as server:
        p = OpenAICompatProvider("smollm2", base_url=server.url, server="llama-cpp-python")
        with pytest.raises(ContextOverflowError) as info:
            await p.stream_chat(LONG, [])
    assert server.connections == 3 and info.value.context_window == 512
