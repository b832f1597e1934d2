"""ShellHook runs real commands: blocking with stderr, timeouts that kill the process group,
the event as JSON on stdin and in env vars, argument changes; hooks from config."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from clawnb.hooks import (
    HookAction,
    HookEvent,
    HookRegistry,
    LoggingHook,
    ShellHook,
    hooks_from_config,
)
from tests.conftest import running, wait_until

PRE = HookEvent.PreToolCall("bash", {"command": "ls -la"})
POST = HookEvent.PostToolCall("write", {"path": "a.txt"}, "wrote a.txt")


async def test_nonzero_exit_blocks_with_stderr():
    action = await ShellHook("echo 'not on my watch' >&2; exit 3").on_event(PRE)
    assert action == HookAction.Block("hook failed: not on my watch")


async def test_nonzero_exit_without_stderr_names_the_status():
    assert await ShellHook("exit 7").on_event(PRE) == HookAction.Block("hook failed: exit status 7")


async def test_zero_exit_continues():
    assert await ShellHook("true").on_event(PRE) == HookAction.Continue()
    assert await ShellHook("echo just output").on_event(PRE) == HookAction.Continue()


async def test_timeout_blocks_and_kills_the_process_group(tmp_path: Path):
    pidfile = tmp_path / "child.pid"
    hook = ShellHook(f"sleep 30 & echo $! > {pidfile}; wait", timeout_ms=300)
    start = time.monotonic()
    action = await hook.on_event(PRE)
    assert time.monotonic() - start < 5
    assert isinstance(action, HookAction.Block)
    assert action.reason.startswith("hook timed out after 300 ms")
    child = int(pidfile.read_text())
    assert wait_until(lambda: not running(child), 3), (
        "the hook's background child survived the timeout"
    )


async def test_event_arrives_as_json_on_stdin(tmp_path: Path):
    out = tmp_path / "event.json"
    await ShellHook(f"cat > {out}").on_event(PRE)
    assert json.loads(out.read_text()) == {
        "event": "pre_tool_call",
        "tool_name": "bash",
        "args": {"command": "ls -la"},
    }
    await ShellHook(f"cat > {out}").on_event(POST)
    assert json.loads(out.read_text())["result"] == "wrote a.txt"


async def test_event_arrives_in_env_vars(tmp_path: Path):
    out = tmp_path / "env.txt"
    cmd = f'printf "%s|%s|%s" "$CLAWNB_HOOK_EVENT" "$CLAWNB_TOOL_NAME" "$CLAWNB_TOOL_ARGS" > {out}'
    await ShellHook(cmd, env={"EXTRA": "1"}).on_event(POST)
    event, name, args = out.read_text().split("|", 2)
    assert (event, name, json.loads(args)) == ("post_tool_call", "write", {"path": "a.txt"})


async def test_the_agents_api_keys_do_not_reach_hooks(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-secret-value")
    monkeypatch.setenv("CLAWNB_API_KEY", "sk-clawnb-secret")
    out = tmp_path / "env.txt"
    await ShellHook(f"env > {out}", env={"MY_HOOK_TOKEN": "given"}).on_event(PRE)
    seen = out.read_text()
    assert "secret" not in seen
    assert "MY_HOOK_TOKEN=given" in seen  # what the hook is given explicitly still arrives


async def test_stdout_json_modifies_args():
    hook = ShellHook("""echo '{"args": {"command": "ls"}}'""")
    assert await hook.on_event(PRE) == HookAction.ModifyArgs({"command": "ls"})
    # after the tool ran, changing its arguments means nothing
    assert await hook.on_event(POST) == HookAction.Continue()


async def test_hook_reads_the_event_and_rewrites_it():
    # A real policy in a few lines of Python: force `--dry-run` onto every command.
    script = (
        "python3 -c 'import json,sys; e=json.load(sys.stdin); "
        'a=e["args"]; a["command"]+=" --dry-run"; print(json.dumps({"args": a}))\''
    )
    action = await ShellHook(script).on_event(PRE)
    assert action == HookAction.ModifyArgs({"command": "ls -la --dry-run"})


async def test_stdout_json_block_and_bad_args():
    assert await ShellHook("""echo '{"block": "nope"}'""").on_event(PRE) == HookAction.Block("nope")
    action = await ShellHook("""echo '{"args": [1]}'""").on_event(PRE)
    assert isinstance(action, HookAction.Block) and "JSON object" in action.reason
    assert await ShellHook("echo '{not json'").on_event(PRE) == HookAction.Continue()


async def test_tool_pattern_and_stage_filters(tmp_path: Path):
    marker = tmp_path / "ran"
    hook = ShellHook(f"touch {marker}; exit 1").for_tool("write*")
    assert await hook.on_event(PRE) == HookAction.Continue()  # bash: not matched, not run
    assert not marker.exists()
    assert isinstance(await hook.on_event(POST), HookAction.Block)
    assert marker.exists()
    pre_only = ShellHook("exit 1", stage="pre")
    assert await pre_only.on_event(POST) == HookAction.Continue()
    assert isinstance(await pre_only.on_event(PRE), HookAction.Block)


async def test_agent_events_are_ignored(tmp_path: Path):
    hook = ShellHook("exit 1")
    assert await hook.on_event(HookEvent.AgentStart("hi")) == HookAction.Continue()
    assert await hook.on_event(HookEvent.AgentEnd("bye")) == HookAction.Continue()


async def test_spawn_error_blocks(tmp_path: Path):
    action = await ShellHook("true", cwd=tmp_path / "missing").on_event(PRE)
    assert isinstance(action, HookAction.Block) and action.reason.startswith("hook error:")


def test_constructor_validation():
    with pytest.raises(ValueError):
        ShellHook("true", stage="during")
    with pytest.raises(ValueError):
        ShellHook("true", timeout_ms=0)


async def test_hooks_from_config_dicts_and_objects(tmp_path: Path):
    config = {
        "hooks": {
            "pre_tool": [
                {"command": "echo 'bash is off' >&2; exit 1", "tool_pattern": "bash"},
            ],
            "post_tool": [{"command": f"cat > {tmp_path / 'post.json'}", "timeout_ms": 2000}],
        }
    }
    registry = hooks_from_config(config)
    assert len(registry) == 2
    assert await registry.dispatch(PRE) == HookAction.Block("hook failed: bash is off")
    assert await registry.dispatch(POST) == HookAction.Continue()
    assert json.loads((tmp_path / "post.json").read_text())["tool_name"] == "write"

    section = SimpleNamespace(
        pre_tool=[SimpleNamespace(command="true", tool_pattern=None, timeout_ms=5000)],
        post_tool=[],
    )
    registry = hooks_from_config(SimpleNamespace(hooks=section))
    assert [h.stage for h in registry.hooks] == ["pre"]
    assert registry.hooks[0].timeout_ms == 5000
    assert hooks_from_config({"pre_tool": [{"command": "true"}]}).hooks[0].timeout_ms == 5000
    assert hooks_from_config({}).is_empty()


@pytest.mark.parametrize(
    "entry",
    [
        {"command": ""},
        {"tool_pattern": "x"},
        {"command": "true", "timeout_ms": -1},
        {"command": "true", "timeout_ms": "5s"},
    ],
)
def test_hooks_from_config_rejects_bad_entries(entry):
    with pytest.raises(ValueError, match=r"hooks\.pre_tool\[0\]"):
        hooks_from_config({"hooks": {"pre_tool": [entry]}})


async def test_registry_last_modify_wins_and_broken_hooks_block():
    class Modify:
        def __init__(self, args):
            self.args = args

        def on_event(self, event):  # a plain function works too
            return HookAction.ModifyArgs(self.args)

    class Broken:
        async def on_event(self, event):
            raise RuntimeError("oops")

    log = LoggingHook()
    registry = HookRegistry([Modify({"a": 1}), log, Modify({"b": 2})])
    assert await registry.dispatch(PRE) == HookAction.ModifyArgs({"b": 2})
    assert log.messages() == ["pre:bash"]
    action = await HookRegistry([Broken(), log]).dispatch(PRE)
    assert action == HookAction.Block("hook error: RuntimeError: oops")
    assert log.messages() == ["pre:bash"]


async def test_big_arguments_still_reach_the_hook(tmp_path: Path):
    out = tmp_path / "seen.txt"
    event = HookEvent.PreToolCall("write", {"path": "big.txt", "content": "x" * 300_000})
    cmd = (
        f'printf "%s|%s|" "${{CLAWNB_TOOL_ARGS_TRUNCATED:-0}}" "${{#CLAWNB_TOOL_ARGS}}" > {out}; '
        f"wc -c >> {out}"
    )
    assert await ShellHook(cmd).on_event(event) == HookAction.Continue()
    truncated, env_len, stdin_len = out.read_text().split("|")
    assert (truncated, env_len) == ("1", "0")
    assert int(stdin_len) > 300_000
