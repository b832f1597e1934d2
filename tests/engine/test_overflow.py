"""Context overflow is recoverable: the ContextManager makes a refused conversation fit again,
through the real provider and a fake local server on 127.0.0.1 that answers with its recorded
context-length error."""

from __future__ import annotations

import pytest

from clawnb.context import SUMMARY_PREFIX, ContextManager, summary_body
from clawnb.errors import ContextOverflowError
from clawnb.providers.openai import OpenAICompatProvider
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall
from tests.fake_servers import FakeServer, Reply

SYSTEM = Message.System("You are a helpful assistant.")


def _exchange(i: int, size: int = 400) -> list[Message]:
    return [
        Message.User(f"question {i}: " + "x" * size),
        Message.Assistant(AssistantTurn(f"answer {i}", [], StopReason.STOP)),
    ]


async def _overflow(provider: OpenAICompatProvider, messages: list[Message]):
    with pytest.raises(ContextOverflowError) as caught:
        await provider.chat(messages, [])
    return caught.value


async def test_recover_summarises_everything_before_the_current_request_and_it_then_fits():
    history = [
        SYSTEM,
        *_exchange(1),
        *_exchange(2),
        *_exchange(3),
        Message.User("now: " + "y" * 1300),
    ]
    with FakeServer("llama.cpp", [Reply("They talked about x."), Reply("done")]) as server:
        # the request and a summary fit, not the history (the summary request carries the
        # whole transcript and its instructions: ~610 tokens here)
        server.window_after_system = 700
        provider = OpenAICompatProvider("m", base_url=server.url)
        error = await _overflow(provider, history)
        context = ContextManager(100_000, 6)
        note = await context.recover(provider, history, error)
        turn = await provider.chat(history, [])
    assert note is not None and "summarised" in note
    assert history[0] == SYSTEM
    assert summary_body(history[1]) == "They talked about x."
    assert history[1].content.startswith(SUMMARY_PREFIX)
    assert history[2] == Message.User("now: " + "y" * 1300)  # the request itself, word for word
    assert turn.text == "done"
    assert context.max_tokens == 3072  # 3/4 of the 4096 the recorded llama.cpp error names
    assert "budget lowered to 3072" in note


async def test_a_tool_round_of_the_current_request_is_kept_whole():
    call = ToolCall("c1", "read", {"path": "a.txt"})
    history = [
        SYSTEM,
        *_exchange(1),
        Message.User("read a.txt"),
        Message.Assistant(AssistantTurn(None, [call], StopReason.TOOL_USE)),
        Message.ToolResult("c1", "contents"),
    ]
    with FakeServer("vllm", [Reply("summary")]) as server:
        provider = OpenAICompatProvider("m", base_url=server.url)
        note = await ContextManager(100_000, 6).recover(provider, history, None)
    assert note is not None
    assert [type(m).__name__ for m in history] == [
        "System",
        "System",
        "User",
        "Assistant",
        "ToolResult",
    ]


async def test_when_even_the_summary_request_is_too_long_the_oldest_messages_are_dropped():
    history = [SYSTEM, *_exchange(1, 4000), *_exchange(2, 4000), Message.User("short question")]
    with FakeServer("vllm", n_ctx=300) as server:
        provider = OpenAICompatProvider("m", base_url=server.url)
        error = await _overflow(provider, history)
        note = await ContextManager(100_000, 6).recover(provider, history, error)
        turn = await provider.chat(history, [])
    assert note is not None and "dropped the 4 oldest messages" in note
    assert history[1].content.startswith(SUMMARY_PREFIX + "(4 earlier messages were dropped")
    assert history[-1] == Message.User("short question")
    assert turn.text == "ok"


async def test_nothing_to_cut_when_the_request_alone_is_too_long():
    history = [SYSTEM, Message.User("z" * 5000)]
    with FakeServer("ollama", n_ctx=300) as server:
        provider = OpenAICompatProvider("m", base_url=server.url)
        error = await _overflow(provider, history)
        assert await ContextManager(100_000, 6).recover(provider, history, error) is None
    assert history == [SYSTEM, Message.User("z" * 5000)]  # untouched


async def test_compact_now_works_on_a_short_history():
    history = [SYSTEM, *_exchange(1)]
    with FakeServer("vllm", [Reply("one question, one answer")]) as server:
        provider = OpenAICompatProvider("m", base_url=server.url)
        context = ContextManager(100_000, 6)
        assert not await context.compact(provider, history)  # the book's rule: too short
        assert await context.compact_now(provider, history)
        assert not await context.compact_now(provider, history[:1])  # only the system prompt
    assert history[0] == SYSTEM and len(history) == 2
    assert summary_body(history[1]) == "one question, one answer"


async def test_after_turn_compaction_whose_summary_does_not_fit_drops_instead_of_failing():
    history = [SYSTEM, *_exchange(1, 4000), *_exchange(2, 4000), *_exchange(3, 10)]
    with FakeServer("llama.cpp", n_ctx=300) as server:
        provider = OpenAICompatProvider("m", base_url=server.url)
        context = ContextManager(100, 2)  # far over budget: compaction is due
        assert await context.maybe_compact(provider, history)
    assert history[1].content.startswith(SUMMARY_PREFIX + "(4 earlier messages were dropped")
    assert history[2:] == _exchange(3, 10)


async def test_a_window_the_server_names_in_models_sizes_the_budget_after_the_first_turn(tmp_path):
    from clawnb.config import Config, options_overlay
    from clawnb.session.assemble import build_agent

    with FakeServer("vllm", [Reply("hi")]) as server:  # /v1/models: max_model_len 4096
        config = Config(model="local-model").merge(options_overlay(base_url=server.url))
        session = build_agent(config, workspace=tmp_path)
        assert session.context.max_tokens == 100_000
        await session.send("hello")
    assert session.context.max_tokens == 3072
