"""``clawnb chat`` in a terminal, driven like a demanding user would: keys never shown,
signals and Ctrl-C ending commands and their jobs, pasted and typed-ahead input, approval
questions that cannot be spoofed, plain-words errors, and the settings and sessions the chat
reads. Each test pins a bug found this way (its comment says what used to happen)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clawnb.events import AgentEvent
from clawnb.session.assemble import build_agent
from clawnb.types import Message
from tests.conftest import (
    call_turn,
    pids_with,
    running,
    scripted_model,
    session_files,
    spawn_chat,
    wait_until,
)

KEY = "sk-test-SECRET123-review"
ROOT = Path(__file__).resolve().parents[2]


def _run_chat(tmp_path: Path, *args: str, input: str, env: dict[str, str] | None = None):
    """``python -m clawnb chat ARGS`` with ``input`` on stdin, in a clean environment (its own
    home and config directory, so nothing of the machine's configuration leaks in)."""
    return subprocess.run(
        [sys.executable, "-m", "clawnb", "chat", *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=30,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path / "home"),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "PYTHONPATH": str(ROOT),
            **(env or {}),
        },
    )


async def test_tool_results_never_carry_the_api_key(tmp_path, monkeypatch):
    # bash hides the key variables, but a command can still read the chat process's own
    # environment (/proc/$PPID/environ) or a file holding the key: the result must not show
    # it on screen, in the session file, or to the model.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("CLAWNB_API_KEY", KEY)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "leak.txt").write_text(f"CLAWNB_API_KEY={KEY}\n" + "x" * 60_000 + KEY)
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("c1", "read", path="leak.txt"),
            {"text": "done"},
        ],
    )
    session = build_agent(workspace=ws, model=model, session="new")
    shown: list[str] = []

    def on_event(event):
        if isinstance(event, AgentEvent.ToolResult):
            shown.append(event.content)

    assert await session.send("read leak.txt", on_event) == "done"
    result = next(m for m in session.history if isinstance(m, Message.ToolResult))
    assert "CLAWNB_API_KEY=***" in result.content
    assert KEY not in result.content and KEY not in "".join(shown)
    written = [p for p in (ws / ".claw").rglob("*") if p.is_file()]
    assert any("tool-results" in str(p) for p in written)  # the long result was saved in full
    written += session_files(ws)  # and the session file, in the user's data directory
    for path in written:
        assert KEY not in path.read_text(errors="replace"), path
    session.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_sigterm_or_closed_terminal_kills_the_running_command(tmp_path, sig):
    # `kill <chat>` or closing the terminal window while a bash call runs used to end the
    # chat at once and leave the command's process group (`sleep 1000 &` included) running.
    pexpect = pytest.importorskip("pexpect")
    ws = tmp_path / "ws"
    ws.mkdir()
    marker = f"clawnb-bg-{os.getpid()}-{time.monotonic_ns()}"
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn(
                "c1",
                "bash",
                command=f"bash -c 'sleep 1000; : {marker}' & echo $! > bg.pid; sleep 500",
            ),
            {"text": "never reached"},
        ],
    )
    child = spawn_chat(
        tmp_path, "--model", model, "--workspace", str(ws), "--no-color", "--approve", "allow"
    )
    try:
        child.expect("you> ")
        child.sendline("start the server")
        pid_file = ws / "bg.pid"
        assert wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), 10), (
            "the bash call never started"
        )
        assert pids_with(marker)
        child.kill(sig)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 128 + sig
        assert wait_until(lambda: not pids_with(marker)), "`sleep 1000 &` outlived the chat"
    finally:
        if child.isalive():
            child.terminate(force=True)
    from clawnb.session.log import SessionLog

    saved = SessionLog.read(session_files(ws)[0])
    assert isinstance(saved[-1], Message.ToolResult)  # the round was closed, history valid


def test_reasoning_and_answer_are_not_glued_together():
    # Without colour (piped output, --no-color) the dimmed reasoning and the answer used to
    # run into one line: "Done thinking.The answer is 42."
    import io

    from clawnb.cli.terminal import TerminalRenderer

    out = io.StringIO()
    render = TerminalRenderer(out, color=False)
    for event in (
        AgentEvent.ReasoningDelta("Let me think. "),
        AgentEvent.ReasoningDelta("Done."),
        AgentEvent.TextDelta("The answer "),
        AgentEvent.TextDelta("is 42."),
        AgentEvent.ReasoningDelta("Hmm."),
        AgentEvent.TextDelta("Sure."),
        AgentEvent.Done("Sure."),
    ):
        render(event)
    assert out.getvalue() == "Let me think. Done.\nThe answer is 42.\nHmm.\nSure.\n"


def test_ask_user_at_end_of_input_says_so(tmp_path):
    # Ctrl-D (or the end of piped input) at an ask_user question used to give the model the
    # empty result "error: ".

    ws = tmp_path / "ws"
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("c1", "ask_user", question="Which colour?", options=["red", "blue"]),
            {"text": "ok"},
        ],
    )
    proc = _run_chat(
        tmp_path,
        "--model",
        model,
        "--workspace",
        str(ws),
        "--no-color",
        input="choose\n",
    )
    assert proc.returncode == 0, proc.stderr
    assert "error: the user gave no answer (end of input)" in proc.stdout
    from clawnb.session.log import SessionLog

    saved = SessionLog.read(session_files(ws)[0])
    result = next(m for m in saved if isinstance(m, Message.ToolResult))
    assert result.content == "error: the user gave no answer (end of input)"


@pytest.mark.parametrize("rule", ["bash(rm *", "bash rm *", "bash)rm(", "", "(rm *)"])
def test_malformed_permission_rule_is_a_config_error(tmp_path, rule):
    # `deny = ["bash(rm *"]` (a missing parenthesis) used to be accepted and then match
    # nothing, so the command it was meant to deny ran.
    from clawnb.config import ConfigLoader
    from clawnb.errors import ConfigError

    for place in ("project", "user"):
        path = (
            tmp_path / "ws" / ".claw" / "config.toml"
            if place == "project"
            else tmp_path / "xdg" / "clawnb" / "config.toml"
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("[permissions]\n" + f"deny = ['bash(git push*)', {json.dumps(rule)}]\n")
        with pytest.raises(ConfigError) as info:
            ConfigLoader.load(project_dir=tmp_path / "ws", config_home=tmp_path / "xdg", env={})
        message = str(info.value)
        assert str(path) in message and "key 'permissions.deny.1'" in message
        assert f"not a valid rule {rule!r}" in message
        path.unlink()


def test_well_formed_permission_rules_are_accepted(tmp_path):
    from clawnb.config import Config

    rules = ["read", "mcp__*", "bash(git *)", "write(src/**)", "bash(echo (x))", "*"]
    config = Config.from_toml("[permissions]\n" + f"deny = {json.dumps(rules)}\n")
    assert config.permissions.deny == rules


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('permissions = "bypass"', "permissions"),
        ("[pricing]\nm = 3", "pricing.m"),
        ("mcp_servers = [3]", "mcp_servers.0"),
        ("pricing = 3", "pricing"),
    ],
)
def test_a_value_where_a_table_belongs_is_explained_in_toml_words(text, key):
    # used to say "Input should be a valid dictionary or instance of PermissionsConfig"
    from clawnb.config import Config
    from clawnb.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        Config.from_toml(text, "f.toml")
    assert str(info.value).startswith(f"f.toml: key '{key}': expected a table (got ")
    assert "instance of" not in str(info.value) and "dictionary" not in str(info.value)


HIDDEN = "echo PWNED > pwned.txt #\r\x1b[2Kls -la"  # on a raw terminal this shows as "ls -la"


def test_approval_question_shows_control_characters_instead_of_obeying_them(tmp_path):
    # A model (or a prompt injection) could hide the real command behind a carriage return
    # and an erase-line sequence: the approval question then read "allow [bash: ls -la]".
    pexpect = pytest.importorskip("pexpect")
    ws = tmp_path / "ws"
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("c1", "bash", command=HIDDEN),
            {"text": "done \x1b[2J\x07"},
        ],
    )
    child = spawn_chat(tmp_path, "--model", model, "--workspace", str(ws), "--no-color")
    child.expect("you> ")
    child.sendline("list files")
    child.expect(r"\[a\]lways: ")
    question = child.before
    assert "? allow [bash: echo PWNED > pwned.txt #\\r\\x1b[2Kls -la]" in question
    assert "\x1b" not in question and "\r\x1b" not in question
    child.sendline("n")
    child.expect("you> ")
    assert "done \\x1b[2J\\x07" in child.before and "\x1b" not in child.before
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert not (ws / "pwned.txt").exists()


def test_terminal_renderer_neutralises_control_characters():
    import io

    from clawnb.cli.terminal import TerminalRenderer, printable

    out = io.StringIO()
    render = TerminalRenderer(out, color=False)
    render(AgentEvent.ToolCall("bash", f"    [bash: {HIDDEN}]"))
    render(AgentEvent.ToolResult("c1", "bash", "line one\r\nok\x1b]0;title\x07\u202eevil"))
    render(AgentEvent.Error("bad \x1b[2K"))
    text = out.getvalue()
    assert "\x1b" not in text and "\r" not in text and "\u202e" not in text and "\x07" not in text
    assert "⏺ [bash: echo PWNED > pwned.txt #\\r\\x1b[2Kls -la]" in text
    assert "⎿ line one\n" in text and "ok\\x1b]0;title\\x07\\u202eevil" in text
    assert (
        printable("tabs\tand\nnewlines stay, ünïcödé too")
        == "tabs\tand\nnewlines stay, ünïcödé too"
    )


def test_results_of_concurrent_calls_say_which_call_they_belong_to():
    # Three concurrent reads used to print three headers and then three bare previews
    # ("⎿ alpha", "⎿ beta", ...) in completion order, with nothing tying them to a call.
    import io

    from clawnb.cli.terminal import TerminalRenderer

    out = io.StringIO()
    render = TerminalRenderer(out, color=False)
    render(AgentEvent.ToolCall("read", "    [read: a.txt]", "c1"))
    render(AgentEvent.ToolCall("read", "    [read: b.txt]", "c2"))
    render(AgentEvent.ToolResult("c2", "read", "beta"))
    render(AgentEvent.ToolResult("c1", "read", "alpha"))
    render(AgentEvent.ToolCall("bash", "    [bash: ls]", "c3"))
    render(AgentEvent.ToolResult("c3", "bash", "", "interrupted"))
    assert out.getvalue() == (
        "⏺ [read: a.txt]\n⏺ [read: b.txt]\n    ⎿ beta\n"
        "⏺ [read: a.txt]\n    ⎿ alpha\n"
        "⏺ [bash: ls]\n    ⎿ ✗ \n"
    )


def test_second_ctrl_c_during_the_kill_grace_period_still_kills_the_group(tmp_path):
    # The first Ctrl-C sends SIGTERM and waits up to a second before SIGKILL. A second
    # Ctrl-C in that second ended the turn while the (shielded) cleanup was still waiting;
    # the chat then stopped running its event loop, so SIGKILL was never sent and a command
    # that ignores SIGTERM (with its `cmd &` job) lived on.
    import asyncio

    from clawnb.executor import CallContext, current_call
    from clawnb.tools.bash import BashTool

    loop = asyncio.new_event_loop()
    try:
        tool = BashTool(tmp_path)
        # the foreground shell notes each TERM it gets and carries on (``wait`` returns
        # for a trapped signal, the loop starts the next sleep): a TERM-ignoring command
        # whose first TERM the test can see arrive
        command = (
            "(trap '' TERM; sleep 1000) & echo $! > bg.pid; "
            "trap 'echo x >> got_term' TERM; echo $$ > fg.pid; echo ready; "
            "while :; do sleep 500 & wait $!; done"
        )
        # The call's live output shows when the tool holds its process. The pid files alone
        # do not: a Ctrl-C while the spawn is still returning kills the half-started group at
        # once (no grace period to test), which a loaded machine hit now and then.
        output: list[str] = []
        token = current_call.set(CallContext("c1", lambda event: output.append(event.text)))
        try:
            task = loop.create_task(tool.call({"command": command}))
        finally:
            current_call.reset(token)
        deadline = time.monotonic() + 10
        while "ready" not in "".join(output):
            assert time.monotonic() < deadline, "the command never started"
            loop.run_until_complete(asyncio.sleep(0.05))
        pids = [int((tmp_path / n).read_text()) for n in ("bg.pid", "fg.pid")]
        task.cancel()  # the first Ctrl-C: TERM, then the grace period
        while not (tmp_path / "got_term").exists():
            assert time.monotonic() < deadline + 10, "the first Ctrl-C never sent TERM"
            loop.run_until_complete(asyncio.sleep(0.02))
        task.cancel()  # the second, inside the grace period
        with pytest.raises(asyncio.CancelledError):
            loop.run_until_complete(task)
        # the front end stops running the loop here, as the chat does between turns
        assert wait_until(lambda: not any(running(p) for p in pids), 3), (
            "the command survived a double Ctrl-C"
        )
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        if pending:
            loop.run_until_complete(asyncio.wait(pending, timeout=5))
        loop.close()


async def test_a_hook_that_leaves_a_background_job_does_not_leave_it_running(tmp_path):
    # The hook's shell exits at once, but its `sleep 1000 &` holds the output pipe, so the
    # hook times out; the kill then skipped the group because the shell had already exited.
    from clawnb.hooks import HookAction, HookEvent, ShellHook

    hook = ShellHook(f"sleep 1000 & echo $! > {tmp_path}/bg.pid", timeout_ms=500)
    action = await hook.on_event(HookEvent.PreToolCall("bash", {"command": "ls"}))
    assert isinstance(action, HookAction.Block) and "timed out" in action.reason
    background = int((tmp_path / "bg.pid").read_text())
    assert wait_until(lambda: not running(background), 3), "the hook's background job outlived it"


def test_resuming_a_crash_cut_session_warns_in_plain_words(tmp_path):
    # The recovery warning used to be printed Python-style, with clawnb's source file, line
    # number and the offending source line.
    import subprocess

    ws = tmp_path / "ws"
    model = scripted_model(tmp_path / "s.jsonl", [{"text": "hi"}])
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "PYTHONPATH": str(ROOT),
    }
    base = [sys.executable, "-m", "clawnb", "chat", "--model", model, "--workspace", str(ws)]
    first = subprocess.run(
        base, input="hello\n", capture_output=True, text=True, timeout=30, env=env
    )
    assert first.returncode == 0, first.stderr
    saved = session_files(ws)[0]
    with saved.open("a") as fh:
        fh.write('{"type":"message","message":{"role":"user","con')  # killed mid-write
    second = subprocess.run(
        [*base, "--resume"], input="/exit\n", capture_output=True, text=True, timeout=30, env=env
    )
    assert second.returncode == 0, second.stderr
    assert second.stderr.startswith(f"warning: {saved}: line ")
    assert "session.py" not in second.stderr and "SessionRecoveryWarning" not in second.stderr
    assert "(resumed " in second.stdout


def test_progress_bar_output_is_previewed_as_lines_not_escapes():
    import io

    from clawnb.cli.terminal import TerminalRenderer

    out = io.StringIO()
    TerminalRenderer(out, color=False)(
        AgentEvent.ToolResult("c1", "bash", "10%\r50%\r100%\r\ndone \\x0d stays\n")
    )
    assert out.getvalue() == "    ⎿ 10%\n      50%\n      100%\n      done \\x0d stays\n"


def test_engine_warnings_start_on_their_own_line(tmp_path):
    # Log warnings (a retry, a compaction that fell short) went to stderr through Python's
    # fallback handler, glued to the end of the answer that had just streamed.

    ws = tmp_path / "ws"
    (ws / ".claw").mkdir(parents=True)
    (ws / ".claw" / "config.toml").write_text("max_context_tokens = 50\npreserve_recent = 1\n")
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            {"text": "first answer, long enough to count"},
            {"text": "second answer, long enough to count"},
        ],
    )
    proc = _run_chat(
        tmp_path,
        "--model",
        model,
        "--workspace",
        str(ws),
        "--no-save",
        "--no-color",
        input="a long first question with words\nand a second one with more words\n",
    )
    assert proc.returncode == 0, proc.stderr
    assert "second answer, long enough to count\nwarning: history still ~" in proc.stdout
    assert "history still" not in proc.stderr


def test_typed_ahead_line_does_not_answer_the_approval_question(tmp_path):
    # A pasted second line ("a = compute()") used to sit in the terminal's buffer and answer
    # the approval question that came up next: "a" is "always".
    pexpect = pytest.importorskip("pexpect")
    ws = tmp_path / "ws"
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("c1", "write", path="typeahead.txt", content="x"),
            {"text": "finished"},
        ],
    )
    child = spawn_chat(tmp_path, "--model", model, "--workspace", str(ws), "--no-color")
    child.expect("you> ")
    child.send("write the file\na = compute()\n")  # one paste, two lines
    child.expect(r"\[a\]lways: ")
    # No waiting to see whether the pasted line answers: had it answered ("a" = always),
    # the file would be written before the "n" below is read, and the end state shows it.
    child.sendline("n")
    child.expect("finished")
    child.expect("you> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert not (ws / "typeahead.txt").exists(), "the pasted line answered the question"


async def test_sessions_list_names_a_plan_by_its_task(tmp_path, monkeypatch):
    # /sessions showed "You are in PLANNING MODE. Explore the codebase using the ava" for
    # every conversation that began with /plan.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            {"text": "Plan: add it", **call_turn("p1", "exit_plan")},
        ],
    )
    session = build_agent(workspace=tmp_path / "ws", model=model, session="new")
    await session.plan("add a README")
    [info] = session.list_sessions()
    assert info.title == "/plan add a README"
    session.close()


def test_auth_and_context_errors_say_what_to_do(tmp_path):
    # "HTTP 401: …" alone left the user guessing which variable holds the key; a context
    # overflow did not mention /compact.
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    replies = [
        (401, {"error": {"message": "No auth credentials found", "code": 401}}),
        (
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens",
                    "code": "context_length_exceeded",
                }
            },
        ),
    ]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            self.rfile.read(int(self.headers["Content-Length"]))
            # the overflow answers every later request too: the chat's recovery (a summary
            # request, then the retry) cannot make it fit
            status, body = replies.pop(0) if len(replies) > 1 else replies[0]
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        proc = _run_chat(
            tmp_path,
            "--workspace",
            str(tmp_path / "ws"),
            "--no-save",
            "--no-color",
            input="first\nsecond\n",
            env={
                "CLAWNB_MODEL": "m",
                "CLAWNB_API_KEY": KEY,
                "CLAWNB_BASE_URL": f"http://127.0.0.1:{httpd.server_address[1]}/v1",
            },
        )
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert (
        "error: HTTP 401: No auth credentials found — the server refused the API key: check "
        "CLAWNB_API_KEY or OPENAI_API_KEY\n" in out
    )
    assert (
        "maximum context length is 8192 tokens (code context_length_exceeded)\n"
        "(that message is too long for the model's context window even after compacting" in out
    )
    assert KEY not in out + proc.stderr


def test_approval_of_a_call_without_command_or_path_shows_its_arguments(tmp_path):
    # "? allow [subagent]" did not say what the sub-agent was asked to do.

    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("s1", "subagent", task="delete every test file"),
            {"text": "parent done"},
        ],
    )
    proc = _run_chat(
        tmp_path,
        "--model",
        model,
        "--workspace",
        str(tmp_path / "ws"),
        "--no-save",
        "--no-color",
        input="go\nn\n",
    )
    assert proc.returncode == 0, proc.stderr
    # what it would do first, then the question
    assert '\n    {"task": "delete every test file"}\n  ? allow [subagent] (' in proc.stdout


def test_resume_with_no_save_is_refused_not_ignored(tmp_path):
    # used to start an empty in-memory chat announcing "(resumed None: 0 messages)"

    model = scripted_model(tmp_path / "s.jsonl", [{"text": "hi"}])
    proc = _run_chat(
        tmp_path,
        "--model",
        model,
        "--workspace",
        str(tmp_path / "ws"),
        "--resume",
        "--no-save",
        input="/exit\n",
    )
    assert proc.returncode == 2
    assert "cannot be combined with --no-save" in proc.stderr
    assert "resumed None" not in proc.stdout


def test_undo_puts_back_what_the_last_turn_changed(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("original\n")
    write = {"path": "notes.txt", "content": "rewritten\n"}
    new = {"path": "new.txt", "content": "fresh\n"}
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("r", "read", path="notes.txt"),
            {
                "tool_calls": [
                    {"id": "w", "name": "write", "arguments": write},
                    {"id": "n", "name": "write", "arguments": new},
                ]
            },
            {"text": "rewrote it"},
        ],
    )
    proc = _run_chat(
        tmp_path,
        *("--model", model, "--workspace", str(ws), "--no-color", "--approve", "allow"),
        input="rewrite notes\n/undo\n/undo\n/exit\n",
    )
    assert proc.returncode == 0, proc.stderr
    assert "rewrote it" in proc.stdout
    assert (ws / "notes.txt").read_text() == "original\n"
    assert not (ws / "new.txt").exists()
    assert "undo rewrite notes" in proc.stdout and "nothing to undo" in proc.stdout


def test_a_pasted_block_of_lines_is_one_message(tmp_path):
    # Python switches readline's bracketed paste off, so each pasted line was sent as a
    # message of its own (and later lines could answer the first turn's questions).
    pexpect = pytest.importorskip("pexpect")
    ws = tmp_path / "ws"
    model = scripted_model(tmp_path / "s.jsonl", [{"text": "one answer"}, {"text": "another"}])
    child = spawn_chat(
        tmp_path,
        "--model",
        model,
        "--workspace",
        str(ws),
        "--no-color",
        env={"TERM": "xterm", "INPUTRC": "/dev/null"},
    )
    child.expect("you> ")
    child.send("\x1b[200~fix this:\nTraceback (most recent call last):\n  boom\x1b[201~")
    child.expect("boom")  # readline has taken the paste in (it echoes it) before Enter comes
    child.send("\r")
    child.expect("one answer")
    child.expect("you> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    from clawnb.session.log import SessionLog

    saved = SessionLog.read(session_files(ws)[0])
    prompts = [m.content for m in saved if isinstance(m, Message.User)]
    assert prompts == ["fix this:\nTraceback (most recent call last):\n  boom"]


def test_terminal_renderer_never_prints_a_key_cut_across_deltas(monkeypatch):
    # answer and reasoning stream in pieces; a key cut in two is held back until it is whole,
    # and the rest of the text still streams (Chinese without spaces at once)
    import io

    from clawnb.cli.terminal import TerminalRenderer

    secret = "term-stream-key-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    for cut in range(1, len(secret)):
        out = io.StringIO()
        render = TerminalRenderer(out, color=False)
        render(AgentEvent.ReasoningDelta("the key is " + secret[:cut]))
        render(AgentEvent.ReasoningDelta(secret[cut:] + " ok"))
        render(AgentEvent.TextDelta("键是" + secret[:cut]))
        assert out.getvalue() == "the key is *** ok\n键是", cut  # the start of a key waits
        render(AgentEvent.TextDelta(secret[cut:]))
        render(AgentEvent.Done("x"))
        assert out.getvalue() == "the key is *** ok\n键是***\n", cut
