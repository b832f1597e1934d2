"""propose_cell in a real JupyterLab + Chromium: the agent proposes a cell, the person clicks
"Insert below", and a new code cell with that code appears right under the ``%%claw`` cell —
not run. The agent also knows which notebook it runs in (``JPY_SESSION_NAME``) and reads the
saved file with notebook_read."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.e2e

PROPOSED = "import math\nprint('proposed by the agent', math.pi)"


def test_insert_below_puts_the_proposed_code_in_a_new_cell_under_the_claw_cell(lab) -> None:
    workdir = lab.server.root / "propose"
    workdir.mkdir()
    turns = [
        {
            "text": "Reading this notebook first.",
            "tool_calls": [
                {"id": "r1", "name": "notebook_read", "arguments": {"path": "propose.ipynb"}}
            ],
        },
        {
            "text": "Here is a cell for you.",
            "tool_calls": [{"id": "p1", "name": "propose_cell", "arguments": {"code": PROPOSED}}],
        },
        {"text": "The proposed cell is yours to keep."},
    ]
    (workdir / "script.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    cells = [
        "%load_ext clawnb",
        "%%claw --model scripted:script.jsonl\nPropose a cell that prints pi.",
        "import os\nprint('the cell after; kernel says:', os.environ.get('JPY_SESSION_NAME'))",
    ]
    notebook = lab.server.write_notebook("propose.ipynb", cells, directory=workdir)
    lab.open(notebook)
    lab.run_all()

    claw = lab.cell(1)
    insert = claw.get_by_role("button", name="Insert below", exact=True)
    insert.wait_for()
    claw.get_by_role("button", name="Copy", exact=True).wait_for()
    claw.get_by_role("button", name="Dismiss", exact=True).wait_for()
    # the code is on the card, and the finished read above it (the browser renders each
    # widget on its own, so wait for what the kernel has sent rather than read it once)
    lab.wait_output(1, r"proposed by the agent")
    lab.wait_output(1, r"notebook_read propose\.ipynb done")
    # the finished notebook_read card opens to show what the agent read: the saved notebook,
    # cell by cell, the %%claw cell included
    claw.locator("summary").filter(has_text="notebook_read").first.click()
    lab.wait_output(1, r"── cell 2 · id \w+ · code · In \[ \] ──\s+%%claw --model")
    lab.shot("proposal-card")
    insert.click()

    lab.wait_output(1, r"The proposed cell is yours to keep\.")
    lab.wait_prompt_done(1)
    # the new cell sits right below the %%claw cell, before the cell that was already there
    new = lab.cell(2)
    new.locator(".jp-InputArea-editor").wait_for()
    deadline_text = ""
    for _ in range(100):
        deadline_text = new.locator(".jp-InputArea-editor").inner_text()
        if "proposed by the agent" in deadline_text:
            break
        lab.page.wait_for_timeout(50)
    assert "import math" in deadline_text and "proposed by the agent" in deadline_text
    assert new.locator(".jp-InputPrompt").inner_text().strip() in ("[ ]:", "")  # never run
    assert not new.locator(".jp-OutputArea-output").count()
    # the front end told the kernel which notebook it serves (what the agent's prompt names)
    lab.wait_output(3, r"the cell after; kernel says: /\S*/propose/propose\.ipynb")
    lab.shot("inserted-below")


def test_copy_puts_the_code_on_the_clipboard_and_tells_the_agent(lab) -> None:
    lab.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    workdir = lab.server.root / "copy"
    workdir.mkdir()
    turns = [
        {"tool_calls": [{"id": "p1", "name": "propose_cell", "arguments": {"code": PROPOSED}}]},
        {"text": "Copied or not, done."},
    ]
    (workdir / "script.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    cells = ["%load_ext clawnb", "%%claw --model scripted:script.jsonl\nGive me code."]
    lab.open(lab.server.write_notebook("copy.ipynb", cells, directory=workdir))
    lab.run_all()
    claw = lab.cell(1)
    claw.get_by_role("button", name="Copy", exact=True).click()
    lab.wait_output(1, r"the user copied the code")
    lab.wait_prompt_done(1)
    assert lab.page.evaluate("() => navigator.clipboard.readText()") == PROPOSED
    assert lab.page.locator(".jp-Notebook .jp-Cell").count() == 2  # nothing inserted
