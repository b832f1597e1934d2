"""The hooks' small language: `if` conditions, context variables quoted for the shell, and the
`[[hooks.EVENT]]` tables the config accepts or refuses in one line."""

from __future__ import annotations

import subprocess

import pytest

from clawnb.config import Config, ConfigOverlay
from clawnb.control.hook_rules import (
    HOOK_EVENTS,
    expand_command,
    expand_text,
    parse_condition,
)
from clawnb.errors import ConfigError
from clawnb.hooks import ConfiguredHook, HookEngine, hooks_from_config


@pytest.mark.parametrize(
    ("condition", "tool", "args", "holds"),
    [
        ("tool == 'bash'", "bash", {}, True),
        ("tool == 'bash'", "write", {}, False),
        ("tool != 'bash'", "write", {}, True),
        ("tool != 'bash'", "bash", {}, False),
        ("args.command =~ '^git '", "bash", {"command": "git status"}, True),
        ("args.command =~ '^git '", "bash", {"command": "ls; git status"}, False),
        ("args.path ~= 'src/**/*.py'", "write", {"path": "src/a/b/c.py"}, True),
        ("args.path ~= 'src/**/*.py'", "write", {"path": "src/c.py"}, True),
        ("args.path ~= 'src/*.py'", "write", {"path": "src/a/c.py"}, False),  # * stays in a folder
        ("args.path ~= '*.lock'", "write", {"path": "poetry.lock"}, True),
        ("tool == 'bash' && args.command =~ '^git '", "bash", {"command": "git push"}, True),
        ("tool == 'bash' && args.command =~ '^git '", "bash", {"command": "rm x"}, False),
        ("tool == 'read' || tool == 'grep'", "grep", {}, True),
        ("tool == 'read' || tool == 'grep'", "bash", {}, False),
        ('args.path == "a b.txt"', "write", {"path": "a b.txt"}, True),
        ("args.missing == 'x'", "write", {}, False),  # an absent argument matches no value
        ("args.missing != 'x'", "write", {}, True),
        ("args.n == '3'", "t", {"n": 3}, True),  # a non-string argument compares as JSON
    ],
)
def test_each_condition_operator(condition, tool, args, holds):
    assert parse_condition(condition).holds(tool, args) is holds


@pytest.mark.parametrize(
    ("condition", "says"),
    [
        ("tool == 'a' && tool == 'b' || tool == 'c'", "cannot be mixed"),
        ("tool = 'a'", "expected `tool` or `args.KEY`"),
        ("name == 'a'", "expected `tool` or `args.KEY`"),
        ("tool == a", "expected `tool` or `args.KEY`"),
        ("tool == 'a' and tool == 'b'", "expected && or ||"),
        ("args.x =~ '('", "is not a regular expression"),
        ("   ", "empty"),
    ],
)
def test_a_bad_condition_is_one_line_saying_why(condition, says):
    with pytest.raises(ValueError, match=says) as caught:
        parse_condition(condition)
    assert "\n" not in str(caught.value)


def test_mixed_joins_in_a_config_file_are_a_config_error_of_one_line():
    text = "[[hooks.pre_tool]]\ncommand = \"true\"\nif = \"tool == 'a' && tool == 'b' || tool == 'c'\"\n"
    with pytest.raises(ConfigError) as caught:
        Config.from_toml(text, "cfg.toml")
    message = str(caught.value)
    assert message.startswith("cfg.toml: key 'hooks.pre_tool.0': ")
    assert "cannot be mixed" in message and "\n" not in message


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ('command = "true"\nasync = true', "async = true is refused on pre_tool"),
        ('action = "prompt"', "action = 'prompt' needs prompt"),
        ('action = "http"', "action = 'http' needs url"),
        ('action = "http"\nurl = "ftp://x/y"', "is not an http:// or https:// address"),
        ('action = "agent"', "action = 'agent' needs prompt"),
        ('action = "email"\ncommand = "x"', "Input should be"),
        ('command = "true"\ntimeout = 0', "greater than 0"),
        ('command = "true"\nwhen = "x"', "unknown key"),
    ],
)
def test_bad_hook_tables_are_config_errors(table, says):
    with pytest.raises(ConfigError, match=says):
        Config.from_toml(f"[[hooks.pre_tool]]\n{table}\n", "cfg.toml")


def test_every_event_has_a_table_and_every_key_is_read():
    lines = []
    for event in HOOK_EVENTS:
        lines.append(f'[[hooks.{event}]]\ncommand = "echo {event}"\n')
    lines.append(
        '[[hooks.post_tool]]\naction = "prompt"\nprompt = "ran $TOOL_NAME"\n'
        "if = \"tool ~= 'mcp__*'\"\nonce = true\nasync = true\ntimeout = 2.5\n"
    )
    config = Config.from_toml("".join(lines))
    engine = hooks_from_config(config)
    assert isinstance(engine, HookEngine)
    assert sorted({h.event for h in engine.configured()}) == sorted(HOOK_EVENTS)
    last = engine.configured("post_tool")[-1]
    assert isinstance(last, ConfiguredHook)
    assert (last.action, last.prompt, last.once, last.run_async, last.timeout_ms) == (
        "prompt",
        "ran $TOOL_NAME",
        True,
        True,
        2500,
    )
    assert last.condition is not None and last.condition.holds("mcp__x__y", {})
    assert not last.condition.holds("bash", {})


def test_the_books_pre_tool_table_keeps_its_meaning():
    config = Config.from_toml(
        '[[hooks.pre_tool]]\ncommand = "exit 1"\ntool_pattern = "bash"\ntimeout_ms = 700\n'
    )
    (hook,) = hooks_from_config(config).hooks
    assert (hook.stage, hook.tool_pattern, hook.timeout_ms, hook.action) == (
        "pre",
        "bash",
        700,
        "command",
    )


def test_http_hosts_come_only_from_the_user_layer():
    user = ConfigOverlay.from_toml('[hooks]\nhttp_hosts = ["127.0.0.1"]\n').as_layer("user")
    project = ConfigOverlay.from_toml('[hooks]\nhttp_hosts = ["evil.example"]\n').as_layer(
        "project"
    )
    assert Config().merge(project).hooks.http_hosts == []
    assert Config().merge(user).merge(project).hooks.http_hosts == ["127.0.0.1"]
    assert Config().merge(project).merge(user).hooks.http_hosts == ["127.0.0.1"]
    # hooks of both layers add up; the host list is not one of the lists that do
    both = (
        Config()
        .merge(ConfigOverlay.from_toml('[[hooks.turn_end]]\ncommand = "a"\n').as_layer("user"))
        .merge(ConfigOverlay.from_toml('[[hooks.turn_end]]\ncommand = "b"\n').as_layer("project"))
    )
    assert [h.command for h in both.hooks.turn_end] == ["a", "b"]
    assert not any(e.list == "hooks.http_hosts" for e in both.rule_entries())
    sources = [h.source for h in hooks_from_config(both).configured("turn_end")]
    assert sources[0].startswith("user") and sources[1].startswith("project")


def _sh(command: str) -> str:
    return subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=True).stdout


HOSTILE = "a b; echo INJECTED $(echo SUBST) `echo TICK` \"dq\" 'sq' \\ $HOME"


@pytest.mark.parametrize(
    "template",
    [
        "printf %s $FILE_PATH",
        'printf %s "$FILE_PATH"',
        "printf %s '$FILE_PATH'",
        'printf %s "[$FILE_PATH]"',
        "printf %s x$FILE_PATH",
    ],
)
def test_a_value_is_one_literal_word_wherever_the_variable_stands(template):
    out = _sh(expand_command(template, {"FILE_PATH": HOSTILE}))
    assert HOSTILE in out
    assert "INJECTED SUBST" not in out and "TICK\n" not in out


def test_each_context_variable_is_replaced():
    values = {
        "EVENT": "post_tool",
        "TOOL_NAME": "write",
        "TOOL_ARGS": {"path": "a.txt", "n": 3},
        "FILE_PATH": "a.txt",
        "MESSAGE": "hello",
        "ERROR": "boom",
    }
    template = "$EVENT $TOOL_NAME $TOOL_ARGS.path $TOOL_ARGS.n $FILE_PATH $MESSAGE $ERROR $TOOL_ARGS.none $OTHER"
    assert _sh(f"printf '%s|' {expand_command(template, values)}") == (
        "post_tool|write|a.txt|3|a.txt|hello|boom||"
    )
    # $OTHER is no context variable: left to the shell (empty here)
    assert expand_text(template, values) == "post_tool write a.txt 3 a.txt hello boom  $OTHER"


def test_the_docs_name_every_event_and_every_hook_key():
    from pathlib import Path

    from clawnb.config import ShellHookConfig

    docs = Path(__file__).resolve().parents[2] / "docs"
    hooks_md = (docs / "hooks.md").read_text()
    config_md = (docs / "config.md").read_text()
    for event in HOOK_EVENTS:
        assert f"`{event}`" in hooks_md, event
        assert f"`hooks.{event}`" in config_md, event
    for name, field in ShellHookConfig.model_fields.items():
        key = field.alias or name
        assert f"`{key}" in hooks_md and f"| `{key}` |" in config_md, key
    assert "`hooks.http_hosts`" in config_md and "http_hosts" in hooks_md
