"""What the redactor costs per call: short tool results, an 11 KB one and a 1.2 MB one.

Every tool result, hook payload, session line and rendered string goes through
:func:`clawnb.control.secrets.redact`, so its fixed cost is paid on every agent turn. The script sets
up what a real session has — two keys in the environment, a workspace whose ``.env`` holds two
more (watched) — and times ``redact`` on texts without a key (the usual case) and with one.
It prints microseconds per call (best of a few repetitions). Run it on two checkouts to compare.

    python benchmarks/bench_redact.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from clawnb.control.secrets import redact, watch_dotenv

LINE = "def handler(request):  # reads the config, then answers with the rendered page\n"


def per_call(text: str, calls: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            redact(text)
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    os.environ["OPENAI_API_KEY"] = "sk-bench-" + "a1B2c3D4" * 4
    os.environ["GITHUB_TOKEN"] = "ghp_" + "Zy9Xw8Vu7" * 4
    workspace = tempfile.mkdtemp(prefix="bench-redact-")
    Path(workspace, ".env").write_text(
        "DATABASE_PASSWORD=correct-horse-battery-staple-42\nSTRIPE_SECRET_KEY=rk_live_"
        + "Qw3Er4Ty5" * 3
        + "\n"
    )
    # a workspace's .env is old when a session starts (a file changed within the last second
    # is read again on every call until its time stamp can be trusted)
    for path in (Path(workspace, ".env"), Path(workspace)):
        os.utime(path, (time.time() - 3600, time.time() - 3600))
    watch_dotenv(workspace)
    small = "ok"
    line = "Edited src/app.py: 1 replacement (lines 12-14)"
    medium = LINE * (11_000 // len(LINE))
    large = LINE * (1_200_000 // len(LINE))
    leaked = medium + "token: " + os.environ["OPENAI_API_KEY"] + "\n"
    assert os.environ["OPENAI_API_KEY"] not in redact(leaked)
    rows = [
        ("short result (2 B)", small, 20_000),
        (f"one line ({len(line)} B)", line, 20_000),
        (f"{len(medium) / 1000:.0f} KB, no key", medium, 2_000),
        (f"{len(leaked) / 1000:.0f} KB, one key", leaked, 2_000),
        (f"{len(large) / 1e6:.1f} MB, no key", large, 20),
    ]
    for label, text, calls in rows:
        print(f"{label:24s} {per_call(text, calls, args.repeat):10.1f} us/call")


if __name__ == "__main__":
    main()
