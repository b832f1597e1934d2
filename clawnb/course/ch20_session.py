"""Chapter 20 (the capstone): your agent as a session that clawnb's front ends can drive
(``make_session``). Not a book test file: the book ends with its own chat example."""

from __future__ import annotations

import contextlib
import json
import os
import signal

from ..events import AgentEvent, Approval
from ..session.protocol import Session
from ..types import Message, TokenUsage
from ._helpers import Recorder, read_call, text_turn, tool_turn, write_call
from ._suite import Suite
from .ch21_mcp_client import _fake, _pid
from .reference import history_is_valid

suite = Suite("session", "make_session", chapters=["ch20"])


class _Person:
    """A front end's approver that answers from a script and remembers what it was asked."""

    def __init__(self, *answers: Approval) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    async def __call__(self, request):
        self.asked.append(request.call.name)
        return self.answers.pop(0)


def _session(impl, tmp, turns):
    provider = Recorder(turns)
    return impl.make_session(provider=provider, workspace=tmp, history=[]), provider


def _first_result(session):
    """The first tool result in the session's history."""
    return next(m for m in session.history if isinstance(m, Message.ToolResult))


def _refused(session):
    """The first tool result, which must be an error the model can read (the call did not run)."""
    result = _first_result(session)
    assert result.content.startswith("error:"), f"the call ran: {result.content[:80]!r}"
    return result


@suite.test
def test_session_follows_the_session_protocol(impl, tmp):
    session, _ = _session(impl, tmp, [])
    assert isinstance(session, Session)
    assert session.history == []
    assert isinstance(session.mode, str)


@suite.test
async def test_session_send_answers_and_keeps_the_history(impl, tmp):
    session, provider = _session(impl, tmp, [text_turn("Hello!")])
    assert await session.send("Hi") == "Hello!"
    assert [type(m).__name__ for m in session.history] == ["User", "Assistant"]
    assert provider.sent[0][-1].content == "Hi"


@suite.test
async def test_session_reads_without_asking(impl, tmp):
    (tmp / "a.txt").write_text("alpha")
    turns = [tool_turn(read_call("c1", tmp / "a.txt")), text_turn("done")]
    session, provider = _session(impl, tmp, turns)
    person = _Person()
    with session.handlers(approve=person):
        assert await session.send("read a.txt") == "done"
    assert person.asked == []
    results = [m for m in session.history if isinstance(m, Message.ToolResult)]
    assert [r.content for r in results] == ["alpha"]


@suite.test
async def test_session_asks_before_writing_and_a_denial_changes_nothing(impl, tmp):
    target = tmp / "out.txt"
    turns = [tool_turn(write_call("c1", target, "x")), text_turn("ok")]
    session, _ = _session(impl, tmp, turns)
    person = _Person(Approval.deny("not now"))
    with session.handlers(approve=person):
        await session.send("write it")
    assert person.asked == ["write"]
    assert not target.exists()
    _refused(session)
    assert history_is_valid(session.history)


@suite.test
async def test_session_runs_an_approved_write(impl, tmp):
    target = tmp / "out.txt"
    turns = [tool_turn(write_call("c1", target, "x")), text_turn("ok")]
    session, _ = _session(impl, tmp, turns)
    with session.handlers(approve=_Person(Approval.allow_once())):
        await session.send("write it")
    assert target.read_text() == "x"


@suite.test
async def test_session_with_nobody_to_ask_runs_nothing_unasked(impl, tmp):
    target = tmp / "out.txt"
    turns = [tool_turn(write_call("c1", target, "x")), text_turn("ok")]
    session, _ = _session(impl, tmp, turns)
    await session.send("write it")
    assert not target.exists()


@suite.test
async def test_session_tells_the_front_end_what_happens(impl, tmp):
    (tmp / "a.txt").write_text("alpha")
    turns = [tool_turn(read_call("c1", tmp / "a.txt")), text_turn("done")]
    session, _ = _session(impl, tmp, turns)
    events = []
    await session.send("read a.txt", events.append)
    kinds = [type(e).__name__ for e in events]
    assert "ToolCall" in kinds and "ToolResult" in kinds
    assert kinds[-1] == "Done"
    assert kinds.index("ToolCall") < kinds.index("ToolResult")
    done = [e for e in events if isinstance(e, AgentEvent.Done)]
    assert done[0].text == "done"


@suite.test
async def test_session_names_each_call_by_its_id(impl, tmp):
    # A front end pairs a call's card with its result by the call's id (two reads of the same
    # file share a name and a summary, never an id).
    (tmp / "a.txt").write_text("alpha")
    both = tool_turn(read_call("c1", tmp / "a.txt"), read_call("c2", tmp / "a.txt"))
    session, _ = _session(impl, tmp, [both, text_turn("done")])
    events = []
    await session.send("read a.txt twice", events.append)
    calls = [e.id for e in events if isinstance(e, AgentEvent.ToolCall)]
    results = [e.id for e in events if isinstance(e, AgentEvent.ToolResult)]
    assert calls == ["c1", "c2"]
    assert results == ["c1", "c2"]


@suite.test
async def test_session_ends_each_model_turn_with_a_turn_end(impl, tmp):
    # The card's footer counts turns and tokens from TurnEnd, one per reply of the model,
    # carrying that reply (its usage is on it).
    (tmp / "a.txt").write_text("alpha")
    asking = tool_turn(read_call("c1", tmp / "a.txt"))
    asking.usage = TokenUsage(120, 8)
    answer = text_turn("done")
    answer.usage = TokenUsage(140, 3)
    session, _ = _session(impl, tmp, [asking, answer])
    events = []
    await session.send("read a.txt", events.append)
    ends = [e.turn.usage for e in events if isinstance(e, AgentEvent.TurnEnd)]
    assert ends == [TokenUsage(120, 8), TokenUsage(140, 3)]
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("TurnEnd") < kinds.index("ToolCall"), "a reply ends before its calls run"


@suite.test
async def test_session_handlers_restore_the_previous_approver(impl, tmp):
    # handlers() is a with block: inside, its approver answers; after it, whoever answered
    # before (a front end may nest them: the cell's buttons around one turn's policy).
    turns = [
        tool_turn(write_call("c1", tmp / "inner.txt", "i")),
        text_turn("ok"),
        tool_turn(write_call("c2", tmp / "outer.txt", "o")),
        text_turn("ok"),
        tool_turn(write_call("c3", tmp / "after.txt", "a")),
        text_turn("ok"),
    ]
    session, _ = _session(impl, tmp, turns)
    outer, inner = _Person(Approval.allow_once()), _Person(Approval.allow_once())
    with session.handlers(approve=outer):
        with session.handlers(approve=inner):
            await session.send("write inner.txt")
        await session.send("write outer.txt")
    await session.send("write after.txt")
    assert (inner.asked, outer.asked) == (["write"], ["write"])
    assert (tmp / "outer.txt").read_text() == "o"
    assert not (tmp / "after.txt").exists(), "after both blocks nobody is there to say yes"


@suite.test
async def test_session_in_plan_mode_refuses_a_write(impl, tmp):
    # Plan mode (chapter 16) looks and does not touch: a write is refused even when the model
    # calls it anyway and someone is there who would say yes.
    target = tmp / "out.txt"
    turns = [tool_turn(write_call("c1", target, "x")), text_turn("ok")]
    session, provider = _session(impl, tmp, turns)
    session.configure(mode="plan")
    with session.handlers(approve=_Person(Approval.allow_once())):
        await session.send("write it")
    assert not target.exists(), "the write ran in plan mode"
    assert "write" not in provider.offered[0], "plan mode offers only the tools that look"
    _refused(session)
    assert history_is_valid(session.history)


@suite.test
async def test_session_keeps_an_approved_write_inside_the_workspace(impl, tmp):
    # Chapter 14: the safety checks wrap every tool, so a write the person allowed still may
    # not leave the workspace; the model reads why in the error result.
    workspace = tmp / "project"
    workspace.mkdir()
    outside = tmp / "outside.txt"
    turns = [tool_turn(write_call("c1", outside, "x")), text_turn("ok")]
    provider = Recorder(turns)
    session = impl.make_session(provider=provider, workspace=workspace, history=[])
    with session.handlers(approve=_Person(Approval.allow_once())):
        await session.send("write outside.txt")
    assert not outside.exists(), "an approved write left the workspace"
    result = _refused(session)
    assert "outside" in result.content
    assert history_is_valid(session.history)


@suite.test
async def test_session_configure_changes_the_mode(impl, tmp):
    session, _ = _session(impl, tmp, [])
    session.configure(mode="plan")
    assert session.mode == "plan"
    session.configure(mode="default", max_turns=5)
    assert session.mode == "default"


# Chapters 21 to 24 in the session: its settings are the workspace's .claw/agent.toml (the
# [[hooks.EVENT]] tables of chapter 23, max_result_chars and max_context_tokens of chapter 24,
# [mcp.NAME] servers of chapter 21) and its skills are .claw/skills/NAME/SKILL.md (chapter 22).


def _settings(tmp, text):
    (tmp / ".claw").mkdir(exist_ok=True)
    (tmp / ".claw" / "agent.toml").write_text(text)


@suite.test
async def test_session_runs_the_workspaces_pre_tool_hook_and_a_block_runs_nothing(impl, tmp):
    # Chapter 23: a pre_tool hook that exits non-zero refuses the call before anyone is asked;
    # the model reads the hook's last line of stderr in the error result.
    _settings(
        tmp,
        "[[hooks.pre_tool]]\n"
        "if = \"tool == 'write' && args.path ~= '**/*.md'\"\n"
        "command = \"echo 'no markdown here' >&2; exit 2\"\n",
    )
    target = tmp / "notes.md"
    turns = [tool_turn(write_call("c1", target, "x")), text_turn("ok")]
    session, _ = _session(impl, tmp, turns)
    person = _Person(Approval.allow_once())
    with session.handlers(approve=person):
        await session.send("write notes.md")
    assert not target.exists(), "the hook's block was ignored"
    assert person.asked == [], "a blocked call is refused before anyone is asked"
    result = _refused(session)
    assert "no markdown here" in result.content
    assert history_is_valid(session.history)


@suite.test
async def test_session_saves_a_long_result_and_gives_the_model_a_preview(impl, tmp):
    # Chapter 24: a result over max_result_chars is saved whole under .claw/results/ and the
    # model (and the history) get the preview: its size, the path, the head and the tail.
    _settings(tmp, "max_result_chars = 2000\n")
    log = "".join(f"line {n}\n" for n in range(1, 3001))
    (tmp / "big.log").write_text(log)
    turns = [tool_turn(read_call("c1", tmp / "big.log")), text_turn("done")]
    session, provider = _session(impl, tmp, turns)
    await session.send("read big.log")
    result = _first_result(session)
    saved = tmp / ".claw" / "results" / "c1.txt"
    assert saved.is_file() and saved.read_text() == log
    assert len(result.content) < len(log) // 4
    assert str(saved) in result.content
    assert "line 1\n" in result.content and "line 3000" in result.content
    assert provider.sent[1][-1].content == result.content, "the model read the preview"


@suite.test
async def test_session_offers_the_workspaces_skills_and_loads_one_unasked(impl, tmp):
    # Chapter 22: the skills' listing is in the system prompt, the skill tool is offered, and
    # loading a skill only reads: it runs without asking, in plan mode too.
    folder = tmp / ".claw" / "skills" / "review"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: review\ndescription: Review a file for bugs\n---\nList the bugs.\n"
    )
    turns = [tool_turn(("c1", "skill", {"name": "review"})), text_turn("ok")]
    session, provider = _session(impl, tmp, turns)
    session.configure(mode="plan")
    person = _Person()
    with session.handlers(approve=person):
        await session.send("review a.py")
    assert "skill" in provider.offered[0]
    system = provider.sent[0][0]
    assert isinstance(system, Message.System)
    assert "review: Review a file for bugs" in system.content
    result = _first_result(session)
    assert result.content.strip() == "List the bugs."
    assert person.asked == []


@suite.test
async def test_session_compacts_a_history_over_max_context_tokens(impl, tmp):
    # Chapter 24: after an answered request whose history is over max_context_tokens, the
    # compactor asks the model for a summary, which replaces the older turns; the latest stay.
    _settings(tmp, "max_context_tokens = 200\n")
    long = "word " * 300
    turns = [text_turn(f"answer {n}: {long}") for n in (1, 2, 3)]
    turns.append(text_turn("the first request was answered at length"))
    session, provider = _session(impl, tmp, turns)
    for n in (1, 2, 3):
        await session.send(f"request {n}")
    assert provider.turns == [], "no summary was asked for"
    systems = [m for m in session.history if isinstance(m, Message.System)]
    assert any("answered at length" in m.content for m in systems)
    users = [m.content for m in session.history if isinstance(m, Message.User)]
    assert "request 1" not in users and users[-1] == "request 3"
    assert history_is_valid(session.history)


@suite.test(at_least=15)
async def test_session_offers_the_tools_of_the_workspaces_mcp_servers_and_asks_first(impl, tmp):
    # Chapter 21: each [mcp.NAME] server of .claw/agent.toml starts at the first request; its
    # tools are offered as mcp__NAME__TOOL, and the gate asks before each call (a server's
    # tool may do anything).
    _settings(tmp, f"[mcp.fake]\ncommand = {json.dumps(_fake(tmp))}\ntimeout = 10\n")
    turns = [tool_turn(("c1", "mcp__fake__echo", {"text": "hello"})), text_turn("ok")]
    session, provider = _session(impl, tmp, turns)
    person = _Person(Approval.allow_once())
    try:
        with session.handlers(approve=person):
            await session.send("say hello")
    finally:
        # The session protocol has no close: end the servers the way the prose keeps them
        # (self.clients), and kill the process in case they are kept elsewhere.
        for client in getattr(session, "clients", []):
            with contextlib.suppress(Exception):
                await client.close()
        with contextlib.suppress(OSError, ValueError):
            os.kill(_pid(tmp), signal.SIGKILL)
    assert "mcp__fake__echo" in provider.offered[0]
    assert person.asked == ["mcp__fake__echo"]
    result = _first_result(session)
    assert result.content == "hello\n(echoed)"


@suite.test
async def test_session_talks_to_the_server_its_workspace_names(impl, tmp):
    # Chapter 5b built a provider: with [provider] in .claw/agent.toml the session talks to
    # that server through it (the key from the variable api_key_env names), not through the
    # provider the front end passed in.
    from ._http_fixture import LoopbackServer, http_response, sse_body

    reply = sse_body(
        [
            'data: {"choices":[{"delta":{"content":"hi from the workspace\'s server"}}]}',
            "",
            'data: {"choices":[{"delta":{},"finish_reason":"stop"}]}',
            "",
            "data: [DONE]",
            "",
        ]
    )
    os.environ["CLAWNB_COURSE_TEST_KEY"] = "sk-course-test"
    try:
        async with LoopbackServer(http_response(reply)) as server:
            (tmp / ".claw").mkdir(exist_ok=True)
            (tmp / ".claw" / "agent.toml").write_text(
                f'[provider]\nbase_url = "{server.url}"\nmodel = "course-model"\n'
                'api_key_env = "CLAWNB_COURSE_TEST_KEY"\n'
            )
            session, front_ends = _session(impl, tmp, [text_turn("the front end's model")])
            answer = await session.send("hello")
    finally:
        del os.environ["CLAWNB_COURSE_TEST_KEY"]
    assert front_ends.sent == [], "the front end's provider was asked instead"
    assert len(server.requests) == 1, "one request reaches the workspace's server"
    body = server.requests[0].json()
    assert body["model"] == "course-model"
    assert server.requests[0].headers.get("authorization") == "Bearer sk-course-test"
    assert "hi from the workspace's server" in (answer or "")
