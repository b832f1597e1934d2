"""Book chapter 18: ContextManager — ``context_manager.rs``, 7 tests."""

from __future__ import annotations

from ..types import AssistantTurn, Message, StopReason, TokenUsage
from ._suite import Suite

suite = Suite("context_manager", "ContextManager", chapters=["ch18"])


def _summary(text: str) -> AssistantTurn:
    return AssistantTurn(text=text, tool_calls=[], stop_reason=StopReason.STOP)


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
    provider = impl.MockProvider([_summary("Summary of conversation.")])
    cm = impl.ContextManager(100, 2)
    cm.record(TokenUsage(200, 0))
    messages = [
        Message.System("You are a helpful agent."),
        Message.User("Hello"),
        Message.User("How are you?"),
        Message.User("What's the weather?"),
        Message.User("Recent 1"),
        Message.User("Recent 2"),
    ]
    await cm.compact(provider, messages)
    assert len(messages) <= 4
    assert isinstance(messages[0], Message.System) and "helpful agent" in messages[0].content
    assert any(isinstance(m, Message.System) and "summary" in m.content for m in messages)


@suite.test
async def test_context_manager_compact_too_few_messages(impl, tmp):
    provider = impl.MockProvider([])  # any call would fail
    cm = impl.ContextManager(100, 10)
    cm.record(TokenUsage(200, 0))
    messages = [Message.User("Hello")]
    await cm.compact(provider, messages)
    assert len(messages) == 1


@suite.test
async def test_context_manager_maybe_compact_skips_when_not_needed(impl, tmp):
    provider = impl.MockProvider([])
    cm = impl.ContextManager(10000, 2)
    messages = [Message.User("Hello"), Message.User("World")]
    await cm.maybe_compact(provider, messages)
    assert len(messages) == 2


@suite.test
async def test_context_manager_compact_preserves_recent(impl, tmp):
    provider = impl.MockProvider([_summary("Earlier discussion summarized.")])
    cm = impl.ContextManager(100, 2)
    cm.record(TokenUsage(200, 0))
    messages = [
        Message.User("Old message 1"),
        Message.User("Old message 2"),
        Message.User("Old message 3"),
        Message.User("Recent A"),
        Message.User("Recent B"),
    ]
    await cm.compact(provider, messages)
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
