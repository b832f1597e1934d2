"""Which chapters pass: ``python -m clawnb.course progress [DIR] [--run] [--watch]``.

Every ``check()`` of a learner's objects notes its result in ``.clawnb-progress.json`` in the
kernel's working directory (Jupyter starts a notebook's kernel in the notebook's folder), so the
table needs no rerun: it shows each chapter notebook in DIR as passing, failing, not checked
yet, or changed since its last check. ``--run`` executes the notebooks that need it headless
(a real kernel, as Jupyter would) and ``--watch`` keeps doing that whenever a notebook is saved,
like rustlings' watch mode.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

__all__ = [
    "PROGRESS_FILE",
    "Progress",
    "chapter_of",
    "main",
    "progress",
    "record_progress",
    "table",
]

PROGRESS_FILE = ".clawnb-progress.json"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def chapter_of(notebook: Path) -> str | None:
    """``05a_streaming….ipynb`` -> ``ch05a``; ``19_extras_….ipynb`` -> ``extras``."""
    match = re.match(r"(\d\d[a-z]?)_", notebook.name)
    if match is None or notebook.name.startswith("00_"):
        return None
    return "extras" if "_extras_" in notebook.name else f"ch{match.group(1)}"


def _load(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / PROGRESS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(folder: Path, data: dict[str, Any]) -> None:
    # Write a sibling file and rename it, so a reader never sees half a file.
    target = folder / PROGRESS_FILE
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, target)


def record_progress(report: Any, folder: Path | None = None) -> None:
    """Note a check's result for ``progress``. Best effort: a read-only folder is fine."""
    folder = folder or Path.cwd()
    try:
        data = _load(folder)
        data[report.target] = {
            "ok": bool(report.ok),
            "passed": report.passed,
            "failed": report.failed,
            "at": time.time(),
        }
        _save(folder, data)
    except OSError:
        pass


def _status(entry: dict[str, Any] | None, notebook: Path) -> tuple[bool, str]:
    if not entry:
        return False, "·  not checked yet"
    when = datetime.datetime.fromtimestamp(entry.get("at", 0)).strftime("%H:%M:%S")
    if entry.get("error"):
        state = f"✗  {entry['error']}"
    elif entry.get("ok"):
        state = f"✓  ok ({entry.get('passed', 0)} passed)"
    else:
        state = f"✗  {entry.get('failed', 0)} failed"
    if entry.get("source") not in (None, _code_hash(notebook)):
        return False, f"~  changed since its check at {when} (was: {state[3:]})"
    return bool(entry.get("ok")) and not entry.get("error"), state


def _rows(folder: Path) -> tuple[list[tuple[str, str, str]], str]:
    """``(chapter, notebook, state)`` for each chapter notebook in ``folder``, and the summary."""
    data = _load(folder)
    rows, passing = [], 0
    for notebook in sorted(folder.glob("*.ipynb")):
        chapter = chapter_of(notebook)
        if chapter is None:
            continue
        ok, state = _status(data.get(chapter), notebook)
        passing += ok
        rows.append((chapter, notebook.name, state))
    return rows, f"{passing}/{len(rows)} chapters pass"


def table(folder: Path) -> str:
    """The progress table for the chapter notebooks in ``folder``."""
    rows, summary = _rows(folder)
    if not rows:
        return f"no chapter notebooks in {folder}"
    lines = [f"{chapter:7} {name:44} {state}" for chapter, name, state in rows]
    return "\n".join([*lines, "", summary])


def _code_hash(notebook: Path) -> str:
    """What a rerun depends on: the code cells' sources (not outputs, not save times, which
    Jupyter's autosave changes without any edit)."""
    try:
        cells = json.loads(notebook.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError):
        return ""
    code = ["".join(c.get("source", "")) for c in cells if c.get("cell_type") == "code"]
    return hashlib.sha256("\0".join(code).encode()).hexdigest()[:16]


class Progress:
    """The progress table as a notebook output: text in a terminal, an HTML table in
    JupyterLab (its CSS variables, so both themes work). ``progress()`` makes one."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def __repr__(self) -> str:
        return table(self.folder)

    def _repr_html_(self) -> str:
        import html

        cell = 'style="border:1px solid var(--jp-border-color2);padding:2px 8px;text-align:left"'
        rows, summary = _rows(self.folder)
        body = "".join(
            "<tr>" + "".join(f"<td {cell}>{html.escape(v)}</td>" for v in row) + "</tr>"
            for row in rows
        )
        return (
            '<table style="border-collapse:collapse;color:var(--jp-content-font-color1);'
            f'font-family:var(--jp-ui-font-family)">{body}</table><p>{html.escape(summary)}</p>'
        )


def progress(folder: str | Path = ".") -> Progress:
    """Which chapters pass, for a notebook cell: ``progress()`` in the exercises folder."""
    return Progress(Path(folder))


def _needs_run(folder: Path, notebook: Path) -> bool:
    """Not checked yet, checked by hand in Jupyter (no record of the source), or edited
    since the last run."""
    entry = _load(folder).get(chapter_of(notebook) or "")
    return not entry or entry.get("source") != _code_hash(notebook)


def run_notebook(notebook: Path, timeout: float = 120) -> None:
    """Execute ``notebook`` headless in its folder; its check cell records the result. A
    notebook that stops before its check is recorded as failing, with the reason."""
    from nbclient.exceptions import CellExecutionError

    from ._save import execute_notebook

    folder = notebook.parent
    chapter = chapter_of(notebook)
    started = time.time()
    source = _code_hash(notebook)
    error = ""
    try:
        execute_notebook(notebook, timeout=timeout)
    except CellExecutionError as exc:
        # The kernel colours its traceback; the table is plain text (a terminal, a file).
        text = _ANSI.sub("", str(exc)).strip()
        error = text.splitlines()[-1] if text else "a cell failed"
    except Exception as exc:  # a kernel that died, a timeout: say so in the table
        error = f"{type(exc).__name__}: {exc}"
    data = _load(folder)
    entry = data.get(chapter or "")
    if chapter and (not entry or entry.get("at", 0) < started):
        # The check cell never ran: the notebook stopped before it.
        data[chapter] = {"ok": False, "failed": 0, "at": time.time(), "error": error[:120]}
    elif chapter and entry:
        pass
    else:
        return
    data[chapter]["source"] = source  # what was run, so an edit shows and triggers a rerun
    _save(folder, data)


def main(folder: Path, run: bool, watch: bool, out: Any = sys.stdout) -> int:
    if not folder.is_dir():
        print(f"no such folder: {folder}", file=out)
        return 2
    notebooks = [p for p in sorted(folder.glob("*.ipynb")) if chapter_of(p)]
    if run or watch:
        for notebook in notebooks:
            if _needs_run(folder, notebook):
                print(f"checking {notebook.name} …", file=out, flush=True)
                run_notebook(notebook)
    print(table(folder), file=out, flush=True)
    if not watch:
        return 0
    print("\nwatching for saved notebooks (Ctrl-C to stop)", file=out, flush=True)
    try:
        while True:
            time.sleep(1)  # polling: no extra dependency, and a save is a human-speed event
            for notebook in [p for p in sorted(folder.glob("*.ipynb")) if chapter_of(p)]:
                if _needs_run(folder, notebook):
                    print(f"\n{notebook.name} changed: checking …", file=out, flush=True)
                    run_notebook(notebook)
                    print(table(folder), file=out, flush=True)
    except KeyboardInterrupt:
        return 0
