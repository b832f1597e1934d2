"""Chapter 4: the history invariant (``history_is_valid``) — not a book test file; the book
states the rule, these tests hold a learner's checker to it."""

from __future__ import annotations

from ..types import Message
from ._helpers import text_turn, tool_turn
from ._suite import Suite

suite = Suite("history", "history_is_valid", chapters=["ch04"])


def _round(*ids: str) -> list[Message]:
    turn = tool_turn(*((i, "read", {"path": f"{i}.txt"}) for i in ids))
    return [Message.Assistant(turn), *(Message.ToolResult(i, f"content {i}") for i in ids)]


@suite.test
def test_history_plain_conversation_is_valid(impl, tmp):
    history = [Message.System("s"), Message.User("hi"), Message.Assistant(text_turn("hello"))]
    assert impl.history_is_valid(history) is True


@suite.test
def test_history_empty_is_valid(impl, tmp):
    assert impl.history_is_valid([]) is True


@suite.test
def test_history_call_followed_by_its_result_is_valid(impl, tmp):
    history = [Message.User("read a"), *_round("a"), Message.Assistant(text_turn("done"))]
    assert impl.history_is_valid(history) is True


@suite.test
def test_history_several_calls_and_rounds_are_valid(impl, tmp):
    history = [Message.User("go"), *_round("a", "b"), *_round("c"), Message.User("more")]
    assert impl.history_is_valid(history) is True


@suite.test
def test_history_call_without_result_is_invalid(impl, tmp):
    history = [Message.User("read a"), *_round("a")[:1]]
    assert impl.history_is_valid(history) is False


@suite.test
def test_history_result_without_call_is_invalid(impl, tmp):
    assert impl.history_is_valid([Message.User("hi"), Message.ToolResult("x", "orphan")]) is False


@suite.test
def test_history_result_before_its_call_is_invalid(impl, tmp):
    turn, result = _round("a")
    assert impl.history_is_valid([Message.User("hi"), result, turn]) is False


@suite.test
def test_history_results_out_of_order_are_invalid(impl, tmp):
    turn, first, second = _round("a", "b")
    assert impl.history_is_valid([Message.User("go"), turn, second, first]) is False


@suite.test
def test_history_message_between_call_and_result_is_invalid(impl, tmp):
    turn, result = _round("a")
    assert impl.history_is_valid([turn, Message.User("wait"), result]) is False


@suite.test
def test_history_missing_one_of_two_results_is_invalid(impl, tmp):
    turn, first, _ = _round("a", "b")
    history = [Message.User("go"), turn, first, Message.Assistant(text_turn("done"))]
    assert impl.history_is_valid(history) is False
