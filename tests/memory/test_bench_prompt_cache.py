"""The prompt-cache benchmark runs a compaction-free stretch with memory loaded and prints
the prefix share over the append-only limit last: 1.000, every request a continuation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_the_prompt_cache_benchmark_stays_at_the_append_only_limit():
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "bench_prompt_cache.py"), "--turns", "6"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        check=True,
    )
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("10 requests over 6 turns, 3 memories noted (told in 3 reminders)")
    rows = [line for line in lines if line.startswith("request ")]
    assert len(rows) == 9 and all(row.endswith("ratio 1.000") for row in rows)
    assert lines[-1] == "prefix share over the append-only limit, lowest (goal 1.00): 1.000"
