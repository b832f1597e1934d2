"""Skills in a real session (build_agent): the listing in the system prompt, the ``skill``
tool, ``/NAME args`` through the command registry, forks, and dynamic context through the
bash gate — judged by what the scripted model was actually sent."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from clawnb.config import Config, trust_workspace
from clawnb.errors import CommandError
from clawnb.events import AgentEvent, Approval, ApprovalRequest
from clawnb.prompt import split_system_prompt
from clawnb.providers.replay import ScriptedProvider, load_script
from clawnb.session.assemble import AgentSession, build_agent
from clawnb.skills.listing import estimate_text_tokens
from clawnb.types import Message, ToolDefinition
from tests.conftest import call_turn, write_script
from tests.skills.conftest import World, skill_text

pytestmark = pytest.mark.timeout(60)


class SeenProvider(ScriptedProvider):
    """The scripted model, keeping every request it was sent (the messages as JSON, the tool
    names): what reached "the model", byte for byte."""

    def __init__(self, path: Path) -> None:
        super().__init__(load_script(path), name=str(path))
        self.requests: list[str] = []
        self.tools: list[list[str]] = []

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> Any:
        self.requests.append(json.dumps([m.to_dict() for m in messages]))
        self.tools.append([t.name for t in tools])
        return await super().chat(messages, tools)

    def everything(self) -> str:
        return "\n".join(self.requests)


@pytest.fixture
def home(world: World, monkeypatch: pytest.MonkeyPatch) -> World:
    """The world's user config directory is clawnb's (skills, trust store)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(world.user.parent))
    return world


def session(
    world: World, tmp_path: Path, turns: list[dict[str, Any]], **options: Any
) -> tuple[AgentSession, SeenProvider]:
    provider = SeenProvider(write_script(tmp_path / "script.jsonl", turns))
    built = build_agent(
        Config(),
        workspace=world.workspace,
        provider=provider,
        model="scripted:x",
        streaming=False,
        subagents=False,
        **options,
    )
    return built, provider


def trust(world: World) -> None:
    trust_workspace(world.workspace)


# -- the listing and the tool -------------------------------------------------------------------


def test_the_listing_is_in_the_dynamic_part_of_the_system_prompt_and_the_skill_tool_is_offered(
    home: World, tmp_path: Path
) -> None:
    home.skill("user", "weekly", skill_text("Writes the weekly summary. Use on Mondays."))
    built, provider = session(home, tmp_path, [{"text": "ok"}])
    static, dynamic = split_system_prompt(built.system_prompt)
    assert dynamic is not None and "weekly: Writes the weekly summary" in dynamic
    assert "# Skills" not in static
    assert "skill" in built.tools.names()


def test_without_model_invocable_skills_there_is_no_skill_tool_and_no_listing(
    home: World, tmp_path: Path
) -> None:
    home.command("user", "deploy", "Deploy it.")
    provider = SeenProvider(write_script(tmp_path / "s.jsonl", [{"text": "ok"}]))
    from clawnb.skills.runtime import load_session_skills

    found = load_session_skills(home.workspace, context_window=100_000, builtins=False)
    assert [s.name for s in found.catalog] == ["deploy"]
    assert found.catalog.model_invocable() == ()
    built = build_agent(
        Config(), workspace=home.workspace, provider=provider, model="scripted:x", skills=False
    )
    assert "skill" not in built.tools.names()
    assert "# Skills" not in built.system_prompt


async def test_sixty_skills_grow_the_prompt_by_at_most_the_budget_and_no_unused_body_is_sent(
    home: World, tmp_path: Path
) -> None:
    trust(home)
    bare, _ = session(home, tmp_path, [{"text": "ok"}], skills=False)
    for i in range(60):
        home.skill(
            ".claw/skills",
            f"skill-{i:02d}",
            skill_text(
                f"Skill number {i} does its own particular job. Use when job {i} comes up.",
                body=f"SECRET-BODY-MARKER-{i} do it step by step.",
            ),
        )
    built, provider = session(home, tmp_path, [{"text": "ok"}])
    budget = built.skills.listing.budget if built.skills else 0
    grown = estimate_text_tokens(built.system_prompt) - estimate_text_tokens(bare.system_prompt)
    assert 0 < grown <= budget + 5  # the section's separator is a few characters
    await built.send("hello")
    assert "skill-00" in provider.everything()
    assert "SECRET-BODY-MARKER" not in provider.everything()


async def test_the_model_loads_a_body_with_the_skill_tool(home: World, tmp_path: Path) -> None:
    home.skill("user", "weekly", skill_text("Weekly summary.", body="Summarise week $0 now."))
    turns = [skill_call("c1", "weekly", "49"), {"text": "done"}]
    built, provider = session(home, tmp_path, turns)
    await built.send("do the weekly")
    assert "Summarise week 49 now." in provider.requests[1]
    assert built.skills is not None and [s.name for s in built.skills.in_use] == ["weekly"]


def test_an_untrusted_workspaces_skills_are_ignored_with_one_notice(
    home: World, tmp_path: Path
) -> None:
    home.skill(".claw/skills", "local", skill_text("Local thing.", body="LOCAL-BODY"))
    home.skill(".claude/skills", "other", skill_text("Other thing."))
    built, _ = session(home, tmp_path, [{"text": "ok"}])
    assert "local" not in built.system_prompt and "other:" not in built.system_prompt
    (note,) = [n for n in built.notices if "ignored" in n]
    assert note.startswith("2 project skills/commands ignored:")
    assert "python -m clawnb trust" in note
    trust(home)
    trusted, _ = session(home, tmp_path, [{"text": "ok"}])
    assert "local: Local thing." in trusted.system_prompt


# -- /NAME through the command registry -------------------------------------------------------


async def test_slash_name_sends_the_prepared_prompt_as_a_turn(home: World, tmp_path: Path) -> None:
    home.skill(
        "user",
        "migrate",
        skill_text(
            "Migrate a component.",
            body="Move $component from $1 to $2. All: $ARGUMENTS",
            arguments="[component, from, to]",
        ),
    )
    built, provider = session(home, tmp_path, [{"text": "migrated"}])
    answer = await built.command('/migrate "search bar" React Vue')
    assert answer == "migrated"
    sent = json.loads(provider.requests[0])[-1]["content"]
    assert sent == 'Move search bar from React to Vue. All: "search bar" React Vue\n'
    # the transcript (/history, the notebook, a resumed session) shows what the person typed
    person = [m for m in built.history if isinstance(m, Message.User)][-1]
    assert person.label == '/migrate "search bar" React Vue'
    assert person.content == sent
    assert '/migrate "search bar"' in await built.command("/history")


async def test_arguments_without_placeholders_are_appended(home: World, tmp_path: Path) -> None:
    home.command("user", "note", "---\ndescription: Take a note.\n---\nWrite a note.\n")
    built, provider = session(home, tmp_path, [{"text": "ok"}])
    await built.command("/note buy milk")
    assert json.loads(provider.requests[0])[-1]["content"].endswith("ARGUMENTS: buy milk")


async def test_a_command_name_wins_over_a_skill_of_the_same_name(
    home: World, tmp_path: Path
) -> None:
    home.skill("user", "cost", skill_text("A skill called cost.", body="COST-SKILL"))
    built, provider = session(home, tmp_path, [{"text": "ok"}])
    text = await built.command("/cost")
    assert text is not None and "COST-SKILL" not in text
    assert provider.requests == []


async def test_a_skill_that_is_not_user_invocable_is_an_unknown_command(
    home: World, tmp_path: Path
) -> None:
    home.skill("user", "hidden", skill_text("Hidden.", user_invocable="false"))
    built, provider = session(home, tmp_path, [{"text": "ok"}])
    with pytest.raises(CommandError, match="unknown command /hidden"):
        await built.command("/hidden")
    assert provider.requests == []


async def test_help_lists_the_user_invocable_skills(home: World, tmp_path: Path) -> None:
    home.skill("user", "weekly", skill_text("Weekly summary.", argument_hint="[week]"))
    home.skill("user", "hidden", skill_text("Hidden.", user_invocable="false"))
    built, _ = session(home, tmp_path, [{"text": "ok"}])
    text = await built.command("/help") or ""
    skills_part = text.split("\nskills:\n", 1)[1]
    assert re.search(r"^  /weekly \[week\] +Weekly summary\.$", skills_part, re.M)
    assert "/review" in skills_part  # a built-in
    assert "/hidden" not in skills_part
    assert "Weekly summary." in (await built.command("/help weekly") or "")


async def test_a_disable_model_invocation_skill_runs_as_slash_name_only(
    home: World, tmp_path: Path
) -> None:
    home.skill(
        "user",
        "ship",
        skill_text("Ship it.", body="SHIP-BODY", disable_model_invocation="true"),
    )
    built, provider = session(home, tmp_path, [{"text": "ok"}, {"text": "ok"}])
    assert "ship:" not in built.system_prompt
    await built.command("/ship")
    assert "SHIP-BODY" in provider.requests[0]


# -- forks --------------------------------------------------------------------------------------


async def test_a_fork_runs_as_a_child_and_only_its_summary_reaches_the_parent(
    home: World, tmp_path: Path
) -> None:
    home.skill(
        "user",
        "survey",
        skill_text("Survey the code.", body="FORK-BODY survey $ARGUMENTS", context="fork"),
    )
    turns = [{"text": "the survey says: all good"}, {"text": "parent answer"}]
    built, provider = session(home, tmp_path, turns)
    summary = await built.command("/survey src")
    assert summary == "the survey says: all good"
    assert "FORK-BODY survey src" in provider.requests[0]  # the child's request
    assert [type(m).__name__ for m in built.history] == ["User", "Assistant"]
    assert "FORK-BODY" not in json.dumps([m.to_dict() for m in built.history])
    assert isinstance(built.history[0], Message.User) and built.history[0].label == "/survey src"
    await built.send("and now?")
    parent = provider.requests[1]
    assert "the survey says: all good" in parent and "FORK-BODY" not in parent


async def test_an_explore_agent_fork_gets_read_only_tools_and_a_general_one_all(
    home: World, tmp_path: Path
) -> None:
    home.skill("user", "scout", skill_text("Scout.", context="fork", agent="Explore"))
    home.skill("user", "builder", skill_text("Build.", context="fork", agent="general-purpose"))
    built, provider = session(home, tmp_path, [{"text": "scouted"}, {"text": "built"}])
    await built.command("/scout")
    await built.command("/builder")
    scout, builder = (set(tools) for tools in provider.tools[:2])
    assert {"read", "grep", "glob"} <= scout and not {"write", "edit", "bash"} & scout
    assert {"write", "edit", "bash"} <= builder


def test_skills_check_says_an_agent_kind_it_does_not_run(tmp_path: Path) -> None:
    from clawnb.skills.check import check_skills

    folder = tmp_path / "mine" / "SKILL.md"
    folder.parent.mkdir(parents=True)
    folder.write_text(skill_text("Mine.", context="fork", agent="my-reviewer"))
    report = check_skills(tmp_path / "mine")
    assert report.problems == (
        "mine/SKILL.md: agent 'my-reviewer' is not a kind clawnb runs (Explore, Plan: "
        "read-only; general-purpose): the fork runs as a general child",
    )


async def test_allowed_tools_narrow_a_forks_tools(home: World, tmp_path: Path) -> None:
    home.skill(
        "user",
        "look",
        skill_text("Look around.", context="fork", allowed_tools="Read Grep web_search"),
    )
    built, provider = session(home, tmp_path, [{"text": "looked"}])
    await built.command("/look")
    assert sorted(provider.tools[0]) == ["grep", "read"]


async def test_allowed_tools_cannot_widen_a_deny_rule(home: World, tmp_path: Path) -> None:
    (home.workspace / "notes.txt").write_text("hello\n")
    home.skill("user", "peek", skill_text("Peek.", context="fork", allowed_tools="Read"))
    config = Config.model_validate({"permissions": {"deny": ["read"]}})
    turns = [call_turn("r1", "read", path="notes.txt"), {"text": "could not"}]
    provider = SeenProvider(write_script(tmp_path / "s.jsonl", turns))
    built = build_agent(
        config, workspace=home.workspace, provider=provider, model="scripted:x", streaming=False
    )
    await built.command("/peek")
    assert "hello" not in provider.requests[1]


# -- dynamic context ----------------------------------------------------------------------------


def skill_call(call_id: str, name: str, arguments: str = "") -> dict[str, Any]:
    args = {"name": name, "arguments": arguments} if arguments else {"name": name}
    return {"tool_calls": [{"id": call_id, "name": "skill", "arguments": args}]}


def _asking(answer: Approval, asked: list[ApprovalRequest]) -> Any:
    async def approve(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return answer

    return approve


async def test_a_snippet_is_a_bash_call_that_asks_and_its_output_is_sent(
    home: World, tmp_path: Path
) -> None:
    home.skill("user", "today", skill_text("Today.", body="Now: !`echo SNIPPET-$((6*7))`"))
    asked: list[ApprovalRequest] = []
    events: list[Any] = []
    built, provider = session(
        home, tmp_path, [{"text": "ok"}], approve=_asking(Approval.allow_once(), asked)
    )
    await built.command("/today", events.append)
    assert [r.call.name for r in asked] == ["bash"]
    assert asked[0].call.arguments == {"command": "echo SNIPPET-$((6*7))"}
    assert "Now: SNIPPET-42" in provider.requests[0]
    assert any(isinstance(e, AgentEvent.ToolCall) and e.name == "bash" for e in events)


async def test_a_denied_snippet_is_a_snippet_denied_line(home: World, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    home.skill(
        "user",
        "risky",
        skill_text("Risky.", body=f"```!\ntouch {marker}\necho RAN\n```\nthen go"),
    )
    asked: list[ApprovalRequest] = []
    built, provider = session(
        home, tmp_path, [{"text": "ok"}], approve=_asking(Approval.deny(), asked)
    )
    await built.command("/risky")
    assert len(asked) == 1
    sent = json.loads(provider.requests[0])[-1]["content"]
    assert sent.startswith("[snippet denied: touch ") and sent.endswith("]\nthen go\n")
    assert "RAN\n" not in sent
    assert not marker.exists()


async def test_the_skill_tools_snippets_go_through_the_same_gate(
    home: World, tmp_path: Path
) -> None:
    home.skill("user", "today", skill_text("Today.", body="Now: !`echo TOOL-SNIPPET`"))
    asked: list[ApprovalRequest] = []
    turns = [skill_call("c1", "today"), {"text": "done"}]
    events: list[Any] = []
    built, provider = session(home, tmp_path, turns, approve=_asking(Approval.deny(), asked))
    await built.send("what day", events.append)
    assert [r.call.name for r in asked] == ["bash"]
    assert "[snippet denied: echo TOOL-SNIPPET]" in provider.requests[1]
    nested = [e for e in events if isinstance(e, AgentEvent.Nested)]
    assert nested and all(e.parent_id == "c1" for e in nested)


async def test_without_anyone_to_ask_a_snippet_is_denied(home: World, tmp_path: Path) -> None:
    home.skill("user", "today", skill_text("Today.", body="Now: !`echo UNASKED`"))
    built, provider = session(home, tmp_path, [{"text": "ok"}])
    await built.command("/today")
    assert "[snippet denied: echo UNASKED]" in provider.requests[0]
    assert "Now: UNASKED" not in provider.requests[0]


# -- /skills ------------------------------------------------------------------------------------


async def test_slash_skills_shows_each_skill_what_overrides_what_and_what_the_budget_cut(
    home: World, tmp_path: Path
) -> None:
    trust(home)
    home.skill(".claw/skills", "review", skill_text("Our own review."))
    home.skill("user", "weekly", skill_text("W" * 300))
    home.skill(".claude/skills", "broken", "---\ncontext: forked\n---\nbody\n")
    built, _ = session(home, tmp_path, [{"text": "ok"}])
    text = await built.command("/skills") or ""
    assert "/review (project skill) — Our own review." in text
    assert "/review: project skill" in text and "overrides built-in skill review" in text
    assert "description cut at 250 characters: weekly" in text
    assert "frontmatter key 'context'" in text  # the skipped file, one line
    off = build_agent(
        Config(),
        workspace=home.workspace,
        provider=SeenProvider(tmp_path / "script.jsonl"),
        model="scripted:x",
        skills=False,
    )
    assert await off.command("/skills") == "skills are off in this session"


async def test_a_forks_model_key_runs_the_child_on_that_model(home: World, tmp_path: Path) -> None:
    other = write_script(tmp_path / "other.jsonl", [{"text": "from the other model"}])
    home.skill(
        "user", "elsewhere", skill_text("Elsewhere.", context="fork", model=f"scripted:{other}")
    )
    built, provider = session(home, tmp_path, [{"text": "parent model"}])
    assert await built.command("/elsewhere") == "from the other model"
    assert provider.requests == []  # the session's model was not asked


async def test_after_a_compaction_the_skills_in_use_come_back_as_a_reminder(
    home: World, tmp_path: Path
) -> None:
    home.skill("user", "weekly", skill_text("Weekly summary.", body="REATTACH-BODY week $0."))
    turns = [skill_call("c1", "weekly", "49"), {"text": "done"}, {"text": "again"}]
    built, provider = session(home, tmp_path, turns)
    await built.send("do the weekly")
    assert await built.compact()
    await built.send("and now?")
    last = json.loads(provider.requests[-1])[-1]["content"]
    assert last.startswith("and now?\n\n<system-reminder>")
    assert "Skills in use before the conversation was compacted" in last
    assert "REATTACH-BODY" in last
    assert built.system_prompt == json.loads(provider.requests[-1])[0]["content"]  # untouched


async def test_the_builtin_review_runs_inline_with_its_focus(home: World, tmp_path: Path) -> None:
    built, provider = session(home, tmp_path, [{"text": "no findings"}])
    assert await built.command("/review error handling") == "no findings"
    sent = json.loads(provider.requests[0])[-1]["content"]
    assert sent.startswith("Review the changes made in this session.")
    assert "Focus, if the person gave one: error handling" in sent
    assert [type(m).__name__ for m in built.history] == ["System", "User", "Assistant"]


async def test_a_forks_calls_reach_the_front_end_nested_under_one_skill_card(
    home: World, tmp_path: Path
) -> None:
    # every front end draws AgentEvent.Nested under its parent card: the fork's own calls
    # arrive as the children of one "skill" call, and its report as the turn's answer
    (home.workspace / "notes.txt").write_text("the notes\n", encoding="utf-8")
    home.skill("user", "survey", skill_text("Survey.", body="survey $ARGUMENTS", context="fork"))
    turns = [call_turn("c1", "read", path="notes.txt"), {"text": "the survey says: all good"}]
    built, _provider = session(home, tmp_path, turns)
    events: list[Any] = []
    summary = await built.command("/survey src", on_event=events.append)
    assert summary == "the survey says: all good"
    card = events[0]
    assert isinstance(card, AgentEvent.ToolCall) and card.name == "skill"
    assert card.summary == "[skill: /survey src (fork)]"
    assert card.arguments == {"name": "survey", "context": "fork"}
    nested = [e for e in events if isinstance(e, AgentEvent.Nested)]
    assert {e.parent_id for e in nested} == {card.id}
    inner = [e.event for e in nested]
    assert any(isinstance(e, AgentEvent.ToolCall) and e.name == "read" for e in inner)
    assert any(isinstance(e, AgentEvent.ToolResult) and "the notes" in e.content for e in inner)
    closed = [e for e in events if isinstance(e, AgentEvent.ToolResult) and e.id == card.id]
    assert len(closed) == 1 and closed[0].outcome == "ok"
    assert events.index(closed[0]) > events.index(nested[-1])  # the card closes after its calls
    assert [e.text for e in events if isinstance(e, AgentEvent.TextDelta)] == [summary]
