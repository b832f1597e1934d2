"""Regressions found by driving the terminal chat like a demanding user."""

from __future__ import annotations

import json
from pathlib import Path

from clawnb.assemble import build_agent
from clawnb.events import AgentEvent
from clawnb.types import Message

KEY = "sk-test-SECRET123-review"


def _script(path: Path, turns: list[dict]) -> str:
    path.write_text("\n".join(json.dumps(t) for t in turns) + "\n")
    return f"scripted:{path}"


async def test_tool_results_never_carry_the_api_key(tmp_path, monkeypatch):
    # bash hides the key variables, but a command can still read the chat process's own
    # environment (/proc/$PPID/environ) or a file holding the key: the result must not show
    # it on screen, in the session file, or to the model.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("CLAWNB_API_KEY", KEY)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "leak.txt").write_text(f"CLAWNB_API_KEY={KEY}\n" + "x" * 60_000 + KEY)
    model = _script(tmp_path / "s.jsonl", [
        {"tool_calls": [{"id": "c1", "name": "read", "arguments": {"path": "leak.txt"}}]},
        {"text": "done"},
    ])
    session = build_agent(workspace=ws, model=model, session="new")
    shown: list[str] = []

    def on_event(event):
        if isinstance(event, AgentEvent.ToolResult):
            shown.append(event.content)

    assert await session.send("read leak.txt", on_event) == "done"
    result = next(m for m in session.history if isinstance(m, Message.ToolResult))
    assert "CLAWNB_API_KEY=***" in result.content
    assert KEY not in result.content and KEY not in "".join(shown)
    written = [p for p in (ws / ".claw").rglob("*") if p.is_file()]
    assert any("tool-results" in str(p) for p in written)  # the long result was saved in full
    for path in written:
        assert KEY not in path.read_text(errors="replace"), path
    session.close()
