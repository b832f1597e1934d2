"""The example project (examples/inventory), run as a person runs it: the notebook executed in
a real kernel from the folder it ships in, cell by cell, with the user's own data and config
folders empty — so the project's server, skill and command count only after its
``%claw trust`` cell. Each cell is checked for what it did; what the run wrote into the folder
is removed afterwards."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clawnb.notebook.headless import run_notebook

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "inventory"


def _text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", ""))
        parts.extend(str(v) for v in out.get("data", {}).values())
        parts.append(out.get("evalue", ""))
    return "\n".join(parts)


@pytest.fixture
def home(tmp_path, monkeypatch):
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    for name in ("CLAWNB_API_KEY", "OPENROUTER_API_KEY", "CLAWNB_MODEL"):
        monkeypatch.delenv(name, raising=False)
    before = set(os.listdir(EXAMPLE)) | {f".claw/{n}" for n in os.listdir(EXAMPLE / ".claw")}
    yield tmp_path
    for name in ("stock-report.md",):
        (EXAMPLE / name).unlink(missing_ok=True)
    after = set(os.listdir(EXAMPLE)) | {f".claw/{n}" for n in os.listdir(EXAMPLE / ".claw")}
    assert after <= before | {"stock-report.md"}, after - before


def test_the_inventory_notebook_runs_in_place_with_its_server_skill_and_command(home):
    cells = run_notebook(EXAMPLE / "inventory.ipynb", approval="allow").cells
    code = [c for c in cells if c.cell_type == "code"]
    trust, ask, skill, report, restock, prompt, resource, mcp, skills = (_text(c) for c in code)
    assert "trusted" in trust
    for cell in (ask, skill, restock, prompt, resource):  # every call reached the server
        assert " error" not in cell and "unknown tool" not in cell, cell
    assert "Two items are low: **figs** (0) and **pears** (3)." in ask
    assert "mcp__inventory__low_stock" in ask
    assert "the report is in" in skill
    assert "- figs: 0 in stock, reorder 20" in report
    assert "figs: order 20" in restock
    assert "20 figs and 17 pears" in prompt
    assert "well stocked" in resource
    assert "inventory: connected" in mcp and "low_stock" in mcp
    assert "stock-report" in skills and "restock" in skills
