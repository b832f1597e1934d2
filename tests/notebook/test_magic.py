"""%%claw through a real IPython shell: transformer, options, persistence, line magics."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from clawnb.notebook.magic import ClawTransformer, parse_options
from clawnb.types import Message
from tests.conftest import async_wait_until, pids_with, write_script

WRITE_THEN_DONE = [
    {
        "text": "Writing it.",
        "tool_calls": [
            {"id": "c1", "name": "write", "arguments": {"path": "hello.txt", "content": "hi\n"}}
        ],
        "usage": {"input_tokens": 10, "output_tokens": 4},
    },
    {"text": "All **done**.", "usage": {"input_tokens": 12, "output_tokens": 3}},
]


def assert_history_valid(messages: list[Message]) -> None:
    for i, msg in enumerate(messages):
        if isinstance(msg, Message.Assistant) and msg.turn.tool_calls:
            ids = [c.id for c in msg.turn.tool_calls]
            following = messages[i + 1 : i + 1 + len(ids)]
            assert [m.id for m in following if isinstance(m, Message.ToolResult)] == ids


def test_load_ext_is_cheap() -> None:
    code = (
        "import sys\n"
        "from IPython.testing.globalipapp import get_ipython\n"
        "ip = get_ipython()\n"
        "ip.run_line_magic('load_ext', 'clawnb')\n"
        "heavy = [m for m in ('ipywidgets', 'httpx', 'pydantic', 'clawnb.providers.openai') "
        "if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_transformer_rewrites_claw_cells_into_top_level_await(shell) -> None:
    transformed = shell.transform_cell("%%claw --new\nhello {x}\n")
    assert transformed.startswith("await __import__('clawnb.notebook.magic'")
    assert "'--new'" in transformed and "'hello {x}\\n'" in transformed
    # other cells are untouched; %%clawfoo is not %%claw
    assert shell.transform_cell("x = 1\n") == "x = 1\n"
    assert "run_cell_magic('clawfoo'" in shell.transform_cell("%%clawfoo\nbody\n")


def test_transformer_steps_aside_without_autoawait(shell) -> None:
    transformer = ClawTransformer(shell)
    shell.autoawait = False
    try:
        assert transformer(["%%claw\n", "hi\n"]) == ["%%claw\n", "hi\n"]
    finally:
        shell.autoawait = True
    assert transformer(["%%claw\n", "hi\n"])[0].startswith("await")


def test_claw_cell_runs_tools_with_allow_policy(shell, tmp_path: Path, capsys, monkeypatch) -> None:
    write_script(tmp_path / "s.jsonl", WRITE_THEN_DONE)
    monkeypatch.setenv("CLAWNB_APPROVAL", "allow")
    result = shell.run_cell("%%claw --model scripted:s.jsonl\nwrite hello.txt")
    assert result.success and result.result is None
    out = capsys.readouterr().out
    assert (tmp_path / "hello.txt").read_text() == "hi\n"
    assert "Writing it." in out and "All **done**." in out
    assert "approved by policy: CLAWNB_APPROVAL=allow" in out
    assert "2 turns · 22 in / 7 out tokens" in out
    messages = shell._clawnb_session.messages
    assert_history_valid(messages)
    assert isinstance(messages[-1], Message.Assistant)


def test_deny_policy_is_the_default_without_a_frontend(shell, tmp_path: Path, capsys) -> None:
    write_script(tmp_path / "s.jsonl", WRITE_THEN_DONE)
    shell.run_cell("%%claw --model scripted:s.jsonl\nwrite hello.txt")
    out = capsys.readouterr().out
    assert not (tmp_path / "hello.txt").exists()
    assert "denied by policy" in out
    messages = shell._clawnb_session.messages
    assert_history_valid(messages)
    result = next(m for m in messages if isinstance(m, Message.ToolResult))
    assert "denied" in result.content


def test_approve_option_overrides_the_environment(shell, tmp_path: Path, monkeypatch) -> None:
    write_script(tmp_path / "s.jsonl", WRITE_THEN_DONE)
    monkeypatch.setenv("CLAWNB_APPROVAL", "deny")
    shell.run_cell("%%claw --model scripted:s.jsonl --approve allow\nwrite hello.txt")
    assert (tmp_path / "hello.txt").exists()


def test_conversation_persists_and_new_resets(shell, tmp_path: Path, capsys) -> None:
    write_script(tmp_path / "s.jsonl", [{"text": "one"}, {"text": "two"}, {"text": "three"}])
    shell.run_cell("%%claw --model scripted:s.jsonl\nfirst")
    shell.run_cell("%%claw\nsecond")
    users = [m.content for m in shell._clawnb_session.messages if isinstance(m, Message.User)]
    assert users == ["first", "second"]
    capsys.readouterr()
    shell.run_cell("%%claw --new\nthird")
    users = [m.content for m in shell._clawnb_session.messages if isinstance(m, Message.User)]
    assert users == ["third"]
    # a fresh conversation starts the script again (so "Run All" twice works offline)
    assert shell._clawnb_session.messages[-1].turn.text == "one"


def test_interpolation_and_references(shell, tmp_path: Path) -> None:
    write_script(tmp_path / "s.jsonl", [{"text": "ok"}])
    shell.run_cell("x = 41", store_history=True)
    shell.run_cell("1/0", store_history=True)
    n_err = shell.execution_count - 1
    shell.run_cell(
        f"%%claw --model scripted:s.jsonl\nx is {{x}}, {{{{lit}}}}, {{nope}}; see Err[{n_err}]"
    )
    prompt = next(m.content for m in shell._clawnb_session.messages if isinstance(m, Message.User))
    assert prompt.startswith("x is 41, {lit}, {nope}; see Err[")
    assert "ZeroDivisionError" in prompt
    # the user's own frame, not IPython's machinery (run_code in interactiveshell.py)
    assert "1/0" in prompt and "interactiveshell.py" not in prompt


def test_help_and_bad_options(shell, capsys) -> None:
    shell.run_cell("%%claw --help\nignored")
    out = capsys.readouterr().out
    assert "--approve" in out and "--mode" in out and "%%claw" in out
    result = shell.run_cell("%%claw --mode nonsense\nhi")
    assert not result.success
    assert parse_options("--max-turns 3 --quiet").max_turns == 3


def test_cwd_must_be_an_existing_directory(shell, tmp_path: Path, capsys) -> None:
    from clawnb.notebook.runner import get_session

    write_script(tmp_path / "s.jsonl", [{"text": "hi"}])
    (tmp_path / "sub").mkdir()
    result = shell.run_cell("%%claw --cwd no/such/dir --model scripted:s.jsonl\nhi")
    assert not result.success and "no such directory" in str(result.error_in_exec)
    assert get_session(shell).cwd == str(tmp_path)  # nothing was changed
    assert parse_options("--cwd sub").cwd == "sub"


def test_empty_body_says_so(shell, capsys) -> None:
    shell.run_cell("%%claw\n")
    assert "prompt; it is empty" in capsys.readouterr().out


def test_line_magics(shell, tmp_path: Path, capsys, monkeypatch) -> None:
    write_script(tmp_path / "s.jsonl", WRITE_THEN_DONE)
    monkeypatch.setenv("CLAWNB_APPROVAL", "allow")
    shell.run_cell("%%claw --model scripted:s.jsonl\nwrite hello.txt")
    capsys.readouterr()
    shell.run_line_magic("claw", "status")
    assert "model: scripted:s.jsonl" in capsys.readouterr().out
    shell.run_line_magic("claw", "history")
    assert re.search(r"^In \[\d+\] you: write hello\.txt$", capsys.readouterr().out, re.M)
    shell.run_line_magic("claw", "cost")
    assert "22 in + 7 out" in capsys.readouterr().out
    shell.run_line_magic("claw", "mode accept_edits")
    assert shell._clawnb_session.mode == "accept_edits"
    shell.run_line_magic("claw", "undo")
    assert "removed" in capsys.readouterr().out
    assert not (tmp_path / "hello.txt").exists()
    shell.run_line_magic("claw", "undo")
    assert "nothing to undo" in capsys.readouterr().out
    shell.run_line_magic("claw", "reset")
    assert shell._clawnb_session.messages == []
    # the registry's wording, as in the chat (with the notebook's prefix)
    with pytest.raises(Exception, match="unknown command %claw frobnicate") as unknown:
        shell.run_line_magic("claw", "frobnicate")
    assert "%claw help lists them" in str(unknown.value)
    with pytest.raises(Exception, match="did you mean %claw status"):
        shell.run_line_magic("claw", "statsu")


def test_undo_restores_edited_content(shell, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    write_script(
        tmp_path / "s.jsonl",
        [
            {"tool_calls": [{"id": "r", "name": "read", "arguments": {"path": "a.txt"}}]},
            {
                "tool_calls": [
                    {
                        "id": "e",
                        "name": "edit",
                        "arguments": {"path": "a.txt", "old_string": "old", "new_string": "new"},
                    }
                ]
            },
            {"text": "edited"},
        ],
    )
    monkeypatch.setenv("CLAWNB_APPROVAL", "allow")
    shell.run_cell("%%claw --model scripted:s.jsonl\nedit a.txt")
    assert (tmp_path / "a.txt").read_text() == "new\n"
    shell.run_line_magic("claw", "undo")
    assert (tmp_path / "a.txt").read_text() == "old\n"


def test_record_then_replay(shell, tmp_path: Path, capsys) -> None:
    write_script(tmp_path / "s.jsonl", [{"text": "recorded answer"}])
    shell.run_cell("%%claw --model scripted:s.jsonl --record rec.jsonl\nhi")
    assert "recorded answer" in (tmp_path / "rec.jsonl").read_text()
    capsys.readouterr()
    shell.run_cell("%%claw --new --replay rec.jsonl\nhi")
    assert "recorded answer" in capsys.readouterr().out


def test_model_error_is_a_clear_line_and_history_stays_valid(shell, tmp_path: Path, capsys) -> None:
    write_script(tmp_path / "s.jsonl", [{"text": "only one"}])
    shell.run_cell("%%claw --model scripted:s.jsonl\nfirst")
    result = shell.run_cell("%%claw\nsecond")
    # the cell fails (so "Run All" and headless runs stop) with the reason in its output
    assert not result.success and type(result.error_in_exec).__name__ == "ClawFailed"
    assert "no more turns" in capsys.readouterr().out
    assert_history_valid(shell._clawnb_session.messages)
    # and the next cell still works
    write_script(tmp_path / "t.jsonl", [{"text": "fresh start"}])
    assert shell.run_cell("%%claw --model scripted:t.jsonl --new\nthird").success


def test_inspect_variable_and_run_python_tools(shell, tmp_path: Path, monkeypatch) -> None:
    shell.user_ns["data"] = [1, 2, 3]
    write_script(
        tmp_path / "s.jsonl",
        [
            {
                "tool_calls": [
                    {"id": "i", "name": "inspect_variable", "arguments": {"name": "data"}},
                    {
                        "id": "p",
                        "name": "run_python",
                        "arguments": {"code": "total = sum(data)\nprint('sum', total)\ntotal * 2"},
                    },
                ]
            },
            {"text": "done"},
        ],
    )
    monkeypatch.setenv("CLAWNB_APPROVAL", "allow")
    shell.run_cell("%%claw --model scripted:s.jsonl --mode bypass\nlook at data")
    assert shell.user_ns["total"] == 6
    results = {
        m.id: m.content for m in shell._clawnb_session.messages if isinstance(m, Message.ToolResult)
    }
    assert "type: list" in results["i"] and "len: 3" in results["i"]
    assert results["p"] == "sum 6\n12"


def test_run_python_asks_even_in_bypass_mode(shell, tmp_path: Path) -> None:
    write_script(
        tmp_path / "s.jsonl",
        [
            {"tool_calls": [{"id": "p", "name": "run_python", "arguments": {"code": "boom = 1"}}]},
            {"text": "done"},
        ],
    )
    shell.run_cell("%%claw --model scripted:s.jsonl --mode bypass\nset boom")  # policy: deny
    assert "boom" not in shell.user_ns


PLAN_SCRIPT = [
    {
        "text": "Looking.",
        "tool_calls": [{"id": "p1", "name": "read", "arguments": {"path": "a.txt"}}],
    },
    {
        "text": "Plan: 1. write b.txt",
        "tool_calls": [{"id": "p2", "name": "exit_plan", "arguments": {}}],
    },
    {"tool_calls": [{"id": "x1", "name": "write", "arguments": {"path": "b.txt", "content": "B"}}]},
    {"text": "Executed."},
]


def test_plan_mode_plans_then_executes_with_allow(
    shell, tmp_path: Path, capsys, monkeypatch
) -> None:
    (tmp_path / "a.txt").write_text("A")
    write_script(tmp_path / "s.jsonl", PLAN_SCRIPT)
    monkeypatch.setenv("CLAWNB_APPROVAL", "allow")
    shell.run_cell("%%claw --model scripted:s.jsonl --mode plan\nplan then do")
    out = capsys.readouterr().out
    assert "Plan: 1. write b.txt" in out and "plan executed" in out and "Executed." in out
    assert (tmp_path / "b.txt").read_text() == "B"
    assert_history_valid(shell._clawnb_session.messages)


def test_plan_mode_stops_after_the_plan_with_deny(shell, tmp_path: Path, capsys) -> None:
    (tmp_path / "a.txt").write_text("A")
    write_script(tmp_path / "s.jsonl", PLAN_SCRIPT)
    shell.run_cell("%%claw --model scripted:s.jsonl --mode plan\nplan only")
    out = capsys.readouterr().out
    assert "Plan: 1. write b.txt" in out and "plan not executed" in out
    assert not (tmp_path / "b.txt").exists()


def test_plain_cell_magic_fallback_without_autoawait(shell, tmp_path: Path, capsys) -> None:
    write_script(tmp_path / "s.jsonl", [{"text": "via asyncio.run"}])
    shell.autoawait = False
    try:
        assert shell.run_cell("%%claw --model scripted:s.jsonl\nhi").success
    finally:
        shell.autoawait = True
    assert "via asyncio.run" in capsys.readouterr().out


async def test_background_task_with_stop_button_inside_a_running_loop(
    shell, tmp_path: Path
) -> None:
    from clawnb.notebook.magic import ClawMagics

    write_script(tmp_path / "s.jsonl", [{"text": "from the background"}])
    magics = ClawMagics(shell)
    assert magics.claw("--model scripted:s.jsonl", "hi") is None  # returns at once
    task = magics._background
    assert task is not None and not task.done()
    await task
    assert shell._clawnb_session.messages[-1].turn.text == "from the background"


def test_max_turns_stops_with_a_clear_line(shell, tmp_path: Path, capsys, monkeypatch) -> None:
    loop_turn = {"tool_calls": [{"id": "r", "name": "read", "arguments": {"path": "s.jsonl"}}]}
    write_script(tmp_path / "s.jsonl", [loop_turn] * 5)
    shell.run_cell("%%claw --model scripted:s.jsonl --max-turns 2\nloop")
    assert "exceeded max turns (2)" in capsys.readouterr().out
    assert_history_valid(shell._clawnb_session.messages)


def test_remote_model_without_a_key_says_how_to_fix_it(shell, capsys) -> None:
    result = shell.run_cell("%%claw --model some/model\nhello")
    assert not result.success
    out = capsys.readouterr().out
    assert "no API key found" in out and "--model scripted:FILE" in out
    assert shell._clawnb_session.messages == [] or all(
        not isinstance(m, Message.Assistant) for m in shell._clawnb_session.messages
    )


async def test_stop_cancels_the_background_task_cleanly(shell, tmp_path: Path) -> None:
    import asyncio

    from clawnb.notebook.magic import ClawMagics

    marker = f"30.{os.getpid()}{time.monotonic_ns() % 10**6:06d}"  # this test's sleep
    write_script(
        tmp_path / "s.jsonl",
        [
            {
                "tool_calls": [
                    {"id": "b", "name": "bash", "arguments": {"command": f"sleep {marker}"}}
                ]
            },
            {"text": "never"},
        ],
    )
    magics = ClawMagics(shell)
    magics.claw("--model scripted:s.jsonl --approve allow", "sleep")
    task = magics._background
    assert await async_wait_until(lambda: pids_with(marker)), "the bash call never started"
    task.cancel()  # what the Stop button does, while the command runs
    await asyncio.wait_for(task, 5)  # ends without raising (no KeyboardInterrupt out of a task)
    assert_history_valid(shell._clawnb_session.messages)
    assert shell._clawnb_session.messages[-1].content == "error: interrupted by user"
    assert await async_wait_until(lambda: not pids_with(marker)), "the command outlived Stop"


def test_a_key_from_dotenv_is_scrubbed_too(shell, tmp_path: Path) -> None:
    # the provider may take its key from the notebook folder's .env (not os.environ); the
    # scrubber must know that value even when it does not look like a key
    from clawnb.notebook.runner import get_session
    from clawnb.notebook.scrub import scrub

    secret = "plain-local-gateway-secret-4711"
    (tmp_path / ".env").write_text(f"OPENROUTER_API_KEY={secret}\n")
    assert scrub(f"the key is {secret}") == f"the key is {secret}"  # not key-shaped
    from clawnb.notebook.runner import CellOptions

    session = get_session(shell)
    session.base_url = "https://openrouter.ai/api/v1"
    session.agent_session(CellOptions(model="some/model"))  # the provider takes the key
    assert scrub(f"the key is {secret}") == "the key is ***"


def test_config_shows_a_dotenv_key_masked(shell, tmp_path: Path, capsys) -> None:
    secret = "sk-or-v1-" + "0123456789abcdef" * 3
    (tmp_path / ".env").write_text(f'export OPENROUTER_API_KEY="{secret}"\n')
    shell.run_line_magic("claw", "config")
    out = capsys.readouterr().out
    assert f"OPENROUTER_API_KEY = *** (set, {len(secret)} characters) in .env" in out
    assert secret[-4:] not in out
    assert secret not in out and "OPENAI_API_KEY = (not set)" in out
