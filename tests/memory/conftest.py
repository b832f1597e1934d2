"""Shared pieces of the memory tests: a trusted workspace with its own user config dir, and
a scripted model whose tool-less requests (memory reviews, summaries) are answered apart."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from clawnb.config import trust_workspace
from clawnb.types import AssistantTurn, Message, StopReason, ToolDefinition


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


@pytest.fixture
def trusted_ws(tmp_path: Path, config_home: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    trust_workspace(ws)
    return ws


def ops(*operations: dict[str, Any]) -> str:
    return json.dumps({"operations": list(operations)})


class MemoryModel:
    """Answers the session's turns with ``answer`` (or the scripted ``turns``) and each memory
    review with the next of ``reviews`` (after ``review_delay`` seconds); keeps the reviews'
    prompts and every turn's request."""

    def __init__(
        self,
        reviews: list[str] | None = None,
        *,
        turns: list[AssistantTurn] | None = None,
        review_delay: float = 0.0,
    ) -> None:
        self.reviews = list(reviews or [])
        self.turns = list(turns or [])
        self.review_delay = review_delay
        self.review_prompts: list[str] = []
        self.requests: list[list[Message]] = []

    async def chat(self, messages: list[Message], tools: list[ToolDefinition]) -> AssistantTurn:
        if not tools:
            prompt = messages[-1].content
            if "<turn>" not in prompt:  # a compaction summary
                return AssistantTurn("<summary>earlier work</summary>", [], StopReason.STOP)
            self.review_prompts.append(prompt)
            if self.review_delay:
                await asyncio.sleep(self.review_delay)
            answer = self.reviews.pop(0) if self.reviews else ops()
            return AssistantTurn(answer, [], StopReason.STOP)
        self.requests.append(list(messages))
        if self.turns:
            return self.turns.pop(0)
        return AssistantTurn("done", [], StopReason.STOP)


def files_under(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }
