"""A key streamed in pieces is redacted as a whole on the terminal: the renderer holds back
the end of the text that may still become a key until the next delta."""

from __future__ import annotations

import io

from clawnb.cli.terminal import TerminalRenderer
from clawnb.events import AgentEvent

from .harness import CANARIES, leaked


def _render(pieces: list[str]) -> str:
    out = io.StringIO()
    renderer = TerminalRenderer(out, color=False)
    for piece in pieces:
        renderer(AgentEvent.TextDelta(piece))
    renderer(AgentEvent.Done(""))
    return out.getvalue()


def test_redteam_key_split_over_deltas_is_redacted_on_the_terminal(monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", CANARIES["CANARY_TOKEN"])
    token = CANARIES["CANARY_TOKEN"]
    # every split point, one character at a time too
    for cut in range(1, len(token)):
        shown = _render(["the token is ", token[:cut], token[cut:], " ok"])
        assert not leaked(shown), (cut, shown)
        assert shown == "the token is *** ok\n"
    assert not leaked(_render(["x", *token, "\n"]))


def test_redteam_text_without_whitespace_is_still_shown_while_it_streams(monkeypatch):
    # nothing in it can start a key, so none of it waits (a run of key characters that can is
    # released in bounded pieces: tests/engine/test_secrets.py, the long-run test)
    out = io.StringIO()
    renderer = TerminalRenderer(out, color=False)
    renderer(AgentEvent.TextDelta("a" * 10_000))
    # (at most the start of a known key's encoding waits: the process knows other tests' keys)
    assert out.getvalue() == "a" * len(out.getvalue()) and len(out.getvalue()) > 9_000
    renderer(AgentEvent.Done(""))
    assert out.getvalue() == "a" * 10_000 + "\n"
