"""``benchmarks/bench_provider_overhead.py --base-url`` measures against a server that is
already running (a real one in docs/local-models.md); here the bytes llama-server really sent
(:class:`tests.fake_servers.RecordedServer`), over HTTP on 127.0.0.1."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.fake_servers import RecordedServer

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_provider_overhead.py"


def test_the_overhead_benchmark_targets_a_running_server_with_base_url():
    with RecordedServer("ls") as server:
        done = subprocess.run(
            [sys.executable, str(BENCH), "--base-url", server.url, "--model", "smollm2"]
            + ["--tokens", "48", "--runs", "2"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    assert f"server: {server.url} (a real server, max_tokens 48, temperature 0)" in done.stdout
    assert re.search(r"time-to-first-token ratio \(clawnb / openai\): \d+\.\d{3}", done.stdout)
    assert re.search(r"generation ratio \(openai tok/s / clawnb tok/s\): \d+\.\d{3}", done.stdout)
    # both clients asked the same: the model, the cap, temperature 0, usage; 2 warm-ups + 2 × 2
    assert len(server.requests) == 6
    for body in server.requests:
        assert (body["model"], body["max_tokens"], body["temperature"]) == ("smollm2", 48, 0)
        assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert set(server.cases) == {"ls/stream"}
