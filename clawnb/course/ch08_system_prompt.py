"""Chapter 8: ``build_system_prompt`` — not a book test file; these tests hold the learner's
builder to the chapter's rules: static sections first, the changing ones after, so the prefix
can be cached."""

from __future__ import annotations

import os

from ._suite import Suite

suite = Suite("system_prompt", "build_system_prompt", chapters=["ch08"])


def _static_prefix(a: str, b: str) -> str:
    return os.path.commonprefix([a, b])


@suite.test
def test_system_prompt_lists_every_tool(impl, tmp):
    prompt = impl.build_system_prompt([impl.ReadTool(), impl.BashTool()], tmp)
    for tool in (impl.ReadTool(), impl.BashTool()):
        assert tool.definition.name in prompt
        assert tool.definition.description in prompt


@suite.test
def test_system_prompt_mentions_the_working_directory(impl, tmp):
    assert str(tmp) in impl.build_system_prompt([impl.ReadTool()], tmp)


@suite.test
def test_system_prompt_static_part_does_not_depend_on_the_directory(impl, tmp):
    tools = [impl.ReadTool(), impl.WriteTool()]
    here = impl.build_system_prompt(tools, "/work/alpha")
    there = impl.build_system_prompt(tools, "/srv/beta")
    prefix = _static_prefix(here, there)
    # Everything up to the directory is shared, tools included: that is what gets cached.
    assert "write" in prefix and "read" in prefix
    assert "/work/alpha" not in prefix


@suite.test
def test_system_prompt_instructions_come_after_the_static_part(impl, tmp):
    tools = [impl.ReadTool()]
    plain = impl.build_system_prompt(tools, tmp)
    with_notes = impl.build_system_prompt(tools, tmp, "Always run the linter.")
    assert "Always run the linter." in with_notes
    assert "Always run the linter." not in plain
    prefix = _static_prefix(plain, impl.build_system_prompt(tools, "/srv/elsewhere"))
    assert with_notes.startswith(prefix)


@suite.test
def test_system_prompt_without_instructions_has_no_empty_section(impl, tmp):
    plain = impl.build_system_prompt([impl.ReadTool()], tmp)
    assert plain == impl.build_system_prompt([impl.ReadTool()], tmp, None)
    assert plain == impl.build_system_prompt([impl.ReadTool()], tmp, "")
