"""Chapter 12: ``batches`` and ``execute_calls`` — parallel where it is safe, in order where
it is not. Not a book test file."""

from __future__ import annotations

import asyncio

from ..types import ToolCall, ToolDefinition, ToolSet
from ._suite import Suite

suite = Suite("batching", "batches, execute_calls", chapters=["ch12"])


class _Probe:
    """A tool that notes when each call starts and ends (it yields to the loop in between,
    so calls run together interleave and calls run one by one do not)."""

    def __init__(self, name: str, safe: bool, log: list[str]):
        self.definition = ToolDefinition(name, "probe").param("key", "string", "key", True)
        self.concurrency_safe = safe
        self.read_only = safe
        self.log = log

    async def call(self, args):
        self.log.append(f"start {args['key']}")
        await asyncio.sleep(0)
        self.log.append(f"end {args['key']}")
        return f"{self.definition.name}:{args['key']}"


def _calls(*pairs: tuple[str, str]) -> list[ToolCall]:
    return [ToolCall(f"c{i}", name, {"key": key}) for i, (name, key) in enumerate(pairs)]


def _tools(log: list[str]) -> ToolSet:
    return ToolSet([_Probe("look", True, log), _Probe("change", False, log)])


@suite.test
def test_batching_groups_consecutive_safe_calls(impl, tmp):
    calls = _calls(("look", "a"), ("look", "b"), ("change", "x"), ("look", "c"), ("look", "d"))
    assert impl.batches(_tools([]), calls) == [[0, 1], [2], [3, 4]]


@suite.test
def test_batching_unsafe_calls_run_alone(impl, tmp):
    calls = _calls(("change", "x"), ("change", "y"))
    assert impl.batches(_tools([]), calls) == [[0], [1]]


@suite.test
def test_batching_unknown_tool_runs_alone(impl, tmp):
    calls = _calls(("look", "a"), ("nope", "?"), ("look", "b"))
    assert impl.batches(_tools([]), calls) == [[0], [1], [2]]


@suite.test
async def test_batching_results_come_back_in_call_order(impl, tmp):
    calls = _calls(("look", "a"), ("change", "x"), ("look", "b"), ("nope", "?"))
    results = await impl.execute_calls(_tools([]), calls)
    assert results[:3] == ["look:a", "change:x", "look:b"]
    assert results[3].startswith("error:")


@suite.test
async def test_batching_safe_calls_run_together(impl, tmp):
    log: list[str] = []
    calls = _calls(("look", "a"), ("look", "b"))
    await impl.execute_calls(_tools(log), calls)
    # Run together, both start before either ends; run one by one, they alternate.
    assert log[:2] == ["start a", "start b"]


@suite.test
async def test_batching_an_unsafe_call_waits_for_the_batch_before_it(impl, tmp):
    log: list[str] = []
    calls = _calls(("look", "a"), ("look", "b"), ("change", "x"), ("look", "c"))
    await impl.execute_calls(_tools(log), calls)
    assert log.index("start x") > max(log.index("end a"), log.index("end b"))
    assert log.index("start c") > log.index("end x")
