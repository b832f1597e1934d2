"""Issue 25 item 1 — results that fit: an output over its tool's threshold is persisted and
the model gets a ~2 KB preview with the path and size, which it pages through with ``read``
offset/limit; one turn's results together stay within a budget (the largest persisted first);
the card still shows the output as before."""

from __future__ import annotations

import re
from collections.abc import Callable

from clawnb.agent import SimpleAgent
from clawnb.context import estimate_tokens
from clawnb.events import AgentEvent
from clawnb.tools import BashTool, ReadTool, ResultLimiter
from clawnb.tools.results import CARD_CHARS, PREVIEW_CHARS
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall, ToolDefinition

SAVED = re.compile(r"saved in full to (\S+?)\. Below")
PREVIEW_MAX = PREVIEW_CHARS + 600  # the preview and its note (path, size, how to page)


class StepModel:
    """A scripted model whose next turn may depend on what it has seen (the saved path)."""

    def __init__(self, steps: list[Callable[[list[Message]], AssistantTurn]]) -> None:
        self.steps = list(steps)
        self.seen: list[list[Message]] = []

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        self.seen.append(list(messages))
        return self.steps.pop(0)(messages)


def _calls(*calls: ToolCall) -> AssistantTurn:
    return AssistantTurn(None, list(calls), StopReason.TOOL_USE)


def _last_result(messages: list[Message]) -> str:
    return next(m.content for m in reversed(messages) if isinstance(m, Message.ToolResult))


ROWS = 440_000  # "row 0000001\n" … : 5,280,000 characters


async def test_a_5_mb_output_costs_the_context_only_its_preview_and_page_2_reads_back(tmp_path):
    command = f"python3 -c \"import sys; sys.stdout.write(''.join(f'row {{i:07d}}\\n' for i in range(1, {ROWS + 1})))\""

    def read_page_2(messages: list[Message]) -> AssistantTurn:
        saved = SAVED.search(_last_result(messages)).group(1)
        return _calls(ToolCall("c2", "read", {"path": saved, "offset": 201, "limit": 200}))

    model = StepModel(
        [
            lambda _: _calls(ToolCall("c1", "bash", {"command": command})),
            read_page_2,
            lambda _: AssistantTurn("rows 201-400 read", [], StopReason.STOP),
        ]
    )
    limiter = ResultLimiter(directory=tmp_path / ".claw")
    agent = SimpleAgent(model, tools=[BashTool(tmp_path), ReadTool(tmp_path)], result_limit=limiter)
    cards: list[str] = []

    async def on_event(event: object) -> None:
        if isinstance(event, AgentEvent.ToolResult):
            cards.append(event.content)

    messages: list[Message] = [Message.User("print the rows, then show me rows 201-400")]
    assert await agent.chat(messages, on_event) == "rows 201-400 read"

    first = messages[2]
    assert isinstance(first, Message.ToolResult)
    # the context holds the preview, not 5 MB: what the model's second request carried
    assert len(first.content) <= PREVIEW_MAX
    assert estimate_tokens([first]) <= PREVIEW_MAX // 4 + 10
    assert "5,280,000 chars, 440,000 lines" in first.content
    assert first.content.count("row ") < 200
    assert "row 0000001" in first.content and "row 0440000" in first.content  # head and tail
    saved = SAVED.search(first.content).group(1)
    with open(saved) as fh:
        assert len(fh.read()) == 5_280_000

    # page 2 came back whole, through the read tool
    page = messages[4]
    assert isinstance(page, Message.ToolResult)
    numbered = re.findall(r"row (\d{7})", page.content)
    assert numbered == [f"{i:07d}" for i in range(201, 401)]

    # the card shows what it always did: up to CARD_CHARS of the output itself, and the path
    assert len(cards[0]) <= CARD_CHARS and cards[0].startswith("[the full result (5280000 chars)")
    assert saved in cards[0]


async def test_a_result_between_the_threshold_and_the_card_size_is_whole_on_the_card(tmp_path):
    text = "".join(f"entry {i}\n" for i in range(3000))  # ~26,000 chars
    limiter = ResultLimiter(directory=tmp_path)
    call = ToolCall("c1", "grep", {})
    model_copy = limiter(call, text)
    assert len(model_copy) <= PREVIEW_MAX
    assert limiter.card(call, text) == text


def test_each_tool_has_its_own_threshold(tmp_path):
    limiter = ResultLimiter(max_chars=5_000, directory=tmp_path, per_tool={"bash": 30_000})
    text = "y" * 20_000
    assert limiter(ToolCall("b", "bash", {}), text) == text
    assert limiter(ToolCall("r", "read", {}), text).startswith("[output too large")
    assert limiter.threshold("bash") == 30_000 and limiter.threshold("glob") == 5_000


def test_a_threshold_too_small_is_refused_by_name():
    import pytest

    with pytest.raises(ValueError, match="grep: a result threshold must be at least 1000"):
        ResultLimiter(per_tool={"grep": 10})


async def test_ten_parallel_big_reads_in_one_turn_stay_within_the_turn_budget(tmp_path):
    sizes = [700 + 60 * i for i in range(10)]  # lines per file: each result under 16,000 chars
    for i, lines in enumerate(sizes):
        (tmp_path / f"part{i}.txt").write_text("".join(f"p{i} line {n}\n" for n in range(lines)))
    calls = [ToolCall(f"r{i}", "read", {"path": f"part{i}.txt"}) for i in range(10)]
    model = StepModel(
        [lambda _: _calls(*calls), lambda _: AssistantTurn("read all", [], StopReason.STOP)]
    )
    limiter = ResultLimiter(directory=tmp_path / ".claw", turn_budget=60_000)
    agent = SimpleAgent(model, tools=[ReadTool(tmp_path)], result_limit=limiter)
    messages: list[Message] = [Message.User("read the ten parts")]
    assert await agent.chat(messages) == "read all"

    results = [m.content for m in messages if isinstance(m, Message.ToolResult)]
    assert len(results) == 10
    raw = [await ReadTool(tmp_path).call({"path": f"part{i}.txt"}) for i in range(10)]
    assert max(map(len, raw)) <= 16_000 < sum(map(len, raw))  # none alone, all together over
    assert sum(map(len, results)) <= 60_000
    persisted = [i for i, text in enumerate(results) if text.startswith("[output too large")]
    kept = [i for i in range(10) if i not in persisted]
    assert persisted and kept
    assert min(len(raw[i]) for i in persisted) >= max(len(raw[i]) for i in kept)  # largest first
    for i in kept:
        assert results[i] == raw[i]
    # what the model's next request carried is what the history holds
    assert model.seen[1][-10:] == messages[-11:-1]


async def test_in_a_session_the_model_pages_a_persisted_result_through_the_real_gate(tmp_path):
    from clawnb.session.assemble import build_agent

    (tmp_path / "big.log").write_text("".join(f"event {i:06d}\n" for i in range(1, 20_001)))

    def page_2(messages: list[Message]) -> AssistantTurn:
        saved = SAVED.search(_last_result(messages)).group(1)
        return _calls(ToolCall("c2", "read", {"path": saved, "offset": 101, "limit": 100}))

    model = StepModel(
        [
            lambda _: _calls(ToolCall("c1", "read", {"path": "big.log"})),
            page_2,
            lambda _: AssistantTurn("paged", [], StopReason.STOP),
        ]
    )
    # the standard tools and gate (default mode, no approver: anything that asks is refused)
    session = build_agent(workspace=tmp_path, provider=model, subagents=False, skills=False)
    assert await session.send("read big.log, then its second page") == "paged"
    first, second = [m.content for m in session.history if isinstance(m, Message.ToolResult)]
    assert len(first) <= PREVIEW_MAX
    assert SAVED.search(first).group(1).startswith(str(tmp_path / ".claw" / "tool-results"))
    assert re.findall(r"event (\d{6})", second) == [f"{i:06d}" for i in range(101, 201)]
