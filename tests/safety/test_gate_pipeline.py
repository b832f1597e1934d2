"""The gate pipeline inside every loop: refused calls never run (a file that must not appear
proves it), approvals allow once / for the session / deny, hooks block and rewrite, and the
history invariant holds throughout."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from clawnb.agent import SimpleAgent, StreamingAgent
from clawnb.events import AgentEvent, Approval, ApprovalRequest
from clawnb.gates import GatePipeline, build_gate
from clawnb.hooks import BlockingHook, HookAction, HookRegistry, LoggingHook
from clawnb.permissions import Permission, PermissionEngine, PermissionRule
from clawnb.planning import PlanAgent
from clawnb.providers.mock import MockProvider, MockStreamProvider
from clawnb.safety import PathValidator
from clawnb.tools.bash import BashTool
from clawnb.tools.read import ReadTool
from clawnb.tools.write import WriteTool
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall, ToolDefinition, ToolTraits


def write_turn(*paths: str, id_prefix: str = "w") -> AssistantTurn:
    calls = [
        ToolCall(f"{id_prefix}{i}", "write", {"path": p, "content": "x"})
        for i, p in enumerate(paths)
    ]
    return AssistantTurn(None, calls, StopReason.TOOL_USE)


def done(text: str = "done") -> AssistantTurn:
    return AssistantTurn(text, [], StopReason.STOP)


def assert_invariant(messages: list[Message]) -> None:
    """Every assistant turn with calls is followed by one result per call id, in order."""
    i = 0
    while i < len(messages):
        msg = messages[i]
        if isinstance(msg, Message.Assistant) and msg.turn.tool_calls:
            ids = [c.id for c in msg.turn.tool_calls]
            following = messages[i + 1 : i + 1 + len(ids)]
            assert [getattr(m, "id", None) for m in following] == ids
            i += 1 + len(ids)
        else:
            assert not isinstance(msg, Message.ToolResult), f"orphan result at {i}"
            i += 1


def results(messages: list[Message]) -> list[str]:
    return [m.content for m in messages if isinstance(m, Message.ToolResult)]


class Approver:
    """A front end's approval callback answering from a script, recording each request."""

    def __init__(self, *answers: Approval) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Approval:
        self.requests.append(request)
        return self.answers.pop(0)


# Each runner drives one loop kind over a scripted model and returns the history.
async def run_simple(turns, gate, tools, events):
    messages = [Message.User("go")]
    await SimpleAgent(MockProvider(turns), gate=gate, tools=tools).chat(messages, events.append)
    return messages


async def run_streaming(turns, gate, tools, events):
    messages = [Message.User("go")]
    agent = StreamingAgent(MockStreamProvider(turns), gate=gate, tools=tools)
    await agent.chat(messages, events.append)
    return messages


async def run_plan_execute(turns, gate, tools, events):
    messages = [Message.User("go")]
    await PlanAgent(MockStreamProvider(turns), gate=gate, tools=tools).execute(
        messages, events.append
    )
    return messages


RUNNERS = [run_simple, run_streaming, run_plan_execute]
ids = ["simple", "streaming", "plan-execute"]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


@pytest.mark.parametrize("run", RUNNERS, ids=ids)
async def test_deny_rule_never_runs(run, ws):
    gate = build_gate(workspace=ws, deny=["write"])
    events: list = []
    messages = await run([write_turn("a.txt"), done()], gate, [WriteTool(ws)], events)
    assert not (ws / "a.txt").exists()
    assert results(messages)[0].startswith("error: permission denied for `write`")
    assert [e.outcome for e in events if isinstance(e, AgentEvent.ToolResult)] == ["denied"]
    assert not any(isinstance(e, AgentEvent.ToolRunning) for e in events)
    assert_invariant(messages)


@pytest.mark.parametrize("run", RUNNERS, ids=ids)
async def test_ask_without_callback_is_refused(run, ws):
    messages = await run(
        [write_turn("a.txt"), done()], build_gate(workspace=ws), [WriteTool(ws)], []
    )
    assert not (ws / "a.txt").exists()
    assert "no approval callback is set" in results(messages)[0]
    assert_invariant(messages)


@pytest.mark.parametrize("run", RUNNERS, ids=ids)
async def test_user_denies(run, ws):
    approver = Approver(Approval.deny("not in this folder"))
    gate = build_gate(workspace=ws, approve=approver)
    messages = await run([write_turn("a.txt"), done()], gate, [WriteTool(ws)], [])
    assert not (ws / "a.txt").exists()
    assert results(messages) == ["error: the user denied this tool call: not in this folder"]
    request = approver.requests[0]
    assert request.call.name == "write" and request.summary == "[write: a.txt]"
    assert "default mode asks" in request.reason
    assert_invariant(messages)


@pytest.mark.parametrize("run", RUNNERS, ids=ids)
async def test_allow_once_asks_every_time(run, ws):
    approver = Approver(Approval.allow_once(), Approval.allow_once())
    gate = build_gate(workspace=ws, approve=approver)
    turns = [write_turn("a.txt"), write_turn("b.txt", id_prefix="v"), done()]
    messages = await run(turns, gate, [WriteTool(ws)], [])
    assert (ws / "a.txt").exists() and (ws / "b.txt").exists()
    assert len(approver.requests) == 2
    assert gate.permissions.session_allows == frozenset()
    assert_invariant(messages)


@pytest.mark.parametrize("run", RUNNERS, ids=ids)
async def test_allow_for_session_asks_once(run, ws):
    approver = Approver(Approval.allow_session())
    gate = build_gate(workspace=ws, approve=approver)
    turns = [write_turn("a.txt", "b.txt"), write_turn("c.txt", id_prefix="v"), done()]
    messages = await run(turns, gate, [WriteTool(ws)], [])
    assert all((ws / n).exists() for n in ("a.txt", "b.txt", "c.txt"))
    assert len(approver.requests) == 1
    assert gate.permissions.session_allows == {"write"}
    assert_invariant(messages)


@pytest.mark.parametrize("run", RUNNERS, ids=ids)
async def test_hook_block_never_runs(run, ws):
    log = LoggingHook()
    hooks = HookRegistry([log, BlockingHook(["write"], "writes are frozen today")])
    gate = build_gate(workspace=ws, mode="bypass", hooks=hooks)
    events: list = []
    messages = await run([write_turn("a.txt"), done()], gate, [WriteTool(ws)], events)
    assert not (ws / "a.txt").exists()
    assert results(messages) == ["error: blocked by hook: writes are frozen today"]
    assert [e.outcome for e in events if isinstance(e, AgentEvent.ToolResult)] == ["blocked"]
    assert log.messages() == ["agent:start", "pre:write", "agent:end"]
    assert_invariant(messages)


@pytest.mark.parametrize("run", RUNNERS, ids=ids)
async def test_safety_check_blocks_escape_even_in_bypass(run, ws):
    gate = build_gate(workspace=ws, mode="bypass")
    outside = ws.parent / "escaped.txt"
    turns = [write_turn("../escaped.txt", str(outside), ".env"), done()]
    messages = await run(turns, gate, [WriteTool(ws)], [])
    assert not outside.exists() and not (ws / ".env").exists()
    out = results(messages)
    assert out[0] == (
        f"error: safety check failed: path {outside} is outside allowed directory {ws}; "
        "writes outside the workspace are refused unless the person adds that folder "
        "(additional_directories in their user config, %claw add-dir DIR or /add-dir DIR)"
    )
    assert out[2] == "error: safety check failed: file `.env` is protected (matches pattern `.env`)"
    assert_invariant(messages)


@pytest.mark.parametrize("run", RUNNERS, ids=ids)
async def test_modify_args_hook_rewrites_the_call_before_the_checks(run, ws):
    class Redirect:
        async def on_event(self, event):
            if getattr(event, "tool_name", None) == "write" and hasattr(event, "args"):
                if "result" not in vars(event):
                    return HookAction.ModifyArgs({**event.args, "path": "safe/out.txt"})
            return HookAction.Continue()

    gate = build_gate(workspace=ws, mode="bypass", hooks=HookRegistry([Redirect()]))
    messages = await run([write_turn("../escaped.txt"), done()], gate, [WriteTool(ws)], [])
    assert (ws / "safe" / "out.txt").exists()
    assert not (ws.parent / "escaped.txt").exists()
    assert results(messages) == ["wrote safe/out.txt"]
    assert_invariant(messages)


async def test_plan_phase_bash_still_goes_through_the_gate(ws):
    marker = ws / "marker"
    turns = [
        AssistantTurn(
            None,
            [
                ToolCall("b1", "bash", {"command": f"touch {marker}"}),
                ToolCall("w1", "write", {"path": "plan.txt", "content": "x"}),
                ToolCall("x1", "exit_plan", {}),
            ],
            StopReason.TOOL_USE,
        ),
    ]
    approver = Approver(Approval.deny())
    agent = PlanAgent(
        MockStreamProvider(turns),
        gate=build_gate(workspace=ws, approve=approver),
        tools=[BashTool(ws), WriteTool(ws), ReadTool(ws)],
    )
    messages = [Message.User("plan it")]
    await agent.plan(messages)
    assert not marker.exists() and not (ws / "plan.txt").exists()
    assert results(messages) == [
        "error: the user denied this tool call",
        "error: tool 'write' is not available in planning mode",
        "Plan submitted for review.",
    ]
    assert [r.call.name for r in approver.requests] == ["bash"]  # write never reached the gate
    assert_invariant(messages)


async def test_approved_bash_runs_and_sudo_is_blocked_before_asking(ws):
    approver = Approver(Approval.allow_once())
    turns = [
        AssistantTurn(
            None,
            [
                ToolCall("b1", "bash", {"command": "echo hi > made.txt"}),
                ToolCall("b2", "bash", {"command": "sudo touch /root/x"}),
            ],
            StopReason.TOOL_USE,
        ),
        done(),
    ]
    messages = [Message.User("go")]
    gate = build_gate(workspace=ws, approve=approver)
    await SimpleAgent(MockProvider(turns), gate=gate, tools=[BashTool(ws)]).chat(messages)
    assert (ws / "made.txt").read_text() == "hi\n"
    assert results(messages)[1].startswith("error: safety check failed: blocked command")
    assert len(approver.requests) == 1
    assert_invariant(messages)


async def test_reads_run_without_asking_in_default_mode(ws):
    (ws / "notes.txt").write_text("hello")
    approver = Approver()
    turn = AssistantTurn(None, [ToolCall("r", "read", {"path": "notes.txt"})], StopReason.TOOL_USE)
    messages = [Message.User("go")]
    gate = build_gate(workspace=ws, approve=approver)
    await SimpleAgent(MockProvider([turn, done()]), gate=gate, tools=[ReadTool(ws)]).chat(messages)
    assert results(messages) == ["hello"]
    assert approver.requests == []


async def test_post_hook_block_is_reported_to_the_model(ws):
    class Auditor:
        async def on_event(self, event):
            if type(event).__name__ == "PostToolCall":
                return HookAction.Block("file written outside review")
            return HookAction.Continue()

    gate = build_gate(workspace=ws, mode="bypass", hooks=HookRegistry([Auditor()]))
    messages = [Message.User("go")]
    agent = SimpleAgent(
        MockProvider([write_turn("a.txt"), done()]), gate=gate, tools=[WriteTool(ws)]
    )
    await agent.chat(messages)
    assert (ws / "a.txt").exists()
    assert results(messages) == ["wrote a.txt\n[post-tool hook: file written outside review]"]


class SlowSafeTool:
    """Not read-only but concurrency-safe: the executor may run several at once."""

    traits = ToolTraits(concurrency_safe=True)

    def __init__(self) -> None:
        self.definition = ToolDefinition("probe", "probe")
        self.ran = 0

    async def call(self, args):
        self.ran += 1
        return "ok"


async def test_concurrent_calls_are_asked_one_at_a_time():
    in_flight = 0
    peak = 0
    asked = 0

    async def approve(request):
        nonlocal in_flight, peak, asked
        asked += 1
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return Approval.allow_session()

    tool = SlowSafeTool()
    calls = [ToolCall(f"p{i}", "probe", {}) for i in range(5)]
    gate = GatePipeline(permissions=PermissionEngine.for_mode("default"), approve=approve)
    agent = SimpleAgent(
        MockProvider([AssistantTurn(None, calls, StopReason.TOOL_USE), done()]),
        gate=gate,
        tools=[tool],
    )
    messages = [Message.User("go")]
    await agent.chat(messages)
    assert peak == 1 and asked == 1  # the session allow settled the other four
    assert tool.ran == 5
    assert_invariant(messages)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (True, "wrote a.txt"),
        (False, "error: the user denied this tool call"),
        (
            "yes",
            "error: the approval callback returned 'yes', not an Approval; the call was not run",
        ),
    ],
)
async def test_odd_approval_answers(ws, answer, expected):
    async def approve(request):
        return answer

    gate = build_gate(workspace=ws, approve=approve)
    messages = [Message.User("go")]
    agent = SimpleAgent(
        MockProvider([write_turn("a.txt"), done()]), gate=gate, tools=[WriteTool(ws)]
    )
    await agent.chat(messages)
    assert results(messages) == [expected]
    assert (ws / "a.txt").exists() is (answer is True)


async def test_failing_approval_callback_refuses(ws):
    async def approve(request):
        raise RuntimeError("widget gone")

    gate = build_gate(workspace=ws, approve=approve)
    messages = [Message.User("go")]
    agent = SimpleAgent(
        MockProvider([write_turn("a.txt"), done()]), gate=gate, tools=[WriteTool(ws)]
    )
    await agent.chat(messages)
    assert not (ws / "a.txt").exists()
    assert "approval prompt failed (RuntimeError: widget gone)" in results(messages)[0]


async def test_broken_check_refuses():
    class Broken:
        def check(self, tool_name, args):
            raise KeyError("bug")

    gate = GatePipeline(checks=[Broken()])
    refusal = await gate.before_tool(ToolCall("c", "read", {}), ReadTool())
    assert refusal.outcome == "blocked" and "KeyError" in refusal.content


async def test_book_engine_in_the_pipeline(ws):
    engine = PermissionEngine([PermissionRule("write", Permission.Allow)], Permission.Deny)
    gate = GatePipeline(checks=[PathValidator(ws)], permissions=engine)
    messages = [Message.User("go")]
    tools = [WriteTool(ws), BashTool(ws)]
    turn = AssistantTurn(
        None,
        [
            ToolCall("w", "write", {"path": "ok.txt", "content": "x"}),
            ToolCall("b", "bash", {"command": "touch nope.txt"}),
        ],
        StopReason.TOOL_USE,
    )
    await SimpleAgent(MockProvider([turn, done()]), gate=gate, tools=tools).chat(messages)
    assert (ws / "ok.txt").exists() and not (ws / "nope.txt").exists()
    assert (
        results(messages)[1] == "error: permission denied for `bash`: default permission for `bash`"
    )


def test_from_config(ws, tmp_path):
    config = {
        "allowed_directory": str(ws),
        "blocked_commands": ["docker rm *"],
        "protected_patterns": ["*.lock"],
        "hooks": {"pre_tool": [{"command": "true"}]},
        "permissions": {"mode": "accept_edits", "deny": ["bash(git push*)"]},
    }
    gate = GatePipeline.from_config(config)
    assert gate.permissions.mode.value == "accept_edits"
    assert len(gate.hooks) == 1
    validator, command_filter, protected = gate.checks
    assert validator.allowed_dir == str(ws)
    assert command_filter.patterns == ["docker rm *"]
    assert protected.patterns == ["*.lock"]
    assert gate.permissions.evaluate(BashTool(), {"command": "git push"}) is Permission.Deny
    assert gate.permissions.evaluate(WriteTool(), {"path": "a"}) is Permission.Allow
    # an object with attributes works too, and defaults fill the gaps
    from types import SimpleNamespace

    gate = GatePipeline.from_config(SimpleNamespace(allowed_directory=None), workspace=tmp_path)
    assert gate.checks[0].allowed_dir == str(tmp_path.resolve())
    assert gate.hooks is None and gate.permissions.mode.value == "default"


async def test_plan_ended_by_exit_plan_reaches_agent_end_hooks(ws):
    log = LoggingHook()
    turns = [AssistantTurn("the plan", [ToolCall("x", "exit_plan", {})], StopReason.TOOL_USE)]
    gate = build_gate(workspace=ws, hooks=HookRegistry([log]))
    agent = PlanAgent(MockStreamProvider(turns), gate=gate, tools=[ReadTool(ws)])
    assert await agent.plan([Message.User("plan")]) == "the plan"
    assert log.messages() == ["agent:start", "agent:end"]


def test_from_config_with_the_real_config(ws):
    from clawnb.config import Config

    config = Config.model_validate(
        {
            "allowed_directory": str(ws),
            "permissions": {"mode": "plan", "deny": ["read(secret*)"]},
            "hooks": {"pre_tool": [{"command": "true", "tool_pattern": "bash"}]},
        }
    )
    gate = GatePipeline.from_config(config)
    assert gate.permissions.mode.value == "plan"
    assert gate.hooks.hooks[0].tool_pattern == "bash"
    # the shipped blocklist is the recommended one, not the book's four config defaults
    from clawnb.safety import RECOMMENDED_BLOCKED_COMMANDS

    assert gate.checks[1].patterns == list(RECOMMENDED_BLOCKED_COMMANDS)
    assert gate.checks[2].patterns == [".env", ".env.*", ".git/**"]
    assert gate.permissions.evaluate(ReadTool(), {"path": "secret.txt"}) is Permission.Deny
    # an explicit mode wins over the file's
    assert GatePipeline.from_config(config, mode="bypass").permissions.mode.value == "bypass"


async def test_approval_request_details(ws):
    approver = Approver(Approval.deny())
    gate = build_gate(workspace=ws, approve=approver, ask=["read(*.cfg)"])
    (ws / "a.cfg").write_text("k")
    call = ToolCall("r", "read", {"path": "a.cfg"})
    refusal = await gate.before_tool(call, ReadTool(ws))
    assert refusal.content == "error: the user denied this tool call"
    details = approver.requests[0].details
    # the scoped "always" the question offers, and where a saved one would go
    # (tests/safety/test_scoped_always.py)
    (offer,) = details.pop("always")
    assert offer.pop("files")["project"] == str(ws / ".claw" / "rules.local.toml")
    assert offer == {"rule": "read", "label": "every read call", "saveable": True}
    assert details == {"mode": "default", "rule": "read(*.cfg)"}


async def test_interrupt_while_waiting_for_approval_keeps_history_valid(ws):
    asked = asyncio.Event()

    async def approve(request):
        asked.set()
        await asyncio.Event().wait()  # the person never answers

    gate = build_gate(workspace=ws, approve=approve)
    messages = [Message.User("go")]
    agent = StreamingAgent(
        MockStreamProvider([write_turn("a.txt", "b.txt"), done()]), gate=gate, tools=[WriteTool(ws)]
    )
    task = asyncio.create_task(agent.chat(messages))
    await asyncio.wait_for(asked.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not (ws / "a.txt").exists() and not (ws / "b.txt").exists()
    assert results(messages) == ["error: interrupted by user"] * 2
    assert_invariant(messages)
    assert not gate._approval_lock.locked()
