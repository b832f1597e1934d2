"""Book chapters 9–10 in the loop: ``simple_agent_with_tools.rs``, 4 tests (named
``test_agent_*`` so the ch3 ``test_simple_agent_`` filter does not pick them up)."""

from __future__ import annotations

from ._helpers import read_call, text_turn, tool_turn, write_call
from ._suite import Suite

suite = Suite("agent_tools", "SimpleAgent with the ch9/ch10 tools", chapters=["ch12"])


@suite.test
async def test_agent_multiple_tools_registered(impl, tmp):
    agent = (
        impl.SimpleAgent(impl.MockProvider([text_turn("Ready")]))
        .tool(impl.ReadTool())
        .tool(impl.BashTool())
        .tool(impl.WriteTool())
        .tool(impl.EditTool())
    )
    assert await agent.run("Hello") == "Ready"


@suite.test
async def test_agent_bash_tool_in_loop(impl, tmp):
    provider = impl.MockProvider(
        [tool_turn(("c1", "bash", {"command": "echo hi"})), text_turn("bash said hi")]
    )
    agent = impl.SimpleAgent(provider).tool(impl.BashTool())
    assert await agent.run("Run bash") == "bash said hi"


@suite.test
async def test_agent_write_then_read(impl, tmp):
    path = str(tmp / "wr.txt")
    provider = impl.MockProvider(
        [
            tool_turn(write_call("c1", path, "written data")),
            tool_turn(read_call("c2", path)),
            text_turn("File says: written data"),
        ]
    )
    agent = impl.SimpleAgent(provider).tool(impl.WriteTool()).tool(impl.ReadTool())
    assert await agent.run("Write and read") == "File says: written data"
    assert (tmp / "wr.txt").read_text() == "written data"


@suite.test
async def test_agent_immediate_stop_with_tools_registered(impl, tmp):
    agent = (
        impl.SimpleAgent(impl.MockProvider([text_turn("No tools needed")]))
        .tool(impl.ReadTool())
        .tool(impl.BashTool())
        .tool(impl.WriteTool())
    )
    assert await agent.run("Just answer") == "No tools needed"
