"""Naming and traits of wrapped MCP tools (no server process: the wrapper's own rules), and
that importing clawnb's MCP layer does not import the SDK."""

from __future__ import annotations

import subprocess
import sys

from clawnb.mcp.connection import ServerTool, ToolHints
from clawnb.mcp.manager import McpManager
from clawnb.mcp.tools import McpTool, tool_name
from clawnb.permissions import Permission, PermissionEngine, PermissionRule
from tests.mcp.helpers import entry

READ_ONLY = ToolHints(read_only=True, destructive=False, open_world=False)


def wrapped(name: str = "git_status", hints: ToolHints = READ_ONLY, **keys) -> McpTool:
    spec = entry("git", command="mcp-server-git", **keys)
    tool = ServerTool(
        name=name,
        description="Show the working tree status.",
        input_schema={"type": "object", "properties": {"repo_path": {"type": "string"}}},
        output_schema=None,
        hints=hints,
    )
    return McpTool(McpManager([spec]), spec, tool, tool_name("git", name, set()))


def test_names_are_prefixed_sanitised_capped_and_never_collide():
    taken = {"read", "bash", "mcp__fs__read"}
    assert tool_name("git", "git_status", taken) == "mcp__git__git_status"
    assert tool_name("fs", "read", taken) == "mcp__fs__read_2"  # a name already taken
    assert tool_name("web", "search.v2 (beta)", taken) == "mcp__web__search_v2__beta_"
    assert tool_name("web", "search_v2__beta_", taken) == "mcp__web__search_v2__beta__2"
    long = tool_name("db", "q" * 100, taken)
    again = tool_name("db", "q" * 100, taken)
    assert len(long) == len(again) == 64 and long != again
    assert all(n not in ("read", "bash") for n in taken - {"read", "bash"})


def test_the_servers_schema_is_the_tools_json_schema():
    tool = wrapped()
    assert tool.definition.to_dict() == {
        "name": "mcp__git__git_status",
        "description": "Show the working tree status.",
        "parameters": {"type": "object", "properties": {"repo_path": {"type": "string"}}},
    }


def test_annotations_are_hints_and_only_the_users_config_makes_a_tool_read_only():
    default = wrapped()
    assert (default.read_only_hint, default.destructive_hint, default.open_world_hint) == (
        True,
        False,
        False,
    )
    assert default.read_only is False and default.concurrency_safe is False
    engine = PermissionEngine.for_mode("default")
    assert engine.evaluate(default, {}) is Permission.Ask
    assert PermissionEngine.for_mode("plan").evaluate(default, {}) is Permission.Deny
    by_user = wrapped(read_only=["git_status"])
    by_trust = wrapped(trust_annotations=True)
    for tool in (by_user, by_trust):
        assert tool.read_only and engine.evaluate(tool, {}) is Permission.Allow
    # trusting annotations believes a *false* read-only hint too: it stays asked
    assert not wrapped(hints=ToolHints(read_only=False), trust_annotations=True).read_only


def test_hints_that_only_make_a_call_stricter_are_believed():
    reaches_out = wrapped(hints=ToolHints(read_only=True, open_world=True), read_only=True)
    writes = ToolHints(read_only=False, destructive=False)
    untrusted, trusted = (
        wrapped("git_add", writes),
        wrapped("git_add", writes, trust_annotations=True),
    )
    if reaches_out.traits is None:  # an engine that reads only read_only/concurrency_safe
        return
    assert reaches_out.traits.read_only and reaches_out.traits.open_world
    assert not wrapped().traits.open_world  # no claim to reach out, none assumed
    # "not destructive" would loosen: believed only from a trusted server
    assert (untrusted.traits.destructive, trusted.traits.destructive) == (True, False)


def test_deny_rules_match_mcp_tools_by_glob():
    engine = PermissionEngine.for_mode(
        "bypass", rules=[PermissionRule("mcp__git__*", Permission.Deny)]
    )
    assert engine.evaluate(wrapped(read_only=True), {}) is Permission.Deny


def test_importing_the_mcp_layer_does_not_import_the_sdk():
    code = (
        "import sys, clawnb.mcp, clawnb.mcp.config, clawnb.mcp.manager, clawnb.mcp.tools, "
        "clawnb.mcp.results, clawnb.mcp.connection; "
        "print([m for m in ('mcp', 'mcp_types', 'anyio', 'httpx2') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
    plain = subprocess.run(
        [sys.executable, "-c", "import sys, clawnb; print('clawnb.mcp' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert plain.stdout.strip() == "False"
