"""The terminal chat on a real terminal (issue 26, item 8), through a pty as a person runs it:
a running indicator while a long command runs (erased after, nothing without a terminal),
answers drawn as Markdown (plain when piped, ``TERM=dumb`` or ``NO_COLOR``), and Ctrl-C at
the prompt clearing the line — no ``^Cu>`` left on the screen — with a second one quitting."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from clawnb.cli.terminal import markdown_line
from tests.conftest import ROOT, call_turn, spawn_chat, wait_until, write_script

pexpect = pytest.importorskip("pexpect")

ANSWER = "# Title\n\nSome **bold** and `code`.\n\n- one\n- two\n\n```py\nx = **1**\n```\nend"
SCRIPT = [
    {"text": "Running it.", **call_turn("b1", "bash", command="sleep 1.5; echo finished-now")},
    {"text": ANSWER},
]
SGR = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def screen(raw: str) -> list[str]:
    """What a terminal shows for ``raw``: lines as drawn, with ``\\r`` going back to the line's
    start and ``ESC [K`` erasing to its end (the only cursor moves the chat uses); other
    escape sequences (colours, bracketed paste) take no room."""
    rows: list[list[str]] = [[]]
    col = 0
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\x1b":
            m = SGR.match(raw, i)
            if m and m.group().endswith("K"):
                del rows[-1][col:]
            i = m.end() if m else i + 1
            continue
        if ch == "\r":
            col = 0
        elif ch == "\n":
            rows.append([])
            col = 0
        else:
            row = rows[-1]
            if col < len(row):
                row[col] = ch
            else:
                row.append(ch)
            col += 1
        i += 1
    return ["".join(r) for r in rows]


def _chat(tmp_path: Path, term: str, *extra: str, env: dict[str, str] | None = None):
    script = write_script(tmp_path / "s.jsonl", SCRIPT)
    child = spawn_chat(
        tmp_path,
        "--model",
        f"scripted:{script}",
        "--workspace",
        str(tmp_path / "ws"),
        "--approve",
        "allow",
        "--no-save",
        *extra,
        env={"TERM": term, **(env or {})},
    )
    child.logfile_read = io.StringIO()  # everything the terminal was sent, in order
    child.expect("you> ")
    return child


def _sent(child) -> str:
    return child.logfile_read.getvalue()


def _quit(child) -> None:
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_long_command_shows_a_running_line_that_is_erased_after(tmp_path) -> None:
    child = _chat(tmp_path, "xterm")
    child.sendline("go")
    child.expect(r"running bash · \ds  \(Ctrl-C cancels\)")  # while it runs
    child.expect("finished-now")
    child.expect("you> ")
    _quit(child)
    shown = screen(_sent(child))
    assert not any("running bash" in row for row in shown), shown  # erased, not left behind
    assert any(row.strip() == "⎿ finished-now" for row in shown), shown


def test_answers_are_drawn_as_markdown_on_a_terminal(tmp_path) -> None:
    child = _chat(tmp_path, "xterm")
    child.sendline("go")
    child.expect("end")
    child.expect("you> ")
    _quit(child)
    raw = _sent(child)
    assert "\x1b[1;4mTitle" in raw  # the heading, bold and underlined
    assert "\x1b[1mbold\x1b[22m" in raw and "\x1b[36mcode\x1b[39m" in raw
    shown = screen(raw)
    assert "Some bold and code." in shown and "• one" in shown and "• two" in shown
    assert "x = **1**" in shown  # code is shown as written: no bold inside a fence
    assert not any(row.startswith("# ") for row in shown)


@pytest.mark.parametrize(
    ("term", "extra", "env"),
    [
        ("dumb", (), {}),
        ("xterm", ("--no-color",), {}),
        ("xterm", (), {"NO_COLOR": "1"}),
    ],
    ids=["TERM=dumb", "--no-color", "NO_COLOR"],
)
def test_markdown_stays_plain_without_colours_or_a_redrawing_terminal(
    tmp_path, term, extra, env
) -> None:
    child = _chat(tmp_path, term, *extra, env=env)
    child.sendline("go")
    child.expect("end\r\n")
    child.expect("you> ")
    _quit(child)
    raw = _sent(child)
    assert "Some **bold** and `code`." in raw and "- one" in raw and "# Title" in raw
    if term == "dumb":
        assert "running bash" not in raw  # a dumb terminal cannot erase it: never drawn


def test_piped_output_has_no_running_line_and_no_styles(tmp_path) -> None:
    script = write_script(tmp_path / "s.jsonl", SCRIPT)
    done = subprocess.run(
        [sys.executable, "-m", "clawnb", "chat", "--model", f"scripted:{script}"]
        + ["--workspace", str(tmp_path / "ws"), "--approve", "allow", "--no-save"],
        input="go\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    assert "finished-now" in done.stdout and "Some **bold** and `code`." in done.stdout
    assert "running bash" not in done.stdout and "\x1b[" not in done.stdout


def _at_the_prompt(child) -> None:
    from tests.engine.test_chat_pty import _waiting_for_a_key

    assert wait_until(lambda: _waiting_for_a_key(child.pid), timeout=10)


@pytest.mark.parametrize("term", ["xterm", "dumb"])
def test_ctrl_c_at_the_prompt_clears_the_line_and_a_second_one_quits(tmp_path, term) -> None:
    child = _chat(tmp_path, term)
    child.send("half a thought")
    child.expect("half a thought")
    _at_the_prompt(child)
    child.sendintr()
    child.expect(r"line cleared: Ctrl-C again or Ctrl-D quits\)")
    child.expect("you> ")
    first = screen(_sent(child))
    # the line still works: a message after the Ctrl-C is answered
    child.sendline("go")
    child.expect("finished-now")
    child.expect("you> ")
    _at_the_prompt(child)
    child.sendintr()
    child.expect(r"line cleared")
    child.expect("you> ")
    _at_the_prompt(child)
    child.sendintr()  # the second Ctrl-C in a row
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert not any(row.startswith("^C") for row in first), first  # no "^Cu>" over "you>"
    assert first[-2:] == ["(line cleared: Ctrl-C again or Ctrl-D quits)", "you> "], first
    if term == "dumb":  # no line editor: the terminal's own ^C echo ends the typed line
        assert first[-3] == "you> half a thought^C", first


def test_a_plan_is_asked_about_without_an_exit_plan_line(tmp_path) -> None:
    script = write_script(
        tmp_path / "p.jsonl",
        [{"text": "Plan: say hello", **call_turn("p1", "exit_plan")}, {"text": "Hello."}],
    )
    child = spawn_chat(
        tmp_path, "--model", f"scripted:{script}", "--workspace", str(tmp_path / "ws"), "--no-save"
    )
    child.expect("you> ")
    child.sendline("/plan greet")
    child.expect(r"execute this plan\? ")
    plan = str(child.before)
    child.sendline("y")
    child.expect("Hello.")
    child.expect("you> ")
    _quit(child)
    assert "Plan: say hello" in plan
    assert "exit_plan" not in plan and "submitted for review" not in plan


def test_markdown_line_styles_the_common_cases() -> None:
    assert markdown_line("## Setup") == ("\x1b[1;4mSetup\x1b[0m", False)
    assert markdown_line("* item with **bold**")[0] == "• item with \x1b[1mbold\x1b[22m"
    assert markdown_line("2. second")[0] == "2. second"
    assert markdown_line("> quoted")[0] == "\x1b[2m│\x1b[22m quoted"
    assert markdown_line("see [docs](https://x.y/z)")[0] == (
        "see \x1b[4mdocs\x1b[24m \x1b[2m(https://x.y/z)\x1b[22m"
    )
    assert markdown_line("```python") == ("\x1b[2m```python\x1b[22m", True)
    assert markdown_line("a * b * c")[0] == "a * b * c"  # arithmetic is not italic
    assert markdown_line("`a**b**`")[0] == "\x1b[36ma**b**\x1b[39m"  # code is not parsed
    assert markdown_line("# not a heading", in_code=True) == (
        "\x1b[33m# not a heading\x1b[39m",
        True,
    )


def test_a_line_wider_than_the_screen_is_left_as_written(monkeypatch) -> None:
    from clawnb.cli.terminal import ERASE_LINE, MarkdownLines, cells

    monkeypatch.setenv("COLUMNS", "20")
    assert cells("字字") == 4 and cells("e\u0301") == 1
    # 13 characters, 22 columns: it wrapped, and \r would only reach its last row
    assert ERASE_LINE not in MarkdownLines().feed("**" + "字" * 9 + "**\n")
    assert ERASE_LINE in MarkdownLines().feed("**bold**\n")


def test_the_running_line_never_takes_more_than_one_row(monkeypatch) -> None:
    from clawnb.cli.terminal import StatusLine, cells

    monkeypatch.setenv("COLUMNS", "30")
    out = io.StringIO()
    status = StatusLine(out, enabled=True)
    status.show("  ⠋ running bash · 3s · " + "x" * 80)
    drawn = out.getvalue().removeprefix("\r\x1b[K")
    assert drawn.endswith("…") and cells(drawn) <= 29
    status.write("result\n")  # anything written erases it first
    assert out.getvalue().endswith("…\r\x1b[Kresult\n") and not status.shown
    status.write("half a line")
    status.show("  ⠙ running bash · 4s")  # never drawn over a line being written
    assert out.getvalue().endswith("half a line")
