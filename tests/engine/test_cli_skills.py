"""``python -m clawnb skills check [DIR]``: the package's command line runs the skills check
(one line per problem, exit 1 when there is one)."""

from __future__ import annotations

import subprocess
import sys


def _check(directory) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clawnb", "skills", "check", str(directory)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_skills_check_passes_good_skills_and_names_a_bad_one(tmp_path):
    good = tmp_path / "good"
    (good / "tidy").mkdir(parents=True)
    (good / "tidy" / "SKILL.md").write_text(
        "---\nname: tidy\ndescription: Tidy a dataframe's column names. Use when asked.\n---\n"
        "Rename the columns of $ARGUMENTS to snake_case.\n"
    )
    done = _check(good)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skill checked, no problems" in done.stdout

    bad = tmp_path / "bad"
    (bad / "broken").mkdir(parents=True)
    (bad / "broken" / "SKILL.md").write_text("---\ncontext: sideways\n---\nbody\n")
    done = _check(bad)
    assert done.returncode == 1
    assert "SKILL.md" in done.stdout and "context" in done.stdout
