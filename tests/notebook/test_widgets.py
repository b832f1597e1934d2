"""The widget view without a kernel: coalesced updates, clicks simulated as comm messages
(ARCHITECTURE §4.8), static rendering at the end, no keys anywhere."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from clawnb.events import AgentEvent, ApprovalDecision, ApprovalRequest
from clawnb.notebook.approval import Approver
from clawnb.notebook.html import transcript_markdown
from clawnb.notebook.text import transcript_plain
from clawnb.notebook.throttle import Throttle
from clawnb.notebook.widgets import WidgetView
from clawnb.types import AssistantTurn, TokenUsage, ToolCall

from .conftest import FAKE_KEY

# the event loop may run a timer up to one clock tick early
TICK = time.get_clock_info("monotonic").resolution


def click(button: Any) -> None:
    button._handle_msg(
        {"content": {"data": {"method": "custom", "content": {"event": "click"}}}, "buffers": []}
    )


class Sink:
    """Stands in for IPython's display/clear_output."""

    def __init__(self) -> None:
        self.shown: list[Any] = []
        self.cleared = 0

    def display(self, obj: Any, raw: bool = False) -> None:
        self.shown.append(obj)

    def clear_output(self, wait: bool = False) -> None:
        self.cleared += 1
        self.shown.clear()


def make_view(**kw: Any) -> tuple[WidgetView, Sink]:
    sink = Sink()
    view = WidgetView(display=sink.display, clear_output=sink.clear_output, **kw)
    view.start()
    return view, sink


def fake_shell(cwd: Path) -> Any:
    """Just enough of an IPython shell for ``run_claw``: a namespace, an execution count, and
    the notebook's session, working in ``cwd``."""
    from clawnb.notebook.runner import NotebookSession

    class Shell:
        user_ns: dict = {}
        execution_count = 1

    shell = Shell()
    shell._clawnb_session = NotebookSession(shell=None, cwd=str(cwd))
    return shell


def announce(view: WidgetView, call_id: str = "c1", name: str = "bash") -> ToolCall:
    call = ToolCall(call_id, name, {"command": "ls"})
    view(AgentEvent.ToolCall(name, f"    [{name}: ls]", call_id, call.arguments))
    return call


def shown_html(widget: Any) -> str:
    """All HTML a block's widget (a card's head and body, an accordion's content) shows."""
    if hasattr(widget, "value"):
        return widget.value
    if hasattr(widget, "outputs"):  # a text block: one text/markdown output
        return "".join(o["data"]["text/markdown"] for o in widget.outputs)
    return "".join(shown_html(child) for child in getattr(widget, "children", ()))


def buttons(view: WidgetView, call_id: str) -> dict[str, Any]:
    bar = view._buttons[call_id]
    return {b.description: b for b in bar.children if type(b).__name__ == "Button"}


async def ask(view: WidgetView, call: ToolCall, approver: Approver) -> asyncio.Task:
    task = asyncio.ensure_future(approver(ApprovalRequest(call, "bash: ls")))
    for _ in range(50):
        await asyncio.sleep(0.01)
        if call.id in view._buttons:
            break
    return task


@pytest.fixture
def rendered_view():
    view, sink = make_view()
    view.root._view_count = 1  # what a frontend does when it renders the view
    return view, sink


async def test_approve_click_allows_once(rendered_view) -> None:
    view, _ = rendered_view
    approver = Approver(view, how="auto", frontend_timeout=0.5)
    call = announce(view)
    task = await ask(view, call, approver)
    found = buttons(view, "c1")
    assert list(found) == ["Approve", "Deny", "Always allow bash"]
    assert "waiting for approval" in view.transcript.cards["c1"].status
    html = view.transcript.blocks[-1].widget.children[0].value
    assert "waiting for approval" in html
    click(found["Approve"])
    answer = await asyncio.wait_for(task, 1)
    assert answer.decision is ApprovalDecision.ALLOW_ONCE
    assert "c1" not in view._buttons  # the bar is gone once answered


async def test_deny_click_denies_with_a_clear_reason(rendered_view) -> None:
    view, _ = rendered_view
    approver = Approver(view, how="widget")
    call = announce(view)
    task = await ask(view, call, approver)
    click(buttons(view, "c1")["Deny"])
    answer = await asyncio.wait_for(task, 1)
    assert not answer.allowed and "clicked Deny" in answer.reason


async def test_always_allow_answers_for_the_session(rendered_view) -> None:
    # the answer is the session's to remember (its gate asks nobody about bash again):
    # the notebook keeps no copy of it
    view, _ = rendered_view
    approver = Approver(view, how="widget")
    call = announce(view)
    task = await ask(view, call, approver)
    click(buttons(view, "c1")["Always allow bash"])
    assert (await asyncio.wait_for(task, 1)).decision is ApprovalDecision.ALLOW_SESSION
    assert "always allowed this session" in view.transcript.cards["c1"].note


async def test_no_frontend_falls_back_to_the_policy(monkeypatch) -> None:
    view, _ = make_view()  # _view_count stays 0: nothing rendered it
    monkeypatch.setenv("CLAWNB_APPROVAL", "allow")
    approver = Approver(view, how="auto", frontend_timeout=0.1)
    answer = await approver(ApprovalRequest(announce(view), "bash: ls"))
    assert answer.allowed
    assert "CLAWNB_APPROVAL=allow" in view.transcript.cards["c1"].note
    monkeypatch.setenv("CLAWNB_APPROVAL", "deny")
    approver = Approver(view, how="auto", frontend_timeout=0.1)
    assert not (await approver(ApprovalRequest(announce(view, "c2"), "bash: ls"))).allowed


async def test_stdin_is_used_when_allowed_and_nothing_rendered() -> None:
    view, _ = make_view()
    replies = iter(["y", "n", "always"])
    approver = Approver(
        view,
        how="auto",
        stdin_allowed=True,
        frontend_timeout=0.05,
        input_fn=lambda q: next(replies),
    )
    assert (await approver(ApprovalRequest(announce(view, "a"), "x"))).allowed
    assert not (await approver(ApprovalRequest(announce(view, "b"), "x"))).allowed
    third = await approver(ApprovalRequest(announce(view, "c"), "x"))
    assert third.decision is ApprovalDecision.ALLOW_SESSION


async def test_cancelling_a_pending_approval_cleans_up(rendered_view) -> None:
    view, _ = rendered_view
    approver = Approver(view, how="widget")
    call = announce(view)
    task = await ask(view, call, approver)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert "c1" not in view._buttons


async def test_updates_are_coalesced_and_text_is_identical() -> None:
    view, sink = make_view()
    view.root._view_count = 1
    pieces = [chr(97 + i % 26) for i in range(3000)]
    loop = asyncio.get_running_loop()
    start = loop.time()
    for i, piece in enumerate(pieces):
        view(AgentEvent.TextDelta(piece))
        if i % 30 == 0:
            await asyncio.sleep(0.005)
    elapsed = loop.time() - start
    view(AgentEvent.TurnEnd(AssistantTurn("x", usage=TokenUsage(5, 7))))
    view.finish()
    # at most one round per screen frame (+1 for the first, which goes out at once); the
    # 100 sleeps in between would give 100 rounds without coalescing
    assert view.flushes <= 1 + elapsed / Throttle.FRAME, (view.flushes, elapsed)
    assert view.transcript.answer == "".join(pieces)
    static = sink.shown[-1]
    assert "".join(pieces) in static["text/markdown"]
    assert "5 in / 7 out tokens" in static["text/plain"]


async def test_throttle_flushes_at_once_then_coalesces_pokes_within_a_frame() -> None:
    loop = asyncio.get_running_loop()
    stamps: list[float] = []
    flushed = asyncio.Event()

    def flush() -> None:
        stamps.append(loop.time())
        flushed.set()

    throttle = Throttle(flush, interval=0.03)
    throttle.poke()
    await asyncio.wait_for(flushed.wait(), 5)
    flushed.clear()
    for _ in range(100):  # all within one frame: one more flush, a frame after the first
        throttle.poke()
    await asyncio.wait_for(flushed.wait(), 5)
    assert len(stamps) == 2
    assert stamps[1] - stamps[0] >= 0.03 - TICK


async def test_throttle_spaces_expensive_flushes_by_their_cost() -> None:
    # a flush that causes 20 ms of work elsewhere (the browser rendering it), with updates
    # allowed a fifth of the time: the next one waits 100 ms, not one frame
    loop = asyncio.get_running_loop()
    stamps: list[float] = []
    flushed = asyncio.Event()

    def flush() -> float:
        stamps.append(loop.time())
        flushed.set()
        return 0.02

    throttle = Throttle(flush, share=0.2)
    for _ in range(2):
        throttle.poke()
        await asyncio.wait_for(flushed.wait(), 5)
        flushed.clear()
    assert throttle.gap >= 0.1
    assert stamps[1] - stamps[0] >= 0.1 - TICK


async def test_a_long_answer_is_updated_less_often_than_a_short_one() -> None:
    # every update re-sends and re-renders the answer whole: its cost grows with the length
    view, _sink = make_view()
    view.root._view_count = 1
    view(AgentEvent.TextDelta("A short answer."))
    view.throttle.flush_now()
    short_gap = view.throttle.gap
    view(AgentEvent.TextDelta(" More words." * 2000))  # 24,000 characters
    view.throttle.flush_now()
    # at least 24 ms of the browser's time per update, kept to a fifth of the time
    assert view.throttle.gap >= 24_000 * WidgetView.FRONTEND_SECONDS_PER_CHAR / 0.2
    assert view.throttle.gap > short_gap


async def test_finish_replaces_widgets_with_static_markdown(rendered_view) -> None:
    view, sink = rendered_view
    view(AgentEvent.ReasoningDelta("thinking…"))
    view(AgentEvent.TextDelta("Here is **bold**."))
    call = ToolCall("e1", "edit", {"path": "a.py", "old_string": "x = 1", "new_string": "x = 2"})
    view(AgentEvent.ToolCall("edit", "    [edit: a.py]", "e1", call.arguments))
    view(AgentEvent.ToolRunning("e1", "edit"))
    result = "edited a.py\n\n@@ -1,1 +1,1 @@\n-    1 | x = 1\n+    1 | x = 2"
    view(AgentEvent.ToolResult("e1", "edit", result, "ok"))
    view.throttle.flush_now()
    card_html = shown_html(view.transcript.blocks[-1].widget)
    assert "<div class='clawnb-add'>+    1 | x = 2</div>" in card_html  # coloured diff line
    widgets = view._all_widgets()
    view.finish()
    assert sink.cleared == 1
    static = sink.shown[-1]
    md = static["text/markdown"]
    # the model's Markdown is saved rendered and sanitized (clawnb.notebook.sanitize)
    assert "Here is <strong>bold</strong>." in md
    assert "<summary class='clawnb-muted'>reasoning" in md
    # the saved rendering keeps the diff's colours (from the theme, through the stylesheet it
    # carries) and its indentation
    assert "<div class='clawnb-add'>+    1 | x = 2</div>" in md
    assert "<div class='clawnb-del'>-    1 | x = 1</div>" in md
    assert md.startswith("<style>") and "var(--jp-success-color1" in md
    assert "white-space:pre;" in md
    assert all(w.comm is None for w in widgets)  # closed: nothing left to save as state


async def test_keys_never_reach_widgets_or_the_static_rendering(rendered_view, monkeypatch) -> None:
    monkeypatch.setenv("CLAWNB_API_KEY", FAKE_KEY)
    view, sink = rendered_view
    view(AgentEvent.TextDelta(f"the key is {FAKE_KEY} and Bearer {FAKE_KEY}"))
    view(AgentEvent.ToolCall("bash", "    [bash: env]", "c1", {"command": f"echo {FAKE_KEY}"}))
    view(AgentEvent.ToolResult("c1", "bash", f"CLAWNB_API_KEY={FAKE_KEY}", "ok"))
    view(AgentEvent.Error(f"401 for key {FAKE_KEY}"))
    view.throttle.flush_now()
    values = [getattr(w, "value", "") for w in view._all_widgets()]
    assert values and not any(FAKE_KEY in str(v) for v in values)
    view.finish()
    assert FAKE_KEY not in str(sink.shown)
    assert FAKE_KEY[:12] not in str(sink.shown)


def test_throttle_without_a_loop_flushes_at_once() -> None:
    calls: list[int] = []
    throttle = Throttle(lambda: calls.append(1))
    throttle.poke()
    throttle.poke()
    assert calls == [1, 1]


async def test_ask_widget_handler_buttons_and_text(rendered_view) -> None:
    view, _ = rendered_view
    task = asyncio.ensure_future(view.choose("Pick one", ["red", "blue"]))
    await asyncio.sleep(0.01)
    box = view.body.children[-1]
    options = box.children[1].children
    click(options[1])
    assert await asyncio.wait_for(task, 1) == "blue"
    task = asyncio.ensure_future(view.choose("Name?", []))
    await asyncio.sleep(0.01)
    text, send = view.body.children[-1].children[1].children
    text.value = "Ada"
    click(send)
    assert await asyncio.wait_for(task, 1) == "Ada"


async def test_ask_user_handler_uses_the_card_buttons(rendered_view) -> None:
    from clawnb.notebook.approval import NotebookInputHandler

    view, _ = rendered_view
    handler = NotebookInputHandler(view, Approver(view, how="widget"))
    task = asyncio.ensure_future(handler.ask("Which colour?", ["red", "blue"]))
    await asyncio.sleep(0.01)
    click(view.body.children[-1].children[1].children[0])
    assert await asyncio.wait_for(task, 1) == "red"


async def test_ask_user_handler_headless_is_a_clear_error(monkeypatch) -> None:
    from clawnb.notebook.approval import NotebookInputHandler
    from clawnb.notebook.text import TextView
    from clawnb.tools.base import ToolError

    view = TextView()
    handler = NotebookInputHandler(view, Approver(view, how="auto"))
    with pytest.raises(ToolError, match="nobody can answer"):
        await handler.ask("Which colour?", [])


async def test_plan_mode_execute_and_revise_buttons(tmp_path, monkeypatch) -> None:
    from clawnb.notebook.runner import CellOptions, run_claw
    from tests.conftest import write_script

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    write_script(
        tmp_path / "p.jsonl",
        [
            {"text": "Plan v1", "tool_calls": [{"id": "e1", "name": "exit_plan", "arguments": {}}]},
            {"text": "Plan v2", "tool_calls": [{"id": "e2", "name": "exit_plan", "arguments": {}}]},
            {"text": "Carried out."},
        ],
    )

    shell = fake_shell(tmp_path)
    view, sink = make_view()
    view.root._view_count = 1
    options = CellOptions(model="scripted:p.jsonl", mode="plan")
    task = asyncio.ensure_future(run_claw(shell, options, "make a plan", view=view))

    async def press(label: str, text: str | None = None) -> None:
        for _ in range(200):
            await asyncio.sleep(0.01)
            for box in view.body.children:
                if "clawnb-plan" in box._dom_classes:
                    title, shown, bar = box.children
                    plan = shown.outputs[0]["data"]["text/markdown"]
                    assert "<p>Plan v" in plan  # the plan itself, in the frame
                    controls = {getattr(c, "description", "") or "text": c for c in bar.children}
                    if text is not None:
                        controls["text"].value = text
                    click(controls[label])
                    return
        raise AssertionError(f"no {label} button")

    await press("Revise", text="shorter please")
    await press("Execute")
    await asyncio.wait_for(task, 5)
    md = sink.shown[-1]["text/markdown"]
    assert "Plan v1" in md and "Plan v2" in md and "Carried out." in md
    # the saved rendering records what the user chose, in order
    assert md.index("Plan v1") < md.index("revise the plan: shorter please") < md.index("Plan v2")
    assert md.index("Plan v2") < md.index("plan approved: executing it") < md.index("Carried out.")
    # after Execute the mode is what it was before the plan cell (the project's)
    assert shell._clawnb_session.mode == "default"
    users = [m.content for m in shell._clawnb_session.messages if type(m).__name__ == "User"]
    assert [u.rsplit("Task: ", 1)[-1] for u in users] == [
        "make a plan",
        "Revise the plan: shorter please",
        "Approved. Execute the plan.",
    ]


async def test_footer_counts_the_turn_that_is_still_streaming() -> None:
    # a first answer that is streaming is turn 1, not "0 turns"; after TurnEnd it stays 1
    # and the next turn's first delta makes it 2
    view, _sink = make_view(interval=0.0)
    view(AgentEvent.TextDelta("Hel"))
    view.throttle.flush_now()
    assert "1 turn" in view.footer.value and "0 turns" not in view.footer.value
    view(AgentEvent.TurnEnd(AssistantTurn(text="Hel", usage=TokenUsage(5, 2))))
    assert view.transcript.footer().startswith("1 turn ·")
    view(AgentEvent.ReasoningDelta("thinking"))
    assert view.transcript.footer().startswith("2 turns")
    view(AgentEvent.TurnEnd(AssistantTurn(text="", usage=TokenUsage(5, 2))))
    assert view.transcript.footer().startswith("2 turns")
    # a turn cut short after it showed text still counts in the final rendering
    view(AgentEvent.TextDelta("partial"))
    view(AgentEvent.Error("stream broke"))
    view.finish()
    assert "3 turns" in transcript_markdown(view.transcript)


async def test_the_status_line_is_updated_before_the_text_it_counts() -> None:
    # the front end applies widget updates one message at a time: a status line sent after
    # the text was seen in a browser still saying "0 turns" under the first streamed word
    view, _sink = make_view(interval=0.0)
    order: list[str] = []
    view.footer.observe(lambda change: order.append(f"status: {change['new']}"), "value")
    view(AgentEvent.TextDelta("One two "))
    text = view.transcript.blocks[-1].widget
    text.observe(lambda change: order.append("text"), "outputs")
    view.throttle.flush_now()
    assert [o.split(":")[0] for o in order] == ["status", "text"], order
    assert "1 turn" in order[0] and "writing" in order[0], order


async def test_denied_card_says_denied_once(rendered_view) -> None:
    view, _ = rendered_view
    call = announce(view)
    approver = Approver(view, how="widget")
    task = await ask(view, call, approver)
    click(buttons(view, "c1")["Deny"])
    await task
    view(AgentEvent.ToolResult("c1", "bash", "error: the user denied this tool call", "denied"))
    card = view.card("c1")
    assert card.label() == "denied by the user"
    view.finish()
    markdown = transcript_markdown(view.transcript)
    assert "denied by the user" in markdown and "denied (denied" not in markdown
    assert "denied (denied" not in transcript_plain(view.transcript)
    # a note that is not a repeat keeps the status in front of it
    card.status, card.note = "done", "approved"
    assert card.label() == "done (approved)"


async def test_policy_denial_tells_the_model_which_policy(monkeypatch) -> None:
    # --approve deny in a live notebook is not a "headless run": the reason names the option;
    # with no frontend the reason names the environment variable
    monkeypatch.delenv("CLAWNB_APPROVAL", raising=False)
    view, _ = make_view()
    call = announce(view)
    answer = await Approver(view, how="deny")(ApprovalRequest(call, "bash: ls"))
    assert not answer.allowed and "--approve deny" in answer.reason
    assert "headless" not in answer.reason
    view2, _ = make_view()
    call = announce(view2)
    answer = await Approver(view2, frontend_timeout=0.01)(ApprovalRequest(call, "bash: ls"))
    assert not answer.allowed and "CLAWNB_APPROVAL unset" in answer.reason


async def test_run_python_card_shows_the_code_to_approve(rendered_view) -> None:
    # the code is what the user approves: visible on the card (and in the saved rendering),
    # not JSON-escaped inside the collapsed arguments
    view, sink = rendered_view
    code = "total = sum(sales)\nprint(total)"
    view(AgentEvent.ToolCall("run_python", "    [run_python]", "p1", {"code": code}))
    view.throttle.flush_now()
    card_html = shown_html(view.transcript.blocks[-1].widget)
    code_html = "<pre class='clawnb-code'>total = sum(sales)&#10;print(total)</pre>"
    assert code_html in card_html
    assert "arguments</summary>" not in card_html
    view.finish()
    md = sink.shown[-1]["text/markdown"]
    assert code_html in md
    assert "\\n" not in md


def test_each_turn_starts_its_own_text_block() -> None:
    # the text of the next turn never continues the previous turn's paragraph: "1. done"
    # followed by "## Plan v2" must stay two Markdown blocks (they were glued: "done## Plan")
    from clawnb.notebook.transcript import Transcript

    transcript = Transcript()
    transcript.apply(AgentEvent.TextDelta("1. done"))
    transcript.apply(AgentEvent.TurnEnd(AssistantTurn(text="1. done")))
    transcript.apply(AgentEvent.TextDelta("## Plan v2"))
    transcript.apply(AgentEvent.TextDelta(" (short)"))
    assert [b.text for b in transcript.blocks] == ["1. done", "## Plan v2 (short)"]
    assert (
        "<li>done</li>&#10;</ol>&#10;</div>\n\n<div><h2>Plan v2 (short)</h2>"
        in transcript_markdown(transcript)
    )
    assert "1. done\n## Plan v2 (short)" in transcript_plain(transcript)


def test_text_view_starts_each_turn_on_a_new_line() -> None:
    import io

    from clawnb.notebook.text import TextView

    out = io.StringIO()
    view = TextView(out)
    view(AgentEvent.TextDelta("1. done"))
    view(AgentEvent.TurnEnd(AssistantTurn(text="1. done")))
    view(AgentEvent.TextDelta("## Plan v2"))
    view.finish()
    assert out.getvalue().startswith("1. done\n## Plan v2\n")


def test_text_view_scrubs_a_key_that_streams_in_pieces(monkeypatch) -> None:
    # headless cells print deltas as they come; a key echoed by the model arrives split over
    # several deltas, and each piece alone does not look like a key
    import io

    from clawnb.notebook.text import TextView

    secret = "plain-value-of-the-gateway-key-123"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    out = io.StringIO()
    view = TextView(out)
    for piece in [
        "your keys: ",
        FAKE_KEY[:12],
        FAKE_KEY[12:30],
        FAKE_KEY[30:],
        " and ",
        secret[:10],
        secret[10:],
        "\nbye",
    ]:
        view(AgentEvent.TextDelta(piece))
    view.finish()
    text = out.getvalue()
    assert FAKE_KEY[:12] not in text and secret[:10] not in text and secret[10:] not in text
    assert text.startswith("your keys: *** and ***\nbye\n")


async def test_widget_never_holds_half_a_streamed_key(monkeypatch) -> None:
    # every value sent to the frontend while a key streams in pieces is scrubbed: the widget
    # holds back only what may still become a key until the turn ends
    secret = "plain-value-of-the-gateway-key-123"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    view, _ = make_view()
    sent: list[str] = []
    for piece in ["key: ", secret[:10], secret[10:20], secret[20:], " done"]:
        view(AgentEvent.TextDelta(piece))
        view.throttle.flush_now()
        sent.append(shown_html(view.transcript.blocks[-1].widget))
    assert not any(secret[:10] in value or secret[10:20] in value for value in sent), sent
    assert "key: *** done" in sent[-1]  # "done" cannot start a key: it is shown at once
    view(AgentEvent.ReasoningDelta("thinking about " + secret[:10]))
    view.throttle.flush_now()
    assert secret[:10] not in shown_html(view.transcript.blocks[-1].widget)
    view(AgentEvent.ReasoningDelta(secret[10:]))
    view(AgentEvent.TurnEnd(AssistantTurn(text="key: x done")))
    view.throttle.flush_now()
    text_block, reasoning_block = view.transcript.blocks
    assert "key: *** done" in shown_html(text_block.widget)
    assert "thinking about ***" in shown_html(reasoning_block.widget)


async def test_the_live_view_shows_one_held_character_at_once_and_redacts_the_whole_key_later(
    monkeypatch,
) -> None:
    # "p" may start the key, yet one character of it tells nothing and the next update
    # re-redacts the whole answer; two characters of it wait, as on the terminal
    secret = "plain-value-of-the-gateway-key-123"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    view, _ = make_view()
    sent: list[str] = []
    for piece in ["the word p", "l", "ain-value-of-the-gateway-key-123 done, p"]:
        view(AgentEvent.TextDelta(piece))
        view.throttle.flush_now()
        sent.append(shown_html(view.transcript.blocks[-1].widget))
    assert "the word p" in sent[0]  # shown without waiting for the next token
    assert "the word" in sent[1] and "the word p" not in sent[1]  # "pl" is held
    assert "the word *** done, p" in sent[2]
    assert not any(secret[:2] in value for value in sent), sent


def test_text_view_prints_the_code_of_a_run_python_call() -> None:
    import io

    from clawnb.notebook.text import TextView

    out = io.StringIO()
    view = TextView(out)
    view(AgentEvent.ToolCall("run_python", "    [run_python]", "p1", {"code": "x = 1\nprint(x)"}))
    assert out.getvalue() == "[run_python]\n    | x = 1\n    | print(x)\n"


def test_multi_line_arguments_are_shown_as_written() -> None:
    # a file's content on a write card reads as the file, not as one JSON line of "\n"s
    from clawnb.notebook.html import card_html
    from clawnb.notebook.transcript import Card

    card = Card(
        "w1", "write", "    [write: a.py]", {"path": "a.py", "content": "def f():\n    return 1\n"}
    )
    md = card_html(card)
    # one physical line (a blank line would end the Markdown HTML block), shown as written
    assert "path: a.py&#10;content:&#10;    def f():&#10;        return 1" in md
    assert "\\n" not in md and "\n" not in md
    # single-line arguments keep their JSON form
    plain = Card("r1", "read", "    [read: a.py]", {"path": "a.py", "limit": 5})
    assert "&quot;limit&quot;: 5" in card_html(plain)


async def test_ask_user_card_says_it_waits_for_an_answer(rendered_view) -> None:
    from clawnb.notebook.approval import NotebookInputHandler

    view, _ = rendered_view
    view(
        AgentEvent.ToolCall(
            "ask_user", "    [ask_user: Which colour?]", "q1", {"question": "Which colour?"}
        )
    )
    view(AgentEvent.ToolRunning("q1", "ask_user"))
    handler = NotebookInputHandler(view, Approver(view, how="widget"))
    task = asyncio.ensure_future(handler.ask("Which colour?", ["red", "blue"]))
    await asyncio.sleep(0.01)
    view.throttle.flush_now()
    assert view.card("q1").status_line() == "waiting for your answer"
    assert (
        "waiting for your answer"
        in view.transcript.block_of(view.card("q1")).widget.children[0].value
    )
    box = view.transcript.block_of(view.card("q1")).widget
    # the question is on the card once, with its answers inside the card
    assert shown_html(box).count("Which colour?") == 1
    bar = box.children[2]
    click(bar.children[1])
    assert await asyncio.wait_for(task, 1) == "blue"
    assert view.card("q1").status == "running"  # until its result arrives


async def test_always_allow_tooltip_says_it_covers_the_whole_tool(rendered_view) -> None:
    view, _ = rendered_view
    call = announce(view, name="bash")
    task = await ask(view, call, Approver(view, how="widget"))
    tips = {label: b.tooltip for label, b in buttons(view, "c1").items()}
    assert tips["Always allow bash"] == (
        "allow every bash call for the rest of this session (key: A)"
    )
    assert "once" in tips["Approve"]
    click(buttons(view, "c1")["Approve"])
    await asyncio.wait_for(task, 1)


async def test_text_without_spaces_still_streams_live() -> None:
    # Chinese has no spaces: holding back "the last word" must not hold back the whole answer
    import io

    from clawnb.notebook.text import TextView

    view, _ = make_view()
    out = io.StringIO()
    text_view = TextView(out)
    for piece in ["这是", "一个", "测试。", "sk"]:
        view(AgentEvent.TextDelta(piece))
        text_view(AgentEvent.TextDelta(piece))
    view.throttle.flush_now()
    assert "这是一个测试。" in shown_html(view.transcript.blocks[-1].widget)
    assert "sk" not in shown_html(view.transcript.blocks[-1].widget)  # may still grow into "sk-…"
    assert out.getvalue() == "这是一个测试。"


def test_quiet_still_shows_an_error() -> None:
    # --quiet shows only the answer; a failed turn must not end as an empty output
    import io

    from clawnb.notebook.text import TextView

    out = io.StringIO()
    view = TextView(out, quiet=True)
    view(AgentEvent.Error("HTTP 500: boom"))
    view.finish()
    assert out.getvalue() == "error: HTTP 500: boom\n"
    widget_view, sink = make_view(quiet=True)
    widget_view(AgentEvent.TextDelta("Partial"))
    widget_view(AgentEvent.Error("stream broke"))
    widget_view.finish()
    assert (
        sink.shown[-1]["text/markdown"]
        == "<div><p>Partial</p>&#10;<p>error: stream broke</p>&#10;</div>"
    )
    # nothing at all to show: the footer, not a blank output
    empty, sink = make_view(quiet=True)
    empty.finish()
    assert sink.shown[-1]["text/plain"] == "[0 turns]"


async def test_background_cell_keeps_the_interrupted_note(tmp_path, monkeypatch) -> None:
    # a background task (old kernels) shows no exception, so the transcript says it; a cell
    # that raises ClawInterrupted does not repeat the line (see test_kernel)
    from clawnb.notebook.runner import INTERRUPTED_LINE, CellOptions, run_claw
    from tests.conftest import write_script

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    write_script(
        tmp_path / "w.jsonl",
        [
            {
                "text": "Writing.",
                "tool_calls": [
                    {"id": "w1", "name": "write", "arguments": {"path": "x.txt", "content": "x"}}
                ],
            },
            {"text": "done"},
        ],
    )

    shell = fake_shell(tmp_path)
    view, _sink = make_view()
    view.root._view_count = 1
    options = CellOptions(model="scripted:w.jsonl", approve="widget")
    task = asyncio.ensure_future(
        run_claw(shell, options, "write x", view=view, raise_on_interrupt=False)
    )
    for _ in range(200):
        await asyncio.sleep(0.01)
        if view._buttons:
            break
    task.cancel()
    await task
    notes = [b.text for b in view.transcript.blocks if b.kind == "note"]
    assert notes.count(INTERRUPTED_LINE) == 1
    assert view.card("w1").status == "interrupted"
    assert not (tmp_path / "x.txt").exists()


async def test_ticking_status_does_not_rerender_an_open_card_body() -> None:
    # a running card's head re-renders every second ("running 3s"); its body (arguments the
    # user may have opened) must not be replaced, or the open <details> snaps shut
    view, _ = make_view()
    call = announce(view)
    view(AgentEvent.ToolRunning(call.id, "bash"))
    view.throttle.flush_now()
    head, body = view.transcript.blocks[-1].widget.children[:2]
    body_changes: list[Any] = []
    body.observe(body_changes.append, names="value")
    view.card("c1").started -= 5
    view.throttle.flush_now()
    assert "running 5s" in head.value and "arguments" in body.value
    assert body_changes == []


async def test_open_reasoning_stays_open_while_it_streams() -> None:
    view, _ = make_view()
    view(AgentEvent.ReasoningDelta("first thought "))
    view.throttle.flush_now()
    accordion = view.transcript.blocks[-1].widget
    assert accordion.selected_index is None  # collapsed by default
    accordion.selected_index = 0  # the user opens it
    view(AgentEvent.ReasoningDelta("second thought "))
    view.throttle.flush_now()
    assert accordion.selected_index == 0
    assert "second thought" in shown_html(accordion)


async def test_a_control_file_card_says_why_and_offers_no_always(rendered_view) -> None:
    view, _ = rendered_view
    approver = Approver(view, how="widget")
    call = announce(view)
    reason = "`bash` changes the agent's own configuration: it is asked every time, in every mode"
    request = ApprovalRequest(call, "bash: ls", reason, {"explicit_only": True})
    task = asyncio.ensure_future(approver(request))
    for _ in range(50):
        await asyncio.sleep(0.01)
        if call.id in view._buttons:
            break
    assert list(buttons(view, "c1")) == ["Approve", "Deny"]  # an earlier "always" did not answer
    assert "changes the agent's own configuration" in view.transcript.cards["c1"].label()
    click(buttons(view, "c1")["Approve"])
    answer = await asyncio.wait_for(task, 1)
    assert answer.decision is ApprovalDecision.ALLOW_ONCE
