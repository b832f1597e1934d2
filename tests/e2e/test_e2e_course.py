"""The course's "see it run" parts in a real JupyterLab: every Mermaid diagram of the chapter
notebooks renders (JupyterLab >= 4.1 draws them; a syntax error shows as a warning instead),
and a timeline displays as the step widget, whose Next button moves to the next step."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

pytestmark = pytest.mark.e2e

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
MERMAID = re.compile(r"```mermaid\n(.*?)```", re.S)


def _diagrams() -> list[tuple[str, str]]:
    found = []
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]*_*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                for body in MERMAID.findall("".join(cell["source"])):
                    found.append((path.stem, body))
    return found


# A diagram with a syntax error, rendered last: the detector must flag it, or it could be
# passing every diagram without looking.
BROKEN = "flowchart LR\n    A[start --> B{{\n"


def test_every_course_diagram_renders_in_jupyterlab(lab) -> None:
    diagrams = _diagrams()
    assert len(diagrams) >= 30, "the course should carry the book's figures"
    diagrams.append(("deliberately-broken", BROKEN))
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"{stem} figure {i}\n\n```mermaid\n{body}```")
        for i, (stem, body) in enumerate(diagrams)
    ]
    target = lab.server.root / "diagrams.ipynb"
    nbformat.write(nb, str(target))
    lab.open(target)
    broken = []
    for i, (stem, _) in enumerate(diagrams):
        cell = lab.cell(i)
        cell.scroll_into_view_if_needed()
        drawn = cell.locator(".jp-RenderedMermaid")
        drawn.first.wait_for()
        # the renderer shows the drawing as an image (or inline SVG), or marks a warning
        lab.page.wait_for_function(
            """(el) => !!el.querySelector('img, svg') || el.classList.contains('jp-mod-warning')""",
            arg=drawn.first.element_handle(),
        )
        failed = drawn.first.evaluate(
            """el => el.classList.contains('jp-mod-warning')
                || /Syntax(%20| )error/.test(el.innerHTML)"""
        )
        if failed:
            broken.append(f"{stem} figure {i}: {drawn.first.inner_text()[:300]}")
    lab.shot("diagrams")
    assert broken and broken[-1].startswith("deliberately-broken"), "the detector missed an error"
    assert len(broken) == 1, "\n".join(broken[:-1])


TIMELINE_CELL = """\
import tempfile
from pathlib import Path

import clawnb
from clawnb.course._helpers import text_turn, tool_turn
from clawnb.course.see import Timeline
from clawnb.types import Message

note = Path(tempfile.mkdtemp()) / "note.txt"
note.write_text("alpha")
agent = clawnb.SimpleAgent(
    clawnb.MockProvider([tool_turn(("c1", "read", {"path": str(note)})), text_turn("done")])
).tool(clawnb.ReadTool())
history = [Message.User("read the note")]
timeline = Timeline(history)
await agent.chat(history, timeline)
timeline
"""


def test_a_timeline_steps_forward_and_back_in_the_browser(lab) -> None:
    notebook = lab.server.write_notebook("timeline.ipynb", [TIMELINE_CELL])
    lab.open(notebook)
    lab.run_all()
    following = lab.cell(0).get_by_role("button", name="Next ▶")
    following.wait_for()
    lab.wait_output(0, r"step 1 of \d+")
    total = int(re.search(r"step 1 of (\d+)", lab.output_text(0)).group(1))
    for step in range(2, total + 1):
        following.click()
        lab.wait_output(0, rf"step {step} of {total}")
    assert "history invariant holds after this step" in lab.output_text(0)
    assert following.is_disabled()
    lab.cell(0).get_by_role("button", name="◀ Prev").click()
    lab.wait_output(0, rf"step {total - 1} of {total}")
    lab.shot("timeline-stepped")
