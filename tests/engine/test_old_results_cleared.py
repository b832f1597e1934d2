"""Issue 25 item 1 — old persisted results cleared in place: once the previews behind the most
recent ones would free enough, each becomes its one-line stub (path and size) all at once, so
a long session sends fewer tokens and the prompt-cache prefix breaks only at that boundary."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from clawnb.agent import SimpleAgent
from clawnb.context import CLEAR_KEEP, ContextManager, ExtractiveSummarizer
from clawnb.tools import ReadTool, ResultLimiter
from clawnb.tools.results import cleared_stub
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall, ToolDefinition

STUB = re.compile(
    r"^\[old result cleared from the context \(([\d,]+) chars, ([\d,]+) lines\): "
    r"saved in full to (\S+); read it"
)


class Reader:
    """Each request from the person ``read NAME``: one read of NAME, then a one-line answer;
    ``page PATH`` reads PATH back. Records every request as the wire would carry it."""

    def __init__(self) -> None:
        self.requests: list[list[str]] = []

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        self.requests.append([json.dumps(m.to_dict(), sort_keys=True) for m in messages])
        last = messages[-1]
        if isinstance(last, Message.User):
            verb, target = last.content.split()[:2]
            args: dict[str, object] = {"path": target}
            if verb == "page":
                args.update(offset=1, limit=3)
            call = ToolCall(f"c{len(self.requests)}", "read", args)
            return AssistantTurn(None, [call], StopReason.TOOL_USE)
        return AssistantTurn("read it", [], StopReason.STOP)


def _big_files(root, count: int) -> list[str]:
    names = []
    for i in range(count):
        name = f"log{i}.txt"
        (root / name).write_text("".join(f"file {i} entry {n} ok\n" for n in range(1200)))
        names.append(name)
    return names


def _session(tmp_path, **options: object) -> tuple[SimpleAgent, ContextManager, Reader]:
    model = Reader()
    context = ContextManager(
        100_000, 6, summarizer=ExtractiveSummarizer(), output_reserve=8192, **options
    )  # type: ignore[arg-type]
    agent = SimpleAgent(
        model,
        tools=[ReadTool(tmp_path)],
        context=context,
        result_limit=ResultLimiter(directory=tmp_path / ".claw"),
    )
    return agent, context, model


async def test_old_previews_become_stubs_at_once_and_the_recent_ones_stay(tmp_path):
    agent, context, model = _session(tmp_path, clear_min_tokens=3_000)
    history: list[Message] = []
    for name in _big_files(tmp_path, 12):
        history.append(Message.User(f"read {name}"))
        await agent.chat(history)

    results = [m.content for m in history if isinstance(m, Message.ToolResult)]
    stubs = [text for text in results if text.startswith("[old result cleared")]
    previews = [text for text in results if text.startswith("[output too large")]
    assert context.clearings >= 1 and context.compactions == 0
    assert len(stubs) + len(previews) == 12
    assert len(previews) >= CLEAR_KEEP
    assert all(text.startswith("[output too large") for text in results[-CLEAR_KEEP:])
    for stub in stubs:
        assert "\n" not in stub and len(stub) < 400
        chars, lines, path = STUB.match(stub).groups()
        saved = Path(path).read_text()
        assert f"{len(saved):,}" == chars and lines == "1,200"

    # the prefix breaks only where old results were cleared: every other request continues
    # the one before byte for byte
    breaks = sum(
        1
        for before, after in zip(model.requests, model.requests[1:], strict=False)
        if after[: len(before)] != before
    )
    assert breaks == context.clearings


async def test_a_cleared_result_is_read_back_whole_through_its_path(tmp_path):
    agent, context, _ = _session(tmp_path, clear_min_tokens=1_000, clear_keep=1)
    history: list[Message] = []
    for name in _big_files(tmp_path, 4):
        history.append(Message.User(f"read {name}"))
        await agent.chat(history)
    stub = next(m.content for m in history if isinstance(m, Message.ToolResult))
    path = STUB.match(stub).group(3)
    history.append(Message.User(f"page {path}"))
    await agent.chat(history)
    page = [m.content for m in history if isinstance(m, Message.ToolResult)][-1]
    assert "file 0 entry 0 ok" in page and "file 0 entry 2 ok" in page


async def test_nothing_is_cleared_while_it_would_free_less_than_the_minimum(tmp_path):
    agent, context, model = _session(tmp_path)  # default: a tenth of the threshold
    assert context.clear_min_tokens == context.threshold // 10
    history: list[Message] = []
    for name in _big_files(tmp_path, 8):  # 4 old previews: ~2,000 tokens, under ~9,000
        history.append(Message.User(f"read {name}"))
        await agent.chat(history)
    assert context.clearings == 0
    assert not any(
        m.content.startswith("[old result cleared")
        for m in history
        if isinstance(m, Message.ToolResult)
    )
    assert all(
        after[: len(before)] == before
        for before, after in zip(model.requests, model.requests[1:], strict=False)
    )


def test_only_a_saved_preview_has_a_stub():
    assert cleared_stub("plain output\n") is None
    assert (
        cleared_stub(
            "[output too large for the context (20,000 chars, 10 lines); it could not be saved: disk full]"
        )
        is None
    )
    assert cleared_stub(cleared_stub.__doc__ or "") is None


def test_clearing_options_are_checked():
    with pytest.raises(ValueError, match="clear_keep"):
        ContextManager(1000, 2, clear_keep=-1)
    with pytest.raises(ValueError, match="clear_min_tokens"):
        ContextManager(1000, 2, clear_min_tokens=0)
