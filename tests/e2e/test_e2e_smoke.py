"""Harness smoke test: a widget button wakes an awaiting cell, in a real browser.

This does not touch clawnb. It proves the e2e harness (JupyterLab + Chromium + Playwright)
and the kernel behaviour the notebook layer is built on (ARCHITECTURE.md §4.1): on
ipykernel >= 7.4 a cell that awaits an asyncio Future keeps the kernel answering widget
messages, so a click resolves the Future, the cell finishes, and "Run All" goes on to the
next cell. On older kernels this test hangs at the click and times out.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e

AWAIT_CELL = """\
import asyncio
import ipywidgets as widgets
from IPython.display import display

clicked = asyncio.get_running_loop().create_future()
button = widgets.Button(description="Resolve smoke future")

def on_click(_button):
    if not clicked.done():
        clicked.set_result("clicked")

button.on_click(on_click)  # attached before display: an early click is not lost
display(button)
print("waiting for click")
outcome = await clicked
print("resolved:", outcome)
"""

NEXT_CELL = 'print("next cell ran after", outcome)'


def test_button_resolves_awaited_future_and_run_all_continues(lab) -> None:
    notebook = lab.server.write_notebook("smoke.ipynb", [AWAIT_CELL, NEXT_CELL])
    lab.open(notebook)
    lab.shot("opened")

    lab.run_all()
    button = lab.cell(0).get_by_role("button", name="Resolve smoke future")
    button.wait_for()
    lab.wait_output(0, r"waiting for click")
    # The cell is parked on its await and the next cell is queued behind it.
    lab.page.wait_for_timeout(300)
    assert lab.prompt(0) == "[*]:"
    assert "resolved:" not in lab.output_text(0)
    assert "next cell ran" not in lab.output_text(1)
    lab.shot("waiting-for-click")

    button.click()
    lab.wait_output(0, r"resolved: clicked")
    lab.wait_output(1, r"next cell ran after clicked")
    lab.wait_prompt_done(0)
    lab.wait_prompt_done(1)
    lab.shot("after-click")
