"""How much does ``%load_ext clawnb`` cost a kernel? Cold, in fresh processes.

Compares a cold ``%load_ext clawnb`` with a cold ``import ipywidgets`` and, when installed, a
cold ``%load_ext jupyter_ai_magics``. The IPython shell is created before the clock starts, as
in a kernel. Goal: ``%load_ext clawnb`` <= 0.2x jupyter-ai's. Prints the ratios last.

    python benchmarks/bench_import.py [--runs 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys

SNIPPET = """
import time
from IPython.testing.globalipapp import get_ipython
ip = get_ipython()
t = time.perf_counter()
{stmt}
print(time.perf_counter() - t)
"""

CASES = {
    "%load_ext clawnb": "ip.run_line_magic('load_ext', 'clawnb')",
    "import ipywidgets": "import ipywidgets",
    "%load_ext jupyter_ai_magics": "ip.run_line_magic('load_ext', 'jupyter_ai_magics')",
}


def cold(stmt: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", SNIPPET.format(stmt=stmt)],
            capture_output=True,
            text=True,
            check=True,
        )
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    results = {}
    for name, stmt in CASES.items():
        if "jupyter_ai" in name and importlib.util.find_spec("jupyter_ai_magics") is None:
            print(f"{name:32s} not installed, skipped")
            continue
        results[name] = cold(stmt, args.runs)
        print(f"{name:32s} {results[name] * 1000:8.1f} ms (median of {args.runs})")
    ours = results["%load_ext clawnb"]
    print(f"ratio clawnb / ipywidgets: {ours / results['import ipywidgets']:.2f}x")
    if "%load_ext jupyter_ai_magics" in results:
        ratio = ours / results["%load_ext jupyter_ai_magics"]
        print(f"ratio clawnb / jupyter-ai: {ratio:.2f}x (goal <= 0.20x)")


if __name__ == "__main__":
    main()
