"""What configured hooks cost a tool call when none of them matches (issue 24: goal ≤ 1 ms).

Two real gates (:meth:`clawnb.gates.GatePipeline.from_config`, bypass mode, the shipped checks)
for the same workspace: one with no hooks, one with ten conditional hooks — five
``[[hooks.pre_tool]]`` and five ``[[hooks.post_tool]]``, each with an ``if`` (``==``, ``!=``,
``=~`` and ``~=`` on ``tool`` and ``args.KEY``, joined by ``&&`` or ``||``) that a ``read`` call
does not meet. Each run pushes the same ``read`` call through ``before_tool`` and
``after_tool`` of one gate, alternating, and keeps the best of a few repetitions. The figure
printed last is the difference per call in milliseconds: what the ten hooks add.

    python benchmarks/bench_hooks.py [--calls 5000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from clawnb.config import Config
from clawnb.gates import GatePipeline
from clawnb.tools.read import ReadTool
from clawnb.types import ToolCall

CONDITIONS = [
    "tool == 'bash' && args.command =~ '^git '",
    "tool == 'write' && args.path ~= 'src/**/*.py'",
    "tool =~ '^mcp__' || tool == 'web_fetch'",
    "args.path ~= '*.lock' && tool != 'read'",
    "tool == 'edit' || tool == 'multi_edit'",
]


def hooks_toml() -> str:
    tables = []
    for event in ("pre_tool", "post_tool"):
        for condition in CONDITIONS:
            tables.append(
                f'[[hooks.{event}]]\ncommand = "echo $TOOL_NAME >> hooks.log"\nif = "{condition}"\n'
            )
    return '[permissions]\nmode = "bypass"\n' + "".join(tables)


async def per_call(gate: GatePipeline, tool: ReadTool, call: ToolCall, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        decided = await gate.before_tool(call, tool)
        assert isinstance(decided, ToolCall), decided
        await gate.after_tool(decided, "1\tline one")
    return (time.perf_counter() - start) / calls


async def run(calls: int, repeat: int) -> tuple[float, float, int]:
    ws = Path(tempfile.mkdtemp(prefix="bench-hooks-"))
    (ws / "notes.txt").write_text("line one\n")
    plain = GatePipeline.from_config(
        Config.from_toml('[permissions]\nmode = "bypass"\n'), workspace=ws
    )
    hooked = GatePipeline.from_config(Config.from_toml(hooks_toml()), workspace=ws)
    count = len(hooked.hooks or ())
    tool = ReadTool(ws)
    call = ToolCall("r1", "read", {"path": "notes.txt"})
    best_plain = best_hooked = float("inf")
    for _ in range(repeat):
        best_plain = min(best_plain, await per_call(plain, tool, call, calls))
        best_hooked = min(best_hooked, await per_call(hooked, tool, call, calls))
    assert not (ws / "hooks.log").exists(), "a hook matched: the benchmark measures no-match"
    return best_plain, best_hooked, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    plain, hooked, count = asyncio.run(run(args.calls, args.repeat))
    print(f"gate without hooks:          {plain * 1e6:8.1f} µs per tool call")
    print(f"gate with {count} hooks (no match): {hooked * 1e6:8.1f} µs per tool call")
    print(f"hook dispatch overhead per tool call: {(hooked - plain) * 1e3:.4f} ms (goal ≤ 1 ms)")


if __name__ == "__main__":
    main()
