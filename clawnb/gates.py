"""One gate in front of every tool call: hooks → safety checks → permission → run → hooks.

:class:`GatePipeline` is the :class:`clawnb.executor.Gate` every loop (SimpleAgent,
StreamingAgent, PlanAgent) accepts as ``gate=``. For each call:

1. **pre-tool hooks** — ``Block`` refuses the call (outcome ``blocked``); ``ModifyArgs`` replaces
   its arguments for everything after;
2. **safety checks** — the first failure refuses it with ``error: safety check failed: {reason}``
   (outcome ``blocked``) — except a read-only call's paths outside the workspace (and the
   folders the person added): those make step 3 ask, naming the resolved paths, in every mode,
   and only a person's answer to that very call allows it (no "always", rule or policy);
3. **permission** — ``Deny`` refuses it; ``Ask`` awaits the front end's approval callback with
   an :class:`~clawnb.events.ApprovalRequest`: *allow once* runs it, *allow for session* records
   a session allow and runs it, *deny* refuses it with the person's reason. Without a callback an
   ``Ask`` is a refusal that says so. Approvals are asked one at a time. Before asking, a tool
   that can preview its change (``preview(args)``, :class:`~clawnb.tools.base.Previewing`)
   computes it: a failing check becomes the result without a question, otherwise the exact
   change travels in the request's ``details["preview"]``. A tool that declares
   ``always_ask`` (the notebook's ``run_python``) is asked about in every mode, ``bypass``
   included, unless the person chose "always allow" for it; deny rules still win;
4. **checkpoint** — a file-changing call that passed is snapshotted into the session's
   :class:`~clawnb.control.checkpoints.Checkpoints` (``%claw undo``);
5. the tool runs (the executor does that);
6. **post-tool hooks** — a ``Block`` here cannot undo the call; its reason is appended to the
   result so the model learns about it.

With a :class:`~clawnb.hooks.HookEngine` (configured hooks), the gate also fires
``permission_request`` before a question, ``subagent_start``/``subagent_stop`` around a
``subagent`` call and ``file_change`` after a file tool that did not fail (docs/hooks.md).

Every refusal is a tool result the model can read, so the history stays valid. The engine
stays UI-free: a notebook's Approve/Deny buttons or a CLI prompt are just approval callbacks.
:func:`build_gate` wires the usual pieces for a workspace.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .control.checkpoints import FILE_TOOLS, Checkpoints
from .control.dirs import AddedDirectories
from .control.sandbox import approved_call
from .control.trust import control_change_approved
from .events import Approval, ApprovalCallback, ApprovalDecision, ApprovalRequest
from .executor import Gate, Refusal, tool_summary
from .hooks import HookAction, HookEngine, HookEvent, HookRegistry, hooks_from_config
from .permissions import (
    Permission,
    PermissionDecision,
    PermissionEngine,
    PermissionMode,
    PermissionRule,
    always_offers,
)
from .safety import (
    DEFAULT_PROTECTED_PATTERNS,
    CommandFilter,
    OutsideWorkspace,
    PathValidator,
    ProtectedFileCheck,
    SafetyCheck,
    SafetyViolation,
)
from .tools.base import Previewing, ToolError
from .types import JSON, Sandboxed, Tool, ToolCall, traits_of

if TYPE_CHECKING:
    from .control.sandbox import SandboxPolicy, SandboxStatus

__all__ = ["GatePipeline", "build_gate"]

USER_DENIED = "error: the user denied this tool call"
# What the model reads when a write or an edit names a path outside the workspace.
OUTSIDE_WRITE_HINT = (
    "writes outside the workspace are refused unless the person adds that folder "
    "(additional_directories in their user config, %claw add-dir DIR or /add-dir DIR)"
)


class GatePipeline(Gate):
    """Hooks, safety checks and permissions around every tool call (see module docstring)."""

    def __init__(
        self,
        *,
        hooks: HookRegistry | None = None,
        checks: Iterable[SafetyCheck] = (),
        permissions: PermissionEngine | None = None,
        approve: ApprovalCallback | None = None,
        checkpoints: Checkpoints | None = None,
        workspace: str | os.PathLike[str] | None = None,
        directories: AddedDirectories | None = None,
    ) -> None:
        self.hooks = hooks
        self.checks: list[SafetyCheck] = list(checks)
        self.permissions = permissions
        self.approve = approve
        self.checkpoints = checkpoints
        self.workspace = os.fspath(workspace) if workspace is not None else None
        # the folders outside the workspace the person added (the PathValidator and the
        # sandbox policy read the same object)
        self.directories = directories if directories is not None else AddedDirectories()
        self._approval_lock = asyncio.Lock()
        # scoped "always" answers saved as rules: (rule, file), and why a save failed
        self.saved: list[tuple[str, Path]] = []
        self.save_errors: list[str] = []

    @classmethod
    def from_config(
        cls,
        config: Any = None,
        *,
        workspace: str | os.PathLike[str] | None = None,
        mode: PermissionMode | str | None = None,
        approve: ApprovalCallback | None = None,
        rules: Iterable[PermissionRule] = (),
        checkpoints: Checkpoints | None = None,
        sandbox: SandboxStatus | SandboxPolicy | None = None,
        directories: AddedDirectories | None = None,
        hooks: HookRegistry | None = None,
    ) -> GatePipeline:
        """The gate for a ``Config`` (or a dict with the same keys) — the one builder that
        :func:`clawnb.build_agent`, the tests and scripts all use.

        ``workspace`` (default: ``allowed_directory``, else the current directory) is where
        relative paths point and hooks run. ``allowed_directory`` (relative to the workspace
        unless absolute) is where the tools may go. ``blocked_commands``,
        ``protected_patterns``, ``hooks`` (run in ``sandbox`` when one is given) and
        ``permissions`` (``mode``, ``allow``, ``ask``, ``deny``) come from the config. An
        explicit ``mode`` wins over the config's: a cell's or a command line's choice is more
        specific than a file. ``checkpoints`` snapshots each file a call is about to change.
        ``hooks`` replaces the config's hooks with an engine already built (a child session
        shares its parent's: ``once`` and the last runs are the session's)."""

        def get(name: str) -> Any:
            return _setting(config, name)

        def perm(name: str) -> Any:
            return _setting(get("permissions"), name)

        allowed = get("allowed_directory")
        ws = Path(workspace if workspace is not None else allowed or os.getcwd()).absolute()
        hooks_section = get("hooks")
        # the added folders: given (a child session shares its parent's), else the sandbox
        # policy's (one list for both), else the config's additional_directories
        policy = getattr(sandbox, "policy", sandbox)
        shared = directories if directories is not None else getattr(policy, "directories", None)
        directories = (
            shared
            if isinstance(shared, AddedDirectories)
            else AddedDirectories.from_config(get("additional_directories"), ws)
        )
        gate = build_gate(
            mode=mode or perm("mode") or PermissionMode.DEFAULT,
            workspace=ws,
            rules=rules,
            allow=perm("allow") or (),
            ask=perm("ask") or (),
            deny=perm("deny") or (),
            approve=approve,
            blocked_commands=get("blocked_commands"),
            protected_patterns=get("protected_patterns"),
            hooks=hooks
            if hooks is not None
            else hooks_from_config(config, cwd=ws, sandbox=sandbox)  # with its layers
            if hooks_section is not None
            else None,
            checkpoints=checkpoints,
            directories=directories,
        )
        if allowed:
            _restrict_paths(gate, allowed, ws)
        return gate

    def add_directory(self, path: str | os.PathLike[str]) -> Path:
        """Add a folder outside the workspace for this session (``%claw add-dir``): relative
        to the workspace, ``~`` expanded; readable without asking and writable as the
        workspace is from the next call on. Returns its real path;
        :class:`~clawnb.control.dirs.DirectoryRefused` for one that cannot be added."""
        return self.directories.add(path, base=self.workspace)

    # -- Gate ---------------------------------------------------------------------------------
    async def agent_start(self, prompt: str) -> None:
        if self.hooks is not None:
            await self.hooks.dispatch(HookEvent.AgentStart(prompt))

    async def agent_end(self, response: str) -> None:
        if self.hooks is not None:
            await self.hooks.dispatch(HookEvent.AgentEnd(response))

    async def before_tool(self, call: ToolCall, tool: Tool) -> ToolCall | Refusal:
        name = call.name
        # Not approved as a control-file change until a person says so below (the tool runs
        # in this same context: an unsandboxed bash undoes control-file changes otherwise).
        control_change_approved.set(False)
        approved_call.set(False)  # nor by a person at all: sandboxed, its secrets are masked
        if self.hooks is not None:
            action = await self.hooks.dispatch(HookEvent.PreToolCall(name, call.arguments))
            if isinstance(action, HookAction.Block):
                return Refusal(f"error: blocked by hook: {action.reason}", "blocked")
            if isinstance(action, HookAction.ModifyArgs):
                call = dataclasses.replace(call, arguments=action.args)
        # A call that only reads may name paths outside the workspace: those are asked about
        # (below), never refused outright and never waved through. A write outside is refused.
        reads = traits_of(tool).read_only
        outside: list[str] = []
        for check in self.checks:
            try:
                collect = getattr(check, "outside_paths", None) if reads else None
                if callable(collect):
                    outside += [p for p in collect(name, call.arguments) if p not in outside]
                else:
                    check.check(name, call.arguments)
            except OutsideWorkspace as exc:
                return Refusal(
                    f"error: safety check failed: {exc}; {OUTSIDE_WRITE_HINT}", "blocked"
                )
            except SafetyViolation as exc:
                return Refusal(f"error: safety check failed: {exc}", "blocked")
            except (asyncio.CancelledError, KeyboardInterrupt):
                raise
            except Exception as exc:  # a broken check refuses rather than waving through
                return Refusal(
                    f"error: safety check failed: {type(exc).__name__}: {exc}", "blocked"
                )
        if outside and self.permissions is None:
            return Refusal(
                f"error: safety check failed: {_outside_reason(name, outside)}, and nobody "
                "can be asked here",
                "blocked",
            )
        if self.permissions is not None:
            permitted = await self._permit(call, tool, outside)
            if isinstance(permitted, Refusal):
                return permitted
            call = permitted
        if self.checkpoints is not None:
            self.checkpoints.before_tool(call.name, call.arguments, self.workspace or os.getcwd())
        if call.name == "subagent" and isinstance(self.hooks, HookEngine):
            await self.hooks.fire("subagent_start", tool=call.name, args=call.arguments)
        return call

    async def after_tool(self, call: ToolCall, result: str) -> str:
        if self.hooks is None:
            return result
        action = await self.hooks.dispatch(
            HookEvent.PostToolCall(call.name, call.arguments, result)
        )
        if isinstance(action, HookAction.Block):
            result = f"{result}\n[post-tool hook: {action.reason}]"
        if isinstance(self.hooks, HookEngine):
            await _after_events(self.hooks, call, result)
        return result

    # -- permission and approval --------------------------------------------------------------
    def _decide(self, call: ToolCall, tool: Tool, outside: list[str]) -> PermissionDecision:
        assert self.permissions is not None
        decision = self.permissions.decide(tool, call.arguments)
        if outside and decision.permission is not Permission.Deny:
            # a read outside the workspace: only a person's answer to this very call allows
            # it — in every mode, whatever "always allow", allow rules or auto_allow say
            return PermissionDecision(
                Permission.Ask, _outside_reason(call.name, outside), explicit=True
            )
        if (
            decision.permission is Permission.Allow
            and traits_of(tool).always_asks
            and call.name not in self.permissions.session_allows
        ):
            # code that runs in the user's own process (the kernel) is never waved through
            # by a mode or an allow rule: only the person, or their "always allow"
            return PermissionDecision(Permission.Ask, f"`{call.name}` runs code, so it always asks")
        return decision

    async def _settled(
        self, call: ToolCall, tool: Tool, decision: PermissionDecision
    ) -> ToolCall | Refusal | None:
        """What an Allow or a Deny comes to without asking anyone (``None``: it asks)."""
        if decision.permission is Permission.Allow:
            return await self._allowed_unasked(call, tool, decision.reason)
        if decision.permission is Permission.Deny:
            return Refusal(
                f"error: permission denied for `{call.name}`: {decision.reason}", "denied"
            )
        return None

    async def _permit(
        self, call: ToolCall, tool: Tool, outside: list[str] | None = None
    ) -> ToolCall | Refusal:
        assert self.permissions is not None
        outside = outside or []
        decision = self._decide(call, tool, outside)
        settled = await self._settled(call, tool, decision)
        if settled is not None:
            return settled
        if decision.rule is None and not decision.explicit and traits_of(tool).auto_allowed:
            # [sandbox] auto_allow: the OS sandbox bounds what the command can do, so the
            # mode's "ask first" is waived. Deny rules, explicit ask rules (decision.rule) and
            # the control-file rule (decision.explicit) still decide.
            return await self._allowed_unasked(call, tool, "the sandbox bounds what it can do")
        if self.approve is None or getattr(self.approve, "target", self.approve) is None:
            # no callback, or a session's proxy that no front end points anywhere
            return Refusal(
                f"error: `{call.name}` needs the user's approval ({decision.reason}), but no "
                "approval callback is set, so the call was not run",
                "denied",
            )
        # One question at a time; an answer "for this session" may settle the next one.
        async with self._approval_lock:
            decision = self._decide(call, tool, outside)
            settled = await self._settled(call, tool, decision)
            if settled is not None:
                return settled
            details: dict[str, Any] = {
                "mode": self.permissions.mode.value if self.permissions.mode else None,
                "rule": decision.rule.pattern if decision.rule else None,
            }
            if decision.explicit:
                # a control file: front ends offer no "always" and no policy may answer
                details["explicit_only"] = True
            offers = self.always_offers(call, tool, decision, outside)
            if offers:
                details["always"] = offers
            if outside:
                details["outside"] = list(outside)  # resolved, as the reason shows them
            if isinstance(tool, Previewing):
                try:
                    details["preview"] = await tool.preview(call.arguments)
                except ToolError as exc:
                    # bound to fail (unread file, no unique match, changed on disk): the
                    # failure is the result, nobody is asked to approve it
                    return Refusal(f"error: {exc}", "error")
            reason = decision.reason
            if isinstance(tool, Sandboxed) and tool.sandbox_description:
                # the person decides knowing what bash can do
                reason = f"{reason}; {tool.sandbox_description}"
            request = ApprovalRequest(call, tool_summary(call).strip(), reason, details)
            if isinstance(self.hooks, HookEngine):
                await self.hooks.fire(
                    "permission_request", tool=call.name, args=call.arguments, message=reason
                )
            try:
                answer = await self.approve(request)
            except (asyncio.CancelledError, KeyboardInterrupt):
                raise
            except Exception as exc:
                return Refusal(
                    f"error: the approval prompt failed ({type(exc).__name__}: {exc}); "
                    "the call was not run",
                    "denied",
                )
        applied = self._apply(
            answer,
            call,
            once=decision.explicit,
            offered=details.get("always") or [],
            what="a read outside the workspace"
            if outside
            else "opening a secret file"
            if traits_of(tool).read_only
            else None,
        )
        if decision.explicit and not outside and not isinstance(applied, Refusal):
            control_change_approved.set(True)
        if not isinstance(applied, Refusal) and not getattr(answer, "policy", ""):
            approved_call.set(True)  # a person saw this very call: the sandbox unmasks secrets
        return applied

    async def _allowed_unasked(self, call: ToolCall, tool: Tool, reason: str) -> ToolCall | Refusal:
        """A call that changes something runs without a question (a rule, the mode, an
        earlier "always allow"): tell the front end why, if it listens (``allowed(call,
        reason, change)`` on the approval callback), so the person can see it was not asked
        — with the change it makes when the tool can preview it (a write's content, an
        edit's diff), computed as before a question (a failing check is the result)."""
        if traits_of(tool).read_only:
            return call
        tell = getattr(self.approve, "allowed", None)
        if not callable(tell):
            return call
        change = None
        if isinstance(tool, Previewing):
            try:
                change = await tool.preview(call.arguments)
            except ToolError as exc:
                return Refusal(f"error: {exc}", "error")
        tell(call, reason, change)
        return call

    def always_offers(
        self,
        call: ToolCall,
        tool: Tool,
        decision: PermissionDecision | None = None,
        outside: list[str] | None = None,
    ) -> list[dict[str, Any]]:
        """The scoped "always" answers a question about ``call`` offers (``details["always"]``
        of its :class:`ApprovalRequest`; :func:`clawnb.permissions.always_offers` says which):
        none for a call only a person's answer to that very call may allow — a control file,
        a secret file (``decision.explicit``), a read outside the workspace — nor for a tool
        that always asks. Every front end shows what this returns, so they all agree."""
        if decision is None:
            decision = self._decide(call, tool, outside or [])
        if decision.explicit or outside or traits_of(tool).always_asks:
            return []
        from .control.saved_rules import saved_rule_files

        offers = always_offers(call.name, call.arguments, self.workspace)
        files = {where: str(path) for where, path in saved_rule_files(self.workspace)}
        # where a saved one would go, so every front end names the same file
        return [{**o, "files": files} if o.get("saveable") else o for o in offers]

    def _remember(self, call: ToolCall, answer: Approval, offered: list[dict[str, Any]]) -> None:
        """A scoped "always": the session allows the rule from now on, and a saved one is
        written to the rules file (:mod:`clawnb.control.saved_rules`) — a control-file change
        this answer approves, and the only one it does."""
        from .control.saved_rules import SAVE_PLACES, save_rule

        assert self.permissions is not None
        if answer.save not in SAVE_PLACES:
            places = ", ".join(SAVE_PLACES)
            raise ValueError(f"an 'always' is kept for {places}, not {answer.save!r}")
        self.permissions.record_session_allow(answer.scope)
        offer = next(o for o in offered if o.get("rule") == answer.scope)
        if answer.save != "session" and offer.get("saveable"):
            self.saved.append((answer.scope, save_rule(answer.scope, answer.save, self.workspace)))

    def _apply(
        self,
        answer: Any,
        call: ToolCall,
        *,
        once: bool = False,
        what: str | None = None,
        offered: list[dict[str, Any]] | None = None,
    ) -> ToolCall | Refusal:
        if isinstance(answer, bool):  # a plain yes/no from a simple callback
            answer = Approval.allow_once() if answer else Approval.deny()
        if not isinstance(answer, Approval):
            return Refusal(
                f"error: the approval callback returned {answer!r}, not an Approval; "
                "the call was not run",
                "denied",
            )
        if answer.allowed and answer.policy and once:
            # a change to the agent's own configuration needs a person's own answer: the
            # rule lives here, so no front end (nor a third party's) can forget it
            what = what or "a change to the agent's own configuration"
            return Refusal(
                f"error: not approved: {answer.policy} cannot approve {what}; a person must",
                "denied",
            )
        if answer.decision is ApprovalDecision.ALLOW_SESSION and once:
            return call  # "always" on a control-file call allows this call, nothing more
        if answer.decision is ApprovalDecision.ALLOW_SESSION and answer.scope:
            if answer.policy or not any(o.get("rule") == answer.scope for o in offered or []):
                # only what the question offered, chosen by a person: a front end cannot
                # widen an answer into a rule of its own
                return Refusal(
                    f"error: not approved: 'always {answer.scope}' was not offered for this "
                    "call; the call was not run",
                    "denied",
                )
            try:
                self._remember(call, answer, offered or [])
            except (OSError, ValueError) as exc:
                # allowed for the session all the same; the rule could not be saved
                self.save_errors.append(f"{answer.scope}: {exc}")
            return call
        if answer.decision is ApprovalDecision.ALLOW_SESSION:
            assert self.permissions is not None
            self.permissions.record_session_allow(call.name)
            return call
        if answer.decision is ApprovalDecision.ALLOW_ONCE:
            return call
        reason = f": {answer.reason}" if answer.reason else ""
        return Refusal(f"{USER_DENIED}{reason}", "denied")

    def __repr__(self) -> str:
        return (
            f"GatePipeline(hooks={self.hooks!r}, checks={self.checks!r}, "
            f"permissions={self.permissions!r})"
        )


def build_gate(
    *,
    mode: PermissionMode | str = PermissionMode.DEFAULT,
    workspace: str | os.PathLike[str] | None = None,
    rules: Iterable[PermissionRule] = (),
    allow: Iterable[str] = (),
    ask: Iterable[str] = (),
    deny: Iterable[str] = (),
    approve: ApprovalCallback | None = None,
    hooks: HookRegistry | None = None,
    blocked_commands: Iterable[str] | None = None,
    protected_patterns: Iterable[str] | None = None,
    checks: Iterable[SafetyCheck] = (),
    checkpoints: Checkpoints | None = None,
    directories: AddedDirectories | None = None,
) -> GatePipeline:
    """The usual pipeline: a :class:`PathValidator` for ``workspace`` (default: the current
    directory), a :class:`CommandFilter` (``blocked_commands``, default the recommended list),
    a :class:`ProtectedFileCheck` (default ``.env``, ``.env.*``, ``.git/**``), any extra
    ``checks``, and a :class:`PermissionEngine` in ``mode`` with the given rules.
    ``directories``: folders outside the workspace the person added (readable and writable
    like the workspace)."""
    ws = os.fspath(workspace) if workspace is not None else os.getcwd()
    directories = directories if directories is not None else AddedDirectories()
    command_filter = (
        CommandFilter(blocked_commands)
        if blocked_commands is not None
        else CommandFilter.recommended()
    )
    all_checks: list[SafetyCheck] = [
        PathValidator(ws, also=directories),
        command_filter,
        ProtectedFileCheck(
            protected_patterns if protected_patterns is not None else DEFAULT_PROTECTED_PATTERNS,
            workspace=ws,
        ),
        *checks,
    ]
    engine = PermissionEngine.for_mode(
        mode, rules=rules, allow=allow, ask=ask, deny=deny, workspace=ws
    )
    return GatePipeline(
        hooks=hooks,
        checks=all_checks,
        permissions=engine,
        approve=approve,
        checkpoints=checkpoints,
        workspace=ws,
        directories=directories,
    )


def _outside_reason(name: str, outside: list[str]) -> str:
    """Why a read outside the workspace is asked, naming where it really leads."""
    where = ", ".join(outside)
    return (
        f"`{name}` reads outside the workspace: {where} — asked every time, in every mode "
        "(add the folder to stop asking: /add-dir DIR)"
    )


class _WorkspaceRelative:
    """A PathValidator for ``allowed_directory`` that reads relative paths the way the tools
    do — from the workspace — so the check and the tool agree on which file is meant."""

    def __init__(self, validator: PathValidator, workspace: Path) -> None:
        self.validator = validator
        self.workspace = workspace

    def check(self, tool_name: str, args: JSON) -> None:
        self.validator.check(tool_name, self._anchored(tool_name, args))

    def outside_paths(self, tool_name: str, args: JSON) -> list[str]:
        return self.validator.outside_paths(tool_name, self._anchored(tool_name, args))

    def _anchored(self, tool_name: str, args: JSON) -> JSON:
        if isinstance(args, dict):
            args = dict(args)
            for key in self.validator.PATH_KEYS:
                value = args.get(key)
                if (
                    isinstance(value, str)
                    and not value.startswith("~")
                    and not os.path.isabs(value)
                ):
                    args[key] = os.path.join(self.workspace, value)
            if tool_name in ("glob", "grep") and not isinstance(args.get("path"), str):
                args["path"] = str(self.workspace)  # they search the workspace by default
        return args

    def __getattr__(self, name: str) -> Any:
        return getattr(self.validator, name)  # allowed_dir, PATH_KEYS, …

    def __repr__(self) -> str:
        return f"{self.validator!r} (relative to {self.workspace})"


def _restrict_paths(gate: GatePipeline, allowed_directory: str, workspace: Path) -> None:
    """Swap the gate's workspace PathValidator for one that keeps tools in
    ``allowed_directory`` (relative to the workspace unless absolute)."""
    allowed = Path(os.path.expanduser(allowed_directory))
    if not allowed.is_absolute():
        allowed = workspace / allowed
    checks = [c for c in gate.checks if not isinstance(c, PathValidator)]
    validator = PathValidator(allowed, also=gate.directories)
    gate.checks = [_WorkspaceRelative(validator, workspace), *checks]


async def _after_events(hooks: HookEngine, call: ToolCall, result: str) -> None:
    """The notices after a call ran: ``subagent_stop`` (its answer as ``$MESSAGE``) and, for a
    file tool that did not fail, ``file_change``."""
    if call.name == "subagent":
        await hooks.fire("subagent_stop", tool=call.name, args=call.arguments, message=result)
    elif call.name in FILE_TOOLS and not result.startswith("error"):
        await hooks.fire("file_change", tool=call.name, args=call.arguments, result=result)


def _setting(source: Any, name: str) -> Any:
    """``source[name]`` of a dict, ``source.name`` of a Config (or of its permissions table);
    ``None`` when ``source`` is ``None`` or lacks it."""
    if source is None:
        return None
    if isinstance(source, dict):
        return source.get(name)
    return getattr(source, name, None)
