"""Harness overhead of the agent loop — a guard, not a goal.

10,000 MockProvider turns, each calling one no-op tool, run (a) through ``SimpleAgent.chat``
and (b) through the barest possible hand-written loop (``await provider.chat()``, call the
tool, append the messages). Prints microseconds per turn for both. There is no ratio to meet:
the loop is written for the reader (it is the book's loop), and a real model turn takes
hundreds of milliseconds; this script only shows when a change makes it measurably slower.

    python benchmarks/bench_loop.py [--turns N] [--repeat R]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from clawnb.agent import SimpleAgent
from clawnb.providers.mock import MockProvider
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall, ToolDefinition


class NoOp:
    definition = ToolDefinition("noop", "Does nothing.")

    async def call(self, args):
        return "ok"


def script(turns: int) -> list[AssistantTurn]:
    calls = [
        AssistantTurn(None, [ToolCall(f"c{i}", "noop", {})], StopReason.TOOL_USE)
        for i in range(turns)
    ]
    return [*calls, AssistantTurn("done", [], StopReason.STOP)]


async def bare(turns: int) -> float:
    provider, tool = MockProvider(script(turns)), NoOp()
    defs = [tool.definition]
    messages: list[Message] = [Message.User("go")]
    start = time.perf_counter()
    while True:
        turn = await provider.chat(messages, defs)
        messages.append(Message.Assistant(turn))
        if not turn.tool_calls:
            break
        for call in turn.tool_calls:
            messages.append(Message.ToolResult(call.id, await tool.call(call.arguments)))
    return time.perf_counter() - start


async def harness(turns: int) -> float:
    agent = SimpleAgent(MockProvider(script(turns))).tool(NoOp())
    messages: list[Message] = [Message.User("go")]
    start = time.perf_counter()
    await agent.chat(messages)
    elapsed = time.perf_counter() - start
    assert len(messages) == 2 * turns + 2
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    b, h = [], []
    for _ in range(args.repeat):  # interleave so machine noise hits both alike
        b.append(asyncio.run(bare(args.turns)))
        h.append(asyncio.run(harness(args.turns)))
    bm, hm = statistics.median(b), statistics.median(h)
    print(f"turns per run:            {args.turns}")
    print(f"bare loop   (median):     {bm * 1e6 / args.turns:8.2f} us/turn")
    print(f"SimpleAgent (median):     {hm * 1e6 / args.turns:8.2f} us/turn")
    print(f"overhead per turn:        {(hm - bm) * 1e6 / args.turns:8.2f} us")


if __name__ == "__main__":
    main()
