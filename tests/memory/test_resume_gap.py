"""Issue 25 item 3's resume rules: a conversation resumed after more than a day is told,
after the history (never in the system prompt), that files may have changed; a resumed
history over the compaction threshold is compacted before the next request goes out."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from clawnb.config import Config
from clawnb.context import SUMMARY_PREFIX
from clawnb.session.assemble import build_agent
from clawnb.session.log import SessionLog, SessionStore
from clawnb.types import AssistantTurn, Message, StopReason, ToolDefinition


class Recording:
    """A scripted model that keeps every request: tool-less ones are summary requests."""

    def __init__(self) -> None:
        self.requests: list[list[Message]] = []
        self.summaries = 0

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        if not tools:
            self.summaries += 1
            return AssistantTurn("<summary>earlier work on calc.py</summary>", [], StopReason.STOP)
        self.requests.append(list(messages))
        return AssistantTurn("done", [], StopReason.STOP)


def _saved_session(workspace: Path, config: Config, messages: int, age: timedelta) -> str:
    """A saved conversation whose every record is ``age`` old (its file rewritten so)."""
    store = SessionStore.for_workspace(workspace, config.sessions_dir)
    log = store.create(meta={"workspace": str(workspace)})
    log.append(Message.System("old prompt"))
    for i in range(messages):
        log.append(Message.User(f"request {i}: " + "word " * 80))
        log.append(Message.Assistant(AssistantTurn(f"answer {i}", [], StopReason.STOP)))
    log.close()
    then = (datetime.now(UTC) - age).isoformat(timespec="microseconds")
    lines = [json.loads(line) for line in log.path.read_text().splitlines()]
    for record in lines:
        record["ts"] = then
        if record["type"] == "session":
            record["created"] = then
    log.path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return log.id


def _reminder_of(request: list[Message]) -> str:
    last = request[-1]
    assert isinstance(last, Message.User)
    return last.content


async def test_resume_after_two_days_reminds_that_files_may_have_changed(tmp_path):
    config = Config()
    session_id = _saved_session(tmp_path, config, 2, timedelta(days=2, hours=1))
    model = Recording()
    session = build_agent(config, workspace=tmp_path, provider=model, session=session_id)
    await session.send("carry on")
    request = model.requests[0]
    text = _reminder_of(request)
    assert text.startswith("carry on")
    assert "<system-reminder>" in text and "resumed after 2 days" in text
    assert "may have changed" in text
    # never in the cached system prompt
    assert isinstance(request[0], Message.System)
    assert "may have changed since" not in request[0].content
    # said once: the next request carries no such note
    await session.send("and then")
    assert "may have changed" not in _reminder_of(model.requests[1])
    session.close()


async def test_resume_within_a_day_says_nothing(tmp_path):
    config = Config()
    session_id = _saved_session(tmp_path, config, 2, timedelta(hours=20))
    model = Recording()
    session = build_agent(config, workspace=tmp_path, provider=model, session=session_id)
    await session.send("carry on")
    assert "<system-reminder>" not in _reminder_of(model.requests[0])
    session.close()


async def test_resume_through_the_command_also_reminds(tmp_path):
    config = Config()
    session_id = _saved_session(tmp_path, config, 1, timedelta(days=3))
    model = Recording()
    session = build_agent(config, workspace=tmp_path, provider=model)
    said = await session.command(f"/resume {session_id}")
    assert said is not None and session_id in said
    await session.send("carry on")
    assert "resumed after 3 days" in _reminder_of(model.requests[0])
    session.close()


async def test_resumed_history_over_threshold_is_compacted_before_the_next_request(tmp_path):
    # threshold 2200 tokens; ~1350 of history and ~1200 of tool schemas, which count too
    config = Config(max_context_tokens=4400, preserve_recent=2)
    session_id = _saved_session(tmp_path, config, 12, timedelta(hours=1))
    model = Recording()
    triggers: list[str] = []
    session = build_agent(config, workspace=tmp_path, provider=model, system_prompt="be brief")
    session.context.on_compact = lambda event: triggers.append(event.trigger)
    session.resume(session_id)
    assert len(session.history) == 25
    await session.send("carry on")
    assert model.summaries == 1 and triggers[0] == "resume"
    first = model.requests[0]
    # the request that went out was already compacted: the summary in place of the middle
    assert any(
        isinstance(m, Message.System) and m.content.startswith(SUMMARY_PREFIX) for m in first
    )
    assert len(first) < 10
    assert not any("request 0:" in getattr(m, "content", "") for m in first[2:])
    # the compacted history is what the session file holds now
    assert isinstance(session.history, SessionLog)
    assert len(SessionLog.read(session.history.path)) == len(session.history)
    session.close()


async def test_resumed_history_under_threshold_is_sent_whole(tmp_path):
    config = Config(max_context_tokens=6000, preserve_recent=2)  # threshold 3000 tokens
    session_id = _saved_session(tmp_path, config, 12, timedelta(hours=1))
    model = Recording()
    session = build_agent(
        config, workspace=tmp_path, provider=model, session=session_id, system_prompt="be brief"
    )
    await session.send("carry on")
    assert model.summaries == 0
    assert len(model.requests[0]) == 26
    session.close()
