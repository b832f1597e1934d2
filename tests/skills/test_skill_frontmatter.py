"""The frontmatter reader: what skills written for clawnb, Claude Code and the Agent Skills
format put between the ``---`` lines, and one clear line for what is malformed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from clawnb.skills.model import (
    ListValue,
    Nested,
    Scalar,
    SkillFormatError,
    allowed_tool_rules,
    build_skill,
    parse_frontmatter,
)


def _skill(front: str, body: str = "Body.\n", name: str = "s"):
    return build_skill(
        f"---\n{front}\n---\n{body}",
        name=name,
        path=Path("sk/SKILL.md"),
        root=Path("sk"),
        source="project",
        kind="skill",
        shown=".claw/skills/s/SKILL.md",
    )


def _plain(value: object) -> object:
    if isinstance(value, Scalar):
        return value.text
    if isinstance(value, ListValue):
        return [item.text for item in value.items]
    return value


# Valid YAML: the reader gives what a YAML parser gives for the keys skills use.
YAML_CASES = [
    "description: hello world",
    "description: >\n  folded line one\n  line two\n\n  second paragraph\n",
    "description: >-\n  folded and\n  stripped\n",
    "description: |\n  kept\n  lines\n",
    'description: "quoted: with a colon \\u00e9 \\"and\\" quotes"',
    "description: 'it''s single-quoted'",
    "description: a plain value\n  that goes on\n  over lines",
    "description: C# and F# # a comment",
    "allowed-tools: [Read, 'Bash(git diff *)', Grep]",
    "allowed-tools:\n  - Read\n  - Bash(git status:*)\n  - mcp__linear__create_issue",
    "arguments: [issue, branch]",
    "arguments:\n- issue\n- branch",
    "model: sonnet",
    "context: fork",
    "user-invocable: false\ndisable-model-invocation: True",
    "# a comment line\ndescription: after a comment",
]


@pytest.mark.parametrize("front", YAML_CASES)
def test_frontmatter_values_are_read_as_a_yaml_parser_reads_them(front: str) -> None:
    ours = {k: _plain(e.value) for k, e in parse_frontmatter(front).entries.items()}
    theirs = yaml.safe_load(front)
    for key, value in theirs.items():
        if isinstance(value, bool):  # booleans are judged per key by build_skill
            assert str(ours[key]).lower() == str(value).lower()
        else:
            assert ours[key] == value


def test_keys_of_other_formats_may_hold_anything_and_are_skipped() -> None:
    skill = _skill(
        "name: s\nlicense: MIT\nmetadata:\n  author: someone\n  tags: [a, [b]]\n"
        "hooks: {on-activate: x}\nversion: 1.0.0\ndescription: Still read."
    )
    assert skill.description == "Still read."
    assert skill.unknown_keys == ()
    front = parse_frontmatter("metadata:\n  author: x\n  nested:\n    - 1\n")
    assert isinstance(front.get("metadata").value, Nested)


def test_claude_code_forms_that_are_not_valid_yaml_are_read_as_meant() -> None:
    # Claude Code's own documentation writes both of these; a YAML parser rejects them
    for front in (
        "argument-hint: [issue-number] [priority]",
        "description: Use this when: the tests fail",
    ):
        with pytest.raises(yaml.YAMLError):
            yaml.safe_load(front)
    skill = _skill(
        "argument-hint: [issue-number] [priority]\ndescription: Use this when: the tests fail\n"
        "allowed-tools: Bash(git add:*), Bash(git status:*), Read"
    )
    assert skill.argument_hint == "[issue-number] [priority]"
    assert skill.description == "Use this when: the tests fail"
    assert skill.allowed_tools == ("Bash(git add:*)", "Bash(git status:*)", "Read")
    assert allowed_tool_rules(skill) == ("bash(git add*)", "bash(git status*)", "read")


def test_every_field_of_the_format_is_read() -> None:
    skill = _skill(
        "name: s\n"
        "description: Does s.\n"
        "when_to_use: When s is wanted.\n"
        'argument-hint: "<file> [mode]"\n'
        "arguments: file mode\n"
        "model: haiku\n"
        "context: fork\n"
        "agent: explore\n"
        "allowed-tools: Read Grep Bash(git diff *)\n"
        "disable-model-invocation: true\n"
        "user-invocable: false\n"
    )
    assert skill.description == "Does s. When s is wanted."
    assert skill.argument_hint == "<file> [mode]"
    assert skill.arguments == ("file", "mode")
    assert (skill.model, skill.context, skill.agent) == ("haiku", "fork", "explore")
    assert skill.allowed_tools == ("Read", "Grep", "Bash(git diff *)")
    assert allowed_tool_rules(skill) == ("read", "grep", "bash(git diff *)")
    assert skill.disable_model_invocation and not skill.user_invocable
    assert not skill.model_invocable
    assert _skill("model: inherit").model is None


def test_without_frontmatter_or_description_the_first_paragraph_describes_it() -> None:
    skill = build_skill(
        "# Deploy\n\nDeploy the app\nto staging.\n\nMore text.\n",
        name="deploy",
        path=Path("deploy.md"),
        root=Path("."),
        source="project",
        kind="command",
    )
    assert skill.description == "Deploy the app to staging."
    assert skill.description_from_body
    assert _skill("model: x", body="# Only a heading\n").description == "Only a heading"


def test_a_name_unlike_the_folder_and_unknown_keys_are_noted_not_fatal() -> None:
    skill = _skill("name: other\ndescrption: typo\ndescription: ok", name="s")
    assert skill.name == "s"
    assert skill.declared_name == "other"
    assert skill.unknown_keys == ("descrption",)


BAD_CASES = [
    ("context: forked", "context", "must be inline or fork, not 'forked'"),
    ("user-invocable: no", "user-invocable", "must be true or false, not 'no'"),
    ("disable-model-invocation: [true]", "disable-model-invocation", "must be true or false"),
    ("description: *anchor", "description", "uses a YAML feature clawnb does not read"),
    ("description: !!str x", "description", "uses a YAML feature clawnb does not read"),
    ("description: a\ndescription: b", "description", "given twice (lines 2 and 3)"),
    ('description: "never closed', "description", 'a value opened with " is never closed'),
    ("description: 'x' y", "description", "unexpected text after the closing quote: 'y'"),
    ('description: "bad \\q"', "description", "unknown escape '\\q'"),
    ("description:\n  key: value", "description", "must be a single value"),
    ("description: [a, b]", "description", "must be a single value, not a list"),
    ("allowed-tools: [Read, [Bash]]", "allowed-tools", "a list inside a list"),
    ("allowed-tools: Read Bash(git diff", "allowed-tools", "has a '(' without its ')'"),
    ("allowed-tools: [Read, 'Bash(x']", "allowed-tools", "is not a tool name or tool(pattern)"),
    ("allowed-tools:\n  - key: value", "allowed-tools", "is not a plain value"),
    ("arguments: [1st]", "arguments", "'1st' is not an argument name"),
    ("arguments: a a", "arguments", "names an argument twice"),
    ("name: 'has space'", "name", "'has space' is not a skill name"),
    ("description:\n\t- tab", "description", "indented with a tab"),
    ("just words", None, "line 2: expected 'key: value', got 'just words'"),
    ("  indented: x", None, "line 2: indented, but not under a key"),
]


@pytest.mark.parametrize(("front", "key", "problem"), BAD_CASES)
def test_bad_frontmatter_is_one_line_naming_the_file_and_the_key(
    front: str, key: str | None, problem: str
) -> None:
    with pytest.raises(SkillFormatError) as caught:
        _skill(front)
    error = caught.value
    assert error.key == key
    message = str(error)
    assert "\n" not in message
    where = f"frontmatter key '{key}'" if key else "frontmatter"
    assert message.startswith(f".claw/skills/s/SKILL.md: {where}: ")
    assert problem in message
