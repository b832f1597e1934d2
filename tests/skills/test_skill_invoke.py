"""Invoking a skill: arguments filled in (one table of cases), dynamic-context snippets found
with their positions and never run here, outputs put back, secrets redacted."""

from __future__ import annotations

import shlex
from pathlib import Path

import hypothesis
import hypothesis.strategies as st
import pytest

from clawnb.skills import (
    discover_skills,
    find_context_commands,
    prepare_invocation,
    substitute_arguments,
    substitute_context,
)
from clawnb.skills.invoke import reattachment, split_arguments, unclosed_context_blocks
from clawnb.skills.listing import estimate_text_tokens
from clawnb.skills.model import Skill, build_skill

KEY = "sk-or-v1-skillBODYcanary0123456789abcdefXYZ"


def _skill(front: str = "description: x", body: str = "", folder: str = "/skills/s") -> Skill:
    return build_skill(
        f"---\n{front}\n---\n{body}",
        name="s",
        path=Path(folder) / "SKILL.md",
        root=Path(folder),
        source="project",
        kind="skill",
        folder=Path(folder),
    )


# (body, arguments, frontmatter `arguments`, expected)
SUBSTITUTIONS = [
    ("Fix issue $ARGUMENTS.", "123 high", "", "Fix issue 123 high."),
    ("Fix issue $ARGUMENTS.", "", "", "Fix issue ."),
    ("$ARGUMENTS", '"quoted words" kept as typed', "", '"quoted words" kept as typed'),
    ("Move $0 from $1 to $2.", "SearchBar React Vue", "", "Move SearchBar from React to Vue."),
    ("First: $0, second: $1", '"my widget" React', "", "First: my widget, second: React"),
    ("$ARGUMENTS[1] then $ARGUMENTS[0]", "a b", "", "b then a"),
    ("Deploy $0 to $1.", "staging", "", "Deploy staging to $1."),  # missing: left as written
    ("Fix $issue on $branch.", "42 hotfix", "arguments: [issue, branch]", "Fix 42 on hotfix."),
    ("Fix $issue on $branch.", "42", "arguments: issue branch", "Fix 42 on $branch."),
    ("Use $branch-fix", "main", "arguments: [branch]", "Use main-fix"),
    ("$old-name / $old", "a b", "arguments: [old, old-name]", "b / a"),
    ("$issues is not $issue", "7", "arguments: [issue]", "$issues is not 7"),
    ("No placeholders.", "x y", "", "No placeholders.\n\nARGUMENTS: x y"),
    ("No placeholders.\n", "", "", "No placeholders.\n"),
    ("It costs $5.", "a", "", "It costs $5.\n\nARGUMENTS: a"),
    ("Say $ARGUMENTS", "$1 and $ARGUMENTS", "", "Say $1 and $ARGUMENTS"),  # one pass only
    ("Say $0", "$ARGUMENTS", "", "Say $ARGUMENTS"),
    ("Run ${CLAUDE_SKILL_DIR}/scripts/go.py", "", "", "Run /skills/s/scripts/go.py"),
    ("Run ${CLAW_SKILL_DIR}/x", "", "", "Run /skills/s/x"),
    ("$0", '"unbalanced', "", '"unbalanced'),
    ("$ARGUMENTSX and $ARGUMENTS", "v", "", "$ARGUMENTSX and v"),
]


@pytest.mark.parametrize(("body", "arguments", "front", "expected"), SUBSTITUTIONS)
def test_arguments_are_substituted_as_claude_code_does(
    body: str, arguments: str, front: str, expected: str
) -> None:
    skill = _skill(front or "description: x")
    assert substitute_arguments(body, arguments, skill=skill) == expected
    # the same through the whole invocation (body read from the skill, no snippets in it)
    prepared = prepare_invocation(skill, arguments, body=body)
    assert prepared.render() == expected
    assert prepared.commands == ()


def test_the_session_id_is_substituted_when_given() -> None:
    text = "log to ${CLAUDE_SESSION_ID}.log"
    assert substitute_arguments(text, "", session_id="abc123") == "log to abc123.log"
    assert substitute_arguments(text, "") == text


# (text, expected commands as (kind, command, line))
SNIPPETS = [
    ("Status: !`git status --short`", [("inline", "git status --short", 1)]),
    (
        "a !`one` and !`two`\nthen !`three`",
        [("inline", "one", 1), ("inline", "two", 1), ("inline", "three", 2)],
    ),
    ("```!\nls -la\npwd\n```\nafter", [("block", "ls -la\npwd", 1)]),
    ("intro\n````!\necho '```'\n````", [("block", "echo '```'", 2)]),
    ("```bash\n!`documented, not run`\n```", []),
    ("~~~\n!`also text`\n~~~", []),
    ("```! python\nnot a snippet fence\n```", []),
    ("wow!`x` and `!`y``", []),
    ("\\!`escaped`", []),
    ("```!\nnever closed", []),
    ("!`` empty", []),
]


@pytest.mark.parametrize(("text", "expected"), SNIPPETS)
def test_dynamic_context_snippets_are_found_with_their_positions(
    text: str, expected: list[tuple[str, str, int]]
) -> None:
    found = find_context_commands(text)
    assert [(c.kind, c.command, c.line) for c in found] == expected
    for c in found:
        span = text[c.start : c.end]
        if c.kind == "inline":
            assert span == f"!`{c.command}`"
        else:
            assert span.startswith("```") and span.endswith("```") and c.command in span


def test_an_unclosed_snippet_block_is_text_and_its_line_is_reported() -> None:
    assert find_context_commands("x\n```!\nrm -rf ~\n") == []
    assert unclosed_context_blocks("x\n```!\nrm -rf ~\n") == [2]


def test_outputs_are_put_in_place_of_the_snippets_and_redacted(monkeypatch) -> None:
    monkeypatch.setenv("CLAWNB_API_KEY", KEY)
    text = "Branch: !`git branch --show-current`\n```!\ngit log -2\n```\nDone."
    commands = find_context_commands(text)
    out = substitute_context(text, commands, ["main\n", f"abc first\ndef key={KEY}\n"])
    assert out == "Branch: main\nabc first\ndef key=***\nDone."
    with pytest.raises(ValueError):
        substitute_context(text, commands, ["only one"])


def test_arguments_fill_in_snippet_commands_and_positions_follow(world) -> None:
    world.skill(
        ".claw/skills",
        "diff",
        world.text("Diff a file.", body="Changes in $0:\n!`git diff -- $0`\nReview $ARGUMENTS."),
    )
    skill = discover_skills(world.workspace, trusted=True, user_dir=world.user).get("diff")
    prepared = prepare_invocation(skill, "src/app.py")
    (command,) = prepared.commands
    assert command.command == "git diff -- src/app.py"
    assert prepared.text[command.start : command.end] == "!`git diff -- src/app.py`"
    assert (
        prepared.render(["+new line"]) == "Changes in src/app.py:\n+new line\nReview src/app.py.\n"
    )


def test_an_argument_never_becomes_a_snippet(world, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    world.skill(".claw/skills", "echo", world.text("Echo.", body="You said: $ARGUMENTS"))
    skill = discover_skills(world.workspace, trusted=True, user_dir=world.user).get("echo")
    prepared = prepare_invocation(skill, f"!`touch {marker}` and\n```!\ntouch {marker}\n```")
    assert prepared.commands == ()
    assert f"!`touch {marker}`" in prepared.render()
    assert not marker.exists()


def test_preparing_and_rendering_run_nothing(world, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    world.skill(
        ".claw/skills",
        "ctx",
        world.text("Ctx.", body=f"Now: !`touch {marker}`\n```!\ntouch {marker}\n```\nEnd."),
    )
    skill = discover_skills(world.workspace, trusted=True, user_dir=world.user).get("ctx")
    prepared = prepare_invocation(skill)
    assert [c.command for c in prepared.commands] == [f"touch {marker}"] * 2
    rendered = prepared.render()
    assert rendered == (
        f"Now: [dynamic context not run: touch {marker}]\n"
        f"[dynamic context not run: touch {marker}]\nEnd.\n"
    )
    assert not marker.exists()


def test_a_skill_body_passes_the_redactor(world, monkeypatch) -> None:
    monkeypatch.setenv("CLAWNB_API_KEY", KEY)
    world.skill(".claw/skills", "leaky", world.text("Leaky.", body=f"Use the key {KEY} please."))
    skill = discover_skills(world.workspace, trusted=True, user_dir=world.user).get("leaky")
    assert skill.load_body() == "Use the key *** please.\n"
    assert KEY not in prepare_invocation(skill, KEY).render()


def test_a_body_read_before_a_key_was_known_is_redacted_once_it_is(world, monkeypatch) -> None:
    # the redacted body is kept between invocations: a key that becomes known (an env var
    # set later) must still be masked on the next one
    secret = "plainpassphrase-7f3a9c2e41"  # not key-shaped: only the known value masks it
    world.skill(".claw/skills", "late", world.text("Late.", body=f"Use {secret} please."))
    skill = discover_skills(world.workspace, trusted=True, user_dir=world.user).get("late")
    monkeypatch.delenv("CLAWNB_API_KEY", raising=False)
    assert secret in skill.load_body()  # not known yet
    assert secret in skill.load_body()  # the kept body
    monkeypatch.setenv("CLAWNB_API_KEY", secret)
    assert skill.load_body() == "Use *** please.\n"


def test_a_prompt_run_again_is_made_again_when_its_file_its_arguments_or_the_keys_change(
    world, monkeypatch
) -> None:
    # ``/review`` run twice reuses the prepared prompt; anything it was made from changing
    # makes it again: the arguments, the file, a key that became known meanwhile
    secret = "plainpassphrase-0b9d44e1c7"  # not key-shaped: only the known value masks it
    path = world.skill(
        ".claw/skills", "again", world.text("Again.", body=f"Check $ARGUMENTS {secret}")
    )
    skill = discover_skills(world.workspace, trusted=True, user_dir=world.user).get("again")
    monkeypatch.delenv("CLAWNB_API_KEY", raising=False)
    first = prepare_invocation(skill, "cells")
    assert prepare_invocation(skill, "cells") is first  # kept: nothing changed
    assert first.render() == f"Check cells {secret}\n"
    assert prepare_invocation(skill, "files").render() == f"Check files {secret}\n"
    assert prepare_invocation(skill, "cells", session_id="s1") is not first
    monkeypatch.setenv("CLAWNB_API_KEY", secret)
    assert prepare_invocation(skill, "cells").render() == "Check cells ***\n"
    path.write_text(world.text("Again.", body="Edited: check $ARGUMENTS."), encoding="utf-8")
    assert prepare_invocation(skill, "cells").render() == "Edited: check cells.\n"


def test_the_body_is_read_when_invoked_not_when_discovered(world) -> None:
    path = world.skill(".claw/skills", "live", world.text("Live.", body="First version."))
    skill = discover_skills(world.workspace, trusted=True, user_dir=world.user).get("live")
    path.write_text(world.text("Live.", body="Edited after discovery."), encoding="utf-8")
    assert prepare_invocation(skill).render() == "Edited after discovery.\n"


def test_skills_in_use_are_reattached_after_a_compaction_within_a_budget(world) -> None:
    world.skill(".claw/skills", "a", world.text("A.", body="Body of a."))
    world.skill(".claw/skills", "b", world.text("B.", body="Body of b."))
    world.skill(".claw/skills", "big", world.text("Big.", body="a long line of rules\n" * 2000))
    catalog = discover_skills(world.workspace, trusted=True, user_dir=world.user)
    a, b, big = (catalog.get(n) for n in ("a", "b", "big"))
    text = reattachment([a, b, a, big], per_skill_tokens=500, total_tokens=5000)
    blocks = text.split("<skill ")[1:]
    assert [blk.split('"')[1] for blk in blocks] == ["big", "a", "b"]  # most recent first
    assert estimate_text_tokens("<skill " + blocks[0]) <= 500
    assert "[… cut to fit after the compaction]" in blocks[0]
    assert "Body of a." in blocks[1] and "Body of b." in blocks[2]
    for total in (400, 480, 520, 700):
        tight = reattachment([a, b, big], per_skill_tokens=500, total_tokens=total)
        names = [blk.split('"')[1] for blk in tight.split("<skill ")[1:]]
        assert names == ["big", "b", "a"][: len(names)] and names
        assert estimate_text_tokens(tight) <= total + 20  # + the one header line
    assert reattachment([]) == ""


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(
    st.text(alphabet=st.sampled_from(list("ab #$-\t\n\r\x0b\u00a0'\"\\")), max_size=20)
)
def test_arguments_split_into_the_words_a_shell_would_make(arguments: str) -> None:
    # the fast path for text without quotes or escapes must agree with shlex everywhere
    try:
        expected = shlex.split(arguments)
    except ValueError:
        expected = arguments.split()
    assert split_arguments(arguments) == expected


def test_an_edited_skill_md_is_taken_apart_again_on_the_next_invocation(tmp_path: Path) -> None:
    # the body, its snippets and its placeholders are kept between invocations; an edit (a new
    # placeholder, a snippet) and a secret that appears in the workspace's .env are seen at once
    from clawnb.control.secrets import watch_dotenv
    from clawnb.skills.discovery import load_folder

    folder = tmp_path / ".claw" / "skills" / "rep"
    folder.mkdir(parents=True)
    path = folder / "SKILL.md"
    path.write_text("---\ndescription: r\n---\nReport $ARGUMENTS.\n", encoding="utf-8")
    skill = load_folder(folder).get("rep")
    assert skill is not None
    assert prepare_invocation(skill, "q1").render() == "Report q1.\n"
    assert prepare_invocation(skill, "q2").render() == "Report q2.\n"  # kept, other arguments

    path.write_text(
        "---\ndescription: r\n---\nReport $0 for Xk93ZpL0qW7vB2nR8sT4yU6.\n!`date`\n",
        encoding="utf-8",
    )
    prepared = prepare_invocation(skill, "q3 extra")
    assert [c.command for c in prepared.commands] == ["date"]
    assert prepared.render(["today"]) == "Report q3 for Xk93ZpL0qW7vB2nR8sT4yU6.\ntoday\n"

    watch_dotenv(tmp_path)
    (tmp_path / ".env").write_text("SERVICE_TOKEN=Xk93ZpL0qW7vB2nR8sT4yU6\n", encoding="utf-8")
    path.write_text(
        "---\ndescription: r\n---\nUse Xk93ZpL0qW7vB2nR8sT4yU6 for $0.\n", encoding="utf-8"
    )
    assert prepare_invocation(skill, "q4").render() == "Use *** for q4.\n"
