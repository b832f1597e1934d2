"""Every tool clawnb ships declares its traits, and this table is what they are: a change to
what a tool may count on (running unasked in plan mode, beside other calls, asking always)
shows up here as a diff a reviewer reads."""

from __future__ import annotations

from clawnb.control.sandbox import SandboxPolicy
from clawnb.notebook.kernel_tools import InspectVariableTool, RunPythonTool
from clawnb.notebook.propose import ProposeCellTool
from clawnb.session.assemble import build_agent
from clawnb.tools.bash import BashTool
from clawnb.tools.tool_search import defer
from clawnb.tools.web_fetch import WebFetchTool
from clawnb.types import ToolTraits, traits_of

R = ToolTraits(read_only=True)
ONE_AT_A_TIME = ToolTraits(read_only=True, concurrency_safe=False)
CHANGES = ToolTraits()
SHIPPED = {
    "read": R,
    "glob": R,
    "grep": R,
    "notebook_read": R,
    "write": CHANGES,
    "edit": CHANGES,
    "notebook_edit": CHANGES,
    "tool_search": ONE_AT_A_TIME,
    "ask_user": ONE_AT_A_TIME,
    "web_fetch": ToolTraits(read_only=True, open_world=True, deferred=True),
    "subagent": CHANGES,
    "skill": ONE_AT_A_TIME,  # its snippets may ask the person: one question at a time
}


def test_every_shipped_tool_declares_its_traits(tmp_path):
    session = build_agent(None, workspace=tmp_path, model="scripted:/dev/null", ask_user=True)
    found = {t.definition.name: traits_of(t) for t in session.tools if t.definition.name != "bash"}
    assert found == SHIPPED


def test_bash_traits_follow_its_sandbox(tmp_path):
    plain = traits_of(BashTool(tmp_path, sandbox=None))
    assert plain == ToolTraits(concurrency_safe=False, destructive=True, open_world=True)
    boxed = BashTool(tmp_path, sandbox=SandboxPolicy(tmp_path, auto_allow=True))
    assert traits_of(boxed) == ToolTraits(
        concurrency_safe=False, destructive=True, open_world=False, auto_allowed=True
    )
    # plan mode runs it unasked for being read-only, not for auto_allow
    assert traits_of(boxed.read_only_variant()) == ToolTraits(
        read_only=True, concurrency_safe=False
    )


def test_kernel_tools_declare_theirs():
    assert traits_of(InspectVariableTool({})) == R
    assert traits_of(RunPythonTool({})) == ToolTraits(always_asks=True, destructive=True)
    assert traits_of(ProposeCellTool()) == ONE_AT_A_TIME


def test_a_deferred_tool_keeps_the_traits_of_the_tool_it_wraps():
    assert traits_of(defer(WebFetchTool())) == ToolTraits(
        read_only=True, open_world=True, deferred=True
    )
