"""Memory of a long session: does compaction keep it flat?

A scripted session of N user turns (default 500), each answered by a model turn that reads a
file (~4 KB result) and a text turn, runs through ``build_agent`` with a persisted session
(``SessionLog``) twice:

* **with compaction** (``max_context_tokens`` = 8,000): the history is summarised whenever it
  reaches the budget;
* **without** (a budget no session reaches): the history grows by four messages a turn.

Each runs in its own process. RSS (resident memory, from ``/proc/self/status``) is sampled
every 50 turns.
Prints the samples, the history length and the growth between the first and the last sample;
the last line is the ratio RSS(last) / RSS(first) with compaction (flat means ≈ 1.0).

    python benchmarks/bench_compaction_rss.py [--turns N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from clawnb.config import Config
from clawnb.session.assemble import build_agent
from clawnb.session.log import SessionLog
from clawnb.tools.read import ReadTool

# The scripted session is the one the context tests run (one copy, tests/conftest.py).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.conftest import write_reading_script  # noqa: E402


def rss_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status (Linux only)")


async def run(turns: int, budget: int, work: Path, label: str) -> tuple[list[tuple[int, int]], int]:
    script = work / f"{label}.jsonl"
    write_reading_script(script, turns, detail_words=60)
    session = build_agent(
        Config(max_context_tokens=budget, preserve_recent=6),
        workspace=work,
        model=f"scripted:{script}",
        tools=[ReadTool(work)],
        subagents=False,
        gate=False,
        session=SessionLog(work / f"{label}-session.jsonl", durable=False),
    )
    samples: list[tuple[int, int]] = []
    for i in range(1, turns + 1):
        await session.send(f"question {i}")
        if i % 50 == 0:
            gc.collect()
            samples.append((i, rss_kib()))
    length = len(session.history)
    session.close()
    return samples, length


def one(label: str, turns: int) -> None:
    """Run one configuration in this (fresh) process and print its result as JSON."""
    budget = 8_000 if label == "with" else 10**12
    with tempfile.TemporaryDirectory(prefix="clawnb-bench-") as tmp:
        work = Path(tmp)
        (work / "notes.txt").write_text("some notes about the project\n" * 140)  # ~4 KB
        samples, length = asyncio.run(run(turns, budget, work, label))
    print(json.dumps({"samples": samples, "length": length}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--one", choices=["with", "without"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.one, args.turns)
        return
    results = {}
    for label in ("without", "with"):
        # each configuration in its own process, so one cannot reuse the other's heap
        out = subprocess.run(
            [sys.executable, __file__, "--one", label, "--turns", str(args.turns)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        data = json.loads(out.strip().splitlines()[-1])
        samples = data["samples"]
        results[label] = samples
        first, last = samples[0][1], samples[-1][1]
        print(
            f"{label:>7} compaction: history {data['length']:5d} messages; RSS KiB at turns "
            + ", ".join(f"{t}:{kib}" for t, kib in samples)
            + f"; growth {last - first:+d} KiB"
        )
    with_samples = results["with"]
    ratio = with_samples[-1][1] / with_samples[0][1]
    print(
        f"RSS ratio turn {with_samples[-1][0]} / turn {with_samples[0][0]} "
        f"with compaction: {ratio:.3f}"
    )


if __name__ == "__main__":
    main()
