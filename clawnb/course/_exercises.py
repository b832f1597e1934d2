"""Make exercise notebooks from the course notebooks.

In a chapter notebook, every cell that builds the chapter's component is tagged ``solution``
and carries its stub in ``metadata["clawnb"]["stub"]`` (the same names, bodies that raise
``NotImplementedError``). The exercise version swaps each solution for its stub; its check cell
then fails until the learner writes the code.

    python -m clawnb.course exercises notebooks notebooks/exercises
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path
from typing import Any

__all__ = ["make_exercise", "write_exercises"]

SOLUTION_TAG = "solution"
PARTS_TAG = "parts"  # the cell that fetches earlier chapters' pieces (clawnb.course.parts)
# A recorded model the course ships (``notebooks/scripts/``), named relative to the notebook.
SCRIPTED = "scripted:scripts/"


def make_exercise(notebook: dict[str, Any], course: str = "..") -> dict[str, Any]:
    """Return a copy of ``notebook`` (nbformat JSON) with solution cells replaced by stubs.

    ``course`` is the course notebooks' folder seen from the exercise's folder (``..``: the
    exercises live in ``notebooks/exercises/``), so a path to the course's recorded models
    still names the file that ships (``scripted:../scripts/capstone.jsonl``)."""
    result = copy.deepcopy(notebook)
    for cell in result["cells"]:
        meta = cell.get("metadata", {})
        if cell.get("cell_type") == "code":
            # The course's saved outputs are the answers' outputs: an exercise starts blank.
            cell["outputs"] = []
            cell["execution_count"] = None
            source = "".join(cell["source"])
            if SCRIPTED in source:
                new = source.replace(SCRIPTED, f"scripted:{course}/scripts/")
                cell["source"] = new.splitlines(keepends=True)
        if PARTS_TAG in meta.get("tags", []):
            # The course runs on clawnb's reference parts; a learner's exercise on their own.
            cell["source"] = "".join(cell["source"]).replace('use="clawnb"', 'use="mine"')
        if SOLUTION_TAG not in meta.get("tags", []):
            continue
        stub = meta.get("clawnb", {}).get("stub")
        if stub is None:
            raise ValueError("a solution cell has no metadata.clawnb.stub")
        cell["source"] = stub
        meta["tags"] = [t for t in meta["tags"] if t != SOLUTION_TAG] + ["exercise"]
        meta.pop("clawnb", None)
        cell["outputs"] = []
        cell["execution_count"] = None
    return result


def write_exercises(src: Path, dest: Path) -> list[Path]:
    """Write an exercise version of every notebook in ``src`` that has solution cells."""
    dest.mkdir(parents=True, exist_ok=True)
    course = Path(os.path.relpath(src.resolve(), dest.resolve())).as_posix()
    written = []
    for path in sorted(src.glob("*.ipynb")):
        notebook = json.loads(path.read_text(encoding="utf-8"))
        if not any(
            SOLUTION_TAG in c.get("metadata", {}).get("tags", []) for c in notebook["cells"]
        ):
            continue
        target = dest / path.name
        target.write_text(
            json.dumps(make_exercise(notebook, course), indent=1) + "\n", encoding="utf-8"
        )
        written.append(target)
    return written
