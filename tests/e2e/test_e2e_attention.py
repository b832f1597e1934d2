"""A waiting card cannot be missed and is quick to answer, in a real JupyterLab + Chromium:
it is scrolled into view and focused, the tab title says "⏸ approval needed" while it waits,
and the ``a`` key approves it (without JupyterLab's own ``a``, "insert cell above", firing)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.e2e

TITLE_PREFIX = "\u23f8 approval needed"


def test_a_waiting_card_comes_into_view_names_the_tab_and_takes_the_a_key(lab) -> None:
    workdir = lab.server.root / "attention"
    workdir.mkdir()
    call = {"id": "w1", "name": "write", "arguments": {"path": "keyed.txt", "content": "hi\n"}}
    turns = [{"text": "Writing it.", "tool_calls": [call]}, {"text": "Written by key."}]
    (workdir / "script.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    cells = [
        "%load_ext clawnb\nprint('\\n'.join(f'line {i}' for i in range(60)))",
        "%%claw --model scripted:script.jsonl\nWrite keyed.txt.",
        "print('after')",
    ]
    lab.open(lab.server.write_notebook("attention.ipynb", cells, directory=workdir))
    lab.page.set_viewport_size({"width": 1000, "height": 520})
    lab.run_all()  # the first cell's 60 lines put the claw cell below the fold
    lab.wait_output(1, r"waiting for approval")
    card = lab.cell(1).locator(".clawnb-card.clawnb-s-waiting")
    lab.page.wait_for_function(
        "(p) => document.title.startsWith(p)", arg=TITLE_PREFIX, timeout=10_000
    )
    lab.page.wait_for_function(
        """() => { const c = document.querySelector('.clawnb-card.clawnb-s-waiting');
                   if (!c) return false;
                   const r = c.getBoundingClientRect();
                   return r.top >= 0 && r.bottom <= window.innerHeight
                       && document.activeElement === c; }""",
        timeout=10_000,
    )
    cells_before = lab.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").count()
    lab.shot("waiting-focused")
    assert card.get_attribute("data-lm-suppress-shortcuts") == "true"

    lab.page.keyboard.press("a")
    lab.wait_output(1, r"Written by key\.")
    lab.wait_output(2, r"after")
    assert (workdir / "keyed.txt").read_text() == "hi\n"
    assert "(approved)" in lab.output_text(1)
    # JupyterLab's command-mode "a" (insert a cell above) did not fire as well
    assert lab.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").count() == (
        cells_before
    )
    lab.page.wait_for_function(
        "(p) => !document.title.startsWith(p)", arg=TITLE_PREFIX, timeout=10_000
    )
    lab.shot("approved-by-key")
