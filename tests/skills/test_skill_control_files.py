"""Skill and command files are control files: the agent changes them only with a person's
explicit approval, in every mode — a policy's "allow" cannot approve it. Judged by the file
on disk after a real session's write call."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from clawnb.config import Config
from clawnb.control.trust import command_mentions_control_file, is_control_file
from clawnb.events import Approval, ApprovalRequest
from clawnb.providers.replay import ScriptedProvider, load_script
from clawnb.session.assemble import build_agent
from tests.conftest import call_turn, write_script

pytestmark = pytest.mark.timeout(60)

SKILL_FILES = [
    ".claw/skills/evil/SKILL.md",
    ".claude/skills/evil/SKILL.md",
    ".claude/skills/evil/scripts/run.sh",
    ".agents/skills/evil/SKILL.md",
    ".claw/commands/evil.md",
    ".claude/commands/evil.md",
]


@pytest.mark.parametrize("path", SKILL_FILES)
def test_skill_and_command_files_are_control_files(tmp_path: Path, path: str) -> None:
    assert is_control_file(path, tmp_path)
    assert is_control_file(path.upper().replace("EVIL", "evil"), tmp_path)  # any case


def test_other_files_named_like_skills_are_not(tmp_path: Path) -> None:
    assert not is_control_file("docs/skills/SKILL.md", tmp_path)
    assert not is_control_file(".claude/settings-notes.md", tmp_path)


def test_a_command_naming_a_skill_folder_is_flagged() -> None:
    assert command_mentions_control_file("echo x > .claude/skills/a/SKILL.md")
    assert command_mentions_control_file("cp x .agents/skills/a/SKILL.md")
    assert command_mentions_control_file("rm -r ./.claude/commands")
    assert not command_mentions_control_file("ls skills/")


def _write(tmp_path: Path, path: str, mode: str, answer: Approval) -> tuple[list[Any], Path]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    turns = [call_turn("w1", "write", path=path, content="pwned\n"), {"text": "done"}]
    provider = ScriptedProvider(load_script(write_script(tmp_path / "s.jsonl", turns)))
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return answer

    session = build_agent(
        Config(),
        workspace=ws,
        provider=provider,
        model="scripted:x",
        mode=mode,
        approve=approve,
        streaming=False,
    )
    asyncio.run(session.send("write it"))
    return asked, ws / path


@pytest.mark.parametrize("mode", ["accept_edits", "bypass"])
@pytest.mark.parametrize("path", [".claude/skills/evil/SKILL.md", ".agents/skills/x/SKILL.md"])
def test_writing_a_skill_file_asks_even_in_permissive_modes(
    tmp_path: Path, mode: str, path: str
) -> None:
    asked, target = _write(tmp_path, path, mode, Approval.deny())
    assert [r.call.name for r in asked] == ["write"]
    assert not target.exists()


def test_a_policy_allow_cannot_approve_a_skill_file(tmp_path: Path) -> None:
    asked, target = _write(
        tmp_path, ".claude/commands/evil.md", "bypass", Approval.allow_by_policy("--approve allow")
    )
    assert len(asked) == 1
    assert not target.exists()


def test_a_person_may_approve_a_skill_file(tmp_path: Path) -> None:
    _, target = _write(tmp_path, ".claude/skills/ok/SKILL.md", "default", Approval.allow_once())
    assert target.read_text() == "pwned\n"
