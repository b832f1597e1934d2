"""The "see it run" views: what they show, as text and as HTML."""

import sys

import clawnb
from clawnb.course._helpers import file_with, read_call, text_turn, tool_turn
from clawnb.course.see import Gauge, Timeline, rounds, sse_steps
from clawnb.providers.sse import StreamAccumulator, parse_sse_line
from clawnb.types import Message


async def _timeline_of_one_read(tmp_path):
    """The timeline of an agent run that reads one file and answers."""
    file_with(tmp_path / "a.txt", "alpha")
    provider = clawnb.MockProvider(
        [tool_turn(read_call("c1", tmp_path / "a.txt")), text_turn("done")]
    )
    history = [Message.User("read a")]
    timeline = Timeline(history)
    await clawnb.SimpleAgent(provider).tool(clawnb.ReadTool()).chat(history, timeline)
    return timeline


async def test_timeline_lists_each_event_with_the_history_invariant(tmp_path):
    timeline = await _timeline_of_one_read(tmp_path)
    text = repr(timeline)
    assert text.splitlines()[0].split() == ["step", "event", "detail", "history", "valid"]
    kinds = [step[0] for step in timeline.steps]
    assert kinds.index("ToolCall") < kinds.index("ToolResult") < kinds.index("Done")
    assert "ok: alpha" in text
    assert "model turn: 1 tool call(s)" in text and "model says 'done', 0 tool call(s)" in text
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
    assert repr(sse_steps(lines, parse_sse_line, StreamAccumulator())).startswith("SSE line")


def test_gauge_fills_up_and_says_when_to_compact():
    window = clawnb.ContextManager(1000, 4)
    window.record(clawnb.TokenUsage(500, 0))
    assert repr(Gauge(window)).endswith("500 / 1,000 tokens (50%) — ok")
    window.record(clawnb.TokenUsage(1100, 0))  # a turn's input is the whole history
    assert "compact now" in repr(Gauge(window))
    assert "var(--jp-error-color1)" in Gauge(window)._repr_html_()


CLICK = {"content": {"data": {"method": "custom", "content": {"event": "click"}}}, "buffers": []}


def click(button):
    # what the front end sends when the button is pressed (ARCHITECTURE §4.8)
    button._handle_msg(CLICK)


async def test_timeline_widget_steps_through_the_run_with_prev_next_and_the_slider(tmp_path):
    timeline = await _timeline_of_one_read(tmp_path)
    kinds = [step[0] for step in timeline.steps]
    stepper = timeline.widget()
    assert stepper.step == 1 and stepper.prev.disabled and not stepper.next.disabled
    assert f"step 1 of {len(kinds)}: {kinds[0]}" in stepper.view.value
    for _ in range(kinds.index("ToolResult")):
        click(stepper.next)
    shown = stepper.view.value
    assert "ToolResult" in shown and "ok: alpha" in shown
    assert "history invariant holds after this step" in shown
    assert "var(--jp-success-color1)" in shown
    click(stepper.prev)
    assert stepper.step == kinds.index("ToolResult")  # one back, counted from 1
    assert f": {kinds[stepper.step - 1]}</div>" in stepper.view.value
    stepper.slider.value = len(kinds)  # dragging the slider to the end
    assert "Done" in stepper.view.value and stepper.next.disabled
    click(stepper.next)  # past the end: stays on the last step
    assert stepper.step == len(kinds)
    assert stepper.position.value == f"{len(kinds)} of {len(kinds)}"


def test_timeline_widget_marks_a_step_where_the_history_is_broken():
    timeline = Timeline([Message.ToolResult("x", "orphan")])
    timeline(clawnb.AgentEvent.Done("?"))
    frame = timeline.widget().view.value
    assert "history invariant is broken after this step" in frame
    assert "var(--jp-error-color1)" in frame


def test_views_display_the_static_table_with_the_widget_beside_it_only_in_a_kernel(monkeypatch):
    timeline = Timeline()
    timeline(clawnb.AgentEvent.Done("bye"))
    key = "application/vnd.jupyter.widget-view+json"
    monkeypatch.delitem(sys.modules, "ipykernel", raising=False)
    bundle = timeline._repr_mimebundle_()
    assert set(bundle) == {"text/plain", "text/html"}
    assert bundle["text/html"] == timeline._repr_html_()
    import ipykernel  # the real module, as in a kernel (no kernel runs: comms are no-ops)

    monkeypatch.setitem(sys.modules, "ipykernel", ipykernel)
    bundle = timeline._repr_mimebundle_()
    # what a saved notebook, GitHub and nbval read is the same table; JupyterLab shows the widget
    assert bundle["text/html"] == timeline._repr_html_() and "Done" in bundle["text/plain"]
    assert bundle[key]["model_id"]


def test_sse_stepper_shows_bytes_in_and_events_out_one_line_per_step():
    lines = [
        'data: {"choices":[{"delta":{"content":"Hel"}}]}',
        ": keep-alive",
        'data: {"choices":[{"delta":{"content":"lo"}}]}',
        "data: [DONE]",
    ]
    stepper = sse_steps(lines, parse_sse_line, StreamAccumulator()).widget()
    assert stepper.slider.max == 5  # four lines and the finish
    assert "line 1 of 4: TextDelta" in stepper.view.value
    assert "&quot;Hel&quot;" in stepper.view.value  # the bytes in, escaped
    click(stepper.next)
    assert "keep-alive" in stepper.view.value and "(nothing" in stepper.view.value
    click(stepper.next)
    assert "text so far</div>" in stepper.view.value and ">Hello</pre>" in stepper.view.value
    stepper.show(5)
    assert "finish" in stepper.view.value and "turn: text=Hello calls=none" in stepper.view.value


async def test_gauge_steps_fill_the_window_and_mark_the_compaction():
    window = clawnb.ContextManager(max_tokens=120, preserve_recent=2)
    provider = clawnb.MockProvider([text_turn("summary of the early questions")])
    gauge = Gauge(window)
    history = [Message.System("You are a coding agent.")]
    compacted_at = None
    for i in range(6):
        history.append(Message.User(f"Question {i}: " + "words " * 12))
        if await window.maybe_compact(provider, history) and compacted_at is None:
            compacted_at = i + 1
        gauge.snap(f"question {i} added", history)
    assert compacted_at is not None, "the scripted run should reach the limit"
    notes = [row[4] for row in gauge._snap_rows()]
    assert notes.count("compacted") == 1 and notes.index("compacted") == compacted_at - 1
    stepper = gauge.widget()
    assert stepper.slider.max == 6
    stepper.show(compacted_at)
    assert "compacted" in stepper.view.value
    assert "compacted" in repr(gauge) and "<table" in gauge._repr_html_()


def test_an_empty_stepper_says_so():
    stepper = Timeline().widget()
    assert "no steps yet" in stepper.view.value and stepper.next.disabled


def test_saving_keeps_the_table_and_drops_the_widget_view_and_its_state():
    from clawnb.course._save import WIDGET_VIEW, strip_widgets

    nb = {
        "metadata": {"widgets": {"state": {}}},
        "cells": [
            {
                "cell_type": "code",
                "outputs": [
                    {"data": {"text/html": "<table>", WIDGET_VIEW: {"model_id": "abc"}}},
                    {"text": "printed"},
                ],
            }
        ],
    }
    assert strip_widgets(nb) == 1
    assert nb["cells"][0]["outputs"][0]["data"] == {"text/html": "<table>"}
    assert "widgets" not in nb["metadata"]


def test_saved_course_notebooks_carry_no_widget_views():
    # GitHub and a reopened notebook could not draw them: the saved copy shows the tables
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "notebooks"
    for path in folder.glob("*.ipynb"):
        assert "widget-view+json" not in path.read_text(encoding="utf-8"), path.name


def test_sse_stepper_takes_network_chunks_cut_inside_lines_and_characters():
    stream = (
        'data: {"choices":[{"delta":{"content":"Caf\u00e9"}}]}\n'
        ": keep-alive\r\n"
        'data: {"choices":[{"delta":{"content":" ok"}}]}\n'
        "data: [DONE]"  # no newline at the very end
    ).encode()
    chunks = [stream[i : i + 7] for i in range(0, len(stream), 7)]
    steps = sse_steps(chunks, parse_sse_line, StreamAccumulator(), chunked=True)
    assert steps.header == ["chunk", "lines", "events", "text so far"]
    assert repr(steps).splitlines()[0].split() == ["chunk", "lines", "events", "text", "so", "far"]
    # the "é" is two bytes; wherever the cut falls, the text comes out whole
    assert steps.rows[-1] == ["(finish)", "", "turn: text=Café ok calls=none", ""]
    assert steps.rows[-2][:3] == ["(end of stream)", "1", "Done"]
    completed = [line for _, lines, _, _, _ in steps.inputs for line in lines or []]
    assert completed[1] == ": keep-alive"  # the \r of a CRLF line ending is dropped
    stepper = steps.widget()
    assert stepper.slider.max == len(chunks) + 2
    assert "chunk 1 of" in stepper.view.value and "(none yet)" in stepper.view.value
    assert "held back until the line ends</div>" in stepper.view.value
    first_line_done = next(i for i, row in enumerate(steps.rows) if row[2] == "TextDelta")
    stepper.show(first_line_done + 1)
    assert "Caf\u00e9" in stepper.view.value and "TextDelta" in stepper.view.value


def _one_cell_notebook(path, source):
    """Write a notebook for the python3 kernel whose only cell is ``source``."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(source)]
    nbformat.write(nb, str(path))
    return path


def test_save_runs_a_notebook_in_a_kernel_and_keeps_the_table_not_the_widget(tmp_path):
    import json

    from clawnb.course._save import save_outputs

    path = _one_cell_notebook(
        tmp_path / "see.ipynb",
        "import clawnb\n"
        "from clawnb.course.see import Timeline\n"
        "timeline = Timeline()\n"
        "timeline(clawnb.AgentEvent.Done('bye'))\n"
        "timeline",
    )
    # in the kernel the display carried a widget view; the saved copy has only the table
    assert save_outputs(path, timeout=30) == 1
    saved = json.loads(path.read_text())
    (output,) = saved["cells"][0]["outputs"]
    assert set(output["data"]) == {"text/plain", "text/html"}
    assert "Done" in "".join(output["data"]["text/plain"])
    assert "widgets" not in saved["metadata"]


def test_save_leaves_the_notebook_untouched_when_a_cell_fails(tmp_path):
    import pytest
    from nbclient.exceptions import CellExecutionError

    from clawnb.course._save import save_outputs

    path = _one_cell_notebook(tmp_path / "broken.ipynb", "1 / 0")
    before = path.read_bytes()
    with pytest.raises(CellExecutionError, match="ZeroDivisionError"):
        save_outputs(path, timeout=30)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["broken.ipynb"]
