"""What a %%claw cell shows, without the clutter a new user saw (issue 26): a denied card says
"denied: REASON" once, the status line says "writing" while the answer streams, and the
"Notify me" offer sits on the status line, once per cell, instead of under the cards."""

from __future__ import annotations

import asyncio
import re

import pytest

from clawnb.events import AgentEvent
from clawnb.notebook.approval import Approver
from clawnb.notebook.html import transcript_markdown
from clawnb.notebook.text import transcript_plain
from clawnb.notebook.transcript import DENIED, Block, Card, Transcript
from clawnb.types import AssistantTurn

from .test_widgets import announce, ask, buttons, click, make_view, shown_html


@pytest.fixture
def rendered_view():
    view, sink = make_view()
    view.root._view_count = 1
    return view, sink


def _visible_text(markup: str) -> str:
    return re.sub(r"<[^>]+>", " ", markup).replace("&#10;", "\n")


async def test_a_card_denied_with_words_says_denied_and_them_once(rendered_view) -> None:
    view, _ = rendered_view
    call = announce(view)
    task = await ask(view, call, Approver(view, how="widget"))
    view._buttons["c1"].children[-1].value = "use rg instead"  # the "tell it instead" box
    click(buttons(view, "c1")["Deny"])
    answer = await asyncio.wait_for(task, 1)
    # what the gate sends the model, word for word (clawnb.gates.USER_DENIED + the reason)
    result = f"error: the user denied this tool call: {answer.reason}"
    view(AgentEvent.ToolResult("c1", "bash", result, "denied"))
    card = view.card("c1")
    assert card.label() == "denied: use rg instead"
    view.finish()
    shown = _visible_text(transcript_markdown(view.transcript))
    assert shown.count("use rg instead") == 1, shown
    assert "error:" not in shown
    plain = transcript_plain(view.transcript)
    assert plain.count("use rg instead") == 1 and "error:" not in plain
    # the model still reads the whole refusal
    assert "use rg instead" in answer.reason


def test_a_policy_refusal_drops_the_models_error_prefix_but_keeps_the_reason() -> None:
    card = Card("c1", "bash", "[bash: ls]", {"command": "ls"}, status=DENIED)
    card.result = "error: permission denied for `bash`: a deny rule matches"
    assert card.hint() == "permission denied for `bash`: a deny rule matches"
    transcript = Transcript()
    transcript.blocks.append(Block("card", card=card))
    transcript.cards["c1"] = card
    shown = _visible_text(transcript_markdown(transcript))
    assert "a deny rule matches" in shown and "error:" not in shown


async def test_the_status_line_says_writing_while_text_streams() -> None:
    view, _ = make_view()
    assert "thinking" in view.status_line()  # nothing yet: the model is thinking
    view(AgentEvent.TextDelta("Here is"))
    assert "writing" in view.status_line() and "thinking" not in view.status_line()
    view(AgentEvent.TurnEnd(AssistantTurn(text="Here is")))
    assert "thinking" in view.status_line()  # the turn ended; the next one is awaited
    announce(view)
    assert "writing" not in view.status_line()
    view.finish()


async def test_the_notify_offer_is_on_the_status_line_once_per_cell(rendered_view) -> None:
    pytest.importorskip("anywidget")
    view, _ = rendered_view
    for call_id in ("c1", "c2"):
        call = announce(view, call_id)
        task = await ask(view, call, Approver(view, how="widget"))
        click(buttons(view, call_id)["Approve"])
        await asyncio.wait_for(task, 1)
    assert view._beacon is not None
    assert list(view.status_bar.children).count(view._beacon) == 1  # two cards, one offer
    assert view._beacon not in view.root.children  # not a block of its own under the cards
    assert view.status_bar.children[:2] == (view.footer, view.stop)
    assert all("Notify" not in shown_html(b.widget) for b in view.transcript.blocks if b.widget)
    view.finish()


def test_a_failed_turn_shows_its_line_as_the_error_block_without_a_0_turns_footer() -> None:
    view, _ = make_view()
    line = "could not reach http://127.0.0.1:9/v1 — is the server running? check --base-url"
    view(AgentEvent.Error(line))
    block = view.transcript.blocks[-1]
    view._flush()
    assert "clawnb-error" in shown_html(block.widget) and "<i>" not in shown_html(block.widget)
    view.finish()
    saved = transcript_markdown(view.transcript)
    assert f"<div class='clawnb-error' role='alert'>error: {line}</div>" in saved
    assert "0 turns" not in saved
    assert "0 turns" not in transcript_plain(view.transcript)
    assert f"error: {line}" in transcript_plain(view.transcript)


def test_a_policy_denial_says_its_reason_once() -> None:
    card = Card("c1", "bash", "[bash: ls]", {"command": "ls"}, status=DENIED)
    card.note = "denied by policy: --approve deny"
    card.result = (
        "error: the user denied this tool call: no one was asked; the notebook's approval "
        "policy denies tool calls (--approve deny)"
    )
    transcript = Transcript()
    transcript.blocks.append(Block("card", card=card))
    transcript.cards["c1"] = card
    shown = _visible_text(transcript_markdown(transcript))
    assert shown.count("--approve deny") == 1 and "error:" not in shown
    assert transcript_plain(transcript).count("--approve deny") == 1
