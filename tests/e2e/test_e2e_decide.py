"""Deciding quickly, in a real JupyterLab + Chromium: the plan box (Enter revises, Execute
carries it out and the mode goes back), and the status line's Stop button."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.e2e


def _script(workdir, turns) -> None:
    (workdir / "script.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))


def test_plan_box_enter_revises_execute_runs_and_the_mode_goes_back(lab) -> None:
    workdir = lab.server.root / "plan"
    workdir.mkdir()
    exit_plan = {"name": "exit_plan", "arguments": {}}
    _script(
        workdir,
        [
            {"text": "## Plan v1\n\n1. read", "tool_calls": [{"id": "x1", **exit_plan}]},
            {"text": "## Plan v2\n\n1. read, briefly", "tool_calls": [{"id": "x2", **exit_plan}]},
            {"text": "Carried out."},
        ],
    )
    cells = [
        "%load_ext clawnb",
        "%%claw --model scripted:script.jsonl --mode plan\nplan it",
        "%claw status",
    ]
    lab.open(lab.server.write_notebook("plan.ipynb", cells, directory=workdir))
    lab.run_all()
    box = lab.cell(1).locator(".clawnb-plan")
    box.locator("h2", has_text="Plan v1").wait_for()  # the plan, rendered, in the frame
    lab.shot("plan-box")
    box.get_by_placeholder("what should change? (Enter revises the plan)").fill("shorter")
    lab.page.keyboard.press("Enter")
    box.locator("h2", has_text="Plan v2").wait_for()
    box.get_by_role("button", name="Execute", exact=True).click()
    lab.wait_output(1, r"Carried out\.")
    out = lab.output_text(1)
    assert "revise the plan: shorter" in out and "plan approved: executing it" in out
    lab.wait_output(2, r"mode: default")  # plan mode ended with the executed plan
    lab.shot("plan-executed")


def test_stop_in_the_status_line_interrupts_the_turn(lab) -> None:
    workdir = lab.server.root / "stop"
    workdir.mkdir()
    call = {"id": "b1", "name": "bash", "arguments": {"command": "sleep 60"}}
    _script(workdir, [{"text": "Waiting a minute.", "tool_calls": [call]}, {"text": "never"}])
    cells = [
        "%load_ext clawnb",
        "%%claw --model scripted:script.jsonl --approve allow\nwait",
        "print('must not run')",
    ]
    lab.open(lab.server.write_notebook("stop.ipynb", cells, directory=workdir))
    lab.run_all()
    lab.wait_output(1, r"running bash \d+s")  # the status line
    lab.shot("running")
    lab.cell(1).get_by_role("button", name="■ Stop", exact=True).click()
    lab.wait_output(1, r"interrupted", timeout_ms=10_000)
    lab.wait_prompt_done(1, timeout_ms=10_000)
    assert lab.output_text(2) == ""  # like the kernel's interrupt: Run All stops here
    lab.shot("stopped")
