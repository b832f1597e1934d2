"""``python -m clawnb skills check --run``: a skill's own examples/*.jsonl run headless — the
person's /NAME, the scripted model's turns, what must have happened — on a temporary copy of
the project, so a team keeps its skills in CI. Run as a person runs it (a subprocess), against
the shipped example project and copies of it made wrong on purpose."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(240)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "inventory"
LOW = Path(".claw/skills/stock-report/examples/two-low-items.jsonl")


def _check(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("CLAWNB_", "XDG_"))},
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "PYTHONPATH": str(ROOT),
    }
    return subprocess.run(
        [sys.executable, "-m", "clawnb", "skills", "check", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=200,
    )


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_the_shipped_example_runs_and_leaves_the_project_and_the_trust_store_as_they_were(
    tmp_path,
):
    before = _files(EXAMPLE)
    done = _check(tmp_path, "--run", str(EXAMPLE))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("2 skills checked, 1 example run, no problems")
    assert _files(EXAMPLE) == before  # the run wrote stock-report.md in a copy only
    trusted = tmp_path / "config" / "clawnb" / "trusted.json"
    assert not trusted.exists() or json.loads(trusted.read_text()).get("folders") == {}


def test_an_example_whose_skill_does_not_do_what_it_expects_fails_the_check(tmp_path):
    project = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, project)
    lines = (project / LOW).read_text().splitlines()
    expect = json.loads(lines[-1])
    expect["expect"]["calls"] = ["mcp__inventory__low_stock"]  # the skill also writes
    expect["expect"]["files"] = {"stock-report.md": "quinces"}
    (project / LOW).write_text("\n".join([*lines[:-1], json.dumps(expect)]) + "\n")
    done = _check(tmp_path, "--run", str(project))
    assert done.returncode == 1, done.stdout
    assert (
        f"{LOW}: called ['mcp__inventory__low_stock', 'write'], "
        "expected ['mcp__inventory__low_stock']" in done.stdout
    )
    assert f"{LOW}: stock-report.md does not contain 'quinces'" in done.stdout
    assert "1 example run, 2 problems" in done.stdout


def test_a_malformed_example_is_one_line_and_without_run_no_example_runs(tmp_path):
    project = tmp_path / "inventory"
    shutil.copytree(EXAMPLE, project)
    marker = tmp_path / "ran"
    broken = project / LOW.parent / "broken.jsonl"
    broken.write_text(json.dumps({"text": "no invoke line"}) + "\n")
    runs = project / LOW.parent / "runs-bash.jsonl"
    runs.write_text(
        json.dumps({"invoke": "/stock-report"})
        + "\n"
        + json.dumps(
            {
                "tool_calls": [
                    {"id": "b", "name": "bash", "arguments": {"command": f"touch {marker}"}}
                ]
            }
        )
        + "\n"
    )
    quiet = _check(tmp_path, str(project))  # no --run: files are read, nothing runs
    assert quiet.returncode == 0, quiet.stdout
    assert not marker.exists()
    done = _check(tmp_path, "--run", str(project))
    assert f'{LOW.parent / "broken.jsonl"}: no {{"invoke": …}} line' in done.stdout
    assert done.returncode == 1
