"""Every course notebook runs headless in a real kernel and passes its own check; every
exercise notebook is generated from it and fails its check until the learner writes the code."""

import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from shipped import shipped_course

from clawnb.course import _testlist, chapters  # the module: its tests_cell is no test
from clawnb.course._exercises import make_exercise
from clawnb.course._progress import chapter_of
from clawnb.course._save import execute_notebook
from clawnb.course._where import chapter_notebook

ROOT = Path(__file__).resolve().parents[2] / "notebooks"
CHAPTERS = sorted(p for p in ROOT.glob("[0-9][0-9]*_*.ipynb") if not p.name.startswith("00_"))


def check_outputs(nb) -> str:
    """The text printed by the notebook's check cell(s)."""
    texts = []
    for cell in nb.cells:
        if cell.cell_type == "code" and "check(" in cell.source:
            for out in cell.get("outputs", []):
                texts.append(out.get("text", "") + "".join(out.get("traceback", [])))
    return "\n".join(texts)


def test_every_checked_chapter_has_a_notebook():
    for chapter in chapters():
        assert chapter_notebook(chapter) in CHAPTERS, chapter


SANITIZE = ROOT / "nbval-sanitize.cfg"


def test_the_events_approvals_and_toolset_calls_a_solution_relies_on_are_in_the_prose():
    # A learner writes from the prose: what the solution emits, answers and calls must be
    # said there (this chapter's prose, or an earlier one's for the ToolSet methods).
    said_before = ""
    missing = []
    for path in CHAPTERS:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        prose = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        code = "\n".join(
            "".join(c["source"]) for c in cells if "solution" in c["metadata"].get("tags", [])
        )
        said_before += prose
        used = re.findall(r"AgentEvent\.(\w+)\(([^)]*)\)", code)
        for event, arguments in used:
            if event not in prose:
                missing.append(f"{path.name}: AgentEvent.{event}")
            if event == "ToolCall" and "id" in arguments and "summary, id" not in prose:
                missing.append(f"{path.name}: the ToolCall event's id")
        for name in set(re.findall(r"\b(ApprovalRequest|ApprovalDecision\.\w+|Approval)\b", code)):
            if name.split(".")[-1] not in prose:
                missing.append(f"{path.name}: {name}")
        for method in set(re.findall(r"\btools\.(push|get|definitions|with_)\(", code)):
            if f"tools.{method}(" not in said_before:
                missing.append(f"{path.name}: ToolSet.{method}")
    assert missing == []


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_each_chapter_lists_the_tests_its_check_runs_up_front(path):
    # As the book's chapters do: right after the opening cell, generated from the suites.
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    tag = _testlist.TAG
    listed = [i for i, c in enumerate(cells) if tag in c.get("metadata", {}).get("tags", [])]
    assert listed == [1], "run: python -m clawnb.course tests notebooks (then the exercises)"
    source = "".join(cells[1]["source"])
    expected = _testlist.tests_cell(chapter_of(path))
    assert source == expected, "out of date: python -m clawnb.course tests notebooks"


def test_every_recorded_model_a_notebook_names_ships_where_it_looks():
    # `%%claw --model scripted:PATH` reads PATH from the notebook's folder: the exercises sit
    # one folder deeper than the course's notebooks, so theirs must say ../scripts/.
    notebooks = sorted(ROOT.glob("*.ipynb")) + sorted((ROOT / "exercises").glob("*.ipynb"))
    named = []
    for path in notebooks:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                for script in re.findall(r"scripted:(\S+)", "".join(cell["source"])):
                    named.append(script)
                    where = path.parent / script
                    assert where.is_file(), (
                        f"{path.relative_to(ROOT)}: scripted:{script} is missing"
                    )
    assert len(named) >= 3, named  # the quick start, the capstone and its exercise


@pytest.mark.timeout(170)  # a kernel per notebook on shared CI cores
@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_chapter_notebook_reproduces_its_saved_outputs_and_passes_its_check(path, tmp_path):
    # The saved outputs (what GitHub shows) say the check passed ...
    saved = check_outputs(nbformat.read(path, as_version=4))
    assert "test result: ok." in saved and "FAILED" not in saved, saved
    # ... and nbval runs the notebook in a real kernel and compares every output with the
    # saved one (volatile parts sanitised), so they are what the notebook really prints.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbval",
            str(path),
            "--nbval-sanitize-with",
            str(SANITIZE),
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "-W",
            "ignore::DeprecationWarning",
            "--basetemp",
            str(tmp_path / "nbval"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=150,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


@pytest.fixture(scope="module")
def shipped_exercises(tmp_path_factory):
    # Run them in a copy of the shipped course: an exercise exports into my_agent/ beside it,
    # and a learner's own my_agent/ in the checkout must not be overwritten by the stubs.
    return shipped_course(tmp_path_factory.mktemp("course"))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_exercise_notebook_is_current_and_fails_its_check(path, shipped_exercises):
    exercise = ROOT / "exercises" / path.name
    expected = make_exercise(json.loads(path.read_text()))
    assert exercise.exists(), "run: python -m clawnb.course exercises notebooks notebooks/exercises"
    assert json.loads(exercise.read_text()) == expected, "exercise notebook is out of date"
    out = check_outputs(
        execute_notebook(shipped_exercises / path.name, allow_errors=True, timeout=60)
    )
    assert "test result: FAILED." in out, out
    assert "test result: ok." not in out


def test_the_quickstart_is_saved_with_its_outputs():
    # What GitHub shows a visitor who has not run anything yet: every cell that prints,
    # with what it printed (a run under CLAWNB_APPROVAL=allow), and no widget state.
    cells = json.loads((ROOT / "00_quickstart.ipynb").read_text(encoding="utf-8"))["cells"]
    code = [c for c in cells if c["cell_type"] == "code"]
    silent = [c for c in code if not c.get("outputs")]
    assert ["".join(c["source"]) for c in silent] == [
        "%load_ext clawnb",
        "sales = [120, 340, 95, 490]",
    ]
    text = json.dumps(code)
    assert "approved by policy: CLAWNB_APPROVAL=allow" in text and "1045" in text
    assert "application/vnd.jupyter.widget" not in text
