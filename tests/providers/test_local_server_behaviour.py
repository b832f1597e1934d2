"""Local servers as they behave (issue 27), through the real provider over HTTP on 127.0.0.1
against tests/fake_servers.py: a forced tool choice lasts one round; the wire history
alternates for a strict template whatever shape the stored history has; a reply cut at the
output cap says so; llama-cpp-python's empty 200s are never a silent failure."""

from __future__ import annotations

import itertools
import logging

import httpx
import pytest

from clawnb.agent import INTERRUPTED_REPLY_NOTE
from clawnb.errors import ContextOverflowError, ProviderError, ServerError
from clawnb.events import AgentEvent, StreamEvent
from clawnb.notebook.transcript import Transcript
from clawnb.providers.openai import (
    CONTINUED,
    NO_ANSWER,
    OpenAICompatProvider,
    convert_messages,
    convert_tools,
    wire_messages,
)
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall, ToolDefinition
from tests.conftest import chat_with_server, end_chat
from tests.fake_servers import ALTERNATION_MESSAGE, FakeServer, Reply

READ = ToolDefinition(
    "read", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}
)
FORCE_READ = {"type": "function", "function": {"name": "read"}}


# -- 4. a forced tool choice applies to the first round only -----------------------------------


def test_a_forced_tool_choice_is_sent_for_the_round_that_answers_the_person_only():
    provider = OpenAICompatProvider("m", base_url="http://127.0.0.1:9/v1", tool_choice=FORCE_READ)
    ask = [Message.User("read notes.txt")]
    call = ToolCall("c1", "read", {"path": "notes.txt"})
    after = [*ask, Message.Assistant(AssistantTurn(None, [call])), Message.ToolResult("c1", "x")]
    assert provider.build_request(ask, [READ])["tool_choice"] == FORCE_READ
    assert provider.build_request(after, [READ])["tool_choice"] == "auto"
    assert "tool_choice" not in provider.build_request(ask, [])  # no tools: no choice
    required = OpenAICompatProvider("m", base_url="http://127.0.0.1:9/v1", tool_choice="required")
    assert required.build_request(after, [READ])["tool_choice"] == "auto"
    for kept in ("none", "auto"):  # not forced: every round as configured
        plain = OpenAICompatProvider("m", base_url="http://127.0.0.1:9/v1", tool_choice=kept)
        assert plain.build_request(after, [READ])["tool_choice"] == kept


pexpect = pytest.importorskip("pexpect")


def test_chat_tool_choice_read_forces_one_read_then_the_model_answers(tmp_path):
    # The issue: --tool-choice read + "read notes.txt" made 50 reads, then "exceeded max
    # turns (50)". The fake obeys a forced choice every time it is sent, as a grammar does.
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("buy milk\n")
    replies = [Reply("It says: buy milk."), Reply("Still milk.")]
    with FakeServer("llama.cpp", replies, forced_arguments={"path": "notes.txt"}) as server:
        child = chat_with_server(tmp_path, server.url, "--tool-choice", "read")
        child.sendline("read notes.txt")
        child.expect("It says: buy milk.")
        child.expect("you> ")
        child.sendline("and again?")  # a new message: forced again, once
        child.expect("Still milk.")
        child.expect("you> ")
        end_chat(child)
    choices = [r.get("tool_choice") for r in server.requests]
    assert choices == [FORCE_READ, "auto", FORCE_READ, "auto"]
    assert server.forced_calls == 2
    assert "buy milk" in server.requests[1]["messages"][-1]["content"]  # the read ran


# -- 6. the wire history always alternates -----------------------------------------------------

SYSTEM = Message.System("You are terse.")
SUMMARY = Message.System("[summary of the earlier conversation] they read files")


def _calls(n: int, text: str | None = None) -> list[Message]:
    calls = [ToolCall(f"c{n}{i}", "read", {"path": f"f{i}"}) for i in range(2)]
    turn = AssistantTurn(text, calls, StopReason.TOOL_USE)
    return [Message.Assistant(turn), *(Message.ToolResult(c.id, f"result {c.id}") for c in calls)]


# Every piece a front end's history is made of (n numbers the texts so nothing is lost).
SHAPES = {
    "answered": lambda n: [Message.User(f"q{n}"), Message.Assistant(AssistantTurn(f"a{n}"))],
    "tool round": lambda n: [
        Message.User(f"q{n}"),
        *_calls(n),
        Message.Assistant(AssistantTurn(f"a{n}")),
    ],
    "tool round with text": lambda n: [
        Message.User(f"q{n}"),
        *_calls(n, f"let me look {n}"),
        Message.Assistant(AssistantTurn(f"a{n}")),
    ],
    # Ctrl-C, a failed request, an overflow before any answer: the message stays alone
    "failed turn": lambda n: [Message.User(f"q{n}")],
    # Ctrl-C or the turn limit in a tool round: results, no answer
    "interrupted tools": lambda n: [Message.User(f"q{n}"), *_calls(n)],
    # kill -9 recovery: the streamed text is the assistant's message
    "recovered text": lambda n: [
        Message.User(f"q{n}"),
        Message.Assistant(AssistantTurn(f"a{n} [interrupted]")),
    ],
    # Ctrl-C, a cell's interrupt or a task's cancel mid-stream: the words shown are kept
    "stopped mid-reply": lambda n: [
        Message.User(f"q{n}"),
        Message.Assistant(AssistantTurn(f"a{n}\n\n{INTERRUPTED_REPLY_NOTE}")),
    ],
    "empty answer": lambda n: [Message.User(f"q{n}"), Message.Assistant(AssistantTurn(None))],
    # the oldest turns dropped: what is kept may start with the assistant's turn
    "kept tail": lambda n: [Message.Assistant(AssistantTurn(f"a{n}"))],
}


def _histories():
    for prefix in ([SYSTEM], [SYSTEM, SUMMARY], [SUMMARY, SYSTEM], []):
        for names in itertools.chain.from_iterable(
            itertools.product(SHAPES, repeat=k) for k in (1, 2)
        ):
            body = [m for n, name in enumerate(names) for m in SHAPES[name](n)]
            yield [*prefix, *body, Message.User("now")], names


def _texts(messages: list[Message]) -> list[str]:
    out = []
    for m in messages:
        if isinstance(m, Message.Assistant):
            out.append(m.turn.text or "")
        else:
            out.append(m.content)
    return [t for t in out if t]


async def test_every_history_shape_is_accepted_by_a_strict_alternation_template():
    histories = list(_histories())
    assert len(histories) > 250
    with FakeServer("llama.cpp", template="mistral-nemo") as server:
        # the template also wants 9-character tool-call ids (tests/providers/test_tool_call_ids.py)
        provider = OpenAICompatProvider(
            "m", base_url=server.url, max_retries=0, short_tool_ids=True
        )
        for history, names in histories:
            before = list(history)
            turn = await provider.stream_chat(history, [READ])
            assert turn.text == "ok", names
            assert history == before  # the stored history is not touched
            wire = server.requests[-1]["messages"]
            assert [m["role"] for m in wire].count("system") <= 1, names
            shown = " ".join(str(m.get("content")) for m in wire)
            assert all(text in shown for text in _texts(history)), names  # nothing is lost
            sent_ids = {m["tool_call_id"] for m in wire if m["role"] == "tool"}
            called = {c["id"] for m in wire for c in m.get("tool_calls") or ()}
            results = {m.id for m in history if isinstance(m, Message.ToolResult)}
            assert sent_ids == called and len(sent_ids) == len(results), names


def test_the_strict_fake_refuses_what_the_book_conversion_sends():
    # Guards the fixture: two user messages, two system messages, a user after tool results.
    shapes = [
        [SYSTEM, Message.User("q1"), Message.User("q2")],
        [SYSTEM, SUMMARY, Message.User("q")],
        [Message.User("q"), *_calls(1), Message.User("q2")],
    ]
    with FakeServer("llama.cpp", template="mistral-nemo") as server:
        for messages in shapes:
            wire = convert_messages(messages)
            for entry in wire:
                entry.setdefault("content", "")
            response = httpx.post(
                server.url + "/chat/completions", json={"model": "m", "messages": wire}
            )
            assert response.status_code == 400
            assert ALTERNATION_MESSAGE in response.json()["error"]["message"]


def test_wire_messages_merges_neighbours_and_fills_the_missing_turn():
    wire = wire_messages(
        [SYSTEM, SUMMARY, Message.User("q1"), Message.User("q2"), *_calls(1), Message.User("q3")]
    )
    assert [m["role"] for m in wire] == ["system", "user", "assistant", "tool", "tool"] + [
        "assistant",
        "user",
    ]
    assert wire[0]["content"] == f"{SYSTEM.content}\n\n{SUMMARY.content}"
    assert wire[1]["content"] == "q1\n\nq2"
    assert wire[5]["content"] == NO_ANSWER
    tail = wire_messages(
        [SYSTEM, SUMMARY, Message.Assistant(AssistantTurn("a")), Message.User("q")]
    )
    assert [m["content"] for m in tail[1:]] == [CONTINUED, "a", "q"]


# -- 7. a reply cut at the output cap says so --------------------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
async def test_a_reply_cut_at_the_output_cap_is_marked_with_the_cap(stream):
    with FakeServer("llama.cpp", [Reply("The capital of", usage=None, finish="length")]) as server:
        provider = OpenAICompatProvider("m", base_url=server.url, max_tokens=5)
        ask = provider.stream_chat if stream else provider.chat
        turn = await ask([Message.User("capital of France?")], [])
    assert turn.stop_reason == StopReason.LENGTH and turn.output_limit == 5
    assert turn.cut_off_note() == "cut off at the output limit (5 tokens)"
    assert AssistantTurn.from_dict(turn.to_dict()) == turn
    assert AssistantTurn("done").cut_off_note() is None


def test_the_notebook_transcript_notes_a_cut_off_reply():
    transcript = Transcript()
    transcript.apply(AgentEvent.TextDelta("The capital of"))
    cut = AssistantTurn("The capital of", stop_reason=StopReason.LENGTH, output_limit=64)
    block = transcript.apply(AgentEvent.TurnEnd(cut))
    assert block is not None and block.text == "(cut off at the output limit (64 tokens))"
    assert transcript.apply(AgentEvent.TurnEnd(AssistantTurn("fine"))) is None


def test_chat_says_a_reply_was_cut_off_and_config_shows_limits_as_numbers(tmp_path):
    replies = [Reply("The capital of", usage=(9, 7), finish="length")]
    with FakeServer("llama.cpp", replies) as server:
        child = chat_with_server(tmp_path, server.url, "--max-output-tokens", "7")
        child.sendline("capital of France?")
        child.expect(r"\(cut off at the output limit \(7 tokens\)\)")
        child.expect("you> ")
        child.sendline("/config")
        child.expect("you> ")
        shown = child.before
        end_chat(child)
    assert "max_output_tokens = 7" in shown
    assert "server context window = unknown" in shown
    assert "max_context_tokens = " in shown and "None" not in shown


# -- 2/3. llama-cpp-python: empty 200s --------------------------------------------------------


async def test_llama_cpp_python_sends_auto_tool_choice_unstreamed_and_says_so_once(caplog):
    replies = [Reply(None, [("c1", "read", {"path": "a"})]), Reply("It says hi.")]
    with FakeServer("llama-cpp-python", replies) as server:
        raw = httpx.post(
            server.url + "/chat/completions",
            json={
                "model": "m",
                "stream": True,
                "tools": convert_tools([READ]),
                "tool_choice": "auto",
                "messages": [{"role": "user", "content": "capital of France?"}],
            },
        )
        assert raw.status_code == 200 and raw.content == b""  # the fake fails as the server
        provider = OpenAICompatProvider("m", base_url=server.url, server="auto")
        events: list = []
        with caplog.at_level(logging.WARNING, logger="clawnb"):
            first = await provider.stream_chat([Message.User("read a")], [READ], events.append)
            second = await provider.stream_chat([Message.User("hi")], [READ], events.append)
    assert [c.name for c in first.tool_calls] == ["read"] and second.text == "It says hi."
    assert StreamEvent.ToolCallStart(0, "c1", "read") in events  # the front end still sees it
    sent = server.requests[1:]
    assert [r.get("stream") for r in sent] == [None, None]
    assert all(r["tool_choice"] == "auto" for r in sent)
    told = [r for r in caplog.records if "cannot stream" in r.getMessage()]
    assert len(told) == 1


async def test_a_llama_cpp_python_empty_stream_is_asked_once_unstreamed_for_its_reason():
    # a history whose assistant message lacks "content" breaks its template: inside a stream
    # that is an empty 200; the unstreamed request brings the server's own words, once
    broken = {"role": "assistant", "tool_calls": []}
    with FakeServer("llama-cpp-python") as server:
        provider = OpenAICompatProvider("m", base_url=server.url, server="llama-cpp-python")
        original = provider.build_request

        def request(messages, tools, *, stream=False):
            body = original(messages, tools, stream=stream)
            body["messages"] = [broken]
            return body

        provider.build_request = request  # type: ignore[method-assign]
        with pytest.raises(ServerError, match="has no attribute 'content'"):
            await provider.stream_chat([Message.User("x")], [], None)
    assert [r.get("stream") for r in server.requests] == [True, None]  # no retry loop


async def test_an_unknown_servers_empty_stream_stays_one_clear_error():
    with FakeServer("llama-cpp-python") as server:
        provider = OpenAICompatProvider("m", base_url=server.url, max_retries=2)
        provider.build_request = lambda *a, **k: {  # type: ignore[method-assign]
            "model": "m",
            "stream": True,
            "messages": [{"role": "assistant", "tool_calls": []}],
        }
        with pytest.raises(ProviderError, match="empty stream"):
            await provider.stream_chat([Message.User("x")], [])
    assert len(server.requests) == 1


async def test_an_overflow_inside_a_llama_cpp_python_stream_is_recognised():
    long = [Message.User("word " * 3000)]  # ~15,000 characters, far past 512 tokens
    with FakeServer("llama-cpp-python", n_ctx=512) as server:
        provider = OpenAICompatProvider(
            "m", base_url=server.url, server="llama-cpp-python", tool_choice="none"
        )
        with pytest.raises(ContextOverflowError) as first:
            await provider.stream_chat(long, [READ])
        # the unstreamed request named the window: the next empty stream needs no second ask
        assert provider.context_window == 512
        with pytest.raises(ContextOverflowError) as second:
            await provider.stream_chat(long, [READ])
    assert first.value.context_window == second.value.context_window == 512
    assert [r.get("stream") for r in server.requests] == [True, None, True]
    assert "longer than its context window (512 tokens)" in str(second.value)


def test_chat_does_not_keep_a_message_that_overflows_a_llama_cpp_python_stream(tmp_path):
    with FakeServer("llama-cpp-python", window_after_system=700) as server:
        child = chat_with_server(
            tmp_path, server.url, "--server", "llama-cpp-python", "--tool-choice", "none"
        )
        child.sendline("too long: " + "word " * 3000)
        child.expect("you> ")
        refused = child.before
        child.sendline("hello")
        child.expect("ok")
        child.expect("you> ")
        end_chat(child)
    assert "maximum context length" in refused  # the server's reason, not "empty stream"
    assert "so it was not kept" in refused
    last = server.requests[-1]["messages"]
    assert not any("too long:" in str(m.get("content")) for m in last)  # not kept
