"""Server entries from config: the three spellings, one readable line per bad entry (naming
file and key), ``${VAR}``, and what a project file may and may not say."""

from __future__ import annotations

import json
import tomllib

import pytest

from clawnb.mcp.config import (
    expand,
    load_mcp_json,
    merge_servers,
    servers_from_mcp_json,
    servers_from_toml,
)

USER = "/home/me/.config/clawnb/config.toml"


def toml(text: str, source: str = USER, scope: str = "user"):
    return servers_from_toml(tomllib.loads(text), source=source, scope=scope)  # type: ignore[arg-type]


def test_named_tables_array_form_and_mcp_json_give_the_same_entry():
    tables = toml(
        """
        [mcp_servers.time]
        command = "uvx"
        args = ["mcp-server-time"]
        env = { TZ = "UTC" }
        """
    )
    array = toml(
        """
        [[mcp_servers]]
        name = "time"
        command = "uvx"
        args = ["mcp-server-time"]
        env = { TZ = "UTC" }
        """
    )
    project = servers_from_mcp_json(
        {
            "mcpServers": {
                "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}}
            }
        },
        source="/w/.mcp.json",
    )
    for parsed in (tables, array, project):
        assert parsed.problems == ()
        (server,) = parsed.servers
        assert (server.name, server.type, server.command, server.args, server.env) == (
            "time",
            "stdio",
            "uvx",
            ("mcp-server-time",),
            {"TZ": "UTC"},
        )
        assert (server.startup_timeout, server.tool_timeout, server.enabled) == (10.0, 60.0, True)
    assert project.servers[0].scope == "project"


def test_http_entries_take_url_headers_and_a_bearer_variable():
    parsed = toml(
        """
        [mcp_servers.docs]
        url = "https://mcp.example.com/mcp"
        headers = { "X-Team" = "${TEAM:-core}" }
        bearer_token_env_var = "DOCS_TOKEN"
        tool_timeout = 5
        """
    )
    (server,) = parsed.servers
    assert (server.type, server.url, server.bearer_token_env_var, server.tool_timeout) == (
        "http",
        "https://mcp.example.com/mcp",
        "DOCS_TOKEN",
        5.0,
    )
    sse = servers_from_mcp_json(
        {"mcpServers": {"old": {"type": "sse", "url": "http://127.0.0.1:9/sse"}}}, source="p.json"
    )
    assert sse.servers[0].type == "sse"


def test_each_bad_entry_is_one_line_naming_the_file_and_key_and_the_others_still_load():
    parsed = toml(
        """
        [mcp_servers.good]
        command = "good-server"

        [mcp_servers.slow]
        command = "x"
        startup_timeout = -1
        colour = "red"

        [mcp_servers.mixed]
        command = "x"
        url = "http://127.0.0.1:1/mcp"

        [mcp_servers.empty]
        args = ["--help"]

        [mcp_servers."bad name"]
        command = "x"
        """
    )
    assert parsed.names() == ["good"]
    assert len(parsed.problems) == 4
    slow, mixed, empty, name = parsed.problems
    assert slow.startswith(USER + ": ")
    assert "mcp_servers.slow.startup_timeout: Input should be greater than 0" in slow
    assert "mcp_servers.slow.colour: unknown key" in slow
    assert "\n" not in slow
    assert "mcp_servers.mixed: 'command' is for stdio servers" in mixed
    assert "mcp_servers.empty: a stdio server needs 'command'" in empty
    assert "name 'bad name'" in name


def test_a_string_where_a_number_belongs_is_an_error_not_a_conversion():
    parsed = toml('[mcp_servers.t]\ncommand = "x"\ntool_timeout = "60"\n')
    assert parsed.servers == ()
    assert "mcp_servers.t.tool_timeout" in parsed.problems[0]


def test_array_entries_need_a_name_and_a_bad_document_shape_is_one_line():
    parsed = toml('[[mcp_servers]]\ncommand = "x"\n')
    assert parsed.problems == (f"{USER}: mcp_servers[0]: needs a 'name' (a string)",)
    assert servers_from_toml({"mcp_servers": "nope"}, source="c.toml").problems == (
        "c.toml: mcp_servers: expected tables (got str)",
    )


def test_server_names_cannot_hold_a_double_underscore_that_would_make_tool_names_ambiguous():
    parsed = toml('[mcp_servers.a__b]\ncommand = "x"\n')
    assert parsed.servers == ()
    assert "no '__'" in parsed.problems[0]


def test_placeholders_are_checked_when_read_and_expanded_when_the_server_starts():
    assert expand("${HOME}/x ${MISSING:-fallback}", {"HOME": "/h"}) == "/h/x fallback"
    with pytest.raises(KeyError, match="TOKEN"):
        expand("Bearer ${TOKEN}", {})
    broken = toml('[mcp_servers.t]\ncommand = "x"\nargs = ["${UNCLOSED"]\n')
    assert "is not a valid ${VAR}" in broken.problems[0]
    # nothing is expanded while parsing: a key in the environment never sits in the entry
    kept = toml('[mcp_servers.t]\ncommand = "x"\nenv = { K = "${SECRET_KEY}" }\n')
    assert kept.servers[0].env == {"K": "${SECRET_KEY}"}


def test_a_project_file_cannot_make_clawnb_trust_a_server():
    project = servers_from_mcp_json(
        {"mcpServers": {"git": {"command": "x", "read_only": True, "trust_annotations": True}}},
        source="/w/.mcp.json",
    )
    (server,) = project.servers
    assert (server.read_only, server.trust_annotations) == (False, False)
    assert len(project.problems) == 2
    assert all("only your own config" in p for p in project.problems)
    user = toml('[mcp_servers.git]\ncommand = "x"\nread_only = ["git_status", "git_log*"]\n')
    assert user.servers[0].marks_read_only("git_log_oneline")
    assert not user.servers[0].marks_read_only("git_commit")


def test_project_servers_start_only_in_a_trusted_workspace_and_replace_user_ones_by_name():
    user = toml('[mcp_servers.git]\ncommand = "user-git"\n[mcp_servers.time]\ncommand = "t"\n')
    project = servers_from_mcp_json(
        {"mcpServers": {"git": {"command": "project-git"}, "db": {"command": "db"}}},
        source="/w/.mcp.json",
    )
    untrusted = merge_servers(user, project, trusted=False)
    assert untrusted.names() == ["git", "time"]
    assert untrusted.servers[0].command == "user-git"
    assert "not started (git, db): this workspace is not trusted" in untrusted.problems[0]
    trusted = merge_servers(user, project, trusted=True)
    assert [(s.name, s.command) for s in trusted.servers] == [
        ("git", "project-git"),
        ("time", "t"),
        ("db", "db"),
    ]
    assert "git replaces the server of the same name" in trusted.problems[0]


def test_enabled_and_disabled_tools_filter_by_name_or_glob():
    (server,) = toml(
        '[mcp_servers.g]\ncommand = "x"\nenabled_tools = ["git_*"]\ndisabled_tools = ["git_reset"]\n'
    ).servers
    assert [t for t in ("git_status", "git_reset", "other") if server.allows_tool(t)] == [
        "git_status"
    ]


def test_mcp_json_files_missing_broken_or_valid(tmp_path):
    assert load_mcp_json(tmp_path / ".mcp.json").servers == ()
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    assert load_mcp_json(bad).problems[0].startswith(f"{bad}: invalid JSON")
    good = tmp_path / ".mcp.json"
    good.write_text(json.dumps({"mcpServers": {"t": {"type": "stdio", "command": "x"}}}))
    (server,) = load_mcp_json(good).servers
    assert (server.source, server.where) == (str(good), f"mcpServers.t in {good}")


async def test_clawnb_python_in_a_command_is_the_interpreter_clawnb_runs_in(tmp_path):
    """``command = "${CLAWNB_PYTHON}"`` starts the server with this interpreter (which has
    the SDK), whatever ``PATH`` finds first — a PATH with no Python at all here."""
    from tests.mcp.helpers import SERVERS, entry, running

    server = entry(
        "py",
        command="${CLAWNB_PYTHON}",
        args=[str(SERVERS / "faults.py")],
        env={"FAULTS_DIR": str(tmp_path)},
    )
    async with running(server, log_dir=tmp_path / "logs", environ={"PATH": "/nonexistent"}) as m:
        assert m.start_lines == []
        echo = next(t for t in m.tools() if t.mcp_tool == "echo")
        assert await echo.call({"text": "from this python"}) == "from this python"
