"""Where skills are found, which one wins a name, and what an untrusted or hostile workspace
gets listed: real files, real links, real directories."""

from __future__ import annotations

import os
from pathlib import Path

from clawnb.skills import discover_skills
from clawnb.skills.discovery import BUILTIN_DIR

SECRET = "canary-outside-skill-9f8e7d6c5b4a"


def _discover(world, *, trusted: bool = True, builtins: bool = True):
    return discover_skills(world.workspace, trusted=trusted, user_dir=world.user, builtins=builtins)


def test_project_skills_are_found_in_the_claw_claude_and_agents_folders(world) -> None:
    world.skill(".claw/skills", "ours")
    world.skill(".claude/skills", "from-claude")
    world.skill(".agents/skills", "from-agents")
    catalog = _discover(world, builtins=False)
    assert catalog.names == ("from-agents", "from-claude", "ours")
    assert {s.source for s in catalog} == {"project"}
    assert (
        catalog.get("from-claude").path == world.workspace / ".claude/skills/from-claude/SKILL.md"
    )
    assert catalog.problems == ()


def test_prompt_commands_in_claw_and_claude_folders_are_for_the_person_only(world) -> None:
    world.command(".claw/commands", "deploy", "Deploy to $ARGUMENTS.\n")
    world.command(".claude/commands", "lint", "---\ndescription: Lint it\n---\nRun the linter.\n")
    catalog = _discover(world, builtins=False)
    deploy, lint = catalog.get("deploy"), catalog.get("lint")
    assert deploy.kind == lint.kind == "command"
    assert not deploy.model_invocable and not lint.model_invocable
    assert deploy.user_invocable and lint.user_invocable
    assert deploy.description == "Deploy to $ARGUMENTS."  # no frontmatter: the first paragraph
    assert catalog.model_invocable() == ()


def test_project_overrides_user_overrides_builtin_and_the_overridden_one_is_named(world) -> None:
    world.skill(".claw/skills", "review", world.text("Project review."))
    world.skill("user", "review", world.text("My review."))
    world.skill("user", "eda", world.text("My eda."))
    catalog = _discover(world)
    review, eda = catalog.get("review"), catalog.get("eda")
    assert (review.source, review.description) == ("project", "Project review.")
    assert (eda.source, eda.description) == ("user", "My eda.")
    assert catalog.get("init").source == "builtin"
    assert [s.source for s in catalog.overridden("review")] == ["user", "builtin"]
    assert [s.source for s in catalog.overridden("eda")] == ["builtin"]
    lines = catalog.shadowed_lines()
    assert (
        "/review: project skill .claw/skills/review/SKILL.md overrides built-in skill review"
        in lines
    )
    assert any(
        line.startswith("/eda: user skill ") and "built-in skill eda" in line for line in lines
    )


def test_claw_skills_win_over_the_claude_and_agents_conventions(world) -> None:
    world.skill(".agents/skills", "x", world.text("agents"))
    world.skill(".claude/skills", "x", world.text("claude"))
    world.skill(".claw/skills", "x", world.text("claw"))
    world.skill(".claude/skills", "y", world.text("claude y"))
    world.skill(".agents/skills", "y", world.text("agents y"))
    catalog = _discover(world, builtins=False)
    assert catalog.get("x").description == "claw"
    assert catalog.get("y").description == "claude y"
    assert [s.description for s in catalog.overridden("x")] == ["claude", "agents"]


def test_a_skill_wins_over_a_command_of_the_same_name(world) -> None:
    world.command(".claw/commands", "ship", "The command.\n")
    world.skill(".claude/skills", "ship", world.text("The skill."))
    catalog = _discover(world, builtins=False)
    assert catalog.get("ship").kind == "skill"
    assert [s.kind for s in catalog.overridden("ship")] == ["command"]


def test_the_builtins_are_shipped_in_the_package(world) -> None:
    catalog = _discover(world)
    assert {"review", "explain-error", "eda", "init"} <= set(catalog.names)
    for name in ("review", "explain-error", "eda", "init"):
        skill = catalog.get(name)
        assert skill.source == "builtin"
        assert skill.path == BUILTIN_DIR / name / "SKILL.md"
    assert not catalog.get("init").model_invocable  # it writes AGENTS.md: the person runs it


def test_an_untrusted_workspace_lists_no_project_skill_and_says_how_many(world) -> None:
    world.skill(".claw/skills", "a")
    world.skill(".claude/skills", "b")
    # malformed: opened it would be a problem line; never opened, it is only counted
    world.skill(".agents/skills", "c", "---\ncontext: nope\n---\nbody\n")
    world.command(".claude/commands", "d", "Do d.\n")
    world.skill("user", "mine")
    catalog = _discover(world, trusted=False)
    assert not any(s.source == "project" for s in catalog)
    assert "mine" in catalog and "review" in catalog
    assert catalog.ignored_untrusted == 4
    assert catalog.problems == ()
    note = catalog.untrusted_note()
    assert note is not None and "4 project skills/commands ignored" in note
    assert f"python -m clawnb trust {world.workspace}" in note
    trusted = _discover(world, trusted=True)
    assert {"a", "b", "d"} <= set(trusted.names) and trusted.ignored_untrusted == 0
    assert trusted.untrusted_note() is None


def test_a_skill_md_linked_out_of_the_workspace_is_not_read(world) -> None:
    secret = world.outside / "id_rsa"
    secret.write_text(f"---\ndescription: {SECRET}\n---\n{SECRET}\n", encoding="utf-8")
    folder = world.workspace / ".claude/skills/leak"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").symlink_to(secret)
    catalog = _discover(world, builtins=False)
    assert "leak" not in catalog
    assert len(catalog.problems) == 1
    assert catalog.problems[0].startswith(".claude/skills/leak/SKILL.md: not read:")
    assert "leads out" in catalog.problems[0]
    assert SECRET not in repr(catalog)


def test_a_skill_folder_linked_out_of_the_workspace_is_not_read(world) -> None:
    elsewhere = world.outside / "evil"
    elsewhere.mkdir()
    (elsewhere / "SKILL.md").write_text(f"---\ndescription: {SECRET}\n---\nx\n", encoding="utf-8")
    (world.workspace / ".claw/skills").mkdir(parents=True)
    (world.workspace / ".claw/skills/evil").symlink_to(elsewhere, target_is_directory=True)
    (world.workspace / ".agents").symlink_to(world.outside, target_is_directory=True)
    (world.outside / "skills/other").mkdir(parents=True)
    (world.outside / "skills/other/SKILL.md").write_text(f"---\ndescription: {SECRET}\n---\n")
    catalog = _discover(world, builtins=False)
    assert catalog.names == ()
    assert SECRET not in repr(catalog)
    assert len(catalog.problems) == 2


def test_a_link_that_stays_inside_the_workspace_is_read(world) -> None:
    shared = world.workspace / "docs/skill.md"
    shared.parent.mkdir()
    shared.write_text(world.text("Shared inside the repo."), encoding="utf-8")
    folder = world.workspace / ".claw/skills/shared"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").symlink_to(os.path.relpath(shared, folder))
    catalog = _discover(world, builtins=False)
    assert catalog.get("shared").description == "Shared inside the repo."


def test_a_user_skill_folder_may_be_a_link_into_a_dotfiles_repo(world, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles/skills/notes"
    dotfiles.mkdir(parents=True)
    (dotfiles / "SKILL.md").write_text(world.text("From my dotfiles."), encoding="utf-8")
    (world.user / "skills").mkdir()
    (world.user / "skills/notes").symlink_to(dotfiles, target_is_directory=True)
    catalog = _discover(world, builtins=False)
    assert catalog.get("notes").description == "From my dotfiles."
    # but a SKILL.md inside it that leads out of the skill's own folder is not read
    (dotfiles / "SKILL.md").unlink()
    (dotfiles / "SKILL.md").symlink_to(world.outside / "x.md")
    (world.outside / "x.md").write_text(world.text(SECRET))
    catalog = _discover(world, builtins=False)
    assert "notes" not in catalog and SECRET not in repr(catalog)


def test_bad_frontmatter_is_one_line_naming_the_file_and_key_and_the_skill_is_skipped(
    world,
) -> None:
    world.skill(".claw/skills", "good")
    world.skill(".claw/skills", "bad", "---\ndescription: ok\ncontext: forked\n---\nbody\n")
    world.skill(".claude/skills", "worse", "---\ndescription: [unclosed\n---\nbody\n")
    world.skill("user", "open", "---\ndescription: never closed\nbody\n")
    catalog = _discover(world, builtins=False)
    assert catalog.names == ("good",)
    assert sorted(catalog.problems) == sorted(
        [
            ".claw/skills/bad/SKILL.md: frontmatter key 'context': must be inline or fork, "
            "not 'forked'; skipped",
            ".claude/skills/worse/SKILL.md: frontmatter key 'description': a list opened "
            "with '[' is never closed; skipped",
            f"{_home(world.user / 'skills/open/SKILL.md')}: frontmatter: opened with '---' on "
            "the first line but never closed by another '---'; skipped",
        ]
    )
    assert all("\n" not in line for line in catalog.problems)


def test_folders_without_skill_md_and_unusable_names_are_reported_and_skipped(world) -> None:
    (world.workspace / ".claw/skills/empty").mkdir(parents=True)
    world.skill(".claw/skills", "Has Space")
    (world.workspace / ".claw/skills/README.md").write_text("not a skill")
    catalog = _discover(world, builtins=False)
    assert catalog.names == ()
    assert sorted(catalog.problems) == [
        ".claw/skills/Has Space/SKILL.md: 'Has Space' is not a skill name (letters, digits, "
        "- and _, at most 64); skipped",
        ".claw/skills/empty/SKILL.md: no SKILL.md in this skill folder; skipped",
    ]


def test_a_fifo_named_skill_md_is_refused_without_blocking(world) -> None:
    folder = world.workspace / ".claw/skills/fifo"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "SKILL.md")
    catalog = _discover(world, builtins=False)  # pytest-timeout ends a test that blocks
    assert catalog.names == ()
    assert catalog.problems == (
        ".claw/skills/fifo/SKILL.md: not read: is a FIFO, not a regular file; skipped",
    )


def _home(path: Path) -> str:
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)
