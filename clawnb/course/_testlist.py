"""Each chapter lists its tests up front, as the book does: a cell near the top of every
chapter notebook names the tests its check runs, suite by suite, the ones that are ours (not in
the book's test files) marked.

The cell is generated from the suites, so it cannot drift from them:

    python -m clawnb.course tests notebooks        # then regenerate the exercises

``tests/course/test_notebooks.py`` requires every chapter notebook's cell to be current.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

__all__ = ["TAG", "tests_cell", "write_test_lists"]

TAG = "tests"  # the cell's tag
_OURS = "not in the book"


def _is_ours(fn: Any) -> bool:
    """A test the book's files do not have: its opening comment, or its whole module, says so."""
    from ._helpers import opening_comment

    module = importlib.import_module(fn.__module__)
    if "not a book test file" in (module.__doc__ or "").lower():
        return True
    return _OURS in opening_comment(fn).lower()


def tests_cell(chapter: str) -> str:
    """The Markdown of ``chapter``'s test list."""
    from ._suite import chapters, load_suite

    groups = []
    total = ours = 0
    for name in chapters()[chapter]:
        suite = load_suite(name)
        shown = []
        for test, fn in suite.tests.items():
            mark = _is_ours(fn)
            ours += mark
            shown.append(f"`{test}`" + (" ✦" if mark else ""))
        total += len(shown)
        groups.append(f"* `{name}` ({suite.title}, {len(shown)}): " + ", ".join(shown))
    head = (
        f'**The tests.** `check("{chapter}")` runs these {total} tests, the same ones pytest runs '
        "against clawnb"
    )
    if ours == total:  # the book has no test file for what this chapter builds
        head += "; all of them are ours, not the book's:"
        groups = [g.replace(" ✦", "") for g in groups]
    elif ours:
        head += f"; ✦ marks the {ours} that are ours, not the book's:"
    else:
        head += ":"
    return "\n".join([head, "", *groups])


def _style(text: str) -> bool:
    """Whether the file escapes non-ASCII (``\\u2014``) rather than writing it as is."""
    return all(ord(c) < 128 for c in text)


def write_test_lists(folder: Path) -> list[Path]:
    """Put the current test list into every chapter notebook in ``folder`` (right after its
    opening cell); returns the notebooks that changed."""
    from ._progress import chapter_of
    from ._suite import chapters

    known = chapters()
    changed = []
    for path in sorted(folder.glob("*.ipynb")):
        chapter = chapter_of(path)
        if chapter not in known:
            continue
        text = path.read_text(encoding="utf-8")
        notebook = json.loads(text)
        source = tests_cell(chapter)
        cells = notebook["cells"]
        existing = [c for c in cells if TAG in c.get("metadata", {}).get("tags", [])]
        if existing:
            if "".join(existing[0]["source"]) == source:
                continue
            existing[0]["source"] = source.splitlines(keepends=True)
        else:
            cell = {
                "cell_type": "markdown",
                "id": f"{path.stem[:40]}-tests",
                "metadata": {"tags": [TAG]},
                "source": source.splitlines(keepends=True),
            }
            cells.insert(1, cell)
        out = json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=_style(text)) + "\n"
        path.write_text(out, encoding="utf-8")
        changed.append(path)
    return changed
