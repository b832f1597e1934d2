"""The course as it ships, for tests that must see what a learner sees: ``shipped_course``
copies the committed ``notebooks/`` tree byte for byte (same folders, so every relative path in
a notebook names what it names in the checkout), and ``fill_in`` pastes the chapter notebooks'
solutions into the exercise cells, as a learner who did every exercise would have them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
# What a run leaves in the course's folders (all ignored by git): not part of what ships.
_LEFT_BY_A_RUN = ("my_agent", "capstone_workspace", ".clawnb-progress.json*", ".claw")
_LEFT_BY_A_RUN += (".ipynb_checkpoints", "__pycache__")


def _committed_files() -> list[str]:
    """The files of ``notebooks/`` that git tracks (empty outside a git checkout)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "notebooks"],
            cwd=REPO,
            capture_output=True,
            check=True,
            text=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    return [name for name in listed.split("\0") if name]


def shipped_course(tmp: Path) -> Path:
    """A byte-for-byte copy of the committed ``notebooks/`` under ``tmp`` (outside a git
    checkout: the folder minus what a run leaves behind); returns its ``notebooks/exercises``
    folder, the learner's working folder."""
    committed = _committed_files()
    if not committed:
        shutil.copytree(
            NOTEBOOKS, tmp / "notebooks", ignore=shutil.ignore_patterns(*_LEFT_BY_A_RUN)
        )
    for name in committed:
        target = tmp / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / name, target)
    return tmp / "notebooks" / "exercises"


def filled_in(exercise: dict[str, Any], solution: dict[str, Any]) -> dict[str, Any]:
    """``exercise`` with each exercise cell's stub replaced by the solution cell it was made
    from (the generator keeps the cells in place, so they pair by position)."""
    assert len(exercise["cells"]) == len(solution["cells"]), "exercise out of date"
    for mine, answer in zip(exercise["cells"], solution["cells"], strict=True):
        if "exercise" in mine.get("metadata", {}).get("tags", []):
            assert "solution" in answer["metadata"]["tags"], "cells do not pair"
            mine["source"] = answer["source"]
    return exercise


def fill_in(exercises: Path) -> list[Path]:
    """Fill in every exercise notebook in ``exercises`` from the chapter notebooks beside it
    (``..``) and save it there, as Jupyter would; returns them in chapter order."""
    done = []
    for path in sorted(exercises.glob("[0-9][0-9]*_*.ipynb")):
        solution = json.loads((exercises.parent / path.name).read_text(encoding="utf-8"))
        notebook = filled_in(json.loads(path.read_text(encoding="utf-8")), solution)
        path.write_text(json.dumps(notebook, indent=1) + "\n", encoding="utf-8")
        done.append(path)
    return done
