"""Where the course teaches a thing: the notebook section that builds a given object.

A failing test points the learner at the notebook section where the rule it checks is stated:
the section (a ``##`` heading) whose cells define the object the test was exercising. The
notebooks ship beside the package in a checkout or Binder (``<repo>/notebooks``); an installed
wheel has none, and then the pointer names the chapter only.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

__all__ = ["chapter_notebook", "notebooks_dir", "sections", "taught_at"]

_DEFINES = re.compile(r"^(?:async\s+def|def|class)\s+([A-Za-z_]\w*)|^([A-Za-z_]\w*)\s*=", re.M)


def notebooks_dir() -> Path | None:
    here = Path(__file__).resolve().parents[2] / "notebooks"
    return here if here.is_dir() else None


def chapter_notebook(chapter: str) -> Path | None:
    """``ch05a`` -> ``notebooks/05a_….ipynb``; ``extras`` -> the extras notebook."""
    root = notebooks_dir()
    if root is None:
        return None
    if chapter == "extras":
        found = sorted(root.glob("*_extras_*.ipynb"))
    else:
        number = chapter.removeprefix("ch")
        found = sorted(root.glob(f"{number}_*.ipynb"))
    return found[0] if found else None


@functools.cache
def sections(path: Path) -> list[tuple[str, set[str]]]:
    """``(heading, names defined under it)`` for each ``#``/``##`` section of a notebook."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    out: list[tuple[str, set[str]]] = []
    for cell in notebook["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            for line in source.splitlines():
                if re.match(r"#{1,2} ", line):
                    out.append((line.lstrip("#").strip(), set()))
        elif out:
            out[-1][1].update(a or b for a, b in _DEFINES.findall(source))
    return out


def _shown(path: Path) -> str:
    """The notebook a learner works in: the exercise of that chapter when it ships (the
    solution notebook's prose is the same, its answers are not what a stuck learner needs)."""
    exercise = path.parent / "exercises" / path.name
    return f"notebooks/exercises/{path.name}" if exercise.is_file() else f"notebooks/{path.name}"


def taught_at(chapters: list[str], names: list[str]) -> str:
    """A pointer such as ``notebooks/exercises/13_permission_engine.ipynb § Build it: the
    gate``: in the first of ``chapters`` whose notebook defines one of ``names``, the section
    that defines the earliest of ``names`` (the component under test comes first)."""
    for chapter in chapters:
        path = chapter_notebook(chapter)
        if path is None:
            continue
        found = sections(path)
        for name in names:
            for heading, defined in found:
                if name in defined:
                    return f"{_shown(path)} § {heading}"
    if chapters:
        path = chapter_notebook(chapters[0])
        return _shown(path) if path else f"the notebook of {chapters[0]}"
    return ""
