"""CostTracker beyond the book: exact summary text, per-model pricing, unknown prices."""

from clawnb.config import Config
from clawnb.types import TokenUsage
from clawnb.usage import CostTracker


def test_summary_is_the_books_line():
    tracker = CostTracker(3.0, 15.0)
    tracker.record(TokenUsage(1234, 567))
    assert tracker.summary() == "tokens: 1234 in + 567 out | cost: $0.0122"


def test_turn_without_usage_counts_as_a_turn():
    tracker = CostTracker(3.0, 15.0)
    tracker.record(None)
    assert (tracker.turn_count, tracker.total_input_tokens) == (1, 0)


def test_priced_from_config_by_model():
    config = Config.from_toml('[pricing."anthropic/*"]\ninput = 3.0\noutput = 15.0')
    tracker = CostTracker.for_model("anthropic/claude-sonnet-4", config)
    tracker.record(TokenUsage(1_000_000, 1_000_000))
    assert abs(tracker.total_cost() - 18.0) < 1e-9


def test_priced_from_a_plain_mapping():
    tracker = CostTracker.for_model("m", {"m": (1.0, 2.0)})
    tracker.record(TokenUsage(1_000_000, 500_000))
    assert tracker.summary() == "tokens: 1000000 in + 500000 out | cost: $2.0000"


def test_unknown_price_says_so_instead_of_zero_dollars():
    tracker = CostTracker.for_model("mystery/model", Config())
    tracker.record(TokenUsage(10, 5))
    assert not tracker.priced
    assert tracker.summary() == (
        "tokens: 10 in + 5 out | cost: unknown (no price configured for 'mystery/model')"
    )


def test_reset_keeps_prices():
    tracker = CostTracker(3.0, 15.0)
    tracker.record(TokenUsage(10, 10))
    tracker.reset()
    tracker.record(TokenUsage(1_000_000, 0))
    assert abs(tracker.total_cost() - 3.0) < 1e-9


def test_markdown_repr_for_notebooks():
    tracker = CostTracker(3.0, 15.0)
    tracker.record(TokenUsage(1000, 200))
    assert "| 1 | 1,000 | 200 | $0.0060 |" in tracker._repr_markdown_()
