"""SystemPromptBuilder: named sections, static before dynamic, cacheable prefix on the wire."""

from __future__ import annotations

import subprocess
from datetime import date

from clawnb.instructions import InstructionLoader
from clawnb.prompt import (
    DYNAMIC_BOUNDARY,
    SystemPromptBuilder,
    git_status,
    split_system_prompt,
    system_content,
)
from clawnb.tools.read import ReadTool
from clawnb.types import Message


def _builder(tmp_path, **kw):
    return SystemPromptBuilder(tmp_path, today=date(2026, 1, 2), **kw)


def test_sections_in_order_static_first(tmp_path):
    (tmp_path / "AGENTS.md").write_text("Run the tests with pytest.")
    builder = _builder(tmp_path, tools=[ReadTool()], config_instructions="Prefer small diffs.")
    sections = builder.sections()
    assert [s.name for s in sections] == [
        "identity",
        "safety",
        "tools",
        "environment",
        "instructions",
        "config",
    ]
    assert [s.static for s in sections] == [True, True, True, False, False, False]
    prompt = builder.build()
    static, dynamic = split_system_prompt(prompt)
    assert "You are clawnb" in static and "Your tools: read." in static
    assert str(tmp_path) not in static  # nothing session-specific in the cacheable part
    assert f"Working directory: {tmp_path}" in dynamic
    assert "Date: 2026-01-02" in dynamic
    assert "Run the tests with pytest." in dynamic
    assert dynamic.endswith("# Additional instructions (config)\n\nPrefer small diffs.")


def test_static_prefix_is_identical_across_workspaces(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (b / "CLAUDE.md").write_text("b rules")
    first = split_system_prompt(_builder(a, tools=[ReadTool()]).build())[0]
    second = split_system_prompt(_builder(b, tools=[ReadTool()]).build())[0]
    assert first == second


def test_no_instructions_no_section(tmp_path):
    builder = _builder(tmp_path, instruction_loader=InstructionLoader(["NONE.md"]))
    assert "instructions" not in [s.name for s in builder.sections()]
    assert "config" not in [s.name for s in builder.sections()]


def test_override_drop_and_add_sections(tmp_path):
    builder = (
        _builder(tmp_path)
        .section("identity", "You are a test bot.")
        .section("safety", None)
        .section("team", "Team style: terse.", static=True)
        .section("ticket", "Ticket: ABC-1")
    )
    names = [s.name for s in builder.sections()]
    assert names == ["identity", "tools", "team", "environment", "ticket"]
    assert builder.build().startswith("You are a test bot.")


def test_git_status_inside_and_outside_a_repository(tmp_path):
    assert git_status(tmp_path) is None
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(tmp_path)], check=True)
    (tmp_path / "f.txt").write_text("x")
    status = git_status(tmp_path)
    assert status == "branch trunk, 1 changed file"
    assert "Git: branch trunk, 1 changed file" in _builder(tmp_path).environment()


def test_system_content_plain_and_cached():
    prompt = f"STATIC\n\n{DYNAMIC_BOUNDARY}\n\nDYNAMIC"
    assert system_content(prompt) == "STATIC\n\nDYNAMIC"
    assert system_content(prompt, cache=True) == [
        {"type": "text", "text": "STATIC", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "DYNAMIC"},
    ]
    assert system_content("no marker") == "no marker"
    assert system_content("no marker", cache=True)[0]["text"] == "no marker"


def test_openai_provider_wire_format(tmp_path):
    from clawnb.providers.openai import OpenAICompatProvider

    prompt = _builder(tmp_path).build()
    messages = [Message.System(prompt), Message.User("hi")]
    plain = OpenAICompatProvider("m", "badkey", "http://127.0.0.1:9").build_request(messages, [])
    assert DYNAMIC_BOUNDARY not in plain["messages"][0]["content"]
    cached = OpenAICompatProvider(
        "anthropic/x", "badkey", "http://127.0.0.1:9", cache_prompt=True
    ).build_request(messages, [])
    parts = cached["messages"][0]["content"]
    assert parts[0]["cache_control"] == {"type": "ephemeral"}
    assert "Working directory" in parts[1]["text"]
    assert cached["messages"][1] == {"role": "user", "content": "hi"}
