"""The "see it run" views: what they show, as text and as HTML."""

import clawnb
from clawnb.course._helpers import text_turn, tool_turn
from clawnb.course.see import Gauge, Timeline, rounds, sse_steps
from clawnb.providers.sse import StreamAccumulator, parse_sse_line
from clawnb.types import Message


async def test_timeline_lists_each_event_with_the_history_invariant(tmp_path):
    (tmp_path / "a.txt").write_text("alpha")
    agent = clawnb.SimpleAgent(
        clawnb.MockProvider(
            [tool_turn(("c1", "read", {"path": str(tmp_path / "a.txt")})), text_turn("done")]
        )
    ).tool(clawnb.ReadTool())
    history = [Message.User("read a")]
    timeline = Timeline(history)
    await agent.chat(history, timeline)
    text = repr(timeline)
    assert text.splitlines()[0].split() == ["step", "event", "detail", "history", "valid"]
    kinds = [step[0] for step in timeline.steps]
    assert kinds.index("ToolCall") < kinds.index("ToolResult") < kinds.index("Done")
    assert "ok: alpha" in text
    assert all(valid == "yes" for _, _, valid in timeline.steps)
    assert (
        "<table" in timeline._repr_html_() and "var(--jp-border-color2)" in timeline._repr_html_()
    )


def test_timeline_shows_a_broken_history():
    history = [Message.ToolResult("x", "orphan")]
    timeline = Timeline(history)
    timeline(clawnb.AgentEvent.Done("?"))
    assert timeline.steps == [("Done", "?", "no")]


def test_rounds_number_each_model_turn_and_flag_a_missing_result():
    history = [
        Message.User("go"),
        Message.Assistant(tool_turn(("c1", "read", {"path": "a"}), ("c2", "read", {"path": "b"}))),
        Message.ToolResult("c1", "alpha"),
        Message.Assistant(text_turn("done")),
    ]
    rows = rounds(history).rows
    assert ["1", "model calls read", "{'path': 'a'}"] in rows
    assert ["1", "  result", "(missing!)"] in rows
    assert ["2", "model says", "done"] in rows


def test_sse_steps_show_each_line_and_the_assembled_turn():
    lines = [
        'data: {"choices":[{"delta":{"content":"Hel"}}]}',
        ": keep-alive",
        'data: {"choices":[{"delta":{"content":"lo"}}]}',
        "data: [DONE]",
    ]
    rows = sse_steps(lines, parse_sse_line, StreamAccumulator()).rows
    assert [r[1] for r in rows[:4]] == ["TextDelta", "(nothing)", "TextDelta", "Done"]
    assert rows[2][2] == "Hello"
    assert rows[-1][1] == "turn: text=Hello calls=none"


def test_gauge_fills_up_and_says_when_to_compact():
    window = clawnb.ContextManager(1000, 4)
    window.record(clawnb.TokenUsage(500, 0))
    assert repr(Gauge(window)).endswith("500 / 1,000 tokens (50%) — ok")
    window.record(clawnb.TokenUsage(600, 0))
    assert "compact now" in repr(Gauge(window))
    assert "var(--jp-error-color1)" in Gauge(window)._repr_html_()
