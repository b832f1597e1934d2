"""Book chapter 17: CostTracker (and ch4's TokenUsage default) — ``cost_tracker.rs``, 9 tests."""

from __future__ import annotations

from ..types import TokenUsage
from ._suite import Suite

suite = Suite("cost_tracker", "CostTracker", chapters=["ch17"])


def _tracker(impl, *usages):
    """A tracker at $3 / $15 per million tokens in / out that has recorded ``usages``."""
    tracker = impl.CostTracker(3.0, 15.0)
    for usage in usages:
        tracker.record(usage)
    return tracker


def _totals(tracker):
    """``(input tokens, output tokens, turns)`` so far: one comparison shows all three."""
    return (tracker.total_input_tokens, tracker.total_output_tokens, tracker.turn_count)


@suite.test
def test_cost_tracker_empty_tracker(impl, tmp):
    tracker = _tracker(impl)
    assert _totals(tracker) == (0, 0, 0)
    assert tracker.total_cost() == 0.0


@suite.test
def test_cost_tracker_record_single_turn(impl, tmp):
    tracker = _tracker(impl, TokenUsage(input_tokens=1000, output_tokens=500))
    assert _totals(tracker) == (1000, 500, 1)


@suite.test
def test_cost_tracker_accumulates_across_turns(impl, tmp):
    tracker = _tracker(impl, TokenUsage(100, 50), TokenUsage(200, 100), TokenUsage(300, 150))
    assert _totals(tracker) == (600, 300, 3)


@suite.test
def test_cost_tracker_cost_calculation(impl, tmp):
    tracker = _tracker(impl, TokenUsage(1_000_000, 1_000_000))
    assert abs(tracker.total_cost() - 18.0) < 0.001


@suite.test
def test_cost_tracker_cost_small_numbers(impl, tmp):
    tracker = _tracker(impl, TokenUsage(1000, 200))
    assert abs(tracker.total_cost() - 0.006) < 0.0001


@suite.test
def test_cost_tracker_summary_format(impl, tmp):
    summary = _tracker(impl, TokenUsage(1234, 567)).summary()
    assert "1234 in" in summary
    assert "567 out" in summary
    assert "$" in summary


@suite.test
def test_cost_tracker_reset(impl, tmp):
    tracker = _tracker(impl, TokenUsage(1000, 500))
    assert tracker.turn_count == 1
    tracker.reset()
    assert _totals(tracker) == (0, 0, 0)


@suite.test
def test_cost_tracker_zero_usage(impl, tmp):
    tracker = _tracker(impl, TokenUsage(0, 0))
    assert tracker.turn_count == 1
    assert tracker.total_cost() == 0.0


@suite.test
def test_cost_tracker_token_usage_default(impl, tmp):
    usage = TokenUsage()
    assert usage.input_tokens == 0
    assert usage.output_tokens == 0
