"""The terminal chat (pexpect) against fake local servers on 127.0.0.1: what it says when the
server reports no usage, and how it recovers when the conversation outgrows the context."""

from __future__ import annotations

import pytest

from clawnb.types import TokenUsage
from clawnb.usage import CostTracker
from tests.conftest import chat_with_server, end_chat
from tests.fake_servers import FakeServer, Reply

pexpect = pytest.importorskip("pexpect")


def test_cost_says_not_reported_when_the_server_sends_no_usage(tmp_path):
    with FakeServer("llama.cpp", [Reply("hi there", usage=None)]) as server:
        child = chat_with_server(tmp_path, server.url)
        child.sendline("hello")
        child.expect("hi there")
        child.expect("you> ")
        child.sendline("/cost")
        child.expect("you> ")
        cost = child.before
        end_chat(child)
    assert "tokens: not reported" in cost and "0 in + 0 out" not in cost


def test_cost_tracker_counts_unreported_turns_apart():
    tracker = CostTracker(1.0, 2.0, model="m")
    tracker.record(None)
    assert tracker.summary() == "tokens: not reported | cost: unknown (no usage reported)"
    tracker.record(TokenUsage(1000, 500))
    assert tracker.summary() == "tokens: 1000 in + 500 out (+ 1 turn not reported) | cost: $0.0020"
    tracker.reset()
    tracker.record(TokenUsage(0, 0))  # the book: a reported zero is a zero
    assert tracker.summary() == "tokens: 0 in + 0 out | cost: $0.0000"


def test_chat_recovers_from_context_overflow_and_the_next_turns_work(tmp_path):
    long = "Please remember this paragraph. " * 50  # ~1,600 characters, ~400 tokens
    replies = [
        Reply("First answer."),
        Reply("The user shared two long paragraphs."),  # the summary compaction asks for
        Reply("Second answer, after compacting."),
        Reply("Summary again."),  # the too-long message's recovery attempt
        Reply("Short answer."),
    ]
    with FakeServer("llama.cpp", replies) as server:
        child = chat_with_server(tmp_path, server.url)
        child.sendline("first: " + long)
        child.expect("First answer.")
        child.expect("you> ")
        # from now on the window holds the system prompt, one long message and a bit more
        server.window_after_system = 700
        child.sendline("second: " + long)
        child.expect("too long for the model's context")
        child.expect("Second answer, after compacting.")
        child.expect("you> ")
        # a message that cannot fit even alone: one clear error, and it is not kept
        child.sendline("third: " + "word " * 4000)
        child.expect("you> ")
        refused = child.before
        child.sendline("fourth: short")
        child.expect("Short answer.")
        child.expect("you> ")
        child.sendline("/compact")
        child.expect("you> ")
        compacted = child.before
        end_chat(child)
    assert "context" in refused and "not kept" in refused
    assert "nothing to compact" not in compacted
    last = server.requests[-2]["messages"]  # the turn before /compact's summary request
    assert last[-1] == {"role": "user", "content": "fourth: short"}
    assert not any("third: " in str(m.get("content")) for m in last)  # no poisoned history


def test_a_tool_round_on_llama_cpp_python_works_end_to_end(tmp_path):
    # The first finding: the request after every tool call failed on this server
    # (no "content" on the assistant message), and without tool_choice it hid the tools.
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("buy milk\n")
    replies = [Reply(None, [("c1", "read", {"path": "notes.txt"})]), Reply("It says: buy milk.")]
    with FakeServer("llama-cpp-python", replies) as server:
        child = chat_with_server(tmp_path, server.url)
        child.sendline("what is in notes.txt?")
        child.expect("It says: buy milk.")
        child.expect("you> ")
        end_chat(child)
    first, second = server.requests
    assert first["tool_choice"] == "auto" and first["tools"]
    assistant = second["messages"][-2]
    assert assistant["role"] == "assistant" and assistant["content"] == ""
    assert (
        second["messages"][-1]["role"] == "tool" and "buy milk" in second["messages"][-1]["content"]
    )
