"""The saved Markdown rendering of a cell: a code fence the model never closed does not
swallow what comes after it (the footer)."""

from __future__ import annotations

import mistune
import pytest

from clawnb.events import AgentEvent
from clawnb.notebook.html import close_fences, transcript_markdown
from clawnb.notebook.transcript import Transcript
from clawnb.types import AssistantTurn, StopReason


def _saved(text: str) -> str:
    transcript = Transcript()
    transcript.apply(AgentEvent.TextDelta(text))
    transcript.apply(AgentEvent.TurnEnd(AssistantTurn(text, [], StopReason.STOP)))
    return transcript_markdown(transcript)


def test_unclosed_fence_in_a_reply_leaves_the_footer_outside_the_code_block():
    html = mistune.html(_saved("Here is the fix:\n\n```python\nx = 1\n"))
    assert '<code class="language-python">x = 1</code>' in html
    footer = html.split("</pre>", 1)[1]
    assert "<sub" in footer and "1 turn" in footer


@pytest.mark.parametrize(
    ("text", "closed"),
    [
        ("```\ncode", "```\ncode\n```"),
        ("~~~~ sh\nls\n", "~~~~ sh\nls\n\n~~~~"),
        ("```py\na\n```\nthen\n```\nb", "```py\na\n```\nthen\n```\nb\n```"),
        ("```py\na\n```", "```py\na\n```"),  # closed already: untouched
        ("````\n```\nnested\n```", "````\n```\nnested\n```\n````"),
        ("inline ```not a fence``` here", "inline ```not a fence``` here"),
    ],
)
def test_close_fences(text, closed):
    assert close_fences(text) == closed
