"""``python -m clawnb.skills check [DIR]``: one line per problem, exit 1 on problems."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from clawnb.skills.check import check_skills
from clawnb.skills.discovery import BUILTIN_DIR

ROOT = Path(__file__).resolve().parents[2]


def _check(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clawnb.skills", "check", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )


def test_the_builtin_skills_pass_their_own_check() -> None:
    report = check_skills(BUILTIN_DIR)
    assert report.problems == ()
    assert report.checked == 4
    done = _check(str(BUILTIN_DIR))
    assert done.returncode == 0
    assert done.stdout == "4 skills checked, no problems\n"


def test_every_problem_is_one_line_and_the_exit_status_is_1(world) -> None:
    world.skill(
        ".claw/skills", "good", world.text("Good. Use when good.", body="Run scripts/ok.sh.")
    )
    (world.workspace / ".claw/skills/good/scripts").mkdir()
    (world.workspace / ".claw/skills/good/scripts/ok.sh").write_text("true")
    world.skill(".claw/skills", "broken", "---\ncontext: later\n---\nbody\n")
    world.skill(
        ".claude/skills",
        "refs",
        world.text(
            "Refs.",
            body="Run ${CLAUDE_SKILL_DIR}/scripts/missing.py, see [the guide](guide.md) "
            "and [docs](https://example.com/x), then scripts/gone.sh.\n```!\nls\n",
        ),
    )
    world.skill(".agents/skills", "nodesc", "---\nname: other\ncolour: blue\n---\n")
    examples = world.workspace / ".agents/skills/nodesc/examples"
    examples.mkdir()
    (examples / "one.jsonl").write_text('{"ok": true}\nnot json\n')
    world.skill(".claw/skills", "wordy", world.text("word " * 80))
    done = _check(str(world.workspace))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[-1] == "4 skills checked, 11 problems"  # the broken one is skipped
    assert sorted(lines[:-1]) == sorted(
        [
            ".claw/skills/broken/SKILL.md: frontmatter key 'context': must be inline or fork, "
            "not 'later'; skipped",
            ".claude/skills/refs/SKILL.md: body line 2: a ```! block is never closed (it is "
            "not run)",
            ".claude/skills/refs/SKILL.md: refers to guide.md, which is not in the skill's folder",
            ".claude/skills/refs/SKILL.md: refers to scripts/gone.sh, which is not in the "
            "skill's folder",
            ".claude/skills/refs/SKILL.md: refers to scripts/missing.py, which is not in the "
            "skill's folder",
            ".agents/skills/nodesc/SKILL.md: no description, so the model cannot tell when to "
            "use it; add `description:` (what it does and when to use it)",
            ".agents/skills/nodesc/SKILL.md: frontmatter name 'other' is not the folder's "
            "name; it is invoked as /nodesc",
            ".agents/skills/nodesc/SKILL.md: unknown frontmatter key 'colour' (ignored)",
            ".agents/skills/nodesc/SKILL.md: the body is empty: invoking it gives the model "
            "nothing",
            ".agents/skills/nodesc/SKILL.md: examples/one.jsonl line 2: not JSON (Expecting value)",
            ".claw/skills/wordy/SKILL.md: description is 399 characters; the listing cuts it "
            "at 250",
        ]
    )


def test_a_clean_project_passes_and_a_skill_folder_can_be_checked_alone(world) -> None:
    world.skill(".claw/skills", "good", world.text("Good. Use when good."))
    world.command(".claude/commands", "go", "---\ndescription: Go.\n---\nGo $ARGUMENTS.\n")
    done = _check(cwd=world.workspace)  # DIR defaults to the current folder
    assert (done.returncode, done.stdout) == (0, "2 skills checked, no problems\n")
    single = _check(str(world.workspace / ".claw/skills/good"))
    assert (single.returncode, single.stdout) == (0, "1 skill checked, no problems\n")


def test_a_skill_the_listing_budget_leaves_out_is_a_problem(world) -> None:
    for i in range(12):
        world.skill(".claw/skills", f"s{i:02d}", world.text(f"Skill {i}. " + "detail " * 30))
    report = check_skills(world.workspace, context_window=20_000)
    missing = [p for p in report.problems if "not in the listing within its budget" in p]
    assert missing and all("(200 tokens, 1% of a window of 20000 tokens)" in p for p in missing)
    assert check_skills(world.workspace, context_window=1_000_000).ok


def test_check_reads_project_skills_without_a_trust_question_and_runs_nothing(
    world, tmp_path
) -> None:
    marker = tmp_path / "ran"
    world.skill(".claw/skills", "ctx", world.text("Ctx.", body=f"!`touch {marker}`"))
    assert _check(str(world.workspace)).returncode == 0
    assert not marker.exists()
