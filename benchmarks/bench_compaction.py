"""Context tokens over a long session: persisted results vs plain truncation.

A scripted 200-turn session runs through the real loop (:class:`~clawnb.agent.SimpleAgent`
with a :class:`~clawnb.context.ContextManager`, 100,000-token budget, the production output
reserve) twice. Every turn the model runs ``bash`` once; the outputs are a log-like mix: most
are small (a few hundred characters), every fourth is big (20–120 KB, a test run or a ``cat``
of a log), and every tenth turn reads a 30 KB source file. Then it answers in a line.

* **truncation** — the result limit before issue 25: a result over 50,000 characters keeps
  its head and tail (``truncate_middle``), everything else goes in whole;
* **persisted** — :class:`~clawnb.tools.results.ResultLimiter` as a session builds it: over
  16,000 characters a result is saved and the model gets a ~2 KB preview with the path;
  and the context manager as a session builds it clears old previews in place: once the
  previews behind the four most recent ones would free a tenth of the threshold, each becomes
  its one-line stub (path and size) — all at once, so the prompt-cache prefix breaks only
  at those few boundaries (``clearings`` in the output).

The measure is what the model is sent: the estimated tokens of every request, summed over the
session (and the largest single request). Compaction summaries are made offline
(:class:`~clawnb.context.ExtractiveSummarizer`), so both runs pay for them the same way.
The last line is the ratio persisted / truncation of the summed context tokens (goal ≤ 0.5).

Measured (2026-12-02, default scenario): 0.348 (goal ≤ 0.5), with 0 compactions against 6
and 3 clearings; the largest request 31,436 tokens against 90,639. Before old previews were
cleared it was 0.553: with the default 100,000-token budget the truncation run is itself held
down by compaction (its requests saw-tooth below the threshold), while the persisted run's
previews piled up to ~40,000 tokens by turn 200. The ratio is deterministic (a scripted
model, a seeded script), so the machine's load does not move it.

    python benchmarks/bench_compaction.py [--turns N]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
from pathlib import Path

from clawnb.agent import SimpleAgent
from clawnb.config import DEFAULT_MAX_OUTPUT_TOKENS
from clawnb.context import ContextManager, ExtractiveSummarizer, estimate_tokens
from clawnb.tools.results import ResultLimiter, truncate_middle
from clawnb.types import (
    JSON,
    AssistantTurn,
    Message,
    StopReason,
    ToolCall,
    ToolDefinition,
)

OLD_LIMIT = 50_000  # the ResultLimiter default before persistence


def output_for(turn: int, rng: random.Random) -> str:
    """The scripted output of turn ``turn``'s command (deterministic)."""
    if turn % 10 == 9:
        return "".join(
            f"    value_{turn}_{i} = compute({i}, scale=2)  # step {i}\n" for i in range(600)
        )
    if turn % 4 == 3:
        lines = rng.randint(400, 2400)
        return "".join(
            f"[{turn:03d}:{i:05d}] INFO worker-{i % 7} processed batch ok\n" for i in range(lines)
        )
    return "".join(
        f"line {i} of the short output of turn {turn}\n" for i in range(rng.randint(3, 12))
    )


class ScriptedCommand:
    """A ``bash`` stand-in whose output is the script's: the benchmark measures the context,
    not a shell."""

    definition = ToolDefinition("bash", "Run a command.").param(
        "command", "string", "", required=True
    )

    def __init__(self) -> None:
        self.rng = random.Random(25)

    async def call(self, args: JSON) -> str:
        assert isinstance(args, dict)
        return output_for(int(str(args["command"]).split()[-1]), self.rng)


class Model:
    """Each user turn: one bash call, then a one-line answer; records each request's size."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.compactions = 0
        self.clearings = 0

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        self.sizes.append(estimate_tokens(messages))
        last = messages[-1]
        if isinstance(last, Message.User):
            turn = int(last.content.split()[-1])
            call = ToolCall(f"c{turn}", "bash", {"command": f"run step {turn}"})
            return AssistantTurn(None, [call], StopReason.TOOL_USE)
        return AssistantTurn("Done; the output looks as expected.", [], StopReason.STOP)


async def run(turns: int, limit: object) -> Model:
    model = Model()
    context = ContextManager(
        100_000,
        6,
        summarizer=ExtractiveSummarizer(),
        output_reserve=DEFAULT_MAX_OUTPUT_TOKENS,
    )
    agent = SimpleAgent(
        model,
        tools=[ScriptedCommand()],
        system_prompt="You are a coding agent.",
        context=context,
        result_limit=limit,  # type: ignore[arg-type]
    )
    history: list[Message] = []
    for turn in range(turns):
        history.append(Message.User(f"run step {turn}"))
        await agent.chat(history)
    model.compactions = context.compactions
    model.clearings = context.clearings
    return model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        truncation = asyncio.run(
            run(args.turns, lambda call, text: truncate_middle(text, OLD_LIMIT))
        )
        persisted = asyncio.run(run(args.turns, ResultLimiter(directory=Path(tmp))))
    for label, model in (("truncation", truncation), ("persisted", persisted)):
        print(
            f"{label:>10}: {len(model.sizes)} requests, context tokens sent {sum(model.sizes):,}, "
            f"largest request {max(model.sizes):,}, compactions {model.compactions}, clearings {model.clearings}"
        )
    ratio = sum(persisted.sizes) / sum(truncation.sizes)
    print(f"context tokens over {args.turns} turns, persisted / truncation: {ratio:.3f}")


if __name__ == "__main__":
    main()
