"""The read-only ``skill`` tool, called as the loop calls it and driven by a scripted model."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pytest

from clawnb.agent import SimpleAgent
from clawnb.skills import SkillTool, build_listing, discover_skills
from clawnb.skills.invoke import ContextCommand
from clawnb.skills.model import Skill
from clawnb.tools.base import ToolError
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall, ToolDefinition, traits_of


def _tool(world, **kwargs) -> SkillTool:
    catalog = discover_skills(world.workspace, trusted=True, user_dir=world.user)
    return SkillTool(catalog, **kwargs)


async def test_the_skill_tool_returns_the_body_and_the_files_of_its_folder(world) -> None:
    world.skill(
        ".claw/skills",
        "report",
        world.text(
            "Write the report.", body="Follow references/style.md, then run scripts/build.py $0."
        ),
    )
    folder = world.workspace / ".claw/skills/report"
    (folder / "references").mkdir()
    (folder / "references/style.md").write_text("style")
    (folder / "scripts").mkdir()
    (folder / "scripts/build.py").write_text("print(1)")
    (folder / ".hidden").write_text("x")
    loaded: list[str] = []
    tool = _tool(world, on_load=lambda skill: loaded.append(skill.name))
    result = await tool.call({"name": "report", "arguments": "q3"})
    assert result.startswith('<skill name="report" source="project">\n')
    assert "Follow references/style.md, then run scripts/build.py q3.\n</skill>" in result
    assert f"- {folder / 'references/style.md'}" in result
    assert f"- {folder / 'scripts/build.py'}" in result
    assert ".hidden" not in result and "SKILL.md" not in result.split("</skill>")[1]
    assert loaded == ["report"]
    assert traits_of(tool).read_only and not tool.concurrency_safe


async def test_the_skill_tool_refuses_a_disable_model_invocation_skill(world) -> None:
    world.skill(".claw/skills", "deploy", world.text("Deploy.", disable_model_invocation="true"))
    tool = _tool(world)
    with pytest.raises(ToolError) as caught:
        await tool.call({"name": "deploy"})
    message = str(caught.value)
    assert message.startswith(
        "skill 'deploy' is marked disable-model-invocation: only the person runs it, as /deploy"
    )
    assert message.endswith("available skills: eda, explain-error, review")


async def test_the_skill_tool_refuses_prompt_commands_and_unknown_names(world) -> None:
    world.command(".claw/commands", "ship", "Ship it.\n")
    tool = _tool(world)
    with pytest.raises(ToolError, match="'ship' is a prompt command: only the person runs it"):
        await tool.call({"name": "ship"})
    with pytest.raises(ToolError, match="no skill named 'nope'; available skills: eda, "):
        await tool.call({"name": "nope"})
    with pytest.raises(ToolError, match="missing 'name' argument"):
        await tool.call({})


async def test_snippets_go_to_the_sessions_runner_and_their_output_comes_back(world) -> None:
    world.skill(
        ".claw/skills",
        "status",
        world.text("Status.", body="Branch: !`git branch --show-current`\nFiles: !`ls $0`"),
    )
    seen: list[tuple[str, list[str]]] = []

    async def run(skill: Skill, commands: Sequence[ContextCommand]) -> list[str]:
        seen.append((skill.name, [c.command for c in commands]))
        return ["main\n", "a.py b.py\n"]

    result = await _tool(world, run_context=run).call({"name": "status", "arguments": "src"})
    assert seen == [("status", ["git branch --show-current", "ls src"])]
    assert "Branch: main\nFiles: a.py b.py\n</skill>" in result


async def test_without_a_runner_the_snippets_are_not_run_and_the_model_is_told(
    world, tmp_path
) -> None:
    marker = tmp_path / "ran"
    world.skill(".claw/skills", "ctx", world.text("Ctx.", body=f"!`touch {marker}`"))
    result = await _tool(world).call({"name": "ctx"})
    assert f"[dynamic context not run: touch {marker}]" in result
    assert not marker.exists()


async def test_a_skill_md_swapped_for_a_link_after_discovery_is_not_read(world) -> None:
    path = world.skill(".claw/skills", "swap", world.text("Swap."))
    tool = _tool(world)
    secret = world.outside / "secret.md"
    secret.write_text("canary-swapped-skill-7a7a7a7a")
    path.unlink()
    path.symlink_to(secret)
    with pytest.raises(ToolError) as caught:
        await tool.call({"name": "swap"})
    assert "not read" in str(caught.value) and "leads out" in str(caught.value)
    assert "canary" not in str(caught.value)


async def test_a_body_read_once_is_read_again_after_a_swap_or_an_edit(world) -> None:
    path = world.skill(".claw/skills", "swap", world.text("Swap.", body="first body"))
    tool = _tool(world)
    assert "first body" in await tool.call({"name": "swap"})  # read, and remembered
    stamp = path.stat()
    path.write_text(world.text("Swap.", body="other body"))  # same size, same times
    os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert "other body" in await tool.call({"name": "swap"})
    secret = world.outside / "secret.md"
    secret.write_text(world.text("Swap.", body="canary-swapped-skill-7b7b7b7b"))
    path.unlink()
    path.symlink_to(secret)
    with pytest.raises(ToolError) as caught:
        await tool.call({"name": "swap"})
    assert "leads out" in str(caught.value) and "canary" not in str(caught.value)


class _Recorder:
    """A provider that plays turns and keeps every request's messages."""

    def __init__(self, turns: list[AssistantTurn]) -> None:
        self.turns = turns
        self.requests: list[list[Message]] = []

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        self.requests.append(list(messages))
        return self.turns.pop(0)


async def test_a_scripted_model_loads_a_builtin_skill_through_the_loop(tmp_path) -> None:
    catalog = discover_skills(None, trusted=False, user_dir=tmp_path)
    listing = build_listing(catalog, context_window=128_000)
    provider = _Recorder(
        [
            AssistantTurn(
                tool_calls=[ToolCall("c1", "skill", {"name": "eda", "arguments": "sales"})],
                stop_reason=StopReason.TOOL_USE,
            ),
            AssistantTurn(text="Exploring sales."),
        ]
    )
    agent = SimpleAgent(provider, tools=[SkillTool(catalog)], system_prompt=listing.text)
    assert await agent.run("explore my sales data") == "Exploring sales."
    first, second = provider.requests
    assert "- eda: Explore a dataframe" in first[0].content  # the listing, no body
    assert "inspect_variable" not in first[0].content
    result = second[-1]
    assert isinstance(result, Message.ToolResult)
    assert "Explore the dataframe `sales` in the person's kernel" in result.content
    assert "`inspect_variable` on `sales`" in result.content
