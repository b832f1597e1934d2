"""Headless runs through nbclient (no frontend, no stdin): approvals follow the policy, the
quickstart notebook works offline, and a saved notebook never contains a key or widget state."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from clawnb.notebook.headless import QUICKSTART, run_notebook, transcript
from tests.conftest import write_script

from .conftest import FAKE_KEY

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("CLAWNB_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY", "CLAWNB_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))


def _outputs(nb) -> str:
    return "\n".join(
        json.dumps(o) for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    )


def test_quickstart_runs_offline_with_allow(tmp_path: Path) -> None:
    nb = run_notebook(QUICKSTART, approval="allow", save=tmp_path / "out.ipynb")
    text = transcript(nb)
    assert "approved by policy: CLAWNB_APPROVAL=allow" in text
    assert "return sum(values) / len(values)" in text  # the cell after the agent saw the fix
    assert "5.0" in text and "1045" in text
    saved = (tmp_path / "out.ipynb").read_text()
    assert "application/vnd.jupyter.widget" not in saved  # no live widgets, no widget state


def test_quickstart_with_deny_changes_nothing() -> None:
    nb = run_notebook(QUICKSTART, approval="deny")
    text = transcript(nb)
    assert "denied by policy: CLAWNB_APPROVAL=deny" in text
    assert "return sum(values) / (len(values) - 1)" in text  # stats.py untouched
    assert "not computed (denied?)" in text
    # The recorded model cannot see the denials, so it must not claim what they prevented.
    assert "Fixed" not in text and "now stored in" not in text
    assert "Traceback" not in _outputs(nb)


def test_saved_notebook_never_contains_the_key(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("CLAWNB_API_KEY", FAKE_KEY)
    write_script(
        tmp_path / "leak.jsonl",
        [
            {
                "text": f"Your key is {FAKE_KEY}.",
                "tool_calls": [
                    {
                        "id": "e",
                        "name": "bash",
                        "arguments": {"command": "echo key=$CLAWNB_API_KEY"},
                    }
                ],
            },
            {"text": "And again: Bearer " + FAKE_KEY},
        ],
    )
    nb = new_notebook(
        cells=[
            new_code_cell("%load_ext clawnb"),
            new_code_cell("%%claw --model scripted:leak.jsonl\nshow me the key"),
            new_code_cell("%claw config"),
            new_code_cell("%claw history"),
        ],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    path = tmp_path / "leak.ipynb"
    nbformat.write(nb, path)
    run_notebook(path, approval="allow", save=path)
    saved = path.read_text()
    # BashTool hides the agent's API keys from commands (the output is "key="); whatever does
    # reach an output is redacted ("key=***").
    assert ("key=***" in saved or "key=\\n" in saved) and "CLAWNB_API_KEY = ***" in saved
    assert FAKE_KEY not in saved
    assert FAKE_KEY[-16:] not in saved


def test_quickstart_passes_nbval_lax() -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbval-lax",
            str(QUICKSTART),
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "-W",
            "ignore::DeprecationWarning",
        ],
        capture_output=True,
        text=True,
        timeout=110,
        cwd=QUICKSTART.parent,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert " passed" in out.stdout
