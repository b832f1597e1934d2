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
    card = lab.cell(1).locator(".clawnb-cell .clawnb-card.clawnb-s-waiting")
    lab.page.wait_for_function(
        "(p) => document.title.startsWith(p)", arg=TITLE_PREFIX, timeout=10_000
    )
    lab.page.wait_for_function(
        """() => { const c = document.querySelector('.clawnb-cell .clawnb-card.clawnb-s-waiting');
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


def test_a_notebook_saved_mid_run_reopens_readable(lab) -> None:
    """Saved while a card waits (as autosave does), then reopened with no kernel behind the
    widgets: the snapshot is shown, never "Error displaying widget: model not found"."""
    workdir = lab.server.root / "midrun"
    workdir.mkdir()
    call = {"id": "w1", "name": "write", "arguments": {"path": "later.txt", "content": "x\n"}}
    turns = [{"text": "Checking the stock first.", "tool_calls": [call]}, {"text": "Done."}]
    (workdir / "script.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    cells = ["%load_ext clawnb", "%%claw --model scripted:script.jsonl\nWrite later.txt."]
    notebook = lab.server.write_notebook("midrun.ipynb", cells, directory=workdir)
    lab.open(notebook)
    lab.run_all()
    lab.wait_output(1, r"waiting for approval")
    # the snapshot is refreshed every 2 s while the cell runs; it stays hidden meanwhile
    lab.page.wait_for_function(
        """() => [...document.querySelectorAll('.clawnb-snapshot')].some((e) =>
               e.closest('.jp-OutputArea-output').textContent.includes('waiting for approval'))""",
        timeout=10_000,
    )
    assert not lab.page.locator(".clawnb-snapshot").first.is_visible()
    lab.page.evaluate(
        "() => { window.jupyterapp.commands.execute('docmanager:save'); return true; }"
    )
    lab.page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=10_000
    )
    saved = notebook.read_text()
    assert "application/vnd.jupyter.widget-view+json" in saved and "clawnb-snapshot" in saved

    # a fresh page, the kernel shut down: the widgets' models are gone for good
    for session in lab.server.api("/api/sessions"):
        lab.server.api(f"/api/sessions/{session['id']}", method="DELETE")
    page = lab.page.context.new_page()
    rel = notebook.relative_to(lab.server.root).as_posix()
    page.goto(lab.server.url(f"/lab/workspaces/reopen/tree/{rel}?reset"))
    page.locator(".jp-Cell .clawnb-snapshot").first.wait_for(state="attached")
    output = page.locator(".jp-Cell").nth(1).locator(".jp-Cell-outputArea")
    # the widget manager gives up on the dead model: its error is in the DOM, but hidden
    page.wait_for_function(
        """() => [...document.querySelectorAll('.jp-OutputArea-output')].some((e) =>
               e.textContent.includes('model not found'))""",
        timeout=20_000,
    )
    text = output.inner_text()
    assert "Checking the stock first." in text and "waiting for approval" in text
    assert "saved while the cell was running" in text
    assert "model not found" not in text and "Error displaying widget" not in text
    page.screenshot(path=str(lab.artifacts / f"{lab.prefix}-reopened.png"), full_page=True)
