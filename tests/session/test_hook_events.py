"""Configured hooks in a real session (scripted model, real shell commands, a real HTTP server
on 127.0.0.1, a real MCP server): each event fires once per occurrence for every tool origin,
and each action — command, prompt, http, agent — does what docs/hooks.md says."""

from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from clawnb.config import Config
from clawnb.events import Approval
from clawnb.session.assemble import UnavailableProvider, build_agent
from clawnb.types import Message
from tests.conftest import call_turn, scripted_model


def _hooks(log: Path, events: list[str], extra: str = "") -> Config:
    tables = "".join(
        f'[[hooks.{event}]]\ncommand = "echo $EVENT $TOOL_NAME >> {log}"\n' for event in events
    )
    return Config.from_toml('[permissions]\nmode = "bypass"\n' + tables + extra)


def _lines(log: Path) -> list[str]:
    return [line.strip() for line in log.read_text().splitlines()] if log.exists() else []


async def _allow(request: Any) -> Approval:
    return Approval.allow_once()


EVERY_SESSION_EVENT = [
    "session_start",
    "session_end",
    "turn_start",
    "turn_end",
    "pre_tool",
    "post_tool",
    "pre_send",
    "post_receive",
    "file_change",
    "subagent_start",
    "subagent_stop",
]


async def test_each_event_fires_once_per_occurrence_for_built_in_and_subagent_calls(tmp_path):
    log = tmp_path / "hooks.log"
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("w1", "write", path="a.txt", content="hi"),
            call_turn("s1", "subagent", task="read a.txt"),
            call_turn("r1", "read", path="a.txt"),  # the child's own call
            {"text": "the child read it"},
            {"text": "done"},
            {"text": "again"},
        ],
    )
    session = build_agent(_hooks(log, EVERY_SESSION_EVENT), workspace=tmp_path, model=model)
    assert await session.send("go") == "done"
    assert await session.send("once more") == "again"
    session.close()
    assert _lines(log) == [
        "session_start",
        "turn_start",
        "pre_send",
        "pre_tool write",
        "post_tool write",
        "file_change write",
        "pre_tool subagent",
        "subagent_start subagent",
        "pre_tool read",  # the subagent's call passes the same hooks
        "post_tool read",
        "post_tool subagent",
        "subagent_stop subagent",
        "post_receive",
        "turn_end",
        "turn_start",
        "pre_send",
        "post_receive",
        "turn_end",
        "session_end",
    ]


async def test_a_permission_request_fires_before_the_person_is_asked(tmp_path):
    log = tmp_path / "hooks.log"
    model = scripted_model(
        tmp_path / "s.jsonl", [call_turn("w1", "write", path="a.txt", content="x"), {"text": "ok"}]
    )
    config = Config.from_toml(
        f'[[hooks.permission_request]]\ncommand = "echo $TOOL_NAME $MESSAGE >> {log}"\n'
    )
    asked: list[str] = []

    async def approve(request: Any) -> Approval:
        asked.append(_lines(log)[0])  # the hook has already run when the question comes
        return Approval.allow_once()

    session = build_agent(config, workspace=tmp_path, model=model, approve=approve)
    await session.send("write it")
    assert len(asked) == 1 and asked[0].startswith("write ")
    assert (tmp_path / "a.txt").read_text() == "x"


async def test_an_error_fires_the_error_event_with_the_error(tmp_path):
    log = tmp_path / "hooks.log"
    config = Config.from_toml(
        f'[[hooks.error]]\ncommand = "echo $EVENT: $ERROR >> {log}"\n'
        f'[[hooks.turn_end]]\ncommand = "echo turn_end >> {log}"\n'
    )
    provider = UnavailableProvider("remote/model", "no API key for remote/model")
    session = build_agent(config, workspace=tmp_path, provider=provider)
    with pytest.raises(Exception, match="no API key"):
        await session.send("hello")
    (line,) = _lines(log)  # no turn_end: the turn did not end, it failed
    assert line.startswith("error: ") and "no API key for remote/model" in line


async def test_a_compaction_fires_compact_once(tmp_path):
    log = tmp_path / "hooks.log"
    model = scripted_model(tmp_path / "s.jsonl", [{"text": f"answer {i}"} for i in range(4)])
    config = Config.from_toml(f'[[hooks.compact]]\ncommand = "echo $EVENT $MESSAGE >> {log}"\n')
    session = build_agent(config, workspace=tmp_path, model=model)
    for i in range(3):
        await session.send(f"question {i}")
    assert await session.compact("the questions")
    await session.hook_engine.drain()
    assert _lines(log) == ["compact the questions"]


async def test_the_prompt_action_reaches_the_model_after_the_history_once(tmp_path):
    model = scripted_model(tmp_path / "s.jsonl", [{"text": "a"}, {"text": "b"}])
    config = Config.from_toml(
        '[[hooks.session_start]]\naction = "prompt"\n'
        'prompt = "The data sets live in data/; $MESSAGE was the first request."\nonce = true\n'
    )
    session = build_agent(config, workspace=tmp_path, model=model)
    system = session.history[0].content if session.history else session.system_prompt
    await session.send("hello")
    await session.send("again")
    users = [m for m in session.history if isinstance(m, Message.User)]
    assert "<system-reminder>" in users[0].content
    assert "The data sets live in data/; hello was the first request." in users[0].content
    assert "data sets" not in users[1].content  # once, and a session starts once anyway
    assert "data sets" not in session.history[0].content  # never in the system prompt
    assert session.history[0].content == system


async def test_once_runs_a_hook_for_the_first_match_only(tmp_path):
    log = tmp_path / "hooks.log"
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("w1", "write", path="a.txt", content="1"),
            call_turn("w2", "write", path="b.txt", content="2"),
            {"text": "ok"},
        ],
    )
    config = _hooks(
        log, [], f'[[hooks.post_tool]]\ncommand = "echo $FILE_PATH >> {log}"\nonce = true\n'
    )
    session = build_agent(config, workspace=tmp_path, model=model)
    await session.send("two writes")
    assert _lines(log) == ["a.txt"]


async def test_an_async_hook_never_delays_the_loop(tmp_path):
    log = tmp_path / "hooks.log"
    model = scripted_model(
        tmp_path / "s.jsonl", [call_turn("w1", "write", path="a.txt", content="1"), {"text": "ok"}]
    )
    config = _hooks(
        log,
        [],
        f'[[hooks.post_tool]]\ncommand = "sleep 3; echo late >> {log}"\nasync = true\n'
        "timeout = 20\n",
    )
    session = build_agent(config, workspace=tmp_path, model=model)
    started = time.monotonic()
    assert await session.send("write") == "ok"
    assert time.monotonic() - started < 2.0  # the 3 s hook is still running
    assert _lines(log) == []
    await session.hook_engine.drain()
    assert _lines(log) == ["late"]


async def test_conditions_pick_the_calls_a_hook_runs_for(tmp_path):
    log = tmp_path / "hooks.log"
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("b1", "bash", command="git --version"),
            call_turn("b2", "bash", command="echo hi"),
            call_turn("w1", "write", path="src/pkg/m.py", content="x = 1\n"),
            call_turn("w2", "write", path="notes.txt", content="n"),
            {"text": "ok"},
        ],
    )
    config = _hooks(
        log,
        [],
        "[[hooks.post_tool]]\n"
        f'command = "echo git: $TOOL_ARGS.command >> {log}"\n'
        "if = \"tool == 'bash' && args.command =~ '^git '\"\n"
        "[[hooks.post_tool]]\n"
        f'command = "echo py: $FILE_PATH >> {log}"\n'
        "if = \"args.path ~= 'src/**/*.py' || tool == 'nothing'\"\n"
        "[[hooks.post_tool]]\n"
        f'command = "echo other: $TOOL_NAME >> {log}"\n'
        "if = \"tool != 'bash'\"\n",
    )
    session = build_agent(config, workspace=tmp_path, model=model)
    await session.send("go")
    assert _lines(log) == [
        "git: git --version",
        "py: src/pkg/m.py",
        "other: write",
        "other: write",
    ]


async def test_a_pre_tool_hook_blocks_by_exit_code_2_and_by_a_json_verdict(tmp_path):
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("w1", "write", path="package-lock.json", content="{}"),
            call_turn("w2", "write", path="poetry.lock", content="x"),
            call_turn("w3", "write", path="ok.txt", content="fine"),
            {"text": "ok"},
        ],
    )
    config = _hooks(
        tmp_path / "unused.log",
        [],
        "[[hooks.pre_tool]]\n"
        "command = \"echo 'package-lock.json is made by npm install' >&2; exit 2\"\n"
        "if = \"args.path ~= 'package-lock.json'\"\n"
        "[[hooks.pre_tool]]\n"
        'command = "echo \'{\\"block\\": \\"lock files are generated\\"}\'"\n'
        "if = \"args.path ~= '*.lock'\"\n",
    )
    session = build_agent(config, workspace=tmp_path, model=model)
    await session.send("write them")
    results = {m.id: m.content for m in session.history if isinstance(m, Message.ToolResult)}
    assert "blocked by hook" in results["w1"] and "made by npm install" in results["w1"]
    assert results["w2"] == "error: blocked by hook: lock files are generated"
    assert not (tmp_path / "package-lock.json").exists() and not (tmp_path / "poetry.lock").exists()
    assert (tmp_path / "ok.txt").read_text() == "fine"


class _Collector(BaseHTTPRequestHandler):
    bodies: list[dict[str, Any]] = []
    answer = b"{}"

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        length = int(self.headers.get("content-length", "0"))
        type(self).bodies.append(json.loads(self.rfile.read(length)))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(type(self).answer)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def collector():
    class Handler(_Collector):
        bodies: list[dict[str, Any]] = []
        answer = b"{}"

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, Handler
    finally:
        server.shutdown()
        server.server_close()


async def test_the_http_action_posts_the_redacted_event_only_to_listed_hosts(
    tmp_path, collector, monkeypatch
):
    server, handler = collector
    key = "sk-or-v1-" + "k" * 40
    monkeypatch.setenv("OPENROUTER_API_KEY", key)
    url = f"http://127.0.0.1:{server.server_port}/hook"
    model = scripted_model(
        tmp_path / "s.jsonl",
        [call_turn("w1", "write", path="a.txt", content=f"key={key}"), {"text": "ok"}],
    )
    table = f'[[hooks.post_tool]]\naction = "http"\nurl = "{url}"\n'
    listed = _hooks(tmp_path / "x.log", [], '[hooks]\nhttp_hosts = ["127.0.0.1"]\n' + table)
    session = build_agent(listed, workspace=tmp_path, model=model)
    await session.send("write")
    (body,) = handler.bodies
    assert body["event"] == "post_tool_call" and body["hook"] == "post_tool"
    assert body["tool_name"] == "write" and body["file_path"] == "a.txt"
    assert key not in json.dumps(body) and "***" in body["args"]["content"]
    (hook,) = session.hook_engine.configured("post_tool")
    assert hook.runs[-1].status == "http 200"

    # not listed: nothing is sent, and /hooks says why
    handler.bodies.clear()
    model = scripted_model(
        tmp_path / "t.jsonl", [call_turn("w2", "write", path="b.txt", content="b"), {"text": "ok"}]
    )
    unlisted = _hooks(tmp_path / "x.log", [], table)
    session = build_agent(unlisted, workspace=tmp_path, model=model)
    await session.send("write")
    assert handler.bodies == []
    assert (tmp_path / "b.txt").exists()  # a post_tool hook cannot undo the call
    shown = await session.command("/hooks")
    assert "refused: 127.0.0.1 is not in the user config's [hooks] http_hosts" in shown


async def test_an_http_pre_tool_hook_can_block_with_its_answer(tmp_path, collector):
    server, handler = collector
    handler.answer = b'{"block": "the review service says no"}'
    model = scripted_model(
        tmp_path / "s.jsonl", [call_turn("w1", "write", path="a.txt", content="x"), {"text": "ok"}]
    )
    config = _hooks(
        tmp_path / "x.log",
        [],
        '[hooks]\nhttp_hosts = ["127.0.0.*"]\n'
        f'[[hooks.pre_tool]]\naction = "http"\nurl = "http://127.0.0.1:{server.server_port}/"\n',
    )
    session = build_agent(config, workspace=tmp_path, model=model)
    await session.send("write")
    result = next(m for m in session.history if isinstance(m, Message.ToolResult))
    assert result.content == "error: blocked by hook: the review service says no"
    assert not (tmp_path / "a.txt").exists()


@pytest.mark.parametrize(
    ("verdict", "written"),
    [("block: secrets do not belong in notes.txt", False), ("allow", True)],
)
async def test_the_agent_action_asks_a_read_only_child_whose_verdict_decides(
    tmp_path, verdict, written
):
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("w1", "write", path="notes.txt", content="password=hunter2"),
            # the hook's child session: it looks (a read-only tool), then answers
            call_turn("g1", "glob", pattern="*.txt"),
            {"text": f"{verdict}\nmore words that are ignored"},
            {"text": "done"},
        ],
    )
    config = _hooks(
        tmp_path / "x.log",
        [],
        '[[hooks.pre_tool]]\naction = "agent"\nif = "tool == \'write\'"\n'
        'prompt = "May $TOOL_NAME write $FILE_PATH with: $TOOL_ARGS.content"\n',
    )
    session = build_agent(config, workspace=tmp_path, model=model)
    assert await session.send("take a note") == "done"
    result = next(m for m in session.history if isinstance(m, Message.ToolResult))
    assert (tmp_path / "notes.txt").exists() is written
    if not written:
        assert result.content == "error: blocked by hook: secrets do not belong in notes.txt"
    (hook,) = session.hook_engine.configured("pre_tool")
    assert hook.runs[-1].status == ("allow" if written else f"{verdict}")
    # what the child ran is not in the parent's history
    assert not any(isinstance(m, Message.ToolResult) and m.id == "g1" for m in session.history)


async def test_the_hook_agent_cannot_write_even_when_it_tries(tmp_path):
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("w1", "write", path="a.txt", content="x"),
            call_turn("g1", "write", path="evil.txt", content="child"),  # not its tool
            {"text": "allow"},
            {"text": "done"},
        ],
    )
    config = _hooks(
        tmp_path / "x.log",
        [],
        '[[hooks.pre_tool]]\naction = "agent"\nprompt = "review $TOOL_NAME"\n',
    )
    session = build_agent(config, workspace=tmp_path, model=model)
    await session.send("go")
    assert not (tmp_path / "evil.txt").exists()
    assert (tmp_path / "a.txt").read_text() == "x"


TIME = (
    "[mcp_servers.time]\n"
    f"command = {json.dumps(sys.executable)}\n"
    'args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]\n'
)


async def test_hooks_fire_on_mcp_calls_of_the_session_and_of_a_subagent(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    log = tmp_path / "ws" / "hooks.log"
    (tmp_path / "xdg" / "clawnb").mkdir(parents=True)
    (tmp_path / "xdg" / "clawnb" / "config.toml").write_text(
        TIME
        + '[permissions]\nmode = "bypass"\n'
        + "[[hooks.post_tool]]\n"
        # $PWD (the workspace): a file a user-config hook names is one of its scripts, a
        # control file the sandbox keeps read-only
        + 'command = "echo $EVENT $TOOL_NAME $TOOL_ARGS.timezone >> $PWD/hooks.log"\n'
        + "if = \"tool =~ '^mcp__time__'\"\ntimeout = 20\n"
        + '[[hooks.subagent_stop]]\ncommand = "echo stop: $MESSAGE >> $PWD/hooks.log"\n'
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("t1", "mcp__time__get_current_time", timezone="UTC"),
            call_turn("s1", "subagent", task="ask the time server"),
            call_turn("c1", "mcp__time__get_current_time", timezone="Europe/Paris"),
            {"text": "the child knows"},
            {"text": "done"},
        ],
    )
    session = build_agent(None, workspace=ws, model=model, approve=_allow)
    try:
        assert await session.send("go") == "done"
    finally:
        session.close()
    assert _lines(log) == [
        "post_tool mcp__time__get_current_time UTC",
        "post_tool mcp__time__get_current_time Europe/Paris",
        "stop: the child knows",
    ]


async def test_slash_commands_fire_command_execute_and_hooks_lists_runs(tmp_path):
    log = tmp_path / "hooks.log"
    model = scripted_model(tmp_path / "s.jsonl", [{"text": "a"}])
    config = Config.from_toml(
        f'[[hooks.command_execute]]\ncommand = "echo ran: $MESSAGE >> {log}"\n'
        '[[hooks.turn_end]]\ncommand = "exit 3"\n'
    )
    session = build_agent(config, workspace=tmp_path, model=model)
    await session.send("hi")  # a failing turn_end hook is logged, the turn still ends
    await session.command("/cost")
    shown = await session.command("/hooks")
    assert _lines(log) == ["ran: /cost", "ran: /hooks"]  # fired once each command ran
    # in the order of the events in docs/hooks.md, then of the config
    assert "1. turn_end: command 'exit 3'" in shown
    assert "2. command_execute: command 'echo ran: $MESSAGE >> " in shown
    assert "turn_end: exit 3" in shown and "command_execute: exit 0" in shown
    assert "— config" in shown  # a Config built in code: no file layer to name


def test_a_script_any_events_hook_runs_is_a_control_file(tmp_path):
    from clawnb.control.trust import is_control_file

    ws = tmp_path / "ws"
    (ws / "scripts").mkdir(parents=True)
    (ws / "scripts" / "notify.sh").write_text("echo hi\n")
    home = tmp_path / "cfg"
    (home / "clawnb").mkdir(parents=True)
    assert not is_control_file("scripts/notify.sh", ws, config_home=home)
    (home / "clawnb" / "config.toml").write_text(
        '[hooks]\nhttp_hosts = ["scripts/notify.sh"]\n'  # a host name, not a script
        '[[hooks.turn_end]]\ncommand = "sh scripts/notify.sh $MESSAGE"\n'
    )
    assert is_control_file("scripts/notify.sh", ws, config_home=home)


async def test_a_skill_forks_calls_pass_the_same_hooks(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    skill = tmp_path / "xdg" / "clawnb" / "skills" / "look" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(
        "---\ndescription: Looks at a file. Use to look.\ncontext: fork\n---\nRead a.txt.\n"
    )
    (tmp_path / "xdg" / "clawnb" / "config.toml").write_text(
        '[permissions]\nmode = "bypass"\n'
        '[[hooks.pre_tool]]\ncommand = "echo $TOOL_NAME $FILE_PATH >> $PWD/hooks.log"\n'
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("hello")
    model = scripted_model(
        tmp_path / "s.jsonl", [call_turn("r1", "read", path="a.txt"), {"text": "it says hello"}]
    )
    session = build_agent(None, workspace=ws, model=model)
    assert await session.command("/look") == "it says hello"
    assert _lines(ws / "hooks.log") == ["read a.txt"]


async def test_a_skill_fork_is_framed_by_subagent_start_and_stop(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    skill = tmp_path / "xdg" / "clawnb" / "skills" / "look" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\ndescription: Looks.\ncontext: fork\n---\nRead a.txt.\n")
    log = '>> $PWD/hooks.log"'
    (tmp_path / "xdg" / "clawnb" / "config.toml").write_text(
        '[permissions]\nmode = "bypass"\n'
        f'[[hooks.subagent_start]]\ncommand = "echo start $TOOL_NAME {log}\n'
        f'[[hooks.pre_tool]]\ncommand = "echo call $TOOL_NAME {log}\n'
        f'[[hooks.subagent_stop]]\ncommand = "echo stop $MESSAGE {log}\n'
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("hello")
    model = scripted_model(
        tmp_path / "s.jsonl", [call_turn("r1", "read", path="a.txt"), {"text": "it says hello"}]
    )
    session = build_agent(None, workspace=ws, model=model)
    assert await session.command("/look") == "it says hello"
    assert _lines(ws / "hooks.log") == ["start skill", "call read", "stop it says hello"]


def test_the_hooks_benchmark_prints_the_overhead_last():
    import subprocess

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "bench_hooks.py"), "--calls", "50"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        check=True,
    )
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("hook dispatch overhead per tool call: ") and last.endswith(
        " ms (goal ≤ 1 ms)"
    )
    assert float(last.split(": ")[1].split()[0]) < 5  # loose: a loaded machine, 50 calls


def test_the_terminal_chat_fires_the_session_and_turn_events_and_lists_them(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    from tests.conftest import spawn_chat, write_script

    ws = tmp_path / "ws"
    ws.mkdir()
    config = tmp_path / "xdg" / "clawnb" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        "".join(
            f'[[hooks.{event}]]\ncommand = "echo $EVENT $TOOL_NAME >> $PWD/hooks.log"\n'
            for event in ("session_start", "turn_start", "post_tool", "turn_end", "session_end")
        )
        + '[[hooks.command_execute]]\ncommand = "echo $EVENT $MESSAGE >> $PWD/hooks.log"\n'
    )
    script = write_script(
        tmp_path / "s.jsonl", [call_turn("r1", "glob", pattern="*"), {"text": "nothing here"}]
    )
    child = spawn_chat(
        tmp_path, "--model", f"scripted:{script}", "--workspace", str(ws), "--no-color"
    )
    child.expect("you> ")
    child.sendline("what is here?")
    child.expect("nothing here")
    child.expect("you> ")
    child.sendline("/hooks")
    child.expect(f"— user {config}")
    child.expect("turn_end: exit 0")
    child.expect("you> ")
    child.sendline("/exit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert _lines(ws / "hooks.log") == [
        "session_start",
        "turn_start",
        "post_tool glob",
        "turn_end",
        "command_execute /hooks",
        "command_execute /exit",
        "session_end",
    ]


async def test_hooks_masks_a_key_written_into_a_hook_command(tmp_path, monkeypatch):
    key = "sk-or-v1-" + "s" * 40
    monkeypatch.setenv("OPENROUTER_API_KEY", key)
    config = Config.from_toml(
        f"[[hooks.turn_end]]\ncommand = \"curl -H 'Authorization: {key}' http://x\"\n"
    )
    session = build_agent(config, workspace=tmp_path, model=scripted_model(tmp_path / "s", []))
    shown = await session.command("/hooks")
    assert "turn_end: command" in shown and key not in shown


async def test_timeout_in_seconds_stops_a_pre_tool_hook_and_blocks_the_call(tmp_path):
    model = scripted_model(
        tmp_path / "s.jsonl", [call_turn("w1", "write", path="a.txt", content="x"), {"text": "ok"}]
    )
    config = _hooks(
        tmp_path / "x.log", [], '[[hooks.pre_tool]]\ncommand = "sleep 30"\ntimeout = 0.5\n'
    )
    session = build_agent(config, workspace=tmp_path, model=model)
    started = time.monotonic()
    await session.send("write")
    assert time.monotonic() - started < 10
    result = next(m for m in session.history if isinstance(m, Message.ToolResult))
    assert result.content == "error: blocked by hook: hook timed out after 500 ms: sleep 30"
    assert not (tmp_path / "a.txt").exists()
    assert session.hook_engine.configured("pre_tool")[0].runs[-1].status == "timed out"


async def test_a_conditional_pre_tool_hook_can_change_the_arguments(tmp_path):
    model = scripted_model(
        tmp_path / "s.jsonl",
        [call_turn("b1", "bash", command="git push --force"), {"text": "ok"}],
    )
    config = _hooks(
        tmp_path / "x.log",
        [],
        "[[hooks.pre_tool]]\n"
        "if = \"tool == 'bash' && args.command =~ '--force'\"\n"
        'command = "echo \'{\\"args\\": {\\"command\\": \\"echo no force today\\"}}\'"\n',
    )
    session = build_agent(config, workspace=tmp_path, model=model)
    await session.send("push")
    result = next(m for m in session.history if isinstance(m, Message.ToolResult))
    assert "no force today" in result.content
