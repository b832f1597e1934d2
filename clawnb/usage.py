"""What a session costs (book ch17): token totals and a dollar figure.

:class:`CostTracker` adds up the :class:`~clawnb.types.TokenUsage` of every model turn and
prices it per million tokens. The book's summary line is kept exactly::

    tokens: 1234 in + 567 out | cost: $0.0122

Prices come from the ``[pricing]`` table of the config (see :meth:`CostTracker.for_model`).
A model with no configured price is *not* silently billed at $0: its summary says the cost is
unknown, so nobody mistakes a missing price for a free model.

What the front ends show (the chat's ``/cost`` and exit line, ``%claw cost``, a ``%%claw``
cell's footer, the one-shot CLI, the Python API) is one rule, :meth:`CostTracker.report`:
token counts with thousands separators, and a cost that is a dollar figure, ``free`` (a price
of 0 configured on purpose: a local model) or ``not priced`` (no price at all: a scripted or
an unknown model) — never ``$0.0000`` for a model nobody priced.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .types import TokenUsage

__all__ = ["CostTracker", "NOT_PRICED", "FREE"]

NOT_PRICED = "not priced"  # no price configured: the cost is unknown, not zero
FREE = "free"  # a price of 0 in and 0 out, configured on purpose


class CostTracker:
    """Running totals for one session, priced in US dollars per million tokens."""

    def __init__(
        self,
        input_price_per_million: float = 0.0,
        output_price_per_million: float = 0.0,
        *,
        model: str | None = None,
        priced: bool = True,
    ) -> None:
        self.input_price_per_million = float(input_price_per_million)
        self.output_price_per_million = float(output_price_per_million)
        self.model = model
        self.priced = priced
        self.total_input_tokens = 0
        self.total_output_tokens = 0
        self.turn_count = 0
        self.unreported_turns = 0  # turns whose server sent no usage at all

    @classmethod
    def for_model(cls, model: str, pricing: Mapping[str, Any] | Any) -> CostTracker:
        """A tracker priced for ``model`` from a config (``Config``) or a mapping of model name
        (or glob such as ``"anthropic/*"``) to ``ModelPricing`` / ``(input, output)``."""
        price = None
        if hasattr(pricing, "pricing_for"):
            price = pricing.pricing_for(model)
        else:
            import fnmatch

            table = dict(pricing)
            key = (
                model
                if model in table
                else max((k for k in table if fnmatch.fnmatchcase(model, k)), key=len, default=None)
            )
            price = table.get(key) if key is not None else None
        if price is None:
            return cls(model=model, priced=False)
        if isinstance(price, tuple | list):
            return cls(price[0], price[1], model=model)
        return cls(price.input, price.output, model=model)

    def record(self, usage: TokenUsage | None) -> None:
        """Add one model turn (a turn without usage still counts as a turn). ``None`` means the
        server reported nothing, which :meth:`summary` says instead of counting it as 0."""
        if usage is not None:
            self.total_input_tokens += usage.input_tokens
            self.total_output_tokens += usage.output_tokens
        else:
            self.unreported_turns += 1
        self.turn_count += 1

    def total_cost(self) -> float:
        """Dollars so far (0.0 when the model has no configured price; see :attr:`priced`)."""
        return (
            self.total_input_tokens * self.input_price_per_million
            + self.total_output_tokens * self.output_price_per_million
        ) / 1_000_000.0

    def reset(self) -> None:
        """Zero the counters; the prices stay."""
        self.total_input_tokens = 0
        self.total_output_tokens = 0
        self.turn_count = 0
        self.unreported_turns = 0

    def summary(self) -> str:
        """The book's line, ``tokens: N in + N out | cost: $X.XXXX`` (or ``cost: unknown …``
        without a price, ``cost: free`` at a price of 0), numbers without separators as chapter
        17 has them; what the front ends print is :meth:`report`.

        When the server reported no usage for any turn, the tokens are "not reported" (a local
        server that sends no usage did not use 0 tokens); when it skipped some turns, how many.
        """
        if self.unreported_turns and self.unreported_turns == self.turn_count:
            cost = FREE if self.free else "unknown (no usage reported)"
            return f"tokens: not reported | cost: {cost}"
        tokens = f"tokens: {self.total_input_tokens} in + {self.total_output_tokens} out"
        if self.unreported_turns:
            s = "s" if self.unreported_turns != 1 else ""
            tokens += f" (+ {self.unreported_turns} turn{s} not reported)"
        if not self.priced:
            return f"{tokens} | cost: unknown (no price configured for {self.model!r})"
        return f"{tokens} | cost: {self.cost_label()}"  # a model priced at 0 is "free"

    # -- what the front ends show: one rule -------------------------------------------------

    @property
    def free(self) -> bool:
        """Priced at 0 in and 0 out on purpose (a ``[pricing]`` entry of zeros)."""
        return self.priced and not (self.input_price_per_million or self.output_price_per_million)

    def cost_label(self) -> str:
        """``$0.0123``; ``free`` for a model priced at 0; ``not priced`` for one with no price
        (a ``$0.0000`` there would read like a real price)."""
        if not self.priced:
            return NOT_PRICED
        if self.free:
            return FREE
        return f"${self.total_cost():.4f}"

    def tokens_label(self) -> str:
        """``1,234 in + 567 out``; ``not reported`` when the server sent no usage for any turn
        (it did not use 0 tokens); ``… (+ 2 turns not reported)`` when it skipped some."""
        if 0 < self.turn_count == self.unreported_turns:
            return "not reported"
        text = f"{self.total_input_tokens:,} in + {self.total_output_tokens:,} out"
        if self.unreported_turns:
            s = "s" if self.unreported_turns != 1 else ""
            text += f" (+ {self.unreported_turns:,} turn{s} not reported)"
        return text

    def report(self) -> str:
        """``tokens: 1,234 in + 567 out | cost: $0.0122`` (or ``cost: not priced`` /
        ``cost: free``): the line every front end prints. :meth:`summary` is the book's."""
        return f"tokens: {self.tokens_label()} | cost: {self.cost_label()}"

    def __repr__(self) -> str:
        return f"CostTracker({self.report()!r}, turns={self.turn_count:,})"

    def _repr_markdown_(self) -> str:
        return (
            "| turns | input tokens | output tokens | cost |\n|---:|---:|---:|---:|\n"
            f"| {self.turn_count:,} | {self.total_input_tokens:,} | {self.total_output_tokens:,} "
            f"| {self.cost_label()} |"
        )
