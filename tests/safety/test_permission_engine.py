"""PermissionEngine beyond the book: modes, argument rules, compound commands, patterns."""

from __future__ import annotations

import pytest

from clawnb.control.shell import glob_is_valid, split_shell_commands
from clawnb.permissions import (
    Permission,
    PermissionEngine,
    PermissionMode,
    PermissionRule,
    call_subject,
)
from clawnb.tools.read import ReadTool
from clawnb.types import ToolDefinition

A, D, Q = Permission.Allow, Permission.Deny, Permission.Ask


class _Tool:
    def __init__(self, name: str, read_only: bool | None = None):
        self.definition = ToolDefinition(name, name)
        if read_only is not None:
            self.read_only = read_only

    async def call(self, args):  # pragma: no cover - never run here
        return ""


READ, WRITE, EDIT, BASH = ReadTool(), _Tool("write", False), _Tool("edit", False), _Tool("bash")
NO_FLAG = _Tool("mystery")  # no read_only attribute: treated as not read-only
GREP = _Tool("grep", True)


def engine(mode, **kw):
    return PermissionEngine.for_mode(mode, **kw)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("default", {READ: A, GREP: A, WRITE: Q, EDIT: Q, BASH: Q, NO_FLAG: Q}),
        ("accept_edits", {READ: A, GREP: A, WRITE: A, EDIT: A, BASH: Q, NO_FLAG: Q}),
        ("plan", {READ: A, GREP: A, WRITE: D, EDIT: D, BASH: D, NO_FLAG: D}),
        ("bypass", {READ: A, GREP: A, WRITE: A, EDIT: A, BASH: A, NO_FLAG: A}),
    ],
)
def test_mode_table(mode, expected):
    eng = engine(mode)
    for tool, perm in expected.items():
        assert eng.evaluate(tool, {}) is perm, (mode, tool.definition.name)


@pytest.mark.parametrize("mode", list(PermissionMode))
def test_deny_rules_win_in_every_mode(mode):
    eng = engine(mode, deny=["bash(git push*)", "read(secrets/**)"], allow=["bash"])
    eng.record_session_allow("bash")
    eng.record_session_allow("read")
    assert eng.evaluate(BASH, {"command": "git push origin main"}) is D
    assert eng.evaluate(READ, {"path": "secrets/key.pem"}) is D
    assert eng.evaluate(READ, {"path": "src/a.py"}) is A


def test_a_deny_rule_listed_after_an_allow_rule_still_wins_with_a_mode():
    rules = [PermissionRule("bash", A), PermissionRule("bash(rm *)", D)]
    assert PermissionEngine(rules, Q, mode="default").evaluate(BASH, {"command": "rm x"}) is D
    # without a mode the book's first-match order holds
    assert PermissionEngine(rules, Q).evaluate("bash", {"command": "rm x"}) is A


def test_plan_mode_ignores_allow_rules_and_session_allows_for_writes():
    eng = engine("plan", allow=["write"])
    eng.record_session_allow("write")
    assert eng.evaluate(WRITE, {"path": "a"}) is D


def test_allow_and_ask_rules_in_default_mode():
    eng = engine("default", allow=["bash(git status)", "bash(git diff*)"], ask=["read(.env)"])
    assert eng.evaluate(BASH, {"command": "git status"}) is A
    assert eng.evaluate(BASH, {"command": "git  diff   HEAD"}) is A  # whitespace collapsed
    assert eng.evaluate(BASH, {"command": "git push"}) is Q
    assert eng.evaluate(READ, {"path": ".env"}) is Q  # an ask rule beats read-only


def test_session_allow_in_a_mode():
    eng = engine("default")
    assert eng.evaluate(BASH, {"command": "ls"}) is Q
    eng.record_session_allow("bash")
    assert eng.evaluate(BASH, {"command": "ls"}) is A
    assert eng.session_allows == {"bash"}
    eng.clear_session()
    assert eng.evaluate(BASH, {"command": "ls"}) is Q


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("git status", True),
        ("git status && git log", True),
        ("git status && rm -rf x", False),
        ("git status; rm -rf x", False),
        ("git status | sh", False),
        ("git log $(rm -rf x)", False),
        ("git log `rm -rf x`", False),
        ("git commit -m 'a; b && c'", True),  # operators inside quotes are text
        ("git status &\nrm x", False),
        ("", False),
    ],
)
def test_bash_allow_rules_cover_the_whole_line(command, allowed):
    eng = engine("default", allow=["bash(git *)"])
    assert (eng.evaluate(BASH, {"command": command}) is A) is allowed


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf x",
        "ls; rm -rf x",
        "ls && rm -rf x",
        "echo $(rm -rf x)",
        "ls | rm -rf x",
        "env rm -rf x",
        "/bin/rm -rf x",
        "bash -c 'rm -rf x'",
        "FOO=1 rm x",
    ],
)
def test_bash_deny_rules_match_any_part(command):
    eng = engine("bypass", deny=["bash(rm *)"])
    assert eng.evaluate(BASH, {"command": command}) is D


def test_path_rules_match_relative_absolute_and_dotted_spellings(tmp_path):
    eng = engine("default", allow=["write(src/**)"], workspace=tmp_path)
    for path in ("src/a.py", "./src/a.py", f"{tmp_path}/src/pkg/a.py", "src/x/../a.py"):
        assert eng.evaluate(WRITE, {"path": path}) is A, path
    for path in ("docs/a.md", "src/../secret.txt", "/etc/src/a.py", "../src/a.py"):
        assert eng.evaluate(WRITE, {"path": path}) is Q, path


def test_argument_rule_without_a_subject_does_not_match():
    rule = PermissionRule("write(src/**)", A)
    assert not rule.matches("write", {})
    assert not rule.matches("write", None)
    assert rule.matches("write", {"path": "src/a"})
    assert not rule.matches("edit", {"path": "src/a"})


def test_tool_globs_in_argument_rules():
    rule = PermissionRule("mcp__*(https://*)", Q)
    assert rule.tool_pattern == "mcp__*"
    assert rule.matches("mcp__web__fetch", {"url": "https://example.com"})


def test_invalid_pattern_is_an_exact_match():
    assert not glob_is_valid("[bash")
    assert not glob_is_valid("a[]")
    assert glob_is_valid("[]x]") and glob_is_valid("[!a]*") and glob_is_valid("*")
    eng = PermissionEngine([PermissionRule("[bash", D)], A)
    assert eng.evaluate("[bash", {}) is D
    assert eng.evaluate("bash", {}) is A
    assert eng.evaluate("b", {}) is A


def test_glob_is_case_sensitive():
    eng = PermissionEngine([PermissionRule("Bash", D)], A)
    assert eng.evaluate("bash", {}) is A


def test_decide_explains():
    d = engine("default").decide(BASH, {"command": "ls"})
    assert d.permission is Q and "default mode asks" in d.reason
    d = engine("default", deny=["bash"]).decide(BASH, {})
    assert d.rule == PermissionRule("bash", D) and "rule `bash` says deny" in d.reason


def test_mode_parsing_and_switching():
    assert PermissionMode.parse("acceptEdits") is PermissionMode.ACCEPT_EDITS
    assert PermissionMode.parse("accept-edits") is PermissionMode.ACCEPT_EDITS
    assert PermissionMode.parse("bypassPermissions") is PermissionMode.BYPASS
    with pytest.raises(ValueError, match="unknown permission mode 'yolo'"):
        PermissionMode.parse("yolo")
    eng = engine("default")
    eng.set_mode("plan")
    assert eng.evaluate(WRITE, {}) is D


def test_permission_spellings_and_rule_from_string():
    assert Permission.ALLOW is Permission.Allow and Permission("deny") is Permission.Deny
    assert PermissionRule("bash", "ask").permission is Q


def test_names_without_objects_are_not_read_only():
    assert engine("default").evaluate("read", {}) is Q  # fail closed: no object, no flag
    with pytest.raises(TypeError):
        engine("default").evaluate(object(), {})


def test_call_subject_and_split():
    assert call_subject("bash", {"command": "ls", "path": "x"}) == "ls"
    assert call_subject("write", {"path": "a", "content": "b"}) == "a"
    assert call_subject("web_fetch", {"url": "u"}) == "u"
    assert call_subject("x", {"n": 1}) is None
    assert split_shell_commands("a && b || c; d | e & f") == (["a", "b", "c", "d", "e", "f"], False)
    assert split_shell_commands("echo 'a;b' \"c|d\"") == (["echo 'a;b' \"c|d\""], False)
    assert split_shell_commands("x $(y) `z`")[1] is True


def test_path_allow_rules_follow_symlinks(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "config").mkdir()
    (tmp_path / "src" / "cfg").symlink_to("../config")
    eng = engine("default", allow=["write(src/**)"], deny=["write(config/**)"], workspace=tmp_path)
    assert eng.evaluate(WRITE, {"path": "src/ok.py"}) is A
    assert eng.evaluate(WRITE, {"path": "src/cfg/settings.toml"}) is D  # really config/
    eng = engine("default", allow=["write(src/**)"], workspace=tmp_path)
    assert eng.evaluate(WRITE, {"path": "src/cfg/settings.toml"}) is Q


@pytest.mark.parametrize(
    ("command", "writes"),
    [
        ("git log > out.txt", True),
        ("git log >> ~/.bashrc", True),
        ("git log &> all.txt", True),
        ("git log >| forced.txt", True),
        ("git log 2>&1", False),
        ("git log >&2", False),
        ("git log > /dev/null 2>&1", False),
        ("git log >& /tmp/x", True),
        ("git commit -m 'a > b'", False),
        ('git commit -m "a > b"', False),
        ("git log 1>/dev/null", False),
        ("git log \\> x", False),
    ],
)
def test_writes_to_file(command, writes):
    from clawnb.control.shell import writes_to_file

    assert writes_to_file(command) is writes
    eng = engine("default", allow=["bash(git *)"])
    assert (eng.evaluate(BASH, {"command": command}) is A) is (not writes)
