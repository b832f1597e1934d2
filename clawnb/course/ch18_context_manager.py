"""Book chapter 18: ContextManager — ``context_manager.rs``, 7 tests."""

from __future__ import annotations

from ..types import Message, TokenUsage
from ._helpers import text_turn
from ._suite import Suite

suite = Suite("context_manager", "ContextManager", chapters=["ch18"])


def _over_limit(impl, keep_recent):
    """A manager with a 100-token limit that has already used 200 tokens."""
    cm = impl.ContextManager(100, keep_recent)
    cm.record(TokenUsage(200, 0))
    return cm


def _users(*texts):
    return [Message.User(text) for text in texts]


@suite.test
def test_context_manager_below_threshold_no_compact(impl, tmp):
    cm = impl.ContextManager(10000, 4)
    assert not cm.should_compact()


@suite.test
def test_context_manager_triggers_at_threshold(impl, tmp):
    cm = impl.ContextManager(1000, 4)
    cm.record(TokenUsage(input_tokens=600, output_tokens=500))
    assert cm.should_compact()


@suite.test
def test_context_manager_tracks_tokens(impl, tmp):
    cm = impl.ContextManager(10000, 4)
    cm.record(TokenUsage(100, 50))
    cm.record(TokenUsage(200, 100))
    assert cm.tokens_used == 450


@suite.test
async def test_context_manager_compact_preserves_system_prompt(impl, tmp):
    provider = impl.MockProvider([text_turn("Summary of conversation.")])
    messages = [
        Message.System("You are a helpful agent."),
        *_users("Hello", "How are you?", "What's the weather?", "Recent 1", "Recent 2"),
    ]
    await _over_limit(impl, keep_recent=2).compact(provider, messages)
    assert len(messages) <= 4
    assert isinstance(messages[0], Message.System) and "helpful agent" in messages[0].content
    assert any(isinstance(m, Message.System) and "summary" in m.content for m in messages)


@suite.test
async def test_context_manager_compact_too_few_messages(impl, tmp):
    provider = impl.MockProvider([])  # any call would fail
    messages = _users("Hello")
    await _over_limit(impl, keep_recent=10).compact(provider, messages)
    assert len(messages) == 1


@suite.test
async def test_context_manager_maybe_compact_skips_when_not_needed(impl, tmp):
    provider = impl.MockProvider([])
    cm = impl.ContextManager(10000, 2)
    messages = _users("Hello", "World")
    await cm.maybe_compact(provider, messages)
    assert len(messages) == 2


@suite.test
async def test_context_manager_compact_preserves_recent(impl, tmp):
    provider = impl.MockProvider([text_turn("Earlier discussion summarized.")])
    messages = _users("Old message 1", "Old message 2", "Old message 3", "Recent A", "Recent B")
    await _over_limit(impl, keep_recent=2).compact(provider, messages)
    assert messages[-1] == Message.User("Recent B")
    assert messages[-2] == Message.User("Recent A")


@suite.test
def test_context_manager_triggers_exactly_at_threshold(impl, tmp):
    # Not in the book: reaching the limit is enough; it need not be exceeded.
    cm = impl.ContextManager(1000, 4)
    cm.record(TokenUsage(input_tokens=999, output_tokens=0))
    assert not cm.should_compact()
    cm = impl.ContextManager(1000, 4)
    cm.record(TokenUsage(input_tokens=1000, output_tokens=0))
    assert cm.should_compact()
