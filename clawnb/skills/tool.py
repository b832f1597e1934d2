"""The ``skill`` tool: how the model loads a skill it found in the listing (stage two).

The tool is read-only: it reads the skill's ``SKILL.md`` (through the safe reader, secrets
redacted), fills in the arguments and returns the instructions, followed by the files in the
skill's folder so the model can ``read`` the references and scripts the instructions mention.
A name that is unknown, a prompt command, or a skill marked ``disable-model-invocation`` is an
``error: …`` result naming the skills that can be loaded.

Dynamic context (``!`cmd``` snippets) is not run by this tool. The session passes a
``run_context`` callback that runs them through its bash gate and sandbox (the same approvals
as ``bash``); without one, each snippet is replaced by a note that it was not run.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence

from ..tools.base import BaseTool, ToolError, optional_str, require_str
from ..types import JSON, ToolDefinition, ToolTraits
from .invoke import ContextCommand, prepare_invocation
from .model import Skill, SkillError

__all__ = ["NAME", "ContextRunner", "SkillTool"]

NAME = "skill"

ContextRunner = Callable[[Skill, Sequence[ContextCommand]], Awaitable[Sequence[str]]]
"""Runs a skill's snippets (through the session's gate) and returns their outputs, in order;
a refused snippet's output is the refusal's text."""

_MAX_FILES = 50


class SkillTool(BaseTool):
    """``skill``: load a model-invocable skill by name (see the module docstring).

    ``skills`` is the session's catalog (or any skills); ``on_load`` is told of each skill
    loaded (the session keeps the skills in use, to re-attach them after a compaction and to
    say so in a reminder)."""

    # its snippets may ask the person; one question at a time
    traits = ToolTraits(read_only=True, concurrency_safe=False)

    definition = (
        ToolDefinition(
            NAME,
            "Load a skill: instructions for a particular task, listed in the Skills section "
            "of the system prompt. Returns the skill's instructions and the files in its "
            "folder (read them with `read` when the instructions point to them). Call it "
            "before starting a task a skill's description matches.",
        )
        .param("name", "string", "The skill's name, as listed", required=True)
        .param(
            "arguments",
            "string",
            "Arguments for the skill, as a person would type them after /name (optional)",
        )
    )

    def __init__(
        self,
        skills: Iterable[Skill],
        *,
        run_context: ContextRunner | None = None,
        on_load: Callable[[Skill], object] | None = None,
        session_id: str | None = None,
    ) -> None:
        self.skills = tuple(skills)
        self.run_context = run_context
        self.on_load = on_load
        self.session_id = session_id

    def available(self) -> list[str]:
        return sorted(skill.name for skill in self.skills if skill.model_invocable)

    async def call(self, args: JSON) -> str:
        name = require_str(args, "name").strip().removeprefix("/")
        arguments = optional_str(args, "arguments") or ""
        skill = next((s for s in self.skills if s.name == name), None)
        listed = ", ".join(self.available()) or "none"
        if skill is None:
            raise ToolError(f"no skill named '{name}'; available skills: {listed}")
        if not skill.model_invocable:
            why = (
                "is a prompt command"
                if skill.kind == "command"
                else "is marked disable-model-invocation"
            )
            raise ToolError(
                f"skill '{name}' {why}: only the person runs it, as /{name}; "
                f"available skills: {listed}"
            )
        try:
            prepared = prepare_invocation(skill, arguments, session_id=self.session_id)
        except SkillError as exc:
            raise ToolError(str(exc)) from None
        outputs: Sequence[str] | None = None
        if prepared.commands and self.run_context is not None:
            outputs = await self.run_context(skill, prepared.commands)
        text = prepared.render(outputs)
        if self.on_load is not None:
            done = self.on_load(skill)
            if inspect.isawaitable(done):
                await done
        return _result(skill, text)


def _result(skill: Skill, text: str) -> str:
    from ..control.secrets import redact

    head = f'<skill name="{skill.name}" source="{skill.source}">'
    parts = [head, text.rstrip("\n"), "</skill>"]
    files = skill.files(limit=_MAX_FILES + 1)
    if files:
        shown = [f"- {path}" for path in files[:_MAX_FILES]]
        if len(files) > _MAX_FILES:
            shown.append(f"- … (more files in {skill.folder})")
        parts.append(
            f"Files in this skill's folder ({skill.folder}); read them when the "
            "instructions point to them:\n" + "\n".join(shown)
        )
    return redact("\n".join(parts))
