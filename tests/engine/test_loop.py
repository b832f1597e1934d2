"""The loops: event order, the history invariant, bad input, limits and interrupts."""

import asyncio
import time

import pytest

from clawnb.agent import SimpleAgent, StreamingAgent, single_turn
from clawnb.errors import MaxTurnsExceeded, ProviderError
from clawnb.events import AgentEvent
from clawnb.executor import INTERRUPTED_RESULT, Gate, Refusal, ToolExecutor, tool_summary
from clawnb.providers.mock import MockProvider, MockStreamProvider
from clawnb.tools.read import ReadTool
from clawnb.types import (
    AssistantTurn,
    Message,
    StopReason,
    ToolCall,
    ToolDefinition,
    ToolSet,
    ToolTraits,
)


def text(t):
    return AssistantTurn(t, [], StopReason.STOP)


def calls(*cs, text=None):
    return AssistantTurn(text, [ToolCall(*c) for c in cs], StopReason.TOOL_USE)


def assert_invariant(history):
    """Every Assistant turn with calls is followed by exactly its results, in order."""
    i = 0
    while i < len(history):
        msg = history[i]
        if isinstance(msg, Message.Assistant) and msg.turn.tool_calls:
            ids = [c.id for c in msg.turn.tool_calls]
            following = history[i + 1 : i + 1 + len(ids)]
            assert [getattr(m, "id", None) for m in following] == ids, history
            assert all(isinstance(m, Message.ToolResult) for m in following)
            i += 1 + len(ids)
        else:
            assert not isinstance(msg, Message.ToolResult), f"stray result at {i}: {history}"
            i += 1


class Boom:
    definition = ToolDefinition("boom", "Always fails")

    async def call(self, args):
        raise RuntimeError("kaboom")


class Sleepy:
    """A concurrency-safe tool that sleeps for ``seconds``."""

    traits = ToolTraits(concurrency_safe=True)

    def __init__(self, name="nap"):
        self.definition = ToolDefinition(name, "sleep").param("s", "number", "seconds", True)
        self.started = []

    async def call(self, args):
        self.started.append(args["s"])
        await asyncio.sleep(args["s"])
        return f"slept {args['s']}"


def test_tool_summary_is_the_books_format():
    assert tool_summary(ToolCall("1", "bash", {"command": "ls -la"})) == "    [bash: ls -la]"
    assert tool_summary(ToolCall("1", "read", {"path": "a.txt"})) == "    [read: a.txt]"
    assert tool_summary(ToolCall("1", "ask_user", {"question": "Ok?"})) == "    [ask_user: Ok?]"
    assert tool_summary(ToolCall("1", "x", {})) == "    [x]"
    # The first key present wins even when its value is not a string.
    assert tool_summary(ToolCall("1", "bash", {"command": 3, "path": "p"})) == "    [bash]"
    assert tool_summary(ToolCall("1", "x", None)) == "    [x]"


async def test_run_with_events_order_and_history(tmp_path):
    f = tmp_path / "f.txt"
    f.write_text("data")
    provider = MockProvider([calls(("c1", "read", {"path": str(f)})), text("all done")])
    events = []
    history = await SimpleAgent(provider).tool(ReadTool()).run_with_events("go", events.append)
    kinds = [type(e).__name__ for e in events]
    assert kinds == ["TurnEnd", "ToolCall", "ToolRunning", "ToolResult", "TurnEnd", "Done"]
    assert events[1] == AgentEvent.ToolCall("read", f"    [read: {f}]", "c1", {"path": str(f)})
    assert events[3] == AgentEvent.ToolResult("c1", "read", "data", "ok")
    assert events[-1] == AgentEvent.Done("all done")
    assert [type(m).__name__ for m in history] == ["User", "Assistant", "ToolResult", "Assistant"]
    assert_invariant(history)


async def test_run_with_history_reports_provider_errors_as_events():
    events = []
    history = await SimpleAgent(MockProvider([])).run_with_events("hi", events.append)
    assert events == [AgentEvent.Error("MockProvider: no more responses")]
    assert [type(m).__name__ for m in history] == ["User"]


async def test_chat_appends_to_the_callers_history():
    history = [Message.User("Hi")]
    agent = SimpleAgent(MockProvider([text("Hello!"), text("Again")]))
    assert await agent.chat(history) == "Hello!"
    history.append(Message.User("More"))
    assert await agent.chat(history) == "Again"
    assert len(history) == 4


async def test_tool_exception_and_unknown_tool_become_results():
    provider = MockProvider(
        [calls(("c1", "boom", {}), ("c2", "nope", {"a": 1})), text("recovered")]
    )
    history = [Message.User("x")]
    assert await SimpleAgent(provider).tool(Boom()).chat(history) == "recovered"
    assert history[2] == Message.ToolResult("c1", "error: kaboom")
    assert history[3] == Message.ToolResult("c2", "error: unknown tool `nope`")
    assert_invariant(history)


@pytest.mark.parametrize("args", [{"path": 42}, {"path": None}, [], "read me", None, {}])
async def test_wrong_argument_types_are_answers_not_crashes(args):
    provider = MockProvider([calls(("c1", "read", args)), text("ok")])
    history = [Message.User("x")]
    assert await SimpleAgent(provider).tool(ReadTool()).chat(history) == "ok"
    assert history[2] == Message.ToolResult("c1", "error: missing 'path' argument")


async def test_invalid_json_arguments_are_reported_not_run(tmp_path):
    ran = []

    class Recorder:
        definition = ToolDefinition("rec", "records")

        async def call(self, args):
            ran.append(args)
            return "ran"

    bad = ToolCall("c1", "rec", None, invalid_arguments='{"path": "a.txt"')
    provider = MockProvider([AssistantTurn(None, [bad], StopReason.TOOL_USE), text("ok")])
    history = [Message.User("x")]
    await SimpleAgent(provider).tool(Recorder()).chat(history)
    assert ran == []
    assert history[2].content.startswith("error: the arguments for `rec` were not valid JSON")
    assert_invariant(history)


async def test_tool_calls_with_stop_finish_reason_still_get_results(tmp_path):
    """Some servers say finish_reason=stop next to tool calls; the invariant must hold."""
    f = tmp_path / "f.txt"
    f.write_text("x")
    odd = AssistantTurn(None, [ToolCall("c1", "read", {"path": str(f)})], StopReason.STOP)
    history = [Message.User("x")]
    assert (
        await SimpleAgent(MockProvider([odd, text("fine")])).tool(ReadTool()).chat(history)
        == "fine"
    )
    assert_invariant(history)


async def test_max_turns_guard_is_off_by_default_and_clear_when_set(tmp_path):
    f = tmp_path / "f.txt"
    f.write_text("x")
    loop_turns = [calls((f"c{i}", "read", {"path": str(f)})) for i in range(5)]
    agent = SimpleAgent(MockProvider([*loop_turns, text("end")])).tool(ReadTool())
    assert await agent.run("go") == "end"

    limited = SimpleAgent(MockProvider(loop_turns), max_turns=3).tool(ReadTool())
    history = [Message.User("go")]
    with pytest.raises(MaxTurnsExceeded, match=r"exceeded max turns \(3\)"):
        await limited.chat(history)
    assert_invariant(history)
    events = []
    limited = SimpleAgent(MockProvider(loop_turns), max_turns=2).tool(ReadTool())
    await limited.run_with_events("go", events.append)
    assert events[-1] == AgentEvent.Error("exceeded max turns (2)")


async def test_streaming_agent_forwards_deltas_then_tool_events(tmp_path):
    f = tmp_path / "f.txt"
    f.write_text("hello")
    provider = MockStreamProvider([calls(("c1", "read", {"path": str(f)}), text="Hm"), text("ok")])
    events = []
    result = await StreamingAgent(provider).tool(ReadTool()).run("go", events.append)
    assert result == "ok"
    deltas = [e.text for e in events if isinstance(e, AgentEvent.TextDelta)]
    assert deltas == ["H", "m", "o", "k"]
    assert isinstance(events[-1], AgentEvent.Done)


async def test_streaming_agent_reports_then_raises_provider_errors():
    events = []
    with pytest.raises(ProviderError):
        await StreamingAgent(MockStreamProvider([])).run("hi", events.append)
    assert events == [AgentEvent.Error("MockProvider: no more responses")]


async def test_async_event_callbacks_are_awaited():
    seen = []

    async def on_event(event):
        await asyncio.sleep(0)
        seen.append(event)

    await StreamingAgent(MockStreamProvider([text("ab")])).run("x", on_event)
    assert [type(e).__name__ for e in seen] == ["TextDelta", "TextDelta", "TurnEnd", "Done"]


async def test_concurrency_safe_calls_run_together_and_keep_order():
    nap = Sleepy()
    turn = calls(*[(f"c{i}", "nap", {"s": 0.3}) for i in range(5)])
    history = [Message.User("x")]
    start = time.perf_counter()
    await SimpleAgent(MockProvider([turn, text("ok")])).tool(nap).chat(history)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.0, f"5 x 0.3 s naps took {elapsed:.2f}s: not concurrent"
    assert [m.id for m in history[2:7]] == [f"c{i}" for i in range(5)]


async def test_unsafe_calls_run_alone_in_order():
    order = []

    class Step:
        def __init__(self, name, safe):
            self.definition = ToolDefinition(name, name)
            self.traits = ToolTraits(concurrency_safe=safe)
            self.name = name

        async def call(self, args):
            order.append(("start", self.name, args["n"]))
            await asyncio.sleep(0.01)
            order.append(("end", self.name, args["n"]))
            return "ok"

    tools = ToolSet([Step("safe", True), Step("unsafe", False)])
    cs = [
        ToolCall("1", "unsafe", {"n": 1}),
        ToolCall("2", "unsafe", {"n": 2}),
        ToolCall("3", "safe", {"n": 3}),
    ]
    await ToolExecutor(tools).run(cs)
    assert order[:4] == [
        ("start", "unsafe", 1),
        ("end", "unsafe", 1),
        ("start", "unsafe", 2),
        ("end", "unsafe", 2),
    ]


async def test_cancellation_keeps_history_valid():
    nap = Sleepy()
    turn = calls(("c1", "nap", {"s": 30}), ("c2", "nap", {"s": 30}))
    history = [Message.User("x")]
    events = []
    task = asyncio.create_task(
        SimpleAgent(MockProvider([turn, text("never")])).tool(nap).chat(history, events.append)
    )
    while len(nap.started) < 2:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert_invariant(history)
    assert [m.content for m in history[2:]] == [INTERRUPTED_RESULT, INTERRUPTED_RESULT]
    outcomes = [e.outcome for e in events if isinstance(e, AgentEvent.ToolResult)]
    assert outcomes == ["interrupted", "interrupted"]


async def test_gate_refusals_and_argument_changes(tmp_path):
    (tmp_path / "a.txt").write_text("A")
    (tmp_path / "b.txt").write_text("B")

    class OnlyB(Gate):
        async def before_tool(self, call, tool):
            if call.arguments["path"].endswith("a.txt"):
                return Refusal("error: not a.txt", "denied")
            return call

        async def after_tool(self, call, result):
            return result + "!"

    provider = MockProvider(
        [
            calls(
                ("c1", "read", {"path": str(tmp_path / "a.txt")}),
                ("c2", "read", {"path": str(tmp_path / "b.txt")}),
            ),
            text("ok"),
        ]
    )
    history = [Message.User("x")]
    events = []
    await SimpleAgent(provider, gate=OnlyB()).tool(ReadTool()).chat(history, events.append)
    assert [m.content for m in history[2:4]] == ["error: not a.txt", "B!"]
    running = [e.id for e in events if isinstance(e, AgentEvent.ToolRunning)]
    assert running == ["c2"]


async def test_single_turn_makes_exactly_one_follow_up_call(tmp_path):
    f = tmp_path / "f.txt"
    f.write_text("x")
    provider = MockProvider(
        [
            calls(("c1", "read", {"path": str(f)})),
            calls(("c2", "read", {"path": str(f)}), text="second"),
            text("unused"),
        ]
    )
    assert await single_turn(provider, ToolSet([ReadTool()]), "go") == "second"
    assert len(provider) == 1


async def test_system_prompt_is_inserted_once():
    agent = SimpleAgent(MockProvider([text("a"), text("b")]), system_prompt="Be brief.")
    history = [Message.User("x")]
    await agent.chat(history)
    history.append(Message.User("y"))
    await agent.chat(history)
    assert [type(m).__name__ for m in history].count("System") == 1
    assert history[0] == Message.System("Be brief.")
