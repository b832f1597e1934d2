"""Issue 25 item 2 — compaction that keeps what matters.

A scripted long session (reads, a failing test, a fix, the person's requests) is compacted:
the summariser's one tool-less request holds the whole transcript (two phases asked for), the
compacted context keeps every request word for word and the files read most recently as they
are now. A summary that fails three times (a real HTTP server on 127.0.0.1 answering 500 to
summary requests) leaves every later turn working, stops asking, and says so once."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from clawnb.config import Config, ModelSettings
from clawnb.context import (
    FILES_HEADER,
    REQUESTS_HEADER,
    SUMMARY_PREFIX,
    Compaction,
    ContextManager,
    summary_body,
)
from clawnb.providers.openai import OpenAICompatProvider
from clawnb.session.assemble import build_agent
from clawnb.tools import BashTool, EditTool, ReadTool
from clawnb.tools.base import FileState
from clawnb.types import AssistantTurn, Message, StopReason, TokenUsage, ToolCall, ToolDefinition
from tests.engine.test_context import assert_invariant
from tests.fake_servers import FakeServer, Reply

CALC_BROKEN = "def add(a, b):\n    return a - b  # BUG\n"
CALC_FIXED = "def add(a, b):\n    return a + b\n"
TEST_CALC = (
    "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4, 'add(2, 2) is wrong'\n"
)
NOTES = "Dataset conventions: dates are ISO 8601; the id column is 'key', never 'id'.\n" * 40
REQUESTS = [
    "The test in test_calc.py fails — find out why and fix it.",
    "Also read notes.txt: it says how the dataset is laid out.",
    "Now explain in one line what was wrong.",
]


class SessionModel:
    """A scripted model for a whole session; a request without tools is a summary request
    (kept in ``summary_requests`` and answered in the two phases asked for)."""

    def __init__(self, turns: list[AssistantTurn | Callable[[list[Message]], AssistantTurn]]):
        self.turns = list(turns)
        self.summary_requests: list[str] = []

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        if not tools:
            self.summary_requests.append(messages[-1].content)
            return AssistantTurn(
                "<analysis>went through it all</analysis>\n<summary>Fixed add() in calc.py "
                "(it subtracted); the test passes; notes.txt holds the dataset rules.</summary>",
                [],
                StopReason.STOP,
            )
        turn = self.turns.pop(0)
        return turn(messages) if callable(turn) else turn


def _call(call_id: str, name: str, **args: Any) -> AssistantTurn:
    return AssistantTurn(None, [ToolCall(call_id, name, args)], StopReason.TOOL_USE)


def _say(text: str) -> AssistantTurn:
    return AssistantTurn(text, [], StopReason.STOP)


def _long_session(tmp_path) -> tuple[Any, SessionModel]:
    (tmp_path / "calc.py").write_text(CALC_BROKEN)
    (tmp_path / "test_calc.py").write_text(TEST_CALC)
    (tmp_path / "notes.txt").write_text(NOTES)
    test = "python3 -c 'import test_calc; test_calc.test_add(); print(\"1 passed\")'"
    state = FileState()
    model = SessionModel(
        [
            _call("c1", "bash", command=test),
            _call("c2", "read", path="calc.py"),
            _call("c3", "edit", path="calc.py", old_string="a - b  # BUG", new_string="a + b"),
            _call("c4", "bash", command=test),
            _say("Fixed: add() subtracted instead of adding; the test passes now."),
            _call("c5", "read", path="notes.txt"),
            _say("notes.txt: ISO dates, and the id column is called 'key'."),
            _say("add() used minus instead of plus."),
        ]
    )
    session = build_agent(
        Config(max_context_tokens=100_000, preserve_recent=2),
        workspace=tmp_path,
        provider=model,
        # one FileState, as the standard tools share it: what read returned is re-attached
        tools=[BashTool(tmp_path), ReadTool(tmp_path, state), EditTool(tmp_path, state)],
        subagents=False,
        gate=False,
    )
    return session, model


async def test_a_long_session_is_summarised_from_its_whole_transcript_and_keeps_what_matters(
    tmp_path,
):
    session, model = _long_session(tmp_path)
    for request in REQUESTS:
        await session.send(request)
    assert (tmp_path / "calc.py").read_text() == CALC_FIXED
    assert await session.compact()

    (request,) = model.summary_requests
    # two phases, no tools (SessionModel only answers tool-less requests as summaries)
    assert "<analysis>" in request and "<summary>" in request
    # the whole transcript: every request, the failing run's error, the file as read, the fix
    for said in REQUESTS[:2]:  # the third is in the preserved tail, word for word
        assert said in request
    assert REQUESTS[2] not in request
    assert "add(2, 2) is wrong" in request  # the failing test's error, not a 100-char clip
    assert "a - b  # BUG" in request  # what read returned
    assert '"new_string": "a + b"' in request  # the edit and its arguments
    assert "1 passed" in request
    assert NOTES.splitlines()[0] in request and request.count("Dataset conventions") >= 40

    summary = next(
        m
        for m in session.history
        if isinstance(m, Message.System) and m.content.startswith(SUMMARY_PREFIX)
    )
    assert summary_body(summary).startswith("Fixed add() in calc.py")
    assert "went through it all" not in summary.content  # the analysis is not kept
    # every request the person made, word for word
    listed = summary.content.split(REQUESTS_HEADER, 1)[1].split(FILES_HEADER, 1)[0]
    for said in REQUESTS[:2]:
        assert f"- {said}" in listed
    assert session.history[-2] == Message.User(REQUESTS[2])
    # the files read most recently, as they are now (calc.py fixed), latest first
    files = summary.content.split(FILES_HEADER, 1)[1]
    assert files.index("--- notes.txt ---") < files.index("--- calc.py ---")
    assert CALC_FIXED in files and "BUG" not in files
    assert_invariant(session.history)

    # and the session goes on from the compacted context
    model.turns.append(_say("Nothing else is open."))
    assert await session.send("Anything left?") == "Nothing else is open."


async def test_auto_compaction_starts_at_the_window_less_the_output_reserve():
    cm = ContextManager(10_000, 2, output_reserve=2_000)
    assert cm.threshold == 8_000
    cm.record(TokenUsage(7_900, 50))
    assert not cm.should_compact()
    cm.record(TokenUsage(7_950, 50))
    assert cm.should_compact()
    assert ContextManager(10_000, 2, output_reserve=9_000).threshold == 5_000  # half at least


def test_a_session_reserves_the_models_output_cap(tmp_path):
    default = build_agent(Config(max_context_tokens=100_000), workspace=tmp_path, model="mock")
    assert default.context.threshold == 100_000 - 8192
    capped = Config(max_context_tokens=100_000, generation=ModelSettings(max_output_tokens=4_000))
    assert build_agent(capped, workspace=tmp_path, model="mock").context.threshold == 96_000


async def test_compact_with_a_focus_asks_the_summary_to_stress_it(tmp_path):
    session, model = _long_session(tmp_path)
    await session.send(REQUESTS[0])
    reply = await session.command("/compact the dataset's id column")
    assert reply is not None and reply.startswith("compacted:")
    assert "pay particular attention to: the dataset's id column" in model.summary_requests[0]


async def test_every_compaction_is_reported_to_on_compact():
    seen: list[Compaction] = []
    cm = ContextManager(10, 1, on_compact=seen.append)

    class Summary:
        async def chat(self, messages, tools):
            return _say("<summary>S</summary>")

    messages = [Message.User("a"), Message.User("b"), Message.User("c")]
    assert await cm.compact_now(Summary(), messages, focus="b")
    assert seen[-1].trigger == "manual" and seen[-1].how == "summary" and seen[-1].focus == "b"
    await cm.recover(Summary(), [*messages, Message.User("d")])
    assert seen[-1].trigger == "emergency"


class SummariesFail(FakeServer):
    """A vLLM-like server whose summary requests (no tools offered) get an HTTP 500."""

    summary_attempts = 0

    def answer(self, body: dict[str, Any]) -> tuple[int, Any]:
        if not body.get("tools"):
            self.summary_attempts += 1
            return 500, {"error": {"message": "summary backend exploded", "code": 500}}
        return super().answer(body)


async def test_a_summary_failing_three_times_leaves_every_later_turn_working_and_says_so_once(
    tmp_path, caplog
):
    replies = [Reply(f"answer {i}: " + "a" * 600, usage=None) for i in range(8)]
    with SummariesFail("vllm", replies) as server:
        provider = OpenAICompatProvider("local-model", base_url=server.url, max_retries=0)
        session = build_agent(
            # a small budget: compaction is due after every turn
            Config(max_context_tokens=400, preserve_recent=2),
            workspace=tmp_path,
            provider=provider,
            tools=[ReadTool(tmp_path)],
            subagents=False,
            gate=False,
        )
        with caplog.at_level(logging.WARNING, logger="clawnb.context"):
            answers = [await session.send(f"question {i} " + "q" * 300) for i in range(8)]
    assert answers == [f"answer {i}: " + "a" * 600 for i in range(8)]  # every turn answered
    assert server.summary_attempts == 3  # then the breaker stopped asking
    assert session.context.breaker_open
    told = [r.getMessage() for r in caplog.records if "compaction failed" in r.getMessage()]
    assert len(told) == 1 and "3 times in a row" in told[0] and "500" in told[0]
    assert session.context.notes == told
    # the oldest turns were dropped instead, whole: the history stays valid and small
    assert_invariant(session.history)
    assert len(session.history) < 8
    last = session.history[-1]
    assert isinstance(last, Message.Assistant) and last.turn.text == answers[-1]


async def test_reattached_files_come_from_the_workspace_within_the_budget(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("changed on disk since it was read\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(7):
        (ws / f"f{i}.txt").write_text(f"file {i} now\n")
    reads = [ToolCall(f"r{i}", "read", {"path": f"f{i}.txt"}) for i in range(7)]
    reads += [
        ToolCall("ro", "read", {"path": str(outside)}),
        ToolCall("rp", "read", {"path": ".claw/tool-results/1-bash-c1.txt", "limit": 10}),
    ]
    messages: list[Message] = [Message.User("look around")]
    for call in reads:
        messages += [
            Message.Assistant(AssistantTurn(None, [call], StopReason.TOOL_USE)),
            Message.ToolResult(call.id, f"as read: {call.arguments['path']}"),
        ]
    messages += [Message.User("thanks"), _say("ok")]
    state = FileState()
    for i in range(7):  # the read tool returned them (and records that it did)
        await ReadTool(ws, state).call({"path": f"f{i}.txt"})
    seen: list[Compaction] = []
    cm = ContextManager(100_000, 2, workspace=ws, on_compact=seen.append, file_state=state)

    class Summary:
        async def chat(self, messages, tools):
            return _say("<summary>S</summary>")

    assert await cm.compact(Summary(), messages)
    files = messages[0].content.split(FILES_HEADER, 1)[1]
    # the latest five, latest first; outside the workspace: what was read, not the disk
    assert seen[-1].files == (str(outside), "f6.txt", "f5.txt", "f4.txt", "f3.txt")
    assert f"as read: {outside}" in files and "changed on disk" not in files
    assert "file 6 now" in files and "as read: f6.txt" not in files
    assert "tool-results" not in files  # a persisted result is paged, never re-attached
    assert "f2.txt" not in files
