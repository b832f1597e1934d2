"""What the commands say about a session, in one wording for every front end.

``/status`` and ``%claw status``, ``/cost`` and ``%claw cost``, ``/history``, ``/config``,
``/sessions`` and ``/resume`` used to be written twice (the chat's and the notebook's), and the
copies disagreed — ``$0.0000`` in one, "not priced" in the other. Each is one function of an
:class:`~clawnb.session.assemble.AgentSession` here. Everything returned is redacted.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..control.secrets import KEY_ENV_VARS, mask, read_dotenv, redact
from ..types import Message, ToolCall, User

if TYPE_CHECKING:
    from ..config import Config
    from ..usage import CostTracker
    from .assemble import AgentSession

__all__ = [
    "transcript",
    "config_text",
    "cost_text",
    "count",
    "history_text",
    "prompt_kind",
    "resume_text",
    "forget_rule_text",
    "rules_text",
    "sessions_text",
    "status_text",
]


def count(n: int, word: str) -> str:
    """``1 message``, ``1,204 messages``."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def status_text(session: AgentSession, extra: list[str] | None = None) -> str:
    user_turns = sum(1 for m in session.history if isinstance(m, Message.User))
    allowed = ", ".join(session.allowed_for_session()) or "none"
    base_url = getattr(session.provider, "api_base", "")
    lines = [
        f"model: {session.model}" + (f" @ {base_url}" if base_url else ""),
        f"mode: {mode_line(session)}",
        f"workspace: {session.workspace}",
        f"conversation: {count(len(session.history), 'message')}, {count(user_turns, 'prompt')}",
        f"always allowed: {allowed}",
        f"checkpoints: {len(session.checkpoints)}",
        f"session: {session_line(session)}",
        f"bash: {session.sandbox_description()}",
        *(extra or []),
    ]
    return redact("\n".join(lines))


def mode_line(session: AgentSession) -> str:
    """``accept_edits``, or ``accept_edits (from the project's configuration)`` when no
    option or command chose another one."""
    from ..permissions import PermissionMode

    configured = str(session.config.permissions.mode)
    # the built-in default came from no configuration: say nothing then
    chosen = configured != PermissionMode.DEFAULT.value and session.mode == configured
    origin = " (from the project's configuration)" if chosen else ""
    return f"{session.mode}{origin}"


def session_line(session: AgentSession) -> str:
    path = session.session_path
    if session.session_id is not None and path is not None:
        return f"{session.session_id} ({path})"
    return "not saved"


def cost_part(tracker: CostTracker) -> str:
    """The cost as every front end words it (:meth:`CostTracker.cost_label`): ``$0.0123``,
    ``free`` (priced at 0 on purpose) or ``not priced`` (a scripted or unknown model:
    ``$0.0000`` would read like a real price)."""
    return tracker.cost_label()


def cost_text(session: AgentSession) -> str:
    """Tokens (with separators) and cost — "not priced" for a model without a price — and the
    context's size."""
    from ..usage import NOT_PRICED

    tracker = session.cost
    cost = cost_part(tracker)
    if cost == NOT_PRICED:
        cost += f" (no price configured for {session.model!r})"
    ctx = session.context
    window = f"{ctx.max_tokens:,}" if ctx.max_tokens else "no limit"
    return (
        f"tokens: {tracker.tokens_label()} | cost: {cost}\n"
        f"context: ~{ctx.context_tokens:,} of {window} tokens, "
        f"{count(len(session.history), 'message')}, {count(ctx.compactions, 'compaction')}"
    )


def history_text(
    session: AgentSession,
    limit: int = 100,
    cell_of: Callable[[Message], int | None] | None = None,
) -> str:
    """The conversation as a compact transcript (:func:`transcript`); ``cell_of`` names the
    notebook cell (``In [n]``) that sent a prompt, when the front end knows it."""
    return transcript(session.history, limit, cell_of)


# the words the engine sends for the person at the plan question (AgentSession.run_plan and
# APPROVED_PLAN in assemble, which imports this module): not typed. The history tests of the
# chat and the notebook fail if these drift apart.
_REVISE = "Revise the plan: "
_APPROVED = "Approved. Execute the plan."


def prompt_kind(message: User) -> tuple[str, str]:
    """What a user message is, for a transcript: ``("prompt", words)`` the person's own,
    ``("plan", task)`` a request planned first (``/plan`` or plan mode), ``("revise",
    feedback)`` the person's changes to a plan, ``("execute", "")`` the approval of one."""
    content, label = message.content, message.label
    if label is not None and label.startswith("/plan "):
        task = label.removeprefix("/plan ")
        if task.startswith(_REVISE):
            return "revise", task.removeprefix(_REVISE)
        return "plan", task
    if label is None and (content == _APPROVED or content.startswith(_APPROVED + "\n")):
        return "execute", ""
    # the notebook context attached to a prompt is long: show the task
    task = content.rsplit("Task: ", 1)[-1] if "Task: " in content else content
    return "prompt", label or task


def transcript(
    messages: list[Message],
    limit: int = 100,
    cell_of: Callable[[Message], int | None] | None = None,
) -> str:
    """Messages as a compact transcript: each prompt, each answer's first line, one line per
    tool call with how it ended — not every message in full.

    A prompt is numbered ``[1]``, ``[2]`` … or, where ``cell_of`` knows the notebook cell
    that sent it, by that cell (``In [7]``). What the engine said for the person at a plan's
    question is marked as such (``→ plan approved: executing it``), never shown as typed."""
    from ..planning import EXIT_PLAN

    results = {m.id: m.content for m in messages if isinstance(m, Message.ToolResult)}
    lines: list[str] = []
    prompts = 0
    for msg in messages:
        match msg:
            case Message.User():
                kind, words = prompt_kind(msg)
                if kind == "execute":
                    lines.append("    → plan approved: executing it")
                    continue
                if kind == "revise":
                    lines.append(f"    → revise the plan: {_short(words.strip(), limit)}")
                    continue
                prompts += 1
                cell = cell_of(msg) if cell_of is not None else None
                number = f"In [{cell}]" if cell is not None else f"[{prompts}]"
                who = "you (plan first)" if kind == "plan" else "you"
                lines.append(f"{number} {who}: {_short(words.strip(), limit)}")
            case Message.Assistant(turn=turn):
                text = (turn.text or "").strip()
                if text:
                    first = text.splitlines()[0]
                    more = " …" if "\n" in text else ""
                    lines.append(f"    claw: {_short(first, limit)}{more}")
                for call in turn.tool_calls:
                    if call.name == EXIT_PLAN:
                        continue  # the plan's hand-in: the next line says what became of it
                    lines.append("      " + _call_line(call, results.get(call.id), limit))
    return redact("\n".join(lines) or "(empty conversation)")


def config_text(session: AgentSession, extra: list[str] | None = None) -> str:
    """The settings in effect, and where each key comes from (masked)."""
    config = session.config
    limit = session.agent.max_turns
    lines = [
        f"model = {session.model}",
        f"base_url = {config.base_url}",
        f"mode = {session.mode}",
        f"workspace = {session.workspace}",
        f"max_turns = {limit if limit else 'none'}",
        f"max_context_tokens = {config.max_context_tokens}",
    ]
    # the limits the provider sends and knows: numbers, or "none" / "unknown", never None
    cap = getattr(session.provider, "request_fields", {}).get("max_tokens")
    window = getattr(session.provider, "context_window", None)
    lines.append(f"max_output_tokens = {cap if cap else 'none'}")
    lines.append(f"server context window = {window if window else 'unknown'}")
    try:
        shown = config.generation_for(session.model).model_dump(exclude_none=True)
        lines.append("model options = " + (json.dumps(shown) if shown else "(defaults)"))
    except Exception:  # a model name the options table cannot take: nothing to show
        pass
    # the provider also takes keys from the workspace's .env: say where one is set
    dotenv = read_dotenv(Path(session.workspace) / ".env", KEY_ENV_VARS)
    for name in KEY_ENV_VARS:
        if not os.environ.get(name) and dotenv.get(name):
            lines.append(f"{name} = {mask(dotenv[name])} in .env")
        else:
            lines.append(f"{name} = {mask(os.environ.get(name))}")
    sources = getattr(session, "instruction_sources", None) or []
    lines.append("instructions = " + (", ".join(str(p) for p in sources) or "none"))
    lines += extra or []
    return redact("\n".join(lines))


_RULE_HEADINGS = {
    "permissions.deny": "deny (wins in every mode, from any layer)",
    "permissions.ask": "ask (wins over allow)",
    "permissions.allow": "allow",
    "protected_patterns": "protected files (write and edit refuse them)",
    "blocked_commands": "blocked commands (bash refuses them, in every mode)",
}


def rules_text(
    config: Config,
    session_allows: list[str] | None = None,
    *,
    workspace: str | os.PathLike[str] | None = None,
    prefix: str = "/",
) -> str:
    """``/rules`` and ``%claw rules``: the rules in effect, list by list, each with the layer
    it came from (``project FILE``, ``user FILE``, ``built-in``); the built-in blocklist as
    one line; project deny rules the user file took back, and what took them back; with a
    ``workspace``, the allow rules saved from approval questions, read from their files as
    they are now (:mod:`clawnb.control.saved_rules`), and how to forget one."""
    entries = [
        e
        for e in config.rule_entries()
        # a saved rule is listed from its file below (it may have been forgotten since)
        if not (e.origins and all(o.startswith("saved ") for o in e.origins))
    ]
    lines: list[str] = []
    lists = list(dict.fromkeys(e.list for e in entries if e.overridden_by is None))
    for name in [*_RULE_HEADINGS, *(n for n in lists if n not in _RULE_HEADINGS)]:
        rows = [e for e in entries if e.list == name and e.overridden_by is None]
        heading = _RULE_HEADINGS.get(name, name.replace("hooks.", "hooks ") + " (they all run)")
        if not rows and name.startswith("hooks."):
            continue
        lines.append(f"{heading}:")
        built_in = [e for e in rows if not e.origins]
        if name == "blocked_commands" and built_in:
            lines.append(f"  {count(len(built_in), 'pattern')} of the built-in recommended list")
            rows = [e for e in rows if e.origins]
        elif name == "blocked_commands" and config.blocked_commands_replace:
            lines.append("  (the built-in list is replaced: blocked_commands_replace = true)")
        if not rows:
            if not built_in:
                lines.append("  (none)")
            continue
        width = min(max(len(e.text) for e in rows), 40)
        for e in rows:
            lines.append(f"  {e.text.ljust(width)}  {', '.join(e.origins) or 'built-in'}")
    overridden = [e for e in entries if e.overridden_by is not None]
    if overridden:
        lines.append("overridden (not in effect):")
        for e in overridden:
            if e.origins:
                lines.append(
                    f"  deny {e.text} from {', '.join(e.origins)}: taken back by "
                    f"override_project_deny in {e.overridden_by}"
                )
            else:
                lines.append(
                    f"  override_project_deny {e.text!r} in {e.overridden_by} matches no "
                    "project-only deny rule"
                )
    if workspace is not None:
        lines += _saved_lines(workspace, prefix)
    if session_allows:
        lines.append("always allowed this session: " + ", ".join(session_allows))
    return redact("\n".join(lines))


def _saved_lines(workspace: str | os.PathLike[str], prefix: str) -> list[str]:
    """The allow rules saved by an "always" answer, with their files."""
    from ..control.saved_rules import SavedRulesError, read_saved

    rows: list[tuple[str, str]] = []
    notes: list[str] = []
    for where in ("project", "user"):
        try:
            path, rules, notice = read_saved(where, workspace)
        except SavedRulesError as exc:
            notes.append(f"  {exc}")
            continue
        if notice:
            notes.append(f"  {path}: ignored (clawnb did not write it)")
        rows += [(rule, f"saved {path}") for rule in rules]
    if not rows and not notes:
        return []
    lines = [f"saved from approvals (allow; {prefix}rules forget PATTERN removes one):"]
    width = min(max((len(r) for r, _ in rows), default=0), 40)
    lines += [f"  {rule.ljust(width)}  {where}" for rule, where in rows]
    return lines + notes


def forget_rule_text(session: AgentSession, pattern: str, prefix: str = "/") -> str:
    """``/rules forget PATTERN``: the allow rule ``pattern`` (as ``/rules`` shows it) is
    removed from the files it was saved in and from this session's answers; it asks again
    from the next call on. A rule a config file lists stays (that file is the person's own
    text) and the line says which file to edit. Nothing to forget is a
    :class:`~clawnb.errors.CommandError`."""
    from ..control.saved_rules import SavedRulesError, forget_rule
    from ..errors import CommandError

    pattern = pattern.strip()
    if len(pattern) >= 2 and pattern[0] == pattern[-1] and pattern[0] in "'\"":
        pattern = pattern[1:-1]
    if not pattern:
        raise CommandError(
            f"usage: {prefix}rules forget PATTERN (an allow rule {prefix}rules shows)"
        )
    try:
        files = forget_rule(pattern, session.workspace)
    except (SavedRulesError, OSError) as exc:
        raise CommandError(f"cannot forget {pattern}: {exc}") from None
    kept = [
        origin
        for e in session.config.rule_entries()
        if e.list == "permissions.allow" and e.text == pattern
        for origin in e.origins
        if not origin.startswith("saved ")
    ]
    permissions = getattr(session.gate, "permissions", None)
    in_session = False
    if permissions is not None:
        # a rule a config file still lists stays; this session's own answer goes
        in_session = permissions.forget(pattern, session_only=bool(kept))
    if not files and not in_session and kept:
        raise CommandError(
            f"{pattern} was not saved from an approval: it comes from {', '.join(kept)}; "
            "edit that file to remove it"
        )
    if not files and not in_session:
        raise CommandError(
            f"no saved or session rule {pattern!r}; {prefix}rules lists them (copy one as shown)"
        )
    where = ", ".join(str(f) for f in files)
    said = f"forgotten: {pattern}" + (f" (removed from {where})" if files else " (this session)")
    if kept:
        said += f"; still allowed by {', '.join(kept)}: edit that file to remove it"
    else:
        said += "; it is asked about again from the next call"
    return redact(said)


def sessions_text(session: AgentSession, prefix: str) -> str:
    infos = session.list_sessions()
    # session files inside the workspace are named, never listed as resumable
    notice = [line] if (line := session.sessions_notice()) else []
    if not infos:
        return "\n".join(["no saved sessions", *notice])
    lines = [("* " if info.id == session.session_id else "  ") + str(info) for info in infos]
    return "\n".join([*lines, f"(* this conversation; {prefix}resume ID continues one)", *notice])


def resume_text(session: AgentSession, which: str = "latest") -> str:
    """Resume ``which`` (``latest``: the most recent *other* session) and say what came back."""
    from ..errors import CommandError
    from .log import SessionError

    target = which
    if which == "latest":
        others = [s for s in session.list_sessions() if s.id != session.session_id]
        if not others:
            notice = session.sessions_notice()
            raise CommandError(
                "no other saved session to resume" + (f"; {notice}" if notice else "")
            )
        target = others[-1].id
    try:
        session.resume(target)
    except SessionError as exc:
        raise CommandError(str(exc)) from None
    prompts = sum(1 for m in session.history if isinstance(m, Message.User))
    return (
        f"resumed session {session.session_id}: {count(len(session.history), 'message')}, "
        f"{count(prompts, 'prompt')}, {count(len(session.checkpoints), 'undo step')}"
    )


def _short(text: str, limit: int) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call_line(call: ToolCall, result: str | None, limit: int) -> str:
    """``✓ read notes.txt · 12 lines`` / ``✗ edit f.py · error: …``."""
    args = call.arguments if isinstance(call.arguments, dict) else {}
    values = (args.get(k) for k in ("path", "command", "pattern", "question", "url"))
    target = next((v for v in values if isinstance(v, str)), "")
    head = f"{call.name} {_short(target, 60)}".rstrip()
    if result is None:
        return f"… {head}"
    failed = result.startswith("error")
    rows = result.strip().splitlines() or [""]
    outcome = _short(rows[0], limit) if failed or len(rows) == 1 else f"{len(rows)} lines"
    return f"{'✗' if failed else '✓'} {head} · {outcome}"


async def mcp_prompts_text(manager: Any, prefix: str) -> str:
    """``/mcp prompts``: each connected server's prompts as the commands that run them."""
    from ..mcp.prompts import prompts

    found = await prompts(manager)
    if not found:
        return "no MCP server offers prompts"
    rows = [(f"{prefix}{p.command} {p.usage}".rstrip(), p.description) for p in found]
    width = max(len(head) for head, _ in rows)
    return "\n".join(f"{head.ljust(width)}  {text}" for head, text in rows)


async def mcp_resources_text(manager: Any) -> str:
    """``/mcp resources``: what a prompt can attach with ``@SERVER:URI``."""
    found = await manager.list_resources()
    if not found:
        return "no MCP server offers resources"
    lines = [f"@{server}:{r.uri}  {r.name}" for server, r in found]
    return redact("\n".join(lines)) + "\n(write @SERVER:URI in a prompt to attach one)"
