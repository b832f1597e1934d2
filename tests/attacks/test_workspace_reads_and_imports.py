"""Issue 21 (part A): clawnb never imports from the workspace — what the corpus cannot say.

The corpus attacks ``workspace-instruction-links-out``, ``workspace-modules-shadow-dependencies``
and ``workspace-modules-written-then-imported`` drive the three front ends with a repository's
linked instruction files and its stand-ins for pydantic, pathspec, nbformat and httpx. Here:

* the control: the planted modules are live — plain Python run in that folder imports them
  (so an absent marker in the attacks means clawnb did not, not that the plant was broken);
* the sweep: every module a ``%%claw`` cell makes the kernel import for the first time (the
  extension, the engine, a real HTTP provider, glob, a notebook edit) is planted in the
  notebook's folder, and a second kernel runs the same cells: not one of them may run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .harness import Attack, AttackerServer, execute_notebook, make_world

pytestmark = pytest.mark.timeout(240)

SHADOWED = ("pydantic", "pathspec", "nbformat", "httpx", "html2text")


def _planted(name: str, marks: Path) -> str:
    """The source of a stand-in for ``name`` that records who imported it in ``marks/name``."""
    return (
        "import traceback\n"
        f"with open({str(marks / name)!r}, 'w') as f:\n"
        "    f.write(''.join(traceback.format_stack()))\n"
    )


@pytest.mark.parametrize("name", SHADOWED)
def test_the_planted_module_runs_when_python_imports_from_that_folder(name, tmp_path):
    repo, marks = tmp_path / "repo", tmp_path / "marks"
    repo.mkdir()
    marks.mkdir()
    (repo / f"{name}.py").write_text(_planted(name, marks))
    subprocess.run([sys.executable, "-c", f"import {name}"], cwd=repo, timeout=60, check=True)
    assert (marks / name).exists()


# The cells: glob (with a .gitignore, so pathspec loads), a notebook edit (nbformat validates
# it) and a read, against the attacker's real HTTP server (httpx).
TURNS = [
    {"tool_calls": [{"id": "g1", "name": "glob", "arguments": {"pattern": "**/*.txt"}}]},
    {
        "tool_calls": [
            {
                "id": "e1",
                "name": "notebook_edit",
                "arguments": {"path": "n.ipynb", "action": "insert", "source": "x = 1"},
            }
        ]
    },
    {"tool_calls": [{"id": "r1", "name": "notebook_read", "arguments": {"path": "n.ipynb"}}]},
    {"text": "done"},
]


def _run_cells(root: Path, files: dict[str, str], record: Path) -> tuple[Any, list[str]]:
    """A fresh kernel in a fresh workspace: snapshot sys.modules, ``%load_ext clawnb``, one
    ``%%claw`` cell, then write the top-level modules that were imported since to
    ``record``. Returns the world and the cells' outputs."""
    from nbformat.v4 import new_code_cell, new_notebook

    attack = Attack(
        "workspace-import-sweep",
        {"approve": "allow", "setup": {"files": files}, "turns": TURNS},
    )
    world = make_world(root, attack, AttackerServer(), AttackerServer())
    nb = new_notebook(
        cells=[
            new_code_cell("import sys as _sys\n_before = set(_sys.modules)"),
            new_code_cell("%load_ext clawnb"),
            new_code_cell(f"%%claw --new --cwd {world.ws}\nlook around"),
            new_code_cell(
                "import json as _json\n"
                "_new = sorted({m for m in set(_sys.modules) - _before if '.' not in m})\n"
                f"open({str(record)!r}, 'w').write(_json.dumps(_new))"
            ),
        ]
    )
    with world.server, world.server2:
        execute_notebook(nb, world, "allow")
    outputs = [
        str(out.get("text", "")) + str(out.get("evalue", ""))
        for cell in nb.cells
        for out in cell.get("outputs", [])
    ]
    return world, outputs


def test_nothing_a_claw_cell_imports_can_come_from_the_notebooks_folder(tmp_path):
    base = {".gitignore": "*.log\n", "notes.txt": "hello\n"}
    first = tmp_path / "first-imports.json"
    world, outputs = _run_cells(tmp_path / "clean", base, first)
    assert len(world.server.requests) == 4, outputs  # every turn ran: the sweep saw it all
    imported = [m for m in json.loads(first.read_text()) if not m.startswith("clawnb")]
    # what the cell needs is really among them (else the sweep would prove nothing)
    assert {"pathspec", "nbformat", "pydantic"} <= set(imported), imported

    marks = tmp_path / "marks"
    marks.mkdir()
    planted = {f"{name}.py": _planted(name, marks) for name in imported}
    again, outputs = _run_cells(tmp_path / "shadowed", {**base, **planted}, tmp_path / "again.json")
    ran = {p.name: p.read_text() for p in marks.iterdir()}
    assert not ran, f"workspace modules ran: {sorted(ran)}\n" + "\n".join(ran.values())
    assert len(again.server.requests) == 4, outputs
    assert not any("shadows the module" in text for text in outputs), outputs
