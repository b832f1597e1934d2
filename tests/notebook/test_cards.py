"""The tool cards: the real change before the question, theme colours only, compact finished
cards, a button bar that wraps and names the tool."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from clawnb.events import AgentEvent
from clawnb.gates import build_gate
from clawnb.notebook import html, text, transcript, widgets
from clawnb.notebook.approval import Approver
from clawnb.notebook.html import STYLE, card_html
from clawnb.notebook.text import TextView
from clawnb.notebook.transcript import Card
from clawnb.notebook.widgets import WidgetView
from clawnb.tools import EditTool, FileState, ReadTool, WriteTool
from clawnb.types import ToolCall

from .test_widgets import buttons, click, fake_shell, make_view, shown_html


def _rendered():
    view, sink = make_view()
    view.root._view_count = 1
    return view, sink


async def _until(predicate, what: str) -> None:
    for _ in range(300):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


async def _ask_through_gate(view, tool, call: ToolCall, workspace: Path):
    """The engine's gate with the notebook's approver, as a cell wires it."""
    approver = Approver(view, how="widget")
    gate = build_gate(workspace=workspace, approve=approver)
    view(AgentEvent.ToolCall(call.name, f"    [{call.name}: f.py]", call.id, call.arguments))
    return asyncio.ensure_future(gate.before_tool(call, tool))


async def test_the_card_shows_the_exact_diff_before_the_buttons_and_keeps_it(tmp_path) -> None:
    (tmp_path / "f.py").write_text("a = 1\nb = 2\nc = 3\nd = 4\n")
    state = FileState()
    await ReadTool(tmp_path, state).call({"path": "f.py"})
    edit = EditTool(tmp_path, state)
    view, sink = _rendered()
    call = ToolCall("e1", "edit", {"path": "f.py", "old_string": "c = 3", "new_string": "c = 30"})
    decided = await _ask_through_gate(view, edit, call, tmp_path)
    await _until(lambda: "e1" in view._buttons, "the approval buttons")
    box = view.transcript.block_of(view.card("e1")).widget
    waiting = shown_html(box)
    # the real diff against the file on disk: line numbers, context, coloured rows
    assert "line 3: 1 removed, 1 added" in waiting
    assert "<div class='clawnb-del'>-    3 | c = 3</div>" in waiting
    assert "<div class='clawnb-add'>+    3 | c = 30</div>" in waiting
    assert "<div>     2 | b = 2</div>" in waiting
    assert "clawnb-s-waiting" in box._dom_classes
    click(view._buttons["e1"].children[0])  # Approve
    assert await asyncio.wait_for(decided, 2) is call
    view(AgentEvent.ToolRunning("e1", "edit"))
    result = await edit.call(call.arguments)
    view(AgentEvent.ToolResult("e1", "edit", result, "ok"))
    view.throttle.flush_now()
    done = shown_html(box)
    # one diff: the approved one; the result adds only its first line
    assert done.count("clawnb-add") == 1 and done.count("clawnb-del") == 1
    assert "edited f.py" in done and "approved" in done
    view.finish()
    static = sink.shown[-1]["text/markdown"]
    assert static.count("<div class='clawnb-add'>+    3 | c = 30</div>") == 1


async def test_a_write_says_new_file_and_shows_its_content_before_asking(tmp_path) -> None:
    write = WriteTool(tmp_path, FileState())
    view, _ = _rendered()
    call = ToolCall("w1", "write", {"path": "new.py", "content": "x = 1\ny = 2\n"})
    decided = await _ask_through_gate(view, write, call, tmp_path)
    await _until(lambda: "w1" in view._buttons, "the approval buttons")
    shown = shown_html(view.transcript.block_of(view.card("w1")).widget)
    assert "new file, 2 lines" in shown
    assert "+    1 | x = 1" in shown and "+    2 | y = 2" in shown
    decided.cancel()


async def test_an_edit_bound_to_fail_is_never_asked(tmp_path) -> None:
    (tmp_path / "f.py").write_text("a = 1\n")
    edit = EditTool(tmp_path, FileState())  # the file was never read
    view, _ = _rendered()
    call = ToolCall("e1", "edit", {"path": "f.py", "old_string": "1", "new_string": "2"})
    decided = await _ask_through_gate(view, edit, call, tmp_path)
    refusal = await asyncio.wait_for(decided, 2)
    assert view._buttons == {}
    assert "you must read 'f.py' before editing it" in refusal.content


async def test_the_button_bar_wraps_and_names_the_tool() -> None:
    view, _ = _rendered()
    view(AgentEvent.ToolCall("bash", "    [bash: ls]", "b1", {"command": "ls"}))
    task = asyncio.ensure_future(view.ask_approval(view.card("b1")))
    await _until(lambda: "b1" in view._buttons, "the approval buttons")
    bar = view._buttons["b1"]
    assert list(buttons(view, "b1")) == ["Approve", "Deny", "Always allow bash"]
    assert bar.layout.flex_flow == "row wrap"
    assert all(b.layout.width == "auto" for b in buttons(view, "b1").values())
    assert "clawnb-bar" in bar._dom_classes
    task.cancel()


async def test_a_control_file_card_offers_no_always_allow() -> None:
    view, _ = _rendered()
    view(AgentEvent.ToolCall("write", "    [write: CLAUDE.md]", "w1", {"path": "CLAUDE.md"}))
    view.card("w1").once_only = True
    task = asyncio.ensure_future(view.ask_approval(view.card("w1")))
    await _until(lambda: "w1" in view._buttons, "the approval buttons")
    assert list(buttons(view, "w1")) == ["Approve", "Deny"]
    task.cancel()


def test_a_finished_card_is_one_line_that_opens() -> None:
    view, _ = _rendered()
    view(AgentEvent.ToolCall("read", "    [read: notes.txt]", "r1", {"path": "notes.txt"}))
    view(AgentEvent.ToolRunning("r1", "read"))
    view(AgentEvent.ToolResult("r1", "read", "one\ntwo\nthree", "ok"))
    view.throttle.flush_now()
    head, body = view.transcript.block_of(view.card("r1")).widget.children
    assert head.layout.display == "none"
    assert body.value.startswith("<details><summary>")
    summary = body.value.split("</summary>")[0]
    assert "read" in summary and "notes.txt" in summary and "3 lines" in summary
    assert "one&#10;two&#10;three" in body.value.split("</summary>", 1)[1]


def test_glob_and_grep_cards_have_a_title() -> None:
    glob = Card("g1", "glob", "    [glob]", {"pattern": "**/*.py"})
    assert glob.title == "**/*.py"
    assert "<code>**/*.py</code>" in card_html(glob)
    assert Card("g2", "grep", "    [grep]", {"pattern": "TODO", "path": "src"}).title == "TODO"


def test_every_colour_comes_from_a_theme_variable() -> None:
    # the views' modules: the stylesheet and every inline style they write
    source = "".join(Path(m.__file__).read_text() for m in (html, text, transcript, widgets))
    # a colour literal may only be the fallback of a JupyterLab variable
    literal = re.compile(r"#[0-9a-fA-F]{3,8}\b|rgba?\(")
    for match in literal.finditer(source):
        before = source[max(0, match.start() - 40) : match.start()]
        assert re.search(r"var\(--jp-[a-z0-9-]+,\s*$", before), source[match.start() - 60 :][:90]
    props = r"(?:background|color|border|border-left|border-color|border-left-color)"
    for declaration in re.findall(rf"(?:^|[;{{]){props}:([^;}}]*)", STYLE):
        assert "var(--jp-" in declaration or declaration in ("transparent", "inherit"), declaration
    assert "style='color" not in source and "background:#" not in source


def test_text_view_prints_the_change_before_asking() -> None:
    import io

    from clawnb.tools.base import ChangePreview

    out = io.StringIO()
    view = TextView(out)
    view(AgentEvent.ToolCall("write", "    [write: n.py]", "w1", {"path": "n.py"}))
    change = ChangePreview("n.py", "create", "new file, 1 line", "@@ -0,0 +1,1 @@\n+    1 | x", "x")
    view.set_preview(view.card("w1"), change)
    view.set_status(view.card("w1"), "waiting for approval")
    assert "new file, 1 line\n    @@ -0,0 +1,1 @@\n    +    1 | x\n" in out.getvalue()


async def test_the_beacon_follows_the_waiting_card_and_leaves_a_frontend_without_it() -> None:
    view, _ = _rendered()
    view(AgentEvent.ToolCall("bash", "    [bash: ls]", "b1", {"command": "ls"}))
    task = asyncio.ensure_future(view.ask_approval(view.card("b1")))
    await _until(lambda: "b1" in view._buttons, "the approval buttons")
    beacon = view._beacon
    assert beacon is not None and beacon in view.status_bar.children
    assert beacon.waiting == "approval"
    click(view._buttons["b1"].children[1])  # Deny
    assert await asyncio.wait_for(task, 2) == "deny"
    assert beacon.waiting == ""
    # no front end rendered it (no anywidget extension there): it is taken out, for good
    view._beacon_check()
    assert beacon not in view.status_bar.children and view._beacon is None
    view.attention("approval")
    assert view._beacon is None


async def test_calls_run_without_a_question_say_who_allowed_them(tmp_path) -> None:
    view, _ = _rendered()
    approver = Approver(view, how="widget")
    gate = build_gate(workspace=tmp_path, approve=approver, mode="accept_edits")
    write = WriteTool(tmp_path, FileState())
    call = ToolCall("w1", "write", {"path": "a.txt", "content": "x\n"})
    view(AgentEvent.ToolCall("write", "    [write: a.txt]", "w1", call.arguments))
    assert await gate.before_tool(call, write) is call
    assert view._buttons == {}
    assert view.card("w1").label() == "pending (auto-approved: accept_edits mode allows file edits)"
    # not asked, but still shown: what the write does
    assert view.card("w1").preview.summary == "new file, 1 line"
    view.throttle.flush_now()
    assert "+    1 | x" in shown_html(view.transcript.block_of(view.card("w1")).widget)
    # "Always allow" once: the next call of that tool says so too
    gate = build_gate(workspace=tmp_path, approve=approver)
    gate.permissions.record_session_allow("bash")
    bash = ToolCall("b1", "bash", {"command": "true"})
    view(AgentEvent.ToolCall("bash", "    [bash: true]", "b1", bash.arguments))
    from clawnb.tools import BashTool

    assert await gate.before_tool(bash, BashTool(tmp_path)) is bash
    assert "always allowed this session" in view.card("b1").label()
    # read-only calls carry no such note: nothing was waived for them
    read = ToolCall("r1", "read", {"path": "a.txt"})
    view(AgentEvent.ToolCall("read", "    [read: a.txt]", "r1", read.arguments))
    assert await gate.before_tool(read, ReadTool(tmp_path)) is read
    assert view.card("r1").label() == "pending"


def test_streamed_text_is_the_markdown_the_saved_rendering_keeps() -> None:
    view, sink = _rendered()
    view(AgentEvent.TextDelta("## Plan\n\n1. read **notes**\n```python\nx = 1"))
    view.throttle.flush_now()
    (output,) = view.transcript.blocks[0].widget.outputs
    live = output["data"]["text/markdown"]
    # rendered (and sanitized) while it streams, the open fence ending with the text so far;
    # "1" cannot start a key, so it is not held back
    rendered = "<h2>Plan</h2>&#10;<ol>&#10;<li>read <strong>notes</strong></li>&#10;</ol>&#10;"
    assert (
        live == f'<div>{rendered}<pre><code class="language-python">x = 1</code></pre>&#10;</div>'
    )
    view(AgentEvent.TextDelta("\n```\nDone."))
    view.finish()
    static = sink.shown[-1]["text/markdown"]
    assert (
        rendered + '<pre><code class="language-python">x = 1&#10;</code></pre>&#10;<p>Done.</p>'
        in static
    )


async def test_deny_with_words_tells_the_model_what_to_do_instead() -> None:
    from clawnb.events import ApprovalRequest

    view, _ = _rendered()
    approver = Approver(view, how="widget")
    call = ToolCall("b1", "bash", {"command": "rm -rf build"})
    view(AgentEvent.ToolCall("bash", "    [bash: rm -rf build]", "b1", call.arguments))
    task = asyncio.ensure_future(approver(ApprovalRequest(call, "bash: rm -rf build")))
    await _until(lambda: "b1" in view._buttons, "the approval buttons")
    (instead,) = [c for c in view._buttons["b1"].children if type(c).__name__ == "Text"]
    instead.value = "use make clean instead"
    click(buttons(view, "b1")["Deny"])
    answer = await asyncio.wait_for(task, 2)
    assert not answer.allowed
    assert answer.reason.endswith("saying: use make clean instead")
    assert "denied by the user: use make clean instead" in view.card("b1").label()


async def test_the_status_line_says_what_happens_and_stop_ends_the_turn(tmp_path, monkeypatch):
    from clawnb.notebook.runner import CellOptions, ClawInterrupted, run_claw
    from tests.conftest import write_script

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    call = {"id": "b1", "name": "bash", "arguments": {"command": "sleep 30"}}
    write_script(tmp_path / "s.jsonl", [{"text": "Sleeping.", "tool_calls": [call]}])

    shell = fake_shell(tmp_path)
    view, sink = _rendered()
    options = CellOptions(model="scripted:s.jsonl", approve="allow")
    clicked: list[float] = []

    async def press_stop() -> None:
        await _until(lambda: "running bash" in view.footer.value, "the status line")
        assert "0 turns" not in view.footer.value
        assert view.stop.description == "■ Stop"
        clicked.append(asyncio.get_running_loop().time())
        click(view.stop)

    presser = asyncio.ensure_future(press_stop())
    # awaited here, not in a task: ClawInterrupted is a KeyboardInterrupt, which a task would
    # hand to the event loop (as IPython's own cell task does: "Run All" stops)
    try:
        async with asyncio.timeout(10):
            await run_claw(shell, options, "sleep", view=view)
    except ClawInterrupted:
        pass
    else:
        raise AssertionError("Stop did not interrupt the cell")
    await presser
    assert asyncio.get_running_loop().time() - clicked[0] < 5  # the 30 s command was killed
    static = sink.shown[-1]["text/markdown"]
    assert "interrupted" in static
    messages = shell._clawnb_session.messages
    assert messages[-1].content.startswith("error: interrupted")  # the history stays valid


def _submit(text) -> None:
    """Enter in an ipywidgets Text, as the front end reports it."""
    text._handle_msg(
        {"content": {"data": {"method": "custom", "content": {"event": "submit"}}}, "buffers": []}
    )


async def test_the_plan_box_revises_on_enter_and_cancels() -> None:
    view, _ = _rendered()
    view(AgentEvent.TextDelta("1. read\n2. edit"))
    view.throttle.flush_now()
    streamed = view.transcript.blocks[0].widget
    task = asyncio.ensure_future(view.review_plan("1. read\n2. edit"))
    await _until(lambda: any("clawnb-plan" in b._dom_classes for b in view.body.children), "box")
    box = next(b for b in view.body.children if "clawnb-plan" in b._dom_classes)
    assert streamed.layout.display == "none"  # shown once, in the frame
    assert view._beacon is not None and view._beacon.waiting == "plan"
    title, shown, bar = box.children
    assert [c.description for c in bar.children[:3]] == ["Execute", "Revise", "Cancel"]
    text = bar.children[3]
    text.value = "skip step 2"
    _submit(text)
    assert await asyncio.wait_for(task, 2) == ("revise", "skip step 2")
    assert streamed.layout.display is None and box not in view.body.children
    task = asyncio.ensure_future(view.review_plan("1. read"))
    await _until(lambda: any("clawnb-plan" in b._dom_classes for b in view.body.children), "box")
    box = next(b for b in view.body.children if "clawnb-plan" in b._dom_classes)
    click(box.children[2].children[2])  # Cancel
    assert await asyncio.wait_for(task, 2) == ("cancel", "")


def test_a_snapshot_output_follows_the_transcript_for_a_mid_run_save(monkeypatch) -> None:
    shown: list[dict] = []

    class Handle:
        def update(self, bundle, raw=False):
            shown.append(bundle)

    def display(obj, raw=False, display_id=None):
        return Handle() if display_id else None

    view = WidgetView(display=display, clear_output=lambda wait=False: None, snapshots=True)
    view.start()
    view(AgentEvent.TextDelta("Checking the stock. "))
    view.throttle.flush_now()
    assert shown == []  # at most one refresh every SNAPSHOT_EVERY seconds
    view._snapshot_at -= view.SNAPSHOT_EVERY
    view.throttle.flush_now()
    (bundle,) = shown
    assert bundle["text/markdown"].startswith("<div class='clawnb-snapshot'></div>")
    assert "Checking the stock." in bundle["text/markdown"] and STYLE in bundle["text/markdown"]
    view._snapshot_at -= view.SNAPSHOT_EVERY
    view.throttle.flush_now()
    assert len(shown) == 1  # nothing changed: no refresh
    view.finish()


async def test_bash_output_streams_into_its_card_while_it_runs(tmp_path) -> None:
    from clawnb.executor import ToolExecutor
    from clawnb.tools import BashTool
    from clawnb.types import ToolSet

    view, _ = _rendered()
    executor = ToolExecutor(ToolSet([BashTool(tmp_path)]))
    call = ToolCall("b1", "bash", {"command": "echo first line; sleep 30"})
    task = asyncio.ensure_future(executor.run_call(call, view))
    try:
        await _until(
            lambda: view.card("b1") is not None and "first line" in view.card("b1").output,
            "the command's output",
        )
        assert view.card("b1").status == "running"  # live, not the result
        view.throttle.flush_now()
        head = view.transcript.block_of(view.card("b1")).widget.children[0].value
        assert "<pre class='clawnb-result clawnb-live'>first line</pre>" in head
    finally:
        task.cancel()
        await asyncio.wait([task], timeout=10)


def test_a_subagents_calls_nest_under_the_card_of_the_call_they_work_for() -> None:
    view, sink = _rendered()
    view(AgentEvent.ToolCall("subagent", "    [subagent]", "p1", {"task": "look around"}))
    view(AgentEvent.ToolCall("read", "    [read: a.txt]", "r0", {"path": "a.txt"}))
    inner = AgentEvent.ToolCall("glob", "    [glob]", "g1", {"pattern": "*.py"})
    view(AgentEvent.Nested("p1", inner))
    view.throttle.flush_now()
    children = list(view.body.children)
    parent = view.transcript.block_of(view.card("p1")).widget
    nested = view.transcript.block_of(view.card("g1")).widget
    own = view.transcript.block_of(view.card("r0")).widget
    assert children.index(nested) == children.index(parent) + 1 < children.index(own)
    assert "clawnb-nested" in nested._dom_classes
    view.finish()
    static = sink.shown[-1]["text/markdown"]
    assert static.index("subagent") < static.index("*.py") < static.index("a.txt")
    assert "clawnb-card clawnb-s-pending clawnb-nested" in static
