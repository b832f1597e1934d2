"""Book chapters 9–10 in the loop: ``simple_agent_with_tools.rs``, 4 tests (named
``test_agent_*`` so the ch3 ``test_simple_agent_`` filter does not pick them up)."""

from __future__ import annotations

from ._helpers import bash_call, read_call, text_turn, tool_turn, write_call
from ._suite import Suite

suite = Suite("agent_tools", "SimpleAgent with the ch9/ch10 tools", chapters=["ch12"])


def _agent(impl, responses, *tools):
    """A SimpleAgent whose model answers with ``responses``, with ``tools`` registered in turn."""
    agent = impl.SimpleAgent(impl.MockProvider(responses))
    for tool in tools:
        agent = agent.tool(tool)
    return agent


@suite.test
async def test_agent_multiple_tools_registered(impl, tmp):
    tools = impl.ReadTool(), impl.BashTool(), impl.WriteTool(), impl.EditTool()
    agent = _agent(impl, [text_turn("Ready")], *tools)
    assert await agent.run("Hello") == "Ready"


@suite.test
async def test_agent_bash_tool_in_loop(impl, tmp):
    script = [tool_turn(bash_call("c1", "echo hi")), text_turn("bash said hi")]
    agent = _agent(impl, script, impl.BashTool())
    assert await agent.run("Run bash") == "bash said hi"


@suite.test
async def test_agent_write_then_read(impl, tmp):
    path = tmp / "wr.txt"
    script = [
        tool_turn(write_call("c1", path, "written data")),
        tool_turn(read_call("c2", path)),
        text_turn("File says: written data"),
    ]
    agent = _agent(impl, script, impl.WriteTool(), impl.ReadTool())
    assert await agent.run("Write and read") == "File says: written data"
    assert path.read_text() == "written data"


@suite.test
async def test_agent_immediate_stop_with_tools_registered(impl, tmp):
    tools = impl.ReadTool(), impl.BashTool(), impl.WriteTool()
    agent = _agent(impl, [text_turn("No tools needed")], *tools)
    assert await agent.run("Just answer") == "No tools needed"
