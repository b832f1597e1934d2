"""The course taken as a learner takes it: every exercise notebook filled in with the chapter's
own solutions, run from the folder it ships in (``notebooks/exercises/``, beside ``scripts/``),
in chapter order, with the exercises' ``use="mine"`` — so each chapter's ``parts`` cell gets the
learner's package as the earlier chapters exported it — and then ``progress --run`` on the
result, which reruns every chapter (a hand-run check records no source) against the whole
package.

Cost: the first pass runs the twenty-five notebooks one after another in one kernel (namespace
reset between them, as a new notebook starts empty), about 55 s on two shared cores instead
of about 90 s for a kernel each; the second pass is ``progress --run`` itself, a kernel per
notebook as it always does.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from shipped import fill_in, shipped_course

from clawnb.course._export import _top_level_names

pytestmark = [pytest.mark.slow, pytest.mark.timeout(480)]

GREETING = "Hello from my own agent!\n"  # what the capstone's recorded model writes


def _learner_env() -> dict[str, str]:
    # As CI runs the course: no settings of ours, approvals answered by policy (nobody clicks).
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWNB_")}
    return {**env, "CLAWNB_APPROVAL": "allow", "PYTHONWARNINGS": "ignore"}


def _text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", ""))
        parts.append(out.get("data", {}).get("text/plain", ""))
        if out.get("output_type") == "error":
            parts.append(f"{out['ename']}: {out['evalue']}")
    return "".join(parts)


def run_like_jupyter(notebooks: list[Path], env: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Run each notebook's cells top to bottom in one kernel started in their folder, the
    namespace emptied before each (as a fresh notebook's is); a notebook stops at its first
    failing cell, as Run All does. Returns ``name -> (everything printed, the error or "")``."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    folder = notebooks[0].parent
    client = NotebookClient(
        nbformat.read(notebooks[0], as_version=4),
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(folder)}},
    )
    results: dict[str, tuple[str, str]] = {}
    with client.setup_kernel(env=env):
        for path in notebooks:
            nb = client.nb = nbformat.read(path, as_version=4)
            client.execute_cell(nbformat.v4.new_code_cell("%reset -f"), 0)
            printed, error = [], ""
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                try:
                    client.execute_cell(cell, index)
                except CellExecutionError:
                    error = f"cell {index} ({cell.source.splitlines()[0]!r}): {_text(cell)[-600:]}"
                    break
                finally:
                    printed.append(_text(cell))
            results[path.name] = ("\n".join(printed), error)
    return results


def _built_by(notebook: Path) -> set[str]:
    """The names a chapter's solution cells define (what its export hands to later chapters)."""
    names: set[str] = set()
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if "solution" in cell.get("metadata", {}).get("tags", []):
            names.update(_top_level_names(ast.parse("".join(cell["source"]))))
    return names


def test_every_filled_in_exercise_runs_in_place_and_progress_run_passes_them_all(tmp_path):
    exercises = shipped_course(tmp_path)
    notebooks = fill_in(exercises)
    env = _learner_env()

    # 1. As a learner works through them in Jupyter, in order, each ending with its export.
    results = run_like_jupyter(notebooks, env)
    stopped = {name: error for name, (_, error) in results.items() if error}
    assert not stopped, "\n\n".join(f"{name} stopped at {error}" for name, error in stopped.items())
    built: set[str] = set()
    for path in notebooks:
        printed = results[path.name][0]
        assert "test result: ok." in printed and "FAILED" not in printed, (path.name, printed)
        # use="mine" hands on the learner's own piece whenever an earlier chapter built it.
        for line in re.findall(r"^parts: .*$", printed, re.M):
            theirs = line.partition("clawnb's, not exported yet (or still a stub): ")[2]
            stand_ins = set(filter(None, theirs.split(", "))) & built
            assert not stand_ins, f"{path.name}: {line}"
        assert "could not be imported" not in printed, (path.name, printed)
        built |= _built_by(exercises.parent / path.name)
    # The capstone's %%claw ran the learner's package on the recorded model that ships with
    # the course (../scripts/capstone.jsonl from here), and its approved write happened.
    assert (exercises / "capstone_workspace" / "hello.txt").read_text() == GREETING

    # 2. progress --run: every chapter was checked by hand (no source recorded), so it reruns
    # each, now with every chapter of the package exported, and the table shows them passing.
    (exercises / "capstone_workspace" / "hello.txt").unlink()
    done = subprocess.run(
        [sys.executable, "-m", "clawnb.course", "progress", "--run", str(exercises)],
        capture_output=True,
        text=True,
        env=env,
        timeout=400,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    for path in notebooks:
        assert f"checking {path.name}" in done.stdout, done.stdout
    rows = [line for line in done.stdout.splitlines() if re.match(r"(ch\d\d[a-z]?|extras)\s", line)]
    assert len(rows) == len(notebooks), done.stdout
    assert all("✓  ok" in row for row in rows), done.stdout
    assert f"{len(notebooks)}/{len(notebooks)} chapters pass" in done.stdout
    assert (exercises / "capstone_workspace" / "hello.txt").read_text() == GREETING
