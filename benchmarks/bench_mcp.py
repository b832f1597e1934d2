"""Benchmark: clawnb's MCP layer — session start, per-call overhead, prompt tokens.

1. **Start**: the real stdio servers mcp-server-time, mcp-server-git and mcp-server-fetch,
   each started alone (``McpManager.start`` until connected and listed, then closed), then
   all three together. Servers start concurrently, so together should cost about the
   slowest one: goal ratio (together / slowest alone) <= 1.2. Each server is a Python process
   that imports the SDK — CPU work — so with fewer free cores than servers the ratio shows
   the machine's contention as well as clawnb's overhead (the core count is printed). The
   peer, side by side: the same three started concurrently with the SDK alone, in
   alternating runs — clawnb's own cost of starting them (goal <= 1.1).
2. **Per call**: the same ``echo`` tool of tests/mcp/servers/faults.py called N times through
   clawnb's layer (``McpTool.call``: ``send_request``, result rendering and redaction — with
   the manager on the caller's loop, ``McpManager(loop=…)``, and on its own thread, which adds
   a hand-over between threads each way) and with the SDK directly (``Client.call_tool`` on its own
   ``stdio_client``, in this process's loop), in alternating batches; the medians are
   compared. Goal ratio (clawnb / SDK) <= 1.1.
3. **Prompt tokens** (characters / 4, as clawnb.context estimates them): the three servers'
   tool schemas sent eagerly vs deferred (names listed, schemas loaded by ``tool_search``).

The ratios are printed last.

    python benchmarks/bench_mcp.py [--calls 300] [--repeat 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from clawnb.mcp.config import McpServer  # noqa: E402
from clawnb.mcp.manager import McpManager  # noqa: E402

FAULTS = ROOT / "tests" / "mcp" / "servers" / "faults.py"


def servers(repo: Path) -> list[McpServer]:
    python = sys.executable
    return [
        McpServer(name="time", command=python, args=("-m", "mcp_server_time"), startup_timeout=300),
        McpServer(
            name="git",
            command=python,
            args=("-m", "mcp_server_git", "--repository", str(repo)),
            startup_timeout=300,
        ),
        McpServer(
            name="fetch", command=python, args=("-m", "mcp_server_fetch"), startup_timeout=300
        ),
    ]


async def start_time(specs: list[McpServer], logs: Path) -> float:
    manager = McpManager(specs, log_dir=logs)
    began = time.perf_counter()
    failed = await manager.start()
    took = time.perf_counter() - began
    await manager.aclose()
    if failed:
        raise SystemExit("\n".join(failed))
    return took


async def sdk_start_time(specs: list[McpServer]) -> float:
    """The peer: the same servers started concurrently with the SDK alone (``Client`` entered
    — spawn, initialize — and ``list_tools``), then closed. Each connection is entered and
    left in its own task (anyio's cancel scopes demand it); the clock stops when all are up."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    up = 0
    all_up = asyncio.Event()
    done = asyncio.Event()

    async def one(spec: McpServer) -> None:
        nonlocal up
        params = StdioServerParameters(command=spec.command or "", args=list(spec.args))
        async with Client(params, mode="auto") as client:
            await client.list_tools()
            up += 1
            if up == len(specs):
                all_up.set()
            await done.wait()

    began = time.perf_counter()
    tasks = [asyncio.create_task(one(spec)) for spec in specs]
    await all_up.wait()
    took = time.perf_counter() - began
    done.set()
    await asyncio.gather(*tasks)
    return took


async def bench_start(repo: Path, logs: Path, repeat: int) -> tuple[float, float, str, float]:
    specs = servers(repo)
    await start_time(specs[:1], logs)  # warm the SDK import and the OS caches
    alone: dict[str, float] = {}
    for spec in specs:
        alone[spec.name] = min([await start_time([spec], logs) for _ in range(repeat)])
        print(f"  {spec.name} alone: {alone[spec.name]:.2f} s")
    ours: list[float] = []
    sdk: list[float] = []
    for _ in range(repeat):  # alternating, so a change in the machine's load hits both alike
        ours.append(await start_time(specs, logs))
        sdk.append(await sdk_start_time(specs))
    together, peer = min(ours), min(sdk)
    slowest = max(alone, key=lambda k: alone[k])
    print(f"  all three together: {together:.2f} s (slowest alone: {slowest})")
    print(f"  all three together with the SDK directly: {peer:.2f} s")
    return together, alone[slowest], slowest, peer


async def bench_calls(out: Path, logs: Path, calls: int, adopt: bool) -> tuple[float, float]:
    """Median per-call time of each way, from batches that alternate between the two (both
    connections open at once), so that a change in the machine's load hits both alike."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    spec = McpServer(
        name="faults",
        command=sys.executable,
        args=(str(FAULTS),),
        env={"FAULTS_DIR": str(out)},
        startup_timeout=300,
    )
    loop = asyncio.get_running_loop() if adopt else None
    manager = McpManager([spec], log_dir=logs, loop=loop)
    assert await manager.start() == []
    echo = next(t for t in manager.tools() if t.mcp_tool == "echo")
    params = StdioServerParameters(
        command=sys.executable, args=[str(FAULTS)], env={"FAULTS_DIR": str(out)}
    )
    batch = 20
    ours: list[float] = []
    sdk: list[float] = []
    try:
        async with Client(params, mode="auto") as client:
            for _ in range(batch):
                await echo.call({"text": "warm"})
                await client.call_tool("echo", {"text": "warm"})
            for round_ in range(max(1, calls // batch)):
                began = time.perf_counter()
                for i in range(batch):
                    await echo.call({"text": f"call {round_} {i}"})
                ours.append((time.perf_counter() - began) / batch)
                began = time.perf_counter()
                for i in range(batch):
                    await client.call_tool("echo", {"text": f"call {round_} {i}"})
                sdk.append((time.perf_counter() - began) / batch)
    finally:
        await manager.aclose()
    return statistics.median(ours), statistics.median(sdk)


async def bench_tokens(repo: Path, logs: Path) -> tuple[int, int]:
    from clawnb.tools.tool_search import ToolSearchTool, deferred_tools_section
    from clawnb.types import ToolSet

    manager = McpManager(servers(repo), log_dir=logs)
    assert await manager.start() == []

    def tokens(defer: bool) -> int:
        toolset = ToolSet(manager.tools(defer=defer))
        if defer:
            toolset.push(ToolSearchTool(toolset))
        sent = json.dumps([d.to_dict() for d in toolset.active_definitions()])
        section = deferred_tools_section(toolset) or ""
        return (len(sent) + len(section)) // 4

    eager, deferred = tokens(False), tokens(True)
    await manager.aclose()
    return eager, deferred


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        base = Path(tmp)
        repo = base / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        logs = base / "logs"
        print(f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
        print("session start (3 stdio servers):")
        together, slowest, name, peer = await bench_start(repo, logs, args.repeat)
        print(f"per call ({args.calls} calls of faults.echo, alternating with the SDK's):")
        ratios = {}
        for adopt, how in ((True, "on the caller's loop"), (False, "on its own thread")):
            samples = [await bench_calls(base, logs, args.calls, adopt) for _ in range(args.repeat)]
            ours = statistics.median(s[0] for s in samples)
            sdk = statistics.median(s[1] for s in samples)
            ratios[how] = ours / sdk
            print(f"  clawnb {how}: {ours * 1000:.2f} ms   SDK directly: {sdk * 1000:.2f} ms")
        eager, deferred = await bench_tokens(repo, logs)
        print("prompt tokens for the 3 servers' tools:")
        print(f"  eager: {eager}   deferred: {deferred}")
    print()
    cpus = os.cpu_count() or 1
    print(f"start ratio (3 together / {name} alone, goal <= 1.2): {together / slowest:.2f}")
    if cpus < 4:
        print(f"  (3 servers import the SDK at once on {cpus} CPUs: the machine's limit shows)")
    print(f"start ratio, clawnb / the SDK starting the same 3 (goal <= 1.1): {together / peer:.2f}")
    for how, ratio in ratios.items():
        print(f"per-call ratio, clawnb {how} / SDK (goal <= 1.1): {ratio:.2f}")
    print(f"prompt tokens ratio (deferred / eager): {deferred / eager:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
