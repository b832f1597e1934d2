"""Chapter 23: a hook engine for ``[[hooks.EVENT]]`` tables — events, conditions, the
command and prompt actions, ``once``, a time limit. Not a book test file: the book's hooks
are Python objects, with no configuration."""

from __future__ import annotations

import json
import time

from ._suite import Suite

suite = Suite("hook_runner", "HookRunner", chapters=["ch23"])

PUSH = {"command": "git push origin main"}


def _runner(impl, tmp, table):
    return impl.HookRunner(table, cwd=str(tmp))


def _refusal(impl, tmp, table):
    """What the ValueError building a runner from ``table`` said, or that it was accepted."""
    try:
        _runner(impl, tmp, table)
    except ValueError as exc:
        return f"ValueError: {exc}"
    return "accepted (no ValueError)"


def _read(path):
    return path.read_text() if path.exists() else ""


@suite.test
async def test_hook_runner_pre_tool_command_blocks_with_its_stderr(impl, tmp):
    # On pre_tool, exit 0 lets the call go on (fire returns None); any other exit blocks it,
    # and the reason is what the command said on stderr.
    hooks = _runner(impl, tmp, {"pre_tool": [{"command": "echo 'not today' >&2; exit 2"}]})
    assert await hooks.fire("pre_tool", tool="bash", args=PUSH) == "not today"
    ok = _runner(impl, tmp, {"pre_tool": [{"command": "exit 0"}]})
    assert await ok.fire("pre_tool", tool="bash", args=PUSH) is None


@suite.test
async def test_hook_runner_a_condition_picks_the_calls(impl, tmp):
    rule = {"if": "tool == 'bash' && args.command =~ '^git push'", "command": "exit 2"}
    hooks = _runner(impl, tmp, {"pre_tool": [rule]})
    assert await hooks.fire("pre_tool", tool="bash", args=PUSH) is not None
    assert await hooks.fire("pre_tool", tool="bash", args={"command": "git status"}) is None
    assert await hooks.fire("pre_tool", tool="read", args={"path": "a.txt"}) is None


@suite.test
async def test_hook_runner_only_the_events_own_hooks_run(impl, tmp):
    # A turn_end hook does not run on pre_tool, nor a pre_tool hook on turn_end.
    hooks = _runner(
        impl,
        tmp,
        {"turn_end": [{"command": "touch turn_end"}], "pre_tool": [{"command": "touch pre_tool"}]},
    )
    await hooks.fire("pre_tool", tool="bash", args=PUSH)
    assert sorted(p.name for p in tmp.iterdir()) == ["pre_tool"]
    await hooks.fire("turn_end", message="done")
    assert sorted(p.name for p in tmp.iterdir()) == ["pre_tool", "turn_end"]


@suite.test
async def test_hook_runner_the_first_block_wins(impl, tmp):
    # Hooks run in the order they are written; once one blocks, the later ones do not run.
    table = {
        "pre_tool": [
            {"command": "touch first"},
            {"command": "echo 'second says no' >&2; exit 2"},
            {"command": "touch third"},
        ]
    }
    hooks = _runner(impl, tmp, table)
    assert await hooks.fire("pre_tool", tool="bash", args=PUSH) == "second says no"
    assert sorted(p.name for p in tmp.iterdir()) == ["first"]


@suite.test
async def test_hook_runner_a_failing_hook_never_stops_other_events(impl, tmp):
    # Only pre_tool decides anything. A post_tool or turn_end hook that fails is noted in
    # runs, and fire still returns None: a helper never stops the agent.
    hooks = _runner(impl, tmp, {"turn_end": [{"command": "echo broken >&2; exit 1"}]})
    assert await hooks.fire("turn_end", message="the answer") is None
    assert len(hooks.runs) == 1
    assert hooks.runs[0][0] == "turn_end"
    assert "broken" in hooks.runs[0][1]


@suite.test
async def test_hook_runner_the_event_arrives_as_json_on_stdin(impl, tmp):
    hooks = _runner(impl, tmp, {"pre_tool": [{"command": "cat > event.json"}]})
    await hooks.fire("pre_tool", tool="write", args={"path": "a.py", "content": "x"})
    event = json.loads((tmp / "event.json").read_text())
    assert event["event"] == "pre_tool"
    assert event["tool_name"] == "write"
    assert event["args"] == {"path": "a.py", "content": "x"}


@suite.test
async def test_hook_runner_a_hostile_file_name_stays_a_file_name(impl, tmp):
    # The whole way: a hook command names $FILE_PATH, the model picked the path.
    hooks = _runner(impl, tmp, {"post_tool": [{"command": "echo checked $FILE_PATH > log"}]})
    await hooks.fire("post_tool", tool="write", args={"path": "x; touch pwned"})
    assert sorted(p.name for p in tmp.iterdir()) == ["log"]
    assert (tmp / "log").read_text() == "checked x; touch pwned\n"


@suite.test
async def test_hook_runner_a_prompt_leaves_a_reminder(impl, tmp):
    # action = "prompt" runs nothing: its text, variables put in as they are, is a reminder
    # for the model's next request.
    rule = {"action": "prompt", "prompt": "They said: $MESSAGE. Data is read-only."}
    hooks = _runner(impl, tmp, {"turn_start": [rule]})
    assert await hooks.fire("turn_start", message="clean 'data/'") is None
    assert hooks.reminders == ["They said: clean 'data/'. Data is read-only."]
    assert list(tmp.iterdir()) == []


@suite.test
async def test_hook_runner_once_runs_for_the_first_matching_event_only(impl, tmp):
    # once = true: the first event that *matches* runs it, and no later one. An event its
    # condition turned down does not use it up.
    rule = {"if": "tool == 'write'", "command": "echo run >> runs", "once": True}
    hooks = _runner(impl, tmp, {"post_tool": [rule]})
    await hooks.fire("post_tool", tool="read", args={"path": "a"})
    await hooks.fire("post_tool", tool="write", args={"path": "a"})
    await hooks.fire("post_tool", tool="write", args={"path": "b"})
    assert _read(tmp / "runs") == "run\n"


@suite.test
async def test_hook_runner_a_slow_pre_tool_hook_times_out_and_blocks(impl, tmp):
    # timeout (seconds) bounds a run: the command is stopped, and on pre_tool a hook that did
    # not answer in time blocks the call (a check that never finished approved nothing).
    hooks = _runner(impl, tmp, {"pre_tool": [{"command": "sleep 30", "timeout": 0.3}]})
    start = time.monotonic()
    reason = await hooks.fire("pre_tool", tool="bash", args=PUSH)
    assert time.monotonic() - start < 2.5
    assert "timed out" in (reason or "")


@suite.test
def test_hook_runner_a_bad_table_is_one_line_naming_it(impl, tmp):
    # A config error says where: the event, the hook's index, and what is wrong.
    bad_if = {"pre_tool": [{"command": "true"}, {"if": "tool = 'x'", "command": "true"}]}
    assert "hooks.pre_tool[1]" in _refusal(impl, tmp, bad_if)
    said = _refusal(impl, tmp, {"pre_tools": [{"command": "true"}]})
    assert said.startswith("ValueError")
    assert "pre_tools" in said
    assert "hooks.turn_end[0]" in _refusal(impl, tmp, {"turn_end": [{"action": "prompt"}]})
