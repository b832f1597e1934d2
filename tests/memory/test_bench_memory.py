"""The memory benchmark runs and prints the next-prompt ratio (on over off) last."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_the_memory_benchmark_prints_the_next_prompt_ratio_last(tmp_path):
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "bench_memory.py"), "--rounds", "4"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        check=True,
    )
    lines = done.stdout.strip().splitlines()
    assert lines[-1].startswith("ratio on/off (goal <= 1.05): ")
    assert 0 < float(lines[-1].rsplit(" ", 1)[1]) < 2  # loose: a loaded machine, 4 rounds
    written = next(line for line in lines if line.startswith("memories written"))
    assert int(written.rsplit(" ", 1)[1]) > 0  # memory was really on
