"""Hints tied to the failing test, and the progress table with its watch mode."""

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from learner import BUGS, learner_objects

from clawnb.course import check, hint, progress
from clawnb.course._progress import PROGRESS_FILE, table

ROOT = Path(__file__).resolve().parents[2]


def _bug(bug_id):
    bug = next(b for b in BUGS if b.id == bug_id)
    return bug, learner_objects(bug.notebook, [(bug.old, bug.new), *bug.extra])


def test_hints_go_one_level_deeper_each_time_for_the_failing_test(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bug, objects = _bug("edit-without-uniqueness-check")
    check(bug.chapter, verbose=False, **objects)
    texts = []
    for _ in range(4):
        hint("ch09")
        texts.append(capsys.readouterr().out)
    assert texts[0].startswith("hint 1/3 for test_edit_not_unique:")
    assert "expected: an error" in texts[0] and "09_file_tools.ipynb" in texts[0]
    assert texts[1].startswith("hint 2/3 for test_edit_not_unique:")
    assert "str.count" in texts[1]
    assert texts[2].startswith("hint 3/3 for test_edit_not_unique:")
    assert "def _edit(" in texts[2] and "async def test_edit_not_unique" in texts[2]
    assert texts[3] == texts[2]


def test_the_whole_test_hint_also_shows_the_helpers_its_helpers_call(capsys, tmp_path, monkeypatch):
    from clawnb import EditTool

    class ShoutingEdit(EditTool):
        """Replaces correctly, then upper-cases the whole file."""

        async def call(self, args):
            done = await super().call(args)
            path = Path(args["path"])
            path.write_text(path.read_text().upper())
            return done

    monkeypatch.chdir(tmp_path)
    check("edit", verbose=False, EditTool=ShoutingEdit)
    for _ in range(3):
        hint("edit")
    whole = capsys.readouterr().out.split("hint 3/3 for test_edit_replaces_string:", 1)[1]
    # test_edit_replaces_string calls _edited, which calls _edit: both are shown, deepest first.
    order = [whole.index(s) for s in ("def _edit(", "def _edited(", "def test_edit_replaces_")]
    assert order == sorted(order)


def test_every_capstone_test_has_a_level_2_hint_written_for_it():
    from clawnb.course._hints import NUDGES
    from clawnb.course._suite import load_suite

    assert [n for n in load_suite("session").tests if n not in NUDGES] == []


def test_every_test_of_the_mcp_and_skills_chapters_has_a_level_2_hint_written_for_it():
    from clawnb.course._hints import NUDGES
    from clawnb.course._suite import load_suite

    for suite in ("mcp_client", "commands", "skills"):
        assert suite in NUDGES
        assert [n for n in load_suite(suite).tests if n not in NUDGES] == [], suite


def test_every_test_of_the_hooks_and_compaction_chapters_has_a_level_2_hint_written_for_it():
    from clawnb.course._hints import NUDGES
    from clawnb.course._suite import chapters, load_suite

    for chapter in ("ch23", "ch24"):
        for suite in chapters().get(chapter, []):
            assert suite in NUDGES
            assert [n for n in load_suite(suite).tests if n not in NUDGES] == [], suite


def test_a_hint_for_the_hooks_chapter_says_to_quote_the_value(capsys, tmp_path, monkeypatch):
    # The learner who pasted $FILE_PATH in as it is: hint 2 names shlex.quote.
    monkeypatch.chdir(tmp_path)
    bug, objects = _bug("hook-value-pasted-in-unquoted")
    check(bug.chapter, timeout=bug.limit, verbose=False, **objects)
    hint("ch23")
    hint("ch23")
    said = capsys.readouterr().out
    assert "hint 1/3 for test_hook_rules_a_file_name_is_one_word_to_the_shell" in said
    assert "hint 2/3" in said and "shlex.quote(value)" in said


def test_a_hint_for_the_mcp_chapter_names_what_the_client_missed(capsys, tmp_path, monkeypatch):
    # The learner whose client reads on after the server died: hint 2 says what b"" means.
    monkeypatch.chdir(tmp_path)
    bug, objects = _bug("mcp-client-reads-on-after-the-server-died")
    check(bug.chapter, timeout=bug.limit, verbose=False, **objects)
    hint("ch21")
    hint("ch21")
    said = capsys.readouterr().out
    assert "hint 1/3 for test_mcp_client_reports_a_server_that_crashes_mid_call" in said
    assert "hint 2/3" in said and "readline() returns b''" in said


def test_level_2_of_a_test_without_a_written_hint_still_speaks_of_that_test(
    capsys, tmp_path, monkeypatch
):
    from clawnb import EditTool

    class ShoutingEdit(EditTool):
        async def call(self, args):
            done = await super().call(args)
            path = Path(args["path"])
            path.write_text(path.read_text().upper())
            return done

    from clawnb.course import _hints

    monkeypatch.setattr(_hints, "_levels", {})  # as in a fresh kernel: start at level 1
    monkeypatch.chdir(tmp_path)
    check("edit", verbose=False, EditTool=ShoutingEdit)
    hint("edit")
    hint("edit")
    second = capsys.readouterr().out.split("hint 2/3 for test_edit_replaces_string:", 1)[1]
    # the test's own comparison, then its suite's advice
    assert "== 'goodbye world'" in second, second
    assert "old_string must occur exactly once" in second


def test_a_hint_before_any_check_says_to_run_it(capsys, monkeypatch):
    from clawnb.course import _suite

    monkeypatch.setattr(_suite, "_last", {})  # as in a fresh kernel
    hint("ch11")
    assert "Run check('ch11', …) first" in capsys.readouterr().out


def test_a_check_records_progress_and_the_table_shows_it(tmp_path, monkeypatch):
    for name in ("09_file_tools.ipynb", "13_permission_engine.ipynb", "01_first_llm_call.ipynb"):
        shutil.copy(ROOT / "notebooks" / "exercises" / name, tmp_path / name)
    old = time.time() - 60  # saved before the checks below
    for path in tmp_path.glob("*.ipynb"):
        import os

        os.utime(path, (old, old))
    monkeypatch.chdir(tmp_path)
    check("ch09", verbose=False, **learner_objects("09", []))
    bug, objects = _bug("permissions-last-rule-wins")
    check(bug.chapter, verbose=False, **objects)
    check("ch13", verbose=False)  # a reference run is not the learner's progress
    data = json.loads((tmp_path / PROGRESS_FILE).read_text())
    assert set(data) == {"ch09", "ch13"}
    shown = table(tmp_path)
    assert "ch01    01_first_llm_call.ipynb" in shown and "not checked yet" in shown
    assert "ch09" in shown and "✓  ok (" in shown
    assert "✗  1 failed" in shown
    # each chapter's time estimate, and what the chapters not passing yet add up to
    assert "ch09    09_file_tools.ipynb" in shown and "~35 min  ✓  ok (" in shown
    assert shown.endswith("1/3 chapters pass, about 55 min to go")
    view = progress(tmp_path)  # the same table as a notebook output
    assert repr(view) == shown
    assert "<td" in view._repr_html_() and "1/3 chapters pass" in view._repr_html_()
    assert "09_file_tools.ipynb" in view._repr_html_()


def test_a_notebook_that_stops_before_its_check_shows_its_error_as_plain_text(tmp_path):
    import nbformat

    from clawnb.course._progress import run_notebook

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("raise ValueError('the parts cell broke')")]
    path = tmp_path / "03_agentic_loop.ipynb"
    nbformat.write(notebook, path)
    run_notebook(path)
    shown = table(tmp_path)
    assert "ch03    03_agentic_loop.ipynb" in shown
    assert "✗  ValueError: the parts cell broke" in shown, repr(shown)
    assert "\x1b" not in shown, repr(shown)  # the kernel's colours are not in the table


def test_progress_watch_rechecks_a_saved_exercise_shows_the_first_failure_and_the_next_chapter(
    tmp_path,
):
    # rustlings' watch mode, on a copy of the exercises folder as it ships: nothing runs until
    # a notebook is saved; a save with a bug shows the first failure and its hint, the fixed
    # save names the next chapter, and Ctrl-C ends it cleanly.
    import signal
    import threading

    from shipped import filled_in, shipped_course

    exercises = shipped_course(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "clawnb.course", "progress", str(exercises), "--watch"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout), daemon=True)
    reader.start()

    def wait_for(text, after=0, limit=90):
        end = time.monotonic() + limit
        while time.monotonic() < end:
            for n, line in enumerate(lines[after:], start=after):
                if text in line:
                    return n + 1
            if proc.poll() is not None and not any(text in line for line in lines[after:]):
                break
            time.sleep(0.05)
        raise AssertionError(f"no {text!r} in:\n" + "".join(lines))

    def save(notebook):
        path = exercises / "01_first_llm_call.ipynb"
        path.write_text(json.dumps(notebook, indent=1) + "\n")

    try:
        at = wait_for("watching for saved notebooks")
        table_lines = "".join(lines[:at])
        assert "ch01    01_first_llm_call.ipynb" in table_lines and "~20 min" in table_lines
        assert "checking" not in table_lines, "nothing runs before a save"
        solution = json.loads((exercises.parent / "01_first_llm_call.ipynb").read_text())
        exercise = json.loads((exercises / "01_first_llm_call.ipynb").read_text())
        mine = filled_in(exercise, solution)
        bug = next(b for b in BUGS if b.id == "mock-pops-from-the-end")
        broken = json.loads(json.dumps(mine))
        for cell in broken["cells"]:
            source = "".join(cell["source"])
            if bug.old in source:
                cell["source"] = source.replace(bug.old, bug.new)

        save(broken)
        at = wait_for("01_first_llm_call.ipynb changed: checking", at)
        at = wait_for("✗  ch01: ", at)
        at = wait_for("first failure: test_mock_steps_through_sequence", at)
        at = wait_for("expected: 'First'", at)
        at = wait_for("hint: ", at)
        at = wait_for("0/25 chapters pass", at)

        save(mine)
        at = wait_for("01_first_llm_call.ipynb changed: checking", at)
        at = wait_for("✓  ch01 passes", at)
        assert "Next: 02_first_tool_call.ipynb (~20 min)" in lines[at - 1], lines[at - 1]
        at = wait_for("1/25 chapters pass", at)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        reader.join(10)  # the output's end: every line is in
        proc.stdout.close()
    out = "".join(lines)
    assert "stopped watching" in out
    assert "Traceback" not in out and "KeyboardInterrupt" not in out


def test_the_chapter_map_in_the_docs_shows_the_time_estimates_progress_uses():
    import re

    from clawnb.course._progress import ESTIMATES, chapter_of

    docs = (ROOT / "docs" / "course.md").read_text(encoding="utf-8")
    shown = {}
    for name, minutes in re.findall(r"^\| `(\d\d[a-z]?_\w+)` \|.*\| ~(\d+) min \|$", docs, re.M):
        shown[chapter_of(Path(f"{name}.ipynb"))] = int(minutes)
    assert shown == ESTIMATES
