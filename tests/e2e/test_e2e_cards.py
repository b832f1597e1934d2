"""Every card state in the light and the dark theme, checked by axe-core for colour contrast,
and the approval buttons at 560 px: in a real JupyterLab + Chromium.

One notebook: a ``%%claw`` cell whose calls all end without a click (done, denied by policy,
an edit bound to fail, a glob), then a cell that walks through the states that wait for a
person (an edit's diff, a question, ``run_python`` code, a running bash command), then a
finished static rendering. At each state axe-core's ``color-contrast`` rule runs on clawnb's
output in both themes and must find 0 violations (and must have checked something).
Screenshots of each state and theme land in test-artifacts/e2e/.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.e2e

OUTPUT = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea"
DOC_IMAGES = REPO_ROOT / "docs" / "img"


def _turns(*turns: dict) -> str:
    return "".join(json.dumps(t) + "\n" for t in turns)


def _call(call_id: str, name: str, **arguments) -> dict:
    return {"id": call_id, "name": name, "arguments": arguments}


def _notebook(lab) -> Path:
    workdir = lab.server.root / "cards"
    workdir.mkdir()
    (workdir / "inventory.py").write_text(
        "stock = {\n    'apples': 3,\n    'pears': 5,\n}\n\n\ndef total():\n"
        "    return sum(stock.values())\n"
    )
    (workdir / "finished.jsonl").write_text(
        _turns(
            {
                "text": "Let me look around first.",
                "tool_calls": [
                    _call("r1", "read", path="inventory.py"),
                    _call("g1", "glob", pattern="*.py"),
                    _call("w1", "write", path="notes.md", content="# Notes\n\nsome text\n"),
                    _call("e1", "edit", path="other.py", old_string="a", new_string="b"),
                ],
            },
            {"text": "## Summary\n\nThe **stock** has `2` kinds of fruit.\n\n- apples\n- pears"},
        )
    )
    (workdir / "waiting.jsonl").write_text(
        _turns(
            {
                "text": "I will add plums.",
                "tool_calls": [
                    _call("r2", "read", path="inventory.py"),
                    _call(
                        "e2",
                        "edit",
                        path="inventory.py",
                        old_string="    'pears': 5,\n",
                        new_string="    'pears': 5,\n    'plums': 7,\n",
                    ),
                ],
            },
            {
                "text": "Which total?",
                "tool_calls": [
                    _call("q1", "ask_user", question="Count plums in the total?", options=["yes"])
                ],
            },
            {
                "text": "Checking in the kernel.",
                "tool_calls": [_call("p1", "run_python", code="x = 40 + 2\nprint(x)")],
            },
            {
                "text": "And in a shell.",
                "tool_calls": [_call("b1", "bash", command="sleep 3; echo counted")],
            },
            {"text": "Done: **plums** are in."},
        )
    )
    cells = [
        "%load_ext clawnb",
        "%%claw --model scripted:finished.jsonl --approve deny\nLook at the inventory.",
        "%%claw --model scripted:waiting.jsonl --new\nAdd plums.",
        "print('after the cards')",
    ]
    return lab.server.write_notebook("cards.ipynb", cells, directory=workdir)


def _check_both_themes(lab, scope: str, step: str, *, keep=None) -> None:
    """axe-core colour contrast on ``scope`` in light and dark, with a screenshot of each."""
    for dark in (False, True):
        theme = "dark" if dark else "light"
        lab.set_theme(dark)
        result = lab.contrast(scope)
        lab.shot(f"{step}-{theme}")
        assert result["violations"] == [], f"{step} ({theme}): {result['violations']}"
        assert result["passes"] >= 3, f"{step} ({theme}): axe checked too little: {result}"
        if keep is not None:  # (name, locator): the README's pictures, refreshed by this test
            name, element = keep
            DOC_IMAGES.mkdir(parents=True, exist_ok=True)
            element.screenshot(path=str(DOC_IMAGES / f"{name}-{theme}.png"))
    lab.set_theme(False)


def _buttons_fit(lab, cell) -> list[str]:
    """The labels of the cell's buttons that are cut short (scrollWidth > clientWidth)."""
    return cell.locator(".clawnb-bar button").evaluate_all(
        "bs => bs.filter(b => b.scrollWidth > b.clientWidth).map(b => b.textContent)"
    )


def test_every_card_state_reads_in_light_and_dark_and_fits_560px(lab) -> None:
    lab.open(_notebook(lab))
    lab.run_all()

    # cell 1 ends without a click: done, denied (policy), an edit bound to fail, a glob
    lab.wait_prompt_done(1)
    first = lab.output_text(1)
    assert "read inventory.py done" in first and "glob *.py done" in first
    assert "write notes.md denied by policy" in first
    # the edit of a file never read failed its own check and was never put to anyone
    assert "edit other.py error" in first and "denied" not in first.split("edit other.py")[1]
    _check_both_themes(lab, OUTPUT, "finished-cards")

    # cell 2 waits on the edit: the exact diff, framed, with its buttons
    claw = lab.cell(2)
    lab.wait_output(2, r"waiting for approval")
    # the scoped "always": this file (it is at the top of the workspace), with how long
    claw.get_by_role("button", name="Always allow edit inventory.py", exact=True).wait_for()
    assert claw.locator(".clawnb-bar .clawnb-always-for select").count() == 1
    out = lab.output_text(2)
    assert "line 4: 0 removed, 1 added" in out
    assert "+    4 |     'plums': 7," in out and "     3 |     'pears': 5," in out
    card = claw.locator(".clawnb-cell .clawnb-card.clawnb-s-waiting")
    card.scroll_into_view_if_needed()
    _check_both_themes(lab, OUTPUT, "approval-edit", keep=("approval-card", card))

    # 560 px: the button bar wraps, no label is cut
    lab.page.set_viewport_size({"width": 560, "height": 1000})
    lab.page.evaluate(
        "() => { window.jupyterapp.commands.execute('application:toggle-left-area'); return true; }"
    )
    lab.page.wait_for_timeout(400)
    card.scroll_into_view_if_needed()
    lab.shot("approval-560px")
    assert _buttons_fit(lab, claw) == []
    assert claw.locator(".clawnb-bar button").count() == 3
    lab.page.set_viewport_size({"width": 1280, "height": 1000})
    claw.get_by_role("button", name="Approve", exact=True).click()

    # the question, once, inside its card, with a free-text answer
    lab.wait_output(2, r"waiting for your answer")
    question = claw.locator(".clawnb-cell .clawnb-card.clawnb-s-waiting")
    assert question.inner_text().count("Count plums in the total?") == 1
    assert question.get_by_placeholder("or type another answer").count() == 1
    _check_both_themes(lab, OUTPUT, "question")
    question.get_by_role("button", name="yes", exact=True).click()

    # run_python: the code itself is what is approved (it was unreadable in dark)
    lab.wait_output(2, r"run_python.*waiting for approval")
    assert "x = 40 + 2" in lab.output_text(2)
    _check_both_themes(lab, OUTPUT, "run-python")
    claw.get_by_role("button", name="Approve", exact=True).click()

    # bash: a compound line is allowed only as itself (for this session), then it runs
    claw.get_by_role("button", name="Always allow this exact command", exact=True).click()
    lab.wait_output(2, r"running \d+s")
    _check_both_themes(lab, OUTPUT, "running")

    # the static rendering that is saved
    lab.wait_output(3, r"after the cards", timeout_ms=30_000)
    lab.wait_prompt_done(2)
    final = lab.output_text(2)
    assert "always allowed: this exact command for this session" in final
    _check_both_themes(lab, OUTPUT, "static")
