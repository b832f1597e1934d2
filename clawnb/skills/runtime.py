"""Skills in a running session: what :func:`~clawnb.session.assemble.build_agent` and the
command registry use.

* :func:`load_session_skills` discovers the skills of a workspace — the project's only when
  the workspace is trusted (the same trust store that decides what a project's config may
  widen) — and builds the listing for the dynamic part of the system prompt, within the
  budget. The result, :class:`SessionSkills`, lives on the session.
* :func:`run_snippets` runs a skill's dynamic-context snippets through the session's own bash
  tool, gate and sandbox: each snippet is one ``bash`` call, asked, refused or allowed exactly
  as the model's would be (rules, mode, hooks, the control-file rule, the sandbox). A refused
  snippet becomes ``[snippet denied: …]`` in the prompt, never its output. A project skill's
  snippets run only in a trusted workspace (discovery already keeps an untrusted one's skills
  out; this is the second lock on the same door).
* :func:`invoke` is ``/NAME args``: the body is prepared (arguments, snippets), then an inline
  skill is sent as a turn through the front end, and a ``context: fork`` skill runs as a child
  session (:meth:`~clawnb.session.assemble.AgentSession.child`: the parent's control plane,
  ``allowed-tools`` can only narrow its tools) whose final answer is returned to the parent
  conversation as the skill's report.

This module never imports the session package at run time (the session imports it).
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..events import AgentEvent, AgentEventCallback, AnyAgentEvent, emit
from ..types import ToolCall, ToolSet
from .discovery import SkillCatalog, discover_skills
from .invoke import ContextCommand, prepare_invocation
from .listing import SkillListing, build_listing
from .model import Skill, allowed_tool_rules

if TYPE_CHECKING:
    from ..session.assemble import AgentSession

__all__ = [
    "SNIPPET_DENIED",
    "SessionSkills",
    "fork_tools",
    "invoke",
    "load_session_skills",
    "run_snippets",
    "workspace_trusted",
]

SNIPPET_DENIED = "[snippet denied: {command}]"
SNIPPET_UNTRUSTED = "[snippet not run: {command} (the workspace is not trusted)]"
SNIPPET_NO_BASH = "[snippet not run: {command} (this session has no bash tool)]"

_call_ids = itertools.count(1)

Send = Callable[[str], Awaitable["str | None"]]
"""What :func:`invoke` sends an inline skill's prompt with (the front end's turn)."""


def workspace_trusted(workspace: Path) -> bool:
    """Has the person trusted the project ``workspace`` belongs to (with its config as it is
    now)? The same question the config loader and the MCP servers ask."""
    from ..control.trust import TrustStore, project_config_path

    project_file = project_config_path(workspace)
    return TrustStore().is_trusted(project_file.parent.parent, project_file)


@dataclass
class SessionSkills:
    """A session's skills: the ``catalog`` discovery found, the ``listing`` in its system
    prompt, whether the workspace was ``trusted``, and the skills loaded so far (``in_use``,
    in the order they were loaded, for the re-attachment after a compaction)."""

    catalog: SkillCatalog
    listing: SkillListing
    trusted: bool
    in_use: list[Skill] = field(default_factory=list)
    compactions_seen: int = 0

    def get(self, name: str) -> Skill | None:
        return self.catalog.get(name)

    def user_invocable(self) -> tuple[Skill, ...]:
        return self.catalog.user_invocable()

    def loaded(self, skill: Skill) -> None:
        """Remember that ``skill`` was loaded (the ``skill`` tool's ``on_load``, ``/NAME``)."""
        if not self.in_use or self.in_use[-1] is not skill:  # the same one again: as it is
            self.in_use = [s for s in self.in_use if s.name != skill.name] + [skill]

    def after_compaction(self, compactions: int) -> list[str]:
        """The reminder that gives the skills in use back once a compaction (the context
        manager's ``compactions`` count went up) summarised their bodies away: at most
        :data:`~clawnb.skills.invoke.REATTACH_TOTAL_TOKENS`, the latest first; ``[]`` when
        nothing was compacted since the last call or no skill is in use."""
        from .invoke import reattachment

        if compactions <= self.compactions_seen:
            return []
        self.compactions_seen = compactions
        block = reattachment(self.in_use) if self.in_use else ""
        return [block] if block else []

    def notices(self) -> list[str]:
        """What the front end says once at start: skipped files, ignored project skills."""
        lines = list(self.catalog.problems)
        note = self.catalog.untrusted_note()
        if note:
            lines.append(note)
        return lines

    def report_lines(self) -> list[str]:
        """For ``/skills``: every skill, what overrides what, what the budget cut."""
        lines = [
            f"{s.label}"
            + (f" {s.argument_hint}" if s.argument_hint else "")
            + f" — {_short(s.description)}"
            for s in self.catalog
        ]
        lines += self.catalog.shadowed_lines()
        lines += self.listing.report_lines()
        lines += self.notices()
        return lines


def load_session_skills(
    workspace: Path,
    *,
    context_window: int | None,
    trusted: bool | None = None,
    user_dir: str | Path | None = None,
    builtins: bool = True,
) -> SessionSkills:
    """Discover the skills for ``workspace`` and build their listing within the budget of
    ``context_window`` (1% of it). ``trusted`` defaults to the trust store's answer."""
    if trusted is None:
        trusted = workspace_trusted(workspace)
    catalog = discover_skills(workspace, trusted=trusted, user_dir=user_dir, builtins=builtins)
    listing = build_listing(catalog, context_window=context_window)
    return SessionSkills(catalog, listing, trusted)


async def run_snippets(
    session: AgentSession,
    skill: Skill,
    commands: Sequence[ContextCommand],
    on_event: AgentEventCallback | None = None,
) -> list[str]:
    """Run ``commands`` (a skill's snippets, in order) as ``bash`` calls through the session's
    gate and sandbox; their outputs, or a ``[snippet …]`` line for each one that did not run.

    The calls are announced to ``on_event`` like the model's (the card shows each one and the
    person approves it there); a refusal — the person said no, a rule or hook blocked it, no
    one was there to ask — is ``[snippet denied: COMMAND]``."""
    from ..executor import ToolExecutor

    skills = session.skills
    if skill.source == "project" and (skills is None or not skills.trusted):
        return [SNIPPET_UNTRUSTED.format(command=_short(c.command)) for c in commands]
    bash = session.tools.get("bash")
    if bash is None:
        return [SNIPPET_NO_BASH.format(command=_short(c.command)) for c in commands]
    executor = ToolExecutor(
        ToolSet([bash]), gate=session.gate, result_limit=session.agent.result_limit
    )
    outputs: list[str] = []
    for command in commands:
        call = ToolCall(
            f"skill-{skill.name}-{next(_call_ids)}", "bash", {"command": command.command}
        )
        outcomes: list[str] = []

        async def tap(event: AnyAgentEvent, outcomes: list[str] = outcomes) -> None:
            if isinstance(event, AgentEvent.ToolResult):
                outcomes.append(event.outcome)
            await emit(on_event, event)

        content = await executor.run_call(call, tap)
        if outcomes and outcomes[-1] in ("denied", "blocked"):
            outputs.append(SNIPPET_DENIED.format(command=_short(command.command)))
        else:
            outputs.append(content.rstrip("\n"))
    return outputs


def fork_tools(session: AgentSession, skill: Skill) -> list[str] | None:
    """The tools a forked ``skill`` gets: the session's, narrowed to the tools its
    ``allowed-tools`` names (``None``: no narrowing). Never a tool the session lacks, and the
    child's gate is the session's rules — ``allowed-tools`` pre-approves nothing."""
    if not skill.allowed_tools:
        return None
    wanted = {rule.split("(", 1)[0] for rule in allowed_tool_rules(skill)}
    return [name for name in session.tools.names() if name in wanted]


# the fork kinds of the ``agent`` key: read-only ones, and the general child
READ_ONLY_AGENTS = frozenset({"explore", "plan", "read-only"})
KNOWN_AGENTS = READ_ONLY_AGENTS | {"general-purpose", "general"}


def fork_is_read_only(skill: Skill) -> bool:
    """``agent: Explore`` / ``Plan`` (Claude Code's read-only kinds): the fork gets read-only
    tools only; ``general-purpose`` or none: the usual child. Other names (a custom agent
    file, which clawnb does not read) run as the usual child — ``skills check`` says so."""
    return (skill.agent or "").strip().lower() in READ_ONLY_AGENTS


async def invoke(
    session: AgentSession,
    skill: Skill,
    arguments: str,
    *,
    send: Send,
    on_event: AgentEventCallback | None = None,
) -> str | None:
    """``/NAME arguments``: prepare ``skill`` (substitute, run its snippets through the
    gate), then run it — inline through ``send`` (the front end's turn), or forked as a child
    session whose answer is added to the conversation and returned."""
    prepared = prepare_invocation(skill, arguments, session_id=session.session_id)
    outputs = (
        await run_snippets(session, skill, prepared.commands, on_event)
        if prepared.commands
        else None
    )
    prompt = prepared.render(outputs)
    if session.skills is not None:
        session.skills.loaded(skill)
    shown = f"/{skill.name} {arguments}".rstrip()
    if skill.context != "fork":
        session.label_next(shown)  # the transcript shows what the person typed
        return await send(prompt)
    model = skill.model if skill.model not in (None, "", "inherit") else None
    child = session.child(
        tools=fork_tools(session, skill),
        read_only=fork_is_read_only(skill),
        model=model,
        system_prompt=session.system_prompt,
        foreground=True,
        max_turns=session.agent.max_turns,
    )
    note = (
        f"The person ran the skill /{skill.name} in a separate context (a fork)"
        + (f" with the arguments: {arguments}" if arguments else "")
        + ". Its report follows as your answer."
    )
    # the front end's own turn runs it, so the fork's calls are drawn (nested under one card)
    # and approved the way that front end shows and approves every call
    session.fork_next(child, name=skill.name, label=shown, note=note)
    return await send(prompt)


def _short(command: str) -> str:
    words = " ".join(command.split())
    return words if len(words) <= 80 else words[:79] + "…"
