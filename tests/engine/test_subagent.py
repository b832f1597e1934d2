"""SubagentTool beyond the book: filtered tools, the parent's gate, usage, no recursion."""

from __future__ import annotations

from clawnb.agent import SimpleAgent
from clawnb.executor import Gate, Refusal
from clawnb.providers.mock import MockProvider
from clawnb.tools.read import ReadTool
from clawnb.tools.subagent import SubagentTool
from clawnb.tools.write import WriteTool
from clawnb.types import AssistantTurn, Message, StopReason, TokenUsage, ToolCall, ToolSet


def _text(text, usage=None):
    return AssistantTurn(text, [], StopReason.STOP, usage)


def _call(call_id, name, args, usage=None):
    return AssistantTurn(None, [ToolCall(call_id, name, args)], StopReason.TOOL_USE, usage)


def test_filters_by_name_and_read_only(tmp_path):
    def factory():
        return [ReadTool(), WriteTool()]

    provider = MockProvider([])
    assert SubagentTool(provider, factory).child_tools().names() == ["read", "write"]
    assert SubagentTool(provider, factory, allowed_tools=["write"]).child_tools().names() == [
        "write"
    ]
    assert SubagentTool(provider, factory, read_only_tools=True).child_tools().names() == ["read"]


def test_no_recursive_subagents():
    provider = MockProvider([])
    inner = SubagentTool(provider, ToolSet)
    outer = SubagentTool(provider, lambda: ToolSet([inner, ReadTool()]))
    assert outer.child_tools().names() == ["read"]


async def test_child_sees_only_its_tools(tmp_path):
    provider = MockProvider(
        [
            _call("c1", "write", {"path": str(tmp_path / "x"), "content": "no"}),
            _text("could not write"),
        ]
    )
    tool = SubagentTool(provider, lambda: [ReadTool(), WriteTool()], read_only_tools=True)
    assert await tool.call({"task": "t"}) == "could not write"
    assert not (tmp_path / "x").exists()


class DenyWrites(Gate):
    def __init__(self):
        self.events = []

    async def agent_start(self, prompt):
        self.events.append("start")

    async def before_tool(self, call, tool):
        if call.name == "write":
            return Refusal("error: writes are denied", "denied")
        return call


async def test_parent_gate_guards_child_calls(tmp_path):
    provider = MockProvider(
        [
            _call("p1", "subagent", {"task": "write it"}),
            _call("c1", "write", {"path": str(tmp_path / "x"), "content": "no"}),
            _text("the write was denied"),
            _text("ok"),
        ]
    )
    gate = DenyWrites()
    agent = SimpleAgent(provider, gate=gate).tool(
        SubagentTool(provider, lambda: [WriteTool()], gate=gate)
    )
    messages = [Message.User("go")]
    assert await agent.chat(messages) == "ok"
    assert not (tmp_path / "x").exists()
    assert messages[2] == Message.ToolResult("p1", "the write was denied")
    assert gate.events == ["start"]  # the child's run is not a second agent start


async def test_child_usage_is_reported():
    seen = []
    provider = MockProvider(
        [
            _call("c1", "read", {"path": "/dev/null"}, TokenUsage(10, 2)),
            _text("done", TokenUsage(20, 3)),
        ]
    )
    tool = SubagentTool(provider, lambda: [ReadTool()], on_usage=seen.append)
    assert await tool.call({"task": "t"}) == "done"
    assert seen == [TokenUsage(10, 2), TokenUsage(20, 3)]


async def test_system_prompt_reaches_the_child():
    seen = []

    class Spy:
        async def chat(self, messages, tools):
            seen.append(list(messages))
            return _text("fine")

    await SubagentTool(Spy(), ToolSet).system_prompt("You audit.").call({"task": "audit"})
    assert seen[0] == [Message.System("You audit."), Message.User("audit")]


def test_definition_and_bad_max_turns():
    tool = SubagentTool(MockProvider([]), ToolSet)
    assert tool.definition.name == "subagent"
    assert tool.definition.parameters["required"] == ["task"]
    try:
        tool.max_turns(0)
    except ValueError:
        pass
    else:
        raise AssertionError("max_turns(0) must be rejected")
