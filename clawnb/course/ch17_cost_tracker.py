"""Book chapter 17: CostTracker (and ch4's TokenUsage default) — ``cost_tracker.rs``, 9 tests."""

from __future__ import annotations

from ..types import TokenUsage
from ._suite import Suite

suite = Suite("cost_tracker", "CostTracker", chapters=["ch17"])


@suite.test
def test_cost_tracker_empty_tracker(impl, tmp):
    tracker = impl.CostTracker(3.0, 15.0)
    assert tracker.total_input_tokens == 0
    assert tracker.total_output_tokens == 0
    assert tracker.turn_count == 0
    assert tracker.total_cost() == 0.0


@suite.test
def test_cost_tracker_record_single_turn(impl, tmp):
    tracker = impl.CostTracker(3.0, 15.0)
    tracker.record(TokenUsage(input_tokens=1000, output_tokens=500))
    assert tracker.total_input_tokens == 1000
    assert tracker.total_output_tokens == 500
    assert tracker.turn_count == 1


@suite.test
def test_cost_tracker_accumulates_across_turns(impl, tmp):
    tracker = impl.CostTracker(3.0, 15.0)
    tracker.record(TokenUsage(100, 50))
    tracker.record(TokenUsage(200, 100))
    tracker.record(TokenUsage(300, 150))
    assert tracker.total_input_tokens == 600
    assert tracker.total_output_tokens == 300
    assert tracker.turn_count == 3


@suite.test
def test_cost_tracker_cost_calculation(impl, tmp):
    tracker = impl.CostTracker(3.0, 15.0)
    tracker.record(TokenUsage(1_000_000, 1_000_000))
    assert abs(tracker.total_cost() - 18.0) < 0.001


@suite.test
def test_cost_tracker_cost_small_numbers(impl, tmp):
    tracker = impl.CostTracker(3.0, 15.0)
    tracker.record(TokenUsage(1000, 200))
    assert abs(tracker.total_cost() - 0.006) < 0.0001


@suite.test
def test_cost_tracker_summary_format(impl, tmp):
    tracker = impl.CostTracker(3.0, 15.0)
    tracker.record(TokenUsage(1234, 567))
    summary = tracker.summary()
    assert "1234 in" in summary
    assert "567 out" in summary
    assert "$" in summary


@suite.test
def test_cost_tracker_reset(impl, tmp):
    tracker = impl.CostTracker(3.0, 15.0)
    tracker.record(TokenUsage(1000, 500))
    assert tracker.turn_count == 1
    tracker.reset()
    assert tracker.total_input_tokens == 0
    assert tracker.total_output_tokens == 0
    assert tracker.turn_count == 0


@suite.test
def test_cost_tracker_zero_usage(impl, tmp):
    tracker = impl.CostTracker(3.0, 15.0)
    tracker.record(TokenUsage(0, 0))
    assert tracker.turn_count == 1
    assert tracker.total_cost() == 0.0


@suite.test
def test_cost_tracker_token_usage_default(impl, tmp):
    usage = TokenUsage()
    assert usage.input_tokens == 0
    assert usage.output_tokens == 0
