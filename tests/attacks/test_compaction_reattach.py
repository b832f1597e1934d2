"""Compaction re-attaches the files read most recently, re-read from disk. A hostile model
asks to read what it may not (a deny rule, a link out of the workspace) and then lets the
session compact: the file must not come back through the re-attachment. Judged by effect:
the canary never reaches a request to the model nor the history."""

from __future__ import annotations

from typing import Any

from clawnb.config import Config, PermissionsConfig
from clawnb.session.assemble import build_agent
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall, ToolDefinition

CANARY = "canary-reattach-secret-31337-zxcvbnm"


class HostileModel:
    """Reads the forbidden files, then a harmless one, then answers; every request kept."""

    def __init__(self, paths: list[str]) -> None:
        self.turns = [
            AssistantTurn(None, [ToolCall(f"c{i}", "read", {"path": p})], StopReason.TOOL_USE)
            for i, p in enumerate(paths)
        ] + [AssistantTurn("done", [], StopReason.STOP), AssistantTurn("ok", [], StopReason.STOP)]
        self.requests: list[list[Message]] = []

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        self.requests.append(list(messages))
        if not tools:
            return AssistantTurn("<summary>read some files</summary>", [], StopReason.STOP)
        return self.turns.pop(0)


def _everything(model: HostileModel, history: list[Message]) -> str:
    parts: list[Any] = [*history]
    for request in model.requests:
        parts += request
    return "\n".join(repr(p) for p in parts)


async def test_a_denied_or_escaping_read_is_not_reattached_after_compaction(tmp_path):
    ws = tmp_path / "ws"
    (ws / "secrets").mkdir(parents=True)
    (ws / "secrets" / "token.txt").write_text(f"token = {CANARY}\n")
    outside = tmp_path / "outside.txt"
    outside.write_text(f"outside {CANARY}\n")
    (ws / "link.txt").symlink_to(outside)
    (ws / "notes.txt").write_text("harmless notes\n")
    model = HostileModel(["secrets/token.txt", "link.txt", str(outside), "notes.txt"])
    session = build_agent(
        Config(
            permissions=PermissionsConfig(deny=["read(secrets/**)"]),
            preserve_recent=2,
        ),
        workspace=ws,
        provider=model,
        subagents=False,
        skills=False,
    )
    assert await session.send("look at the files") == "done"
    assert await session.send("and?") == "ok"
    assert await session.compact()
    summary = next(
        m
        for m in session.history
        if isinstance(m, Message.System) and "read some files" in m.content
    )
    assert "harmless notes" in summary.content  # the re-attachment works for an allowed read
    assert CANARY not in _everything(model, list(session.history))
