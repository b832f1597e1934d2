"""Worlds for the skill tests: a workspace, a user config directory and a folder outside
both, all real directories under ``tmp_path``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest


def skill_text(
    description: str | None = "Does a thing. Use when a thing is needed.",
    body: str = "Do the thing.",
    **keys: str,
) -> str:
    """A SKILL.md: frontmatter with ``description`` and ``keys`` (``_`` in a name is ``-``)."""
    lines = []
    if description is not None:
        lines.append(f"description: {description}")
    lines += [f"{key.replace('_', '-')}: {value}" for key, value in keys.items()]
    return "---\n" + "\n".join(lines) + "\n---\n" + body + "\n"


@dataclass
class World:
    workspace: Path
    user: Path  # clawnb's user config directory
    outside: Path

    text = staticmethod(skill_text)

    def skill(self, where: str, name: str, text: str | None = None) -> Path:
        """Write ``where/NAME/SKILL.md`` (``where`` relative to the workspace, or ``user``)."""
        base = self.user / "skills" if where == "user" else self.workspace / where
        path = base / name / "SKILL.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text if text is not None else skill_text(), encoding="utf-8")
        return path

    def command(self, where: str, name: str, text: str) -> Path:
        base = self.user / "commands" if where == "user" else self.workspace / where
        base.mkdir(parents=True, exist_ok=True)
        path = base / f"{name}.md"
        path.write_text(text, encoding="utf-8")
        return path


@pytest.fixture
def world(tmp_path: Path) -> World:
    ws = tmp_path / "ws"
    user = tmp_path / "config" / "clawnb"
    outside = tmp_path / "outside"
    for d in (ws, user, outside):
        d.mkdir(parents=True)
    return World(ws, user, outside)
