"""A saved notebook exported with ``jupyter nbconvert --to html`` keeps the cards' look.

nbconvert's lab template styles every output's ``pre`` (``.jp-OutputArea-output pre``,
``.jp-RenderedHTMLCommon pre``: no border, no padding), which beat a one-class rule: opened
cards showed file contents and JSON in plain blocks with no frame (issue 26). The notebook here
is executed for real (a scripted model, real tools, the ``allow`` policy), exported by the
real ``jupyter nbconvert``, and opened in Debian's Chromium; the computed style of an opened
card's ``pre`` is what a reader sees. The screenshot goes to ``docs/img/exported-notebook.png``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from tests.conftest import ROOT, call_turn, write_script

pytestmark = pytest.mark.timeout(240)

SCREENSHOT = ROOT / "docs" / "img" / "exported-notebook.png"


def _export(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    write_script(
        tmp_path / "s.jsonl",
        [
            {"text": "Reading the notes first.", **call_turn("r1", "read", path="notes.txt")},
            {
                "text": "Now the summary file.",
                **call_turn("w1", "write", path="summary.txt", content="three notes\n"),
            },
            call_turn("g1", "grep", pattern="beta", path="notes.txt"),
            {"text": "Done: `summary.txt` says there are three notes."},
        ],
    )
    # a rendering front end (it answers the widget views, as JupyterLab does), so the cell
    # ends with the Markdown transcript a saved notebook keeps; approvals by --approve allow
    from tests.notebook.kernelclient import Frontend, Kernel, kernel_env

    prompt = "%%claw --model scripted:s.jsonl --approve allow\nSummarise notes.txt"
    kernel = Kernel(tmp_path, kernel_env(tmp_path, HOME=str(tmp_path / "home")))
    try:
        assert kernel.execute("%load_ext clawnb").status == "ok"
        run = kernel.execute(prompt, frontend=Frontend(render=True), timeout=90)
    finally:
        kernel.close()
    assert run.status == "ok", run.text
    assert (tmp_path / "summary.txt").read_text() == "three notes\n"
    cell = new_code_cell(prompt)
    cell.outputs = [
        new_output("display_data", data=out["data"])
        for out in run.outputs
        if out["output_type"] == "display_data" and "text/markdown" in out["data"]
    ]
    assert cell.outputs, run.outputs
    nb = new_notebook(
        cells=[new_code_cell("%load_ext clawnb"), cell],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    path = tmp_path / "cards.ipynb"
    nbformat.write(nb, path)
    jupyter = Path(sys.executable).with_name("jupyter")
    env = {**os.environ, "PATH": f"{jupyter.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run(
        [str(jupyter), "nbconvert", "--to", "html", str(path)],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    html = path.with_suffix(".html")
    assert "clawnb-card" in html.read_text(encoding="utf-8")
    return html


def test_exported_cards_keep_monospace_bordered_blocks(browser: Any, tmp_path: Path) -> None:
    html = _export(tmp_path)
    page = browser.new_page(viewport={"width": 900, "height": 900})
    try:
        page.goto(html.as_uri())
        cards = page.locator("details.clawnb-card")
        assert cards.count() >= 3, page.content()[:2000]
        # open the read card (its result) and the grep card (its arguments, then the JSON)
        for index in range(cards.count()):
            cards.nth(index).locator("summary").first.click()
        page.locator("details.clawnb-card details summary").first.click()
        results = page.locator("details.clawnb-card[open] pre.clawnb-result")
        assert results.count() >= 1
        for index in range(results.count()):
            pre = results.nth(index)
            if not pre.is_visible():
                continue
            style = pre.evaluate(
                """el => { const s = getComputedStyle(el); return {
                    font: s.fontFamily, border: s.borderTopStyle, width: s.borderTopWidth,
                    padding: s.paddingTop }; }"""
            )
            assert "mono" in style["font"].lower(), style  # a monospace family
            assert style["border"] == "solid" and style["width"] == "1px", style
            assert style["padding"] == "4px", style
        # the answer's text stays in the page's own font (only the cards' blocks change)
        assert "alpha" in page.locator("details.clawnb-card[open]").first.inner_text()
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.locator(".jp-Cell").last.screenshot(path=str(SCREENSHOT))
    finally:
        page.close()
