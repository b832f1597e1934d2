"""Which chapters pass: ``python -m clawnb.course progress [DIR] [--run] [--watch]``.

Every ``check()`` of a learner's objects notes its result in ``.clawnb-progress.json`` in the
kernel's working directory (Jupyter starts a notebook's kernel in the notebook's folder), so the
table needs no rerun: it shows each chapter notebook in DIR as passing, failing, not checked
yet, or changed since its last check. ``--run`` executes the notebooks that need it headless
(a real kernel, as Jupyter would). ``--watch`` is rustlings' watch mode: it polls the
notebooks' modification times, re-checks the one whose code changed when it is saved, and says
what came of it — the first failure with its hint, or, when it passes, the next chapter.
Each chapter has a time estimate in minutes (``ESTIMATES``), shown in the table.
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

from ._suite import AFTER_CHECK, load_suite, suite_of

__all__ = [
    "ESTIMATES",
    "PROGRESS_FILE",
    "Progress",
    "chapter_of",
    "main",
    "progress",
    "record_progress",
    "table",
]

PROGRESS_FILE = ".clawnb-progress.json"

# About how long each chapter takes a learner who reads it and writes its exercise, in
# minutes (docs/course.md's chapter map shows the same numbers).
ESTIMATES = {
    "ch01": 20,
    "ch02": 20,
    "ch03": 40,
    "ch04": 25,
    "ch05a": 40,
    "ch05b": 45,
    "ch06": 20,
    "ch07": 35,
    "ch08": 30,
    "ch09": 35,
    "ch10": 40,
    "ch11": 30,
    "ch12": 45,
    "ch13": 35,
    "ch14": 35,
    "ch15": 30,
    "ch16": 40,
    "ch17": 30,
    "ch18": 35,
    "extras": 40,
    "ch20": 60,
    "ch21": 50,
    "ch22": 45,
    "ch23": 50,
    "ch24": 50,
}
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
        first = _first_failure(report)
        if first:
            data[report.target]["first"] = first
        _save(folder, data)
    except OSError:
        pass


def _first_failure(report: Any) -> dict[str, str] | None:
    """The first failing test of ``report``: its name, what it expected and got, and the
    hint written for it (``hint()``'s second level), for ``--watch`` to show."""
    if report.stubs:
        names = ", ".join(report.stubs)
        return {
            "test": f"stub {names}",
            "detail": f"{names}: still the exercise stub",
            "hint": "Replace the body that raises NotImplementedError with your code.",
        }
    failing = [r for r in report.results if r.status in ("FAILED", "TIMED OUT")]
    if not failing:
        return None
    result = failing[0]
    detail = result.detail.split("\n\nin the test", 1)[0].strip()
    try:
        from ._hints import _nudge

        suite = suite_of(result.name)
        nudge = _nudge(result.name, suite, load_suite(suite).tests.get(result.name))
    except Exception:  # a hint is a courtesy: never lose the record over it
        nudge = ""
    return {"test": result.name, "detail": detail, "hint": nudge}


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


def _rows(folder: Path) -> tuple[list[tuple[str, str, str, str]], str]:
    """``(chapter, notebook, minutes, state)`` for each chapter notebook in ``folder``, and the
    summary."""
    data = _load(folder)
    rows, passing, left = [], 0, 0
    for notebook in sorted(folder.glob("*.ipynb")):
        chapter = chapter_of(notebook)
        if chapter is None:
            continue
        ok, state = _status(data.get(chapter), notebook)
        passing += ok
        left += 0 if ok else ESTIMATES.get(chapter, 0)
        rows.append((chapter, notebook.name, _minutes(chapter), state))
    return rows, f"{passing}/{len(rows)} chapters pass" + (
        f", about {_hours(left)} to go" if left else ""
    )


def _minutes(chapter: str) -> str:
    minutes = ESTIMATES.get(chapter)
    return f"~{minutes} min" if minutes else ""


def _hours(minutes: int) -> str:
    hours, rest = divmod(minutes, 60)
    return f"{hours} h {rest:02} min" if hours else f"{rest} min"


def table(folder: Path) -> str:
    """The progress table for the chapter notebooks in ``folder``."""
    rows, summary = _rows(folder)
    if not rows:
        return f"no chapter notebooks in {folder}"
    lines = [
        f"{chapter:7} {name:44} {minutes:>7}  {state}" for chapter, name, minutes, state in rows
    ]
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


def _notebooks(folder: Path) -> list[Path]:
    return [p for p in sorted(folder.glob("*.ipynb")) if chapter_of(p)]


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def verdict(folder: Path, notebook: Path) -> str:
    """What came of checking ``notebook``: it passes and which chapter is next, or its first
    failure with the hint for it, or why it stopped before its check."""
    data = _load(folder)
    chapter = chapter_of(notebook) or ""
    entry = data.get(chapter) or {}
    if entry.get("ok") and not entry.get("error"):
        line = f"✓  {chapter} passes ({entry.get('passed', 0)} tests)."
        following = [p for p in _notebooks(folder) if p.name > notebook.name]
        earlier = [p for p in _notebooks(folder) if p.name < notebook.name]
        for candidate in following + earlier:  # the next one not passing yet
            other = chapter_of(candidate) or ""
            if not _status(data.get(other), candidate)[0]:
                minutes = _minutes(other)
                return f"{line} Next: {candidate.name}" + (f" ({minutes})" if minutes else "")
        return f"{line} Every chapter passes: well done."
    if entry.get("error"):
        return f"✗  {chapter} stopped before its check: {entry['error']}"
    lines = [f"✗  {chapter}: {entry.get('failed', 0)} failed"]
    first = entry.get("first") or {}
    if first:
        lines.append(f"first failure: {first.get('test', '')}")
        lines += [f"  {line}" for line in str(first.get("detail", "")).splitlines()]
        if first.get("hint"):
            lines.append(f"hint: {first['hint']}")
        lines.append(f"(in the notebook, hint({chapter!r}) goes further, one level a call)")
    return "\n".join(lines)


def watch_folder(folder: Path, out: Any = sys.stdout, interval: float = 0.5) -> int:
    """Rustlings' watch mode: re-check a chapter notebook when it is saved with changed code
    and say what came of it; Ctrl-C stops. Polls modification times (no extra dependency;
    a save is a human-speed event), then compares the code cells, so an autosave that
    changed no code does not rerun anything."""
    print("\nwatching for saved notebooks (Ctrl-C to stop)", file=out, flush=True)
    seen = {path: _mtime(path) for path in _notebooks(folder)}
    try:
        while True:
            time.sleep(interval)
            for notebook in _notebooks(folder):
                stamp = _mtime(notebook)
                if seen.get(notebook) == stamp:
                    continue
                seen[notebook] = stamp
                if not _needs_run(folder, notebook):
                    continue
                print(f"\n{notebook.name} changed: checking …", file=out, flush=True)
                run_notebook(notebook)
                seen[notebook] = _mtime(notebook)  # a run does not write the notebook, but be sure
                print(verdict(folder, notebook), file=out, flush=True)
                print(_rows(folder)[1], file=out, flush=True)
    except KeyboardInterrupt:
        print("\nstopped watching", file=out, flush=True)
        return 0


def main(folder: Path, run: bool, watch: bool, out: Any = sys.stdout) -> int:
    if not folder.is_dir():
        print(f"no such folder: {folder}", file=out)
        return 2
    try:
        if run:
            for notebook in _notebooks(folder):
                if _needs_run(folder, notebook):
                    print(f"checking {notebook.name} …", file=out, flush=True)
                    run_notebook(notebook)
        print(table(folder), file=out, flush=True)
    except KeyboardInterrupt:
        print("\nstopped", file=out, flush=True)
        return 130
    return watch_folder(folder, out) if watch else 0


AFTER_CHECK.append(record_progress)  # every check of the learner's objects is noted
