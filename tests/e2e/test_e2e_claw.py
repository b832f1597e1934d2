"""``%%claw`` in a real JupyterLab + Chromium: streaming, the approval card, Approve/Deny/Always.

Each notebook is written by the test: ``%load_ext clawnb``, a ``%%claw`` cell, and a plain
Python cell after it. With the offline scripted model (text, then a ``write`` call), "Run All"
must show the text while the cell runs, park on a tool card that says "waiting for approval"
with Approve / Deny / Always allow write … buttons, keep the next cell queued, and after a click
finish the turn and let "Run All" go on. A slow OpenAI-compatible server on 127.0.0.1 proves
the answer streams in word by word. Screenshots of every step land in
``test-artifacts/e2e/``. The contract is ``docs/notebook.md``.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

STREAMED = "Streaming a short note before I write the file for you."
FILE_CONTENT = "written by the clawnb e2e test\n"


def _write_call(call_id: str, path: str) -> dict:
    return {"id": call_id, "name": "write", "arguments": {"path": path, "content": FILE_CONTENT}}


def _script(target: str, final_text: str) -> str:
    """Two scripted turns: text plus a ``write`` call, then a closing answer."""
    turns = [
        {"text": STREAMED, "tool_calls": [_write_call("call_write_1", target)]},
        {"text": final_text},
    ]
    return "".join(json.dumps(turn) + "\n" for turn in turns)


def _claw_notebook(lab, name: str, target: str, final_text: str) -> tuple[Path, Path]:
    """A notebook in its own directory (the kernel's cwd); returns (notebook, target file)."""
    workdir = lab.server.root / name
    workdir.mkdir()
    (workdir / "script.jsonl").write_text(_script(target, final_text))
    cells = [
        "%load_ext clawnb",
        "%%claw --model scripted:script.jsonl\nPlease write the note file.",
        f"import pathlib\nprint('after claw cell, file exists:', pathlib.Path({target!r}).exists())",
    ]
    notebook = lab.server.write_notebook(f"{name}.ipynb", cells, directory=workdir)
    return notebook, workdir / target


def _run_until_approval_card(lab, target_file: Path):
    """Run All, check the streamed text and the waiting card; returns the claw cell locator."""
    lab.run_all()
    claw = lab.cell(1)
    # The streamed text is on screen while the cell is still running: it was streamed, not
    # printed at the end.
    lab.wait_output(1, STREAMED)
    assert lab.prompt(1) == "[*]:"
    lab.shot("text-streamed")

    lab.wait_output(1, r"waiting for approval")
    for name in ("Approve", "Deny"):
        claw.get_by_role("button", name=name, exact=True).wait_for()
    # the scoped "always": "Always allow write NAME" (the file, or its top folder)
    claw.get_by_role("button", name="Always allow write", exact=False).wait_for()
    # Parked on the approval: the tool has not run and "Run All" has not moved on.
    lab.page.wait_for_timeout(300)
    assert lab.prompt(1) == "[*]:"
    assert not target_file.exists()
    assert "after claw cell" not in lab.output_text(2)
    lab.shot("waiting-for-approval")
    return claw


def test_claw_cell_streams_waits_for_approval_and_approve_writes_file(lab) -> None:
    notebook, target = _claw_notebook(
        lab, "approve", "approved-note.txt", "Done: the note is written."
    )
    lab.open(notebook)
    lab.shot("opened")

    claw = _run_until_approval_card(lab, target)
    claw.get_by_role("button", name="Approve", exact=True).click()

    # the finished card folds to one line: tool, file, outcome, what changed
    lab.wait_output(1, r"write approved-note\.txt done in [\d.]+s \(approved\) · new file, 1 line")
    lab.wait_output(1, r"Done: the note is written\.")
    lab.wait_output(2, r"after claw cell, file exists: True")
    lab.wait_prompt_done(1)
    lab.wait_prompt_done(2)
    lab.shot("approved-and-next-cell-ran")
    assert target.read_text() == FILE_CONTENT


def test_claw_cell_deny_leaves_file_unwritten_and_next_cell_runs(lab) -> None:
    notebook, target = _claw_notebook(
        lab, "deny", "denied-note.txt", "Understood, nothing written."
    )
    lab.open(notebook)
    lab.shot("opened")

    claw = _run_until_approval_card(lab, target)
    claw.get_by_role("button", name="Deny", exact=True).click()

    lab.wait_output(1, r"(?i)denied")
    lab.wait_output(1, r"Understood, nothing written\.")
    lab.wait_output(2, r"after claw cell, file exists: False")
    lab.wait_prompt_done(1)
    lab.wait_prompt_done(2)
    lab.shot("denied-and-next-cell-ran")
    assert not target.exists()


def test_claw_cell_always_allow_answers_the_next_write_too(lab) -> None:
    workdir = lab.server.root / "always"
    workdir.mkdir()
    turns = [
        # in one folder: "always" for the first covers the second (write notes/**)
        {"text": STREAMED, "tool_calls": [_write_call("call_1", "notes/first.txt")]},
        {"text": "And a second file.", "tool_calls": [_write_call("call_2", "notes/second.txt")]},
        {"text": "Both files are written."},
    ]
    (workdir / "script.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    cells = [
        "%load_ext clawnb",
        "%%claw --model scripted:script.jsonl\nWrite two files.",
        "import pathlib\nprint('after claw cell:', sorted(p.name for p in pathlib.Path('notes').glob('*.txt')))",
    ]
    lab.open(lab.server.write_notebook("always.ipynb", cells, directory=workdir))

    claw = _run_until_approval_card(lab, workdir / "notes" / "first.txt")
    claw.get_by_role("button", name="Always allow write notes/**", exact=True).click()

    # The second write is not asked about: the turn runs to its end with no further click.
    lab.wait_output(1, r"Both files are written\.")
    lab.wait_output(2, r"after claw cell: \['first\.txt', 'second\.txt'\]")
    lab.wait_prompt_done(1)
    lab.shot("always-allowed-both-written")
    assert (workdir / "notes" / "second.txt").read_text() == FILE_CONTENT


# -- live streaming from a slow local model server -------------------------------------------

SLOW_WORDS = "One two three four five six seven eight nine ten, all streamed slowly.".split()
SLOW_TEXT = " ".join(SLOW_WORDS)
SLOW_DELAY_S = 0.15


class _SlowChatHandler(BaseHTTPRequestHandler):
    """An OpenAI-compatible ``/chat/completions`` that streams one word every 150 ms."""

    requests: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        type(self).requests.append(body)
        if not self.path.endswith("/chat/completions") or not body.get("stream"):
            self.send_error(400, "this test server only streams chat completions")
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()  # HTTP/1.0: the body ends when the connection closes

        def send(chunk: dict | str) -> None:
            data = chunk if isinstance(chunk, str) else json.dumps(chunk)
            self.wfile.write(f"data: {data}\n\n".encode())
            self.wfile.flush()

        base = {"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "model": "slow-e2e"}
        for i, word in enumerate(SLOW_WORDS):
            delta = {"content": word if i == 0 else " " + word}
            if i == 0:
                delta["role"] = "assistant"
            send({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
            time.sleep(SLOW_DELAY_S)
        send({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        send("[DONE]")

    def log_message(self, format: str, *args: object) -> None:  # keep pytest output clean
        del format, args


def _leading_answer_words(output: str) -> int:
    """How many of the answer's words, from the start and in order, the output shows."""
    words = output.split()
    try:
        start = words.index(SLOW_WORDS[0])
    except ValueError:
        return 0
    count = 0
    for expected, got in zip(SLOW_WORDS, words[start:], strict=False):
        if expected != got:
            break
        count += 1
    return count


@pytest.fixture
def slow_model() -> Iterator[tuple[str, list[dict]]]:
    """A streaming model server on 127.0.0.1; yields (base_url, recorded request bodies)."""
    handler = type("Handler", (_SlowChatHandler,), {"requests": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler.requests
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_claw_cell_shows_text_while_it_is_still_streaming(lab, slow_model) -> None:
    base_url, requests = slow_model
    workdir = lab.server.root / "stream"
    workdir.mkdir()
    cells = [
        "%load_ext clawnb",
        f"%%claw --model slow-e2e --base-url {base_url}\nCount to ten, slowly.",
        "print('after streaming cell')",
    ]
    lab.open(lab.server.write_notebook("stream.ipynb", cells, directory=workdir))
    lab.run_all()

    # Sample the cell while the server is still sending: the visible answer must grow through
    # several partial states (a renderer that shows the text at the end makes one jump).
    seen: list[int] = []  # distinct numbers of leading answer words on screen, in order
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        running = lab.prompt(1) == "[*]:"
        output = lab.output_text(1)
        shown = _leading_answer_words(output)
        if running and 0 < shown < len(SLOW_WORDS) and (not seen or seen[-1] != shown):
            seen.append(shown)
            # the footer counts the turn that is streaming (it used to say "0 turns")
            assert "0 turns" not in output, output
            if len(seen) == 2:
                lab.shot("partially-streamed")
        if not running or shown == len(SLOW_WORDS):
            break
        lab.page.wait_for_timeout(40)
    assert len(seen) >= 3, f"text did not stream in; partial word counts seen: {seen}"
    assert seen == sorted(seen), f"streamed text did not only grow: {seen}"

    lab.wait_output(1, re.escape(SLOW_TEXT))
    lab.wait_output(2, r"after streaming cell")
    lab.wait_prompt_done(1)
    lab.shot("stream-finished")
    assert requests and requests[0]["model"] == "slow-e2e"
    assert "Count to ten, slowly." in json.dumps(requests[0]["messages"])


def test_saved_rendering_of_an_edit_keeps_the_coloured_diff(lab) -> None:
    """The static rendering that replaces the widgets (and is saved) shows an edit's diff in
    colour: JupyterLab's sanitizer keeps the inline styles, which a ```diff fence never had."""
    workdir = lab.server.root / "diff"
    workdir.mkdir()
    (workdir / "f.py").write_text("x = 1\ny = 2\n")
    edit = {"path": "f.py", "old_string": "x = 1", "new_string": "x = 10\nif x:\n    y = 3"}
    turns = [
        {
            "text": "Reading.",
            "tool_calls": [{"id": "r1", "name": "read", "arguments": {"path": "f.py"}}],
        },
        {"text": "Editing.", "tool_calls": [{"id": "e1", "name": "edit", "arguments": edit}]},
        {"text": "Changed **x**."},
    ]
    (workdir / "script.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    cells = ["%load_ext clawnb", "%%claw --model scripted:script.jsonl --approve allow\nedit f.py"]
    lab.open(lab.server.write_notebook("diff.ipynb", cells, directory=workdir))
    lab.run_all()
    lab.wait_output(1, r"Changed x\.")
    lab.wait_prompt_done(1)
    card = lab.cell(1).locator("details.clawnb-card", has_text="edit")
    card.locator("summary").first.click()  # a finished card is one line; open it
    added = lab.cell(1).locator(".clawnb-diff div", has_text="+    3 |     y = 3")
    added.wait_for()
    # the tint comes from the theme's success colour (color-mix), kept in the saved output
    colour = added.evaluate("e => getComputedStyle(e).backgroundColor")
    assert colour not in ("rgba(0, 0, 0, 0)", "transparent"), colour
    assert added.evaluate("e => getComputedStyle(e.parentElement).whiteSpace") == "pre"
    lab.cell(1).locator(".clawnb-diff").scroll_into_view_if_needed()
    lab.shot("static-diff")


def test_interrupting_a_card_that_waits_for_approval_then_the_next_claw_cell_works(lab) -> None:
    """The kernel's ■ button while a card waits: the turn ends with "interrupted", the file is
    not written, "Run All" stops there, and a later ``%%claw`` cell continues the conversation."""
    workdir = lab.server.root / "interrupt"
    workdir.mkdir()
    turns = [
        {"text": STREAMED, "tool_calls": [_write_call("call_1", "never.txt")]},
        {"text": "Still here after the interrupt."},
    ]
    (workdir / "script.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    cells = [
        "%load_ext clawnb",
        "%%claw --model scripted:script.jsonl\nWrite the file.",
        "print('this cell must not run')",
        "%%claw\nAre you still there?",
    ]
    lab.open(lab.server.write_notebook("interrupt.ipynb", cells, directory=workdir))
    _run_until_approval_card(lab, workdir / "never.txt")
    lab.page.evaluate(
        "() => { window.jupyterapp.commands.execute('notebook:interrupt-kernel'); return true; }"
    )
    lab.wait_output(1, r"interrupted")
    lab.wait_prompt_done(1)
    lab.shot("interrupted")
    assert "Approve" not in lab.output_text(1)  # the live card is gone
    assert lab.output_text(2) == ""  # Run All stopped at the interrupted cell
    assert not (workdir / "never.txt").exists()

    lab.cell(3).click()
    lab.page.evaluate(
        "() => { window.jupyterapp.commands.execute('notebook:run-cell'); return true; }"
    )
    lab.wait_output(3, r"Still here after the interrupt\.")
    lab.wait_prompt_done(3)
    lab.shot("next-claw-cell")


def test_opened_arguments_stay_open_while_the_card_ticks(lab) -> None:
    """A running card re-renders its status every second; the arguments the user opened must
    not snap shut (the status and the body are separate widgets)."""
    workdir = lab.server.root / "ticking"
    workdir.mkdir()
    command = "sleep 2.5; echo finished"
    turns = [
        {
            "text": "Running it.",
            "tool_calls": [{"id": "b1", "name": "bash", "arguments": {"command": command}}],
        },
        {"text": "Done."},
    ]
    (workdir / "script.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    cells = ["%load_ext clawnb", "%%claw --model scripted:script.jsonl --approve allow\nrun it"]
    lab.open(lab.server.write_notebook("ticking.ipynb", cells, directory=workdir))
    lab.run_all()
    lab.wait_output(1, r"running \d+s")
    claw = lab.cell(1)
    claw.locator("summary", has_text="arguments").click()
    details = claw.locator("details", has_text="arguments")
    assert details.evaluate("e => e.open")
    lab.page.wait_for_timeout(1300)  # at least one tick of "running Ns"
    assert lab.prompt(1) == "[*]:"
    assert details.evaluate("e => e.open"), "the opened arguments snapped shut on a status tick"
    lab.shot("arguments-still-open")
    lab.wait_output(1, r"Done\.")
    lab.wait_prompt_done(1)
