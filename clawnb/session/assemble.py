"""One factory for a ready agent: :func:`build_agent`.

Every front end — the terminal chat, the notebook layer, the demo — needs the same pieces
wired the same way, so they are wired here once:

* the **config** (:class:`~clawnb.config.ConfigLoader`: project ← user ← environment);
* the **provider**: ``scripted:<file>`` or ``replay:<file>`` plays a script offline
  (:class:`~clawnb.providers.replay.ScriptedProvider`); any other model name goes to the
  OpenAI-compatible endpoint at ``config.base_url``;
* the **tools** (``clawnb.tools.default_tools``) plus a :class:`~clawnb.tools.subagent.SubagentTool`;
* the **gate** (:func:`clawnb.gates.build_gate`: hooks, safety checks, permission mode and
  rules from config, and the front end's approval callback);
* the **system prompt** (:class:`~clawnb.prompt.SystemPromptBuilder`, with CLAUDE.md/AGENTS.md);
* the **context manager** (compaction after each turn) and the **cost tracker**;
* the **result limit**: results over 50,000 characters keep head and tail, and the full text
  is saved under the workspace's ``.claw/tool-results`` with its path given to the model;
* the **history**: a plain list, or a :class:`~clawnb.session.log.SessionLog` persisted under
  :func:`~clawnb.session.log.sessions_root` — the user's data directory, or
  ``config.sessions_dir`` (new, or resumed by id / ``"latest"``).

The result, an :class:`AgentSession`, keeps them together and offers the few operations a
front end needs: :meth:`~AgentSession.send`, :meth:`~AgentSession.plan` /
:meth:`~AgentSession.execute_plan`, :meth:`~AgentSession.compact`,
:meth:`~AgentSession.resume`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Config, ConfigLoader
from ..context import SUMMARY_PREFIX, ContextManager, ExtractiveSummarizer
from ..control.checkpoints import Checkpoints
from ..control.imports import distrust
from ..control.secrets import redact, watch_dotenv
from ..errors import ContextOverflowError, ProviderConfigError
from ..events import AgentEvent, AgentEventCallback, AnyAgentEvent, ApprovalCallback, emit
from ..executor import Gate, ResultLimit
from ..permissions import PermissionMode
from ..types import (
    JSON,
    AnyProvider,
    AssistantTurn,
    Message,
    Tool,
    ToolCall,
    ToolSet,
    traits_of,
)
from ..usage import CostTracker
from .commands import COMMANDS, ApiHost
from .log import SessionInfo, SessionLog, SessionStore, write_ahead
from .protocol import ApprovalProxy, InputProxy

if TYPE_CHECKING:
    from ..agent import SimpleAgent, StreamingAgent
    from ..control.sandbox import SandboxStatus
    from ..hooks import HookEngine
    from ..mcp.manager import McpManager
    from ..memory.extract import MemoryKeeper
    from ..planning import PlanAgent, PlanReview
    from ..skills.runtime import SessionSkills
    from ..tools.ask import InputHandler

__all__ = [
    "AgentSession",
    "APPROVED_PLAN",
    "UnavailableProvider",
    "build_agent",
    "make_provider",
]

OFFLINE_PREFIXES = ("scripted:", "replay:")
APPROVED_PLAN = "Approved. Execute the plan."
RESUME_GAP_SECONDS = 24 * 3600  # a resumed conversation this old is told files may have changed
RESUME_GAP_NOTE = (
    "This conversation was resumed after {gap} without activity (last message {when}). "
    "Files, cells and the repository may have changed since: read again what you rely on "
    "before you edit it."
)


def make_provider(model: str, config: Config, *, require_key: bool = False) -> AnyProvider:
    """``scripted:<file>`` / ``replay:<file>`` → a ScriptedProvider (a relative file is read
    from the current directory); else an OpenAI-compatible provider for ``model`` at
    ``config.base_url`` (key from the environment or ``.env``). ``require_key``: a remote
    endpoint without a key is a :class:`~clawnb.errors.ProviderConfigError` now, instead of an
    unauthenticated request later (local servers need none)."""
    for prefix in OFFLINE_PREFIXES:
        if model.startswith(prefix):
            from ..providers.replay import ScriptedProvider

            return ScriptedProvider.from_file(os.path.expanduser(model[len(prefix) :]))
    from ..providers.openai import OpenAICompatProvider
    from ..providers.profiles import is_local_url, provider_options

    # Anthropic models bill a cached prompt prefix at a fraction of the price, but only when
    # asked to cache it; OpenAI-style servers cache prefixes by themselves.
    cache = "anthropic/" in model or model.startswith("claude")
    options = provider_options(config, model)
    if require_key and not is_local_url(config.base_url):
        from ..errors import ProviderConfigError

        try:
            return OpenAICompatProvider.from_env(
                model, base_url=config.base_url, cache_prompt=cache, **options
            )
        except ProviderConfigError as exc:
            raise ProviderConfigError(f"{exc}; or run offline with --model scripted:FILE") from None
    return OpenAICompatProvider(model, base_url=config.base_url, cache_prompt=cache, **options)


def is_offline_model(model: str) -> bool:
    return model.startswith(OFFLINE_PREFIXES)


@dataclass(frozen=True)
class _Fork:
    """A forked skill waiting for its prompt (:meth:`AgentSession.fork_next`)."""

    child: AgentSession
    name: str
    label: str
    note: str


@dataclass
class AgentSession:
    """A wired agent and everything around it: what every front end holds (it follows
    :class:`clawnb.session.protocol.Session`).

    Front ends read ``history``, ``mode``, ``model``, ``workspace``, ``cost``, ``context`` and
    ``checkpoints``, call the methods, and never assign into the rest: ``agent`` (the loop),
    ``gate`` and ``tools`` are wired once by :func:`build_agent` and shared by every nested loop
    (the planning phase, subagents), which is what makes the guarantees hold on side paths.
    """

    agent: SimpleAgent | StreamingAgent
    history: list[Message]
    cost: CostTracker
    context: ContextManager
    config: Config
    workspace: Path
    model: str
    mode: str
    store: SessionStore | None = None
    sandbox: SandboxStatus | None = None  # how bash and shell hooks run
    approvals: ApprovalProxy = field(default_factory=ApprovalProxy)
    questions: InputProxy = field(default_factory=InputProxy)
    checkpoints: Checkpoints = field(default_factory=Checkpoints)
    _plan_agent: PlanAgent | None = field(default=None, repr=False)
    # what a child session is built from besides the control plane (see :meth:`child`)
    extra_tools: list[Tool] = field(default_factory=list, repr=False)
    mcp: McpManager | None = field(default=None, repr=False)  # the configured MCP servers
    notices: list[str] = field(default_factory=list)  # what the front end says once at start
    web: bool = True
    offers_questions: bool = False  # the front end answers ask_user
    parent: AgentSession | None = field(default=None, repr=False)
    skills: SessionSkills | None = field(default=None, repr=False)  # listed, /NAME, `skill`
    # what the model must learn mid-conversation, for the next user message (see remind())
    reminders: dict[str, str] = field(default_factory=dict, repr=False)
    # the instruction files in the system prompt, includes too (/config shows them)
    instruction_sources: list[Path] = field(default_factory=list, repr=False)
    _mcp_said: str | None = field(default=None, repr=False)
    _next_label: str | None = field(default=None, repr=False)  # see label_next()
    _next_fork: _Fork | None = field(default=None, repr=False)  # see fork_next()
    _compact_resumed: bool = field(default=False, repr=False)  # see resume()
    # auto memory (clawnb.memory): None when off; memory_source names where a turn came
    # from (the notebook sets "cell N") for the memories learnt from it
    memory: MemoryKeeper | None = field(default=None, repr=False)
    memory_source: str = ""

    # The loop's own parts, named here for the session's methods and front ends to read: one
    # place holds them, so a model switch or a nested loop cannot see a stale copy.
    @property
    def provider(self) -> AnyProvider:
        return self.agent.provider

    @property
    def gate(self) -> Gate | None:
        return self.agent.gate

    @property
    def tools(self) -> ToolSet:
        return self.agent.tools

    @property
    def system_prompt(self) -> str:
        return self.agent.system_prompt or ""

    # -- front-end wiring -----------------------------------------------------------------------
    def handlers(
        self, *, approve: ApprovalCallback | None = None, ask: InputHandler | None = None
    ) -> contextlib.ExitStack[bool | None]:
        """Route approvals to ``approve`` and ``ask_user`` questions to ``ask`` for a ``with``
        block (one notebook cell, one chat turn); the previous targets come back after it."""
        stack = contextlib.ExitStack()
        if approve is not None:
            stack.enter_context(self.approvals.routed(approve))
        if ask is not None:
            stack.enter_context(self.questions.routed(ask))
        return stack

    def configure(
        self,
        *,
        mode: str | PermissionMode | None = None,
        max_turns: int | None = None,
        model: str | None = None,
    ) -> None:
        """Change the permission mode, the turn limit (``0`` means none) or the model for the
        turns to come; the conversation, approvals given "for the session" and checkpoints
        are kept. In ``plan`` mode :meth:`send` plans first; tools then run in ``default``
        mode (the person approved the plan, not every step)."""
        if mode is not None:
            parsed = PermissionMode.parse(mode)
            self.mode = parsed.value
            permissions = getattr(self.gate, "permissions", None)
            if permissions is not None:
                permissions.set_mode(_gate_mode(parsed))
        if max_turns is not None:
            if max_turns < 0:
                raise ValueError("max_turns must be 0 (no limit) or more")
            self.agent.max_turns = max_turns or None
            if self._plan_agent is not None:
                self._plan_agent.max_turns = self.agent.max_turns
        if model is not None and model != self.model:
            provider = make_provider(model, self.config)
            self.model = model
            self._set_provider(provider)

    def _set_provider(self, provider: AnyProvider) -> None:
        self.agent.provider = provider
        if self._plan_agent is not None:
            self._plan_agent.provider = provider
        if self.memory is not None:
            self.memory.provider = provider  # memory is reviewed by the session's model
        from ..tools.subagent import SubagentTool

        for tool in self.tools:
            if isinstance(tool, SubagentTool):
                tool.provider = provider  # subagents follow the session's model

    # -- child sessions ---------------------------------------------------------------------------
    def child(
        self,
        *,
        workspace: str | os.PathLike[str] | None = None,
        tools: Iterable[str] | None = None,
        read_only: bool = False,
        model: str | None = None,
        max_turns: int | None = 10,
        system_prompt: str | None = None,
        foreground: bool = False,
    ) -> AgentSession:
        """A child session for a nested loop (a subagent, a skill fork, memory extraction).

        It shares the infrastructure — the gate's rules (the session's mode, every layer's
        deny rules, the control-file rule, hooks), the redactor, the sandbox policy, the
        checkpoints (``%claw undo`` puts back what a child changed), the front end the
        questions go to — and can only be stricter (``tools`` and ``read_only`` narrow what
        it gets). Its runtime state is its own: fresh tool instances bound to ``workspace``
        (default: this session's), so its own read-before-edit state; its own "Always allow"
        answers (neither the parent's reach it nor its own the parent); its own token count,
        also added to the parent's. ``ask_user`` only for a child that runs in the foreground
        of a front end that answers questions."""
        from ..control.sandbox import status_from_config
        from ..tools import default_tools
        from ..tools.subagent import ToolCallsOnly

        ws = Path(workspace).absolute() if workspace is not None else self.workspace
        sandbox = self.sandbox if ws == self.workspace else status_from_config(self.config, ws)
        provider = self.provider if model is None else make_provider(model, self.config)
        parent_cost = self.cost
        cost = CostTracker.for_model(model or self.model, self.config)

        def record(usage: Any) -> None:
            cost.record(usage)
            parent_cost.record(usage)  # the parent's total includes what its children used

        mode = PermissionMode.parse(self.mode)
        # the parent's gate, rebuilt for this workspace: its rules, hook engine and added folders
        gate = _session_gate(self.config, ws, mode, self.approvals, self.checkpoints, sandbox, self)
        questions = self.questions if foreground and self.offers_questions else None
        toolset = default_tools(ws, input_handler=questions, web=self.web, sandbox=sandbox)
        for tool in self.extra_tools:  # the kernel's tools: there is one kernel
            toolset.push(tool)
        if self.mcp is not None:  # the servers are infrastructure: one connection each, shared
            defer = None if toolset.get("tool_search") else False
            for mcp_tool in self.mcp.tools(reserved=toolset.names(), defer=defer):
                toolset.push(mcp_tool)
        wanted = set(tools) if tools is not None else None
        kept = [
            tool
            for tool in toolset
            if (wanted is None or tool.definition.name in wanted)
            and (not read_only or traits_of(tool).read_only)
        ]
        context = ContextManager(
            self.config.max_context_tokens, self.config.preserve_recent, on_usage=record
        )
        from ..agent import SimpleAgent

        agent = SimpleAgent(
            provider,
            tools=kept,
            system_prompt=system_prompt,
            max_turns=max_turns,
            context=context,
            # shared with the parent: its rules (the child's start and end are not the
            # session's, so only its tool calls pass) and its scrubbing of results
            gate=ToolCallsOnly(gate),
            result_limit=self.agent.result_limit,
        )
        return AgentSession(
            agent=agent,
            history=[],
            cost=cost,
            context=context,
            config=self.config,
            workspace=ws,
            model=model or self.model,
            mode=self.mode,
            sandbox=sandbox,
            approvals=self.approvals,
            questions=self.questions,
            checkpoints=self.checkpoints,
            extra_tools=list(self.extra_tools),
            web=self.web,
            offers_questions=questions is not None,
            mcp=self.mcp,  # shown by the child's /mcp; closed only by the parent
            parent=self,
        )

    # -- sandbox --------------------------------------------------------------------------------
    def sandbox_description(self) -> str:
        """How bash calls and shell hooks run here, in one line for the status, the banner
        and the cards: ``"sandboxed: workspace-write, no network"``, or why not."""
        if self.sandbox is None:
            return "not sandboxed"
        text = self.sandbox.describe()
        if self.sandbox.policy is not None and self.sandbox.policy.auto_allow:
            text += " (bash runs without asking)"
        return text

    def allowed_for_session(self) -> list[str]:
        """The tools the person answered "Always allow" for, this session (sorted)."""
        permissions = getattr(self.gate, "permissions", None)
        return sorted(permissions.session_allows) if permissions is not None else []

    def keep_allowed(self, tools: Iterable[str]) -> None:
        """Carry "Always allow" answers over to this session (a front end rebuilding the
        session for the same workspace: a changed config, another model). The gate still
        decides: a deny rule or a control file is asked about or refused as before."""
        permissions = getattr(self.gate, "permissions", None)
        if permissions is not None:
            for tool in tools:
                permissions.record_session_allow(tool)

    def read_only_bash(self) -> Tool | None:
        """A bash tool confined to a read-only sandbox (whole file system read-only, no
        network) for plan mode, or ``None`` without a working sandbox (plan mode then keeps
        bash off)."""
        from ..tools.bash import BashTool

        bash = self.tools.get("bash")
        return bash.read_only_variant() if isinstance(bash, BashTool) else None

    # -- events ---------------------------------------------------------------------------------
    def _tap(self, on_event: AgentEventCallback | None) -> AgentEventCallback:
        """Count every model turn's usage in the cost tracker, then pass the event on."""

        async def tap(event: AnyAgentEvent) -> None:
            if isinstance(event, AgentEvent.TurnEnd):
                self.cost.record(event.turn.usage)  # None: not reported
            # On disk before it is on screen, and the turn before its tools run (write-ahead).
            write_ahead(self.history, event)
            await emit(on_event, event)

        return tap

    # -- conversation ---------------------------------------------------------------------------
    async def send(
        self,
        prompt: str,
        on_event: AgentEventCallback | None = None,
        *,
        review: PlanReview | None = None,
    ) -> str:
        """Append ``prompt`` as a user message and run the agent until it answers.

        In ``plan`` mode this is :meth:`run_plan`: ``review`` decides what happens to the plan
        (without one the plan is returned and nothing is executed)."""
        fork, self._next_fork = self._next_fork, None
        if fork is not None:  # the child reviews nothing; its report is this turn's
            mark = len(self.history)
            answer = await self._hooked_turn(prompt, lambda: self._run_fork(fork, prompt, on_event))
            self._remember(mark)
            return answer
        if self.mode == PermissionMode.PLAN.value:
            return await self.run_plan(prompt, on_event, review)
        mark = len(self.history)
        answer = await self._hooked_turn(prompt, lambda: self._send(prompt, on_event))
        self._remember(mark)
        return answer

    def _remember(self, mark: int) -> None:
        """Hand the turn that just ended (from ``mark`` on; the latest messages when a
        compaction shortened the history) to auto memory, which reviews it in the
        background: this returns at once, the next prompt never waits for it."""
        if self.memory is None or self.parent is not None:
            return
        history = list(self.history)
        recent = self.context.preserve_recent or 6
        turn = history[mark:] if len(history) > mark else history[-recent:]
        self.memory.after_turn(turn, self.memory_source)

    async def memory_settled(self) -> None:
        """Wait until the memory reviews still running have finished (the API, before its
        event loop ends; tests)."""
        if self.memory is not None:
            await self.memory.settled()

    async def _run_fork(self, fork: _Fork, prompt: str, on_event: AgentEventCallback | None) -> str:
        """A forked skill's turn: the child session runs ``prompt`` in a context of its own,
        its tool calls shown nested under one ``skill`` card (every front end draws nested
        events under their parent), and only its report joins this conversation — as the
        answer to a note that says what the person ran."""
        import uuid

        call_id = f"fork_{uuid.uuid4().hex[:12]}"
        arguments: JSON = {"name": fork.name, "context": "fork"}
        start = AgentEvent.ToolCall(
            name="skill", summary=f"[skill: {fork.label} (fork)]", id=call_id, arguments=arguments
        )
        await emit(on_event, start)

        async def nested(event: AnyAgentEvent) -> None:
            await emit(on_event, AgentEvent.Nested(call_id, event))

        hooks = self.hook_engine if self.parent is None else None
        with self.checkpoints.turn(_label(fork.label)):
            try:
                if hooks is not None:
                    await hooks.fire("subagent_start", tool="skill", args=arguments)
                summary = await fork.child.send(prompt, nested)
                if hooks is not None:
                    await hooks.fire("subagent_stop", tool="skill", args=arguments, message=summary)
            except BaseException as exc:
                why = str(exc) or type(exc).__name__
                await emit(on_event, AgentEvent.ToolResult(call_id, "skill", why, outcome="error"))
                raise
            note = f"its report follows ({len(summary):,} characters)"
            await emit(on_event, AgentEvent.ToolResult(call_id, "skill", note))
            self.history.append(Message.User(fork.note, label=fork.label))
            self.history.append(Message.Assistant(AssistantTurn(text=summary)))
        await emit(on_event, AgentEvent.TextDelta(summary))
        await emit(on_event, AgentEvent.Done(summary))
        return summary

    async def _fit_resumed(self) -> None:
        """Before the first request of a resumed conversation: one over the compaction
        threshold is compacted now (the usual compaction, ``trigger="resume"``), so the
        request that goes out fits; a failed summary counts toward the circuit breaker and
        never fails the turn."""
        if not self._compact_resumed:
            return
        self._compact_resumed = False
        self.context.context_tokens = self.context.estimate(self.history)
        if self.context.should_compact():
            await self.context.maybe_compact(self.provider, self.history, trigger="resume")

    async def _send(self, prompt: str, on_event: AgentEventCallback | None) -> str:
        await self._fit_resumed()
        # the turn's files are listed under what the person typed (``/NAME args`` for a skill)
        with self.checkpoints.turn(_label(self._next_label or prompt)):
            message = await self._prompt_message(prompt)
            self.history.append(message)
            hooks = self.hook_engine if self.parent is None else None
            if hooks is not None and hooks.wants("pre_send"):
                await hooks.fire("pre_send", message=getattr(message, "content", prompt))
            try:
                return await self.agent.chat(self.history, self._tap(on_event))
            except ContextOverflowError as exc:
                # Too long even after recovery: a prompt nobody answered must not stay to
                # fail every later turn the same way. (Tool rounds it started stay: the next
                # turn's recovery summarises them.)
                exc.prompt_kept = not (self.history and self.history[-1] == message)
                if not exc.prompt_kept:
                    self.history.pop()
                raise

    async def run_plan(
        self, prompt: str, on_event: AgentEventCallback | None, review: PlanReview | None
    ) -> str:
        """Plan → review → execute, the one home of it (chat ``/plan``, plan mode in every
        front end): plan with read-only tools, hand the plan to ``review``; ``execute`` runs
        it on the same history, ``revise`` plans again with the feedback, ``stop`` keeps the
        plan and runs nothing. Returns the last text the model wrote. The turn (plan, review,
        execution) is handed to auto memory like any other: corrections happen here too."""
        mark = len(self.history)
        answer = await self._hooked_turn(prompt, lambda: self._run_plan(prompt, on_event, review))
        self._remember(mark)
        return answer

    async def _run_plan(
        self, prompt: str, on_event: AgentEventCallback | None, review: PlanReview | None
    ) -> str:
        with self.checkpoints.turn(_label(prompt)):
            task = prompt
            while True:
                plan = await self.plan(task, on_event)
                if review is None:
                    return plan
                verdict = await review(plan)
                if verdict.action == "execute":
                    return await self.execute_plan(on_event)
                if verdict.action != "revise":
                    return plan
                task = f"Revise the plan: {verdict.feedback}"

    def _planner(self) -> PlanAgent:
        if self._plan_agent is None:
            from ..planning import PlanAgent, read_only_tool_names

            # planning explores with read-only tools; bash only when the sandbox can make it
            # read-only (whole file system read-only, no network), else it stays off
            bash = self.read_only_bash()
            tools = [bash if t.definition.name == "bash" and bash else t for t in self.tools]
            self._plan_agent = PlanAgent(
                self.provider,
                tools=tools,
                gate=self.gate,
                context=self.context,
                system_prompt=self.system_prompt,
                max_turns=self.agent.max_turns,
                result_limit=self.agent.result_limit,
            ).read_only(read_only_tool_names(tools))
        return self._plan_agent

    async def plan(self, prompt: str, on_event: AgentEventCallback | None = None) -> str:
        """Plan mode for one request: read-only tools until the model submits a plan.

        The history already starts with the agent's system prompt, so the planning
        instructions travel in the user message instead."""
        from ..planning import DEFAULT_PLAN_PROMPT

        self._next_label = None  # the plan's own label says what was asked
        await self._fit_resumed()
        self.history.append(
            self._user_message(f"{DEFAULT_PLAN_PROMPT}\n\nTask: {prompt}", label=f"/plan {prompt}")
        )
        return await self._planner().plan(self.history, self._tap(on_event))

    async def execute_plan(
        self, on_event: AgentEventCallback | None = None, *, feedback: str | None = None
    ) -> str:
        """Carry out the plan with every tool (after the person approved it)."""
        self.history.append(self._user_message(feedback or APPROVED_PLAN))
        # the main loop, not the planner: the planner holds the read-only bash variant
        return await self.agent.chat(self.history, self._tap(on_event))

    # -- hooks ----------------------------------------------------------------------------------
    @property
    def hook_engine(self) -> HookEngine | None:
        """The session's configured hooks (:class:`clawnb.hooks.HookEngine`), if its gate has
        them; a child session's are its parent's."""
        from ..hooks import HookEngine

        hooks = getattr(self.gate, "hooks", None)
        if not isinstance(hooks, HookEngine):
            hooks = getattr(getattr(self.gate, "inner", None), "hooks", None)
        return hooks if isinstance(hooks, HookEngine) else None

    async def _hooked_turn(self, prompt: str, run: Callable[[], Awaitable[str]]) -> str:
        """One turn of the person's, with its events: ``session_start`` (the first),
        ``turn_start``, then ``post_receive`` and ``turn_end`` with the answer, or ``error``
        with what failed. A child's turns are not the session's: no events."""
        hooks = self.hook_engine if self.parent is None else None
        if hooks is None:
            return await run()
        if not hooks.session_started:
            hooks.session_started = True
            await hooks.fire("session_start", message=prompt)
        await hooks.fire("turn_start", message=prompt)
        try:
            answer = await run()
        except Exception as exc:
            await hooks.fire("error", message=prompt, error=f"{type(exc).__name__}: {exc}")
            raise
        await hooks.fire("post_receive", message=answer)
        await hooks.fire("turn_end", message=answer)
        return answer

    # -- reminders ------------------------------------------------------------------------------
    def remind(self, key: str, text: str) -> None:
        """Tell the model something that changed mid-conversation (a skill loaded, a server
        gone, a background task finished). It travels with the next user message, after the
        history — never by rewriting the system prompt, so every request stays a byte-identical
        prefix of the next one and the provider's prompt cache keeps it. A later reminder
        with the same ``key`` replaces one not sent yet; an empty ``text`` withdraws it."""
        if text:
            self.reminders[key] = text
        else:
            self.reminders.pop(key, None)

    def fork_next(self, child: AgentSession, *, name: str, label: str, note: str) -> None:
        """Run the next prompt sent (whichever front end sends it, rendered its way) in
        ``child`` instead — a skill with ``context: fork``: ``label`` is what the person typed,
        ``note`` the message that introduces the child's report in this conversation."""
        self._next_fork = _Fork(child, name, label, note)

    def label_next(self, label: str) -> None:
        """How front ends show the next prompt sent, when it is not the person's own words
        (an inline skill's whole body goes to the model; the transcript shows ``/NAME args``)."""
        self._next_label = label

    async def _prompt_message(self, prompt: str) -> Message:
        """The person's message, the MCP resources it names (``@SERVER:URI``) attached."""
        label, self._next_label = self._next_label, None
        if self.mcp is None or "@" not in prompt:
            return self._user_message(prompt, label=label)
        from ..mcp.prompts import attach_resources

        full = await attach_resources(self.mcp, prompt)
        shown = label if label is not None else (prompt if full != prompt else None)
        return self._user_message(full, label=shown)

    def _user_message(self, prompt: str, *, label: str | None = None) -> Message:
        """The person's message with the reminders due, the MCP servers' state first when it
        changed since the model last heard (connected, failed, restarted)."""
        notes: list[str] = []
        if self.mcp is not None:
            said = self.mcp.reminder()
            if said is not None and said != self._mcp_said:
                notes.append(said)
            self._mcp_said = said
        notes += self.reminders.values()
        self.reminders.clear()
        if self.memory is not None and self.parent is None:  # what the reviews noted since
            said = self.memory.reminder()
            if said is not None:
                notes.append(said)
        if self.skills is not None:  # the skills in use, after a compaction summarised them
            notes += self.skills.after_compaction(self.context.compactions)
        if notes:
            body = "\n\n".join(notes)
            label = prompt if label is None else label  # front ends show the person's words
            prompt = f"{prompt}\n\n<system-reminder>\n{body}\n</system-reminder>"
        return Message.User(prompt) if label is None else Message.User(prompt, label=label)

    async def compact(self, focus: str | None = None) -> bool:
        """Compact now, whatever the token count (``/compact [focus]``): also a history shorter
        than ``preserve_recent`` is summarised, ``focus`` saying what the summary should
        stress; False only when there is nothing to summarise."""
        return await self.context.compact_now(self.provider, self.history, focus=focus)

    async def command(self, line: str, on_event: AgentEventCallback | None = None) -> str | None:
        """Run a ``/command`` from Python, as the chat and ``%claw`` run it (the one registry,
        :mod:`clawnb.session.commands`): ``await session.command("/cost")``. A turn a command
        starts (``/plan``) streams to ``on_event``; without a reviewer a plan is returned, not
        executed. Unknown or misused commands raise :class:`~clawnb.errors.CommandError`."""
        return await COMMANDS.dispatch(line, session=self, host=ApiHost(self, on_event))

    def undo(self) -> str:
        """Put back the files the last turn (subagents included) changed, inside the
        workspace, never through a link, and a control file only where an approved call
        changed it (:meth:`clawnb.control.checkpoints.Checkpoint.restore`); says what it put
        back and what it refused."""
        return self.checkpoints.undo(
            self.workspace, instruction_files=self.config.instruction_files
        )

    # -- sessions -------------------------------------------------------------------------------
    @property
    def session_id(self) -> str | None:
        return self.history.id if isinstance(self.history, SessionLog) else None

    @property
    def session_path(self) -> Path | None:
        """The file this conversation is saved in (``None`` when it is not saved)."""
        return self.history.path if isinstance(self.history, SessionLog) else None

    def _sessions(self) -> SessionStore:
        if self.store is None:
            self.store = SessionStore.for_workspace(self.workspace, self.config.sessions_dir)
        return self.store

    def sessions_notice(self) -> str | None:
        """One line about session files in the workspace's old ``.claw/sessions`` (never
        resumed: a repository can ship them), with the command that adopts them; or ``None``."""
        return self._sessions().workspace_notice()

    def list_sessions(self) -> list[SessionInfo]:
        """Saved sessions, oldest first; a ``/plan`` session is titled by its task (the
        planning request carries that label)."""
        return self._sessions().list()

    def resume(self, session_id: str = "latest") -> int:
        """Continue a saved session (by id, id prefix, path or ``"latest"``): its messages,
        with today's system prompt in place of the one it was saved with, and its undo
        checkpoints; returns how many messages it holds. The one path of the chat's
        ``/resume``, ``%claw resume`` (after a kernel restart too) and the API."""
        log = self._sessions().resume(session_id)
        refresh_system_prompt(log, self.system_prompt)
        self._switch(log)
        self.checkpoints.reopen(_checkpoints_dir(log), workspace=self.workspace)
        self._compact_resumed = True  # over the threshold: compacted before the next request
        idle = log.idle_seconds()
        if idle is not None and idle > RESUME_GAP_SECONDS:
            self.remind(
                "resume_gap",
                RESUME_GAP_NOTE.format(gap=_duration(idle), when=log.last_change[:16] + " UTC"),
            )
        return len(log)

    def new_session(self, *, persist: bool | None = None) -> None:
        """Start an empty conversation (persisted if the current one is), with an empty undo
        stack; the old conversation and its checkpoints stay saved."""
        keep = isinstance(self.history, SessionLog) if persist is None else persist
        log = self._sessions().create(meta=self._meta()) if keep else None
        self._switch(log if log is not None else [])
        self.checkpoints.reopen(_checkpoints_dir(log) if log else None, workspace=self.workspace)

    def persist(self, meta: dict[str, Any] | None = None) -> None:
        """Save the conversation from now on, if it is not saved yet: a session file written
        ahead of every tool (a crash loses nothing), the undo checkpoints next to it. The
        messages, token counts and undo steps so far are kept."""
        if isinstance(self.history, SessionLog):
            return
        log = self._sessions().create(self.history, meta={**self._meta(), **(meta or {})})
        self.history = log
        self.checkpoints.reopen(_checkpoints_dir(log), workspace=self.workspace, keep=True)

    def _switch(self, history: list[Message]) -> None:
        old = self.history
        self.history = history
        if isinstance(old, SessionLog) and old is not history:
            old.close(discard_if_empty=True)
        self.context.tokens_used = 0
        self.context.context_tokens = self.context.estimate(history)
        self.cost.reset()
        self._mcp_said = None  # another conversation: the model has not heard of the servers

    def _meta(self) -> dict[str, Any]:
        return {"model": self.model, "workspace": str(self.workspace), "mode": self.mode}

    def close(self) -> None:
        """Close the session file (deleting it if the conversation never started) and shut
        the MCP servers down (their whole process groups)."""
        if isinstance(self.history, SessionLog):
            self.history.close(discard_if_empty=True)
        hooks = self.hook_engine if self.parent is None else None
        if hooks is not None and hooks.session_started:
            hooks.session_started = False
            hooks.fire_now("session_end")
        if self.mcp is not None and self.parent is None:
            self.mcp.close()
        policy = self.sandbox.policy if self.sandbox is not None else None
        if policy is not None and self.parent is None:
            policy.close()  # the allowlist's proxy, if a command started it


def _start_mcp(
    workspace: Path, sandbox: SandboxStatus | None, toolset: ToolSet
) -> tuple[McpManager | None, list[str]]:
    """Start the configured MCP servers — the user's always; the project's
    (``.claw/config.toml``, ``.mcp.json``) only in a trusted workspace, since they run
    commands — concurrently, each within its timeout, and add their tools (as
    ``mcp__SERVER__TOOL``, behind the same gate) to ``toolset``. A server that fails is one
    line in what is returned, never a failed session."""
    import tomllib

    from ..config import user_config_path
    from ..control.trust import TrustStore, project_config_path

    user_file, project_file = user_config_path(), project_config_path(workspace)
    mcp_json = workspace / ".mcp.json"

    def raw(path: Path) -> dict[str, Any]:
        try:
            return tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # a missing file; a broken one is the config loader's to report

    documents = {p: raw(p) for p in (user_file, project_file)}
    if not any("mcp_servers" in d for d in documents.values()) and not mcp_json.is_file():
        return None, []  # nothing configured: the MCP SDK is not even imported
    from ..mcp.config import ParsedServers, load_mcp_json, merge_servers, servers_from_toml
    from ..mcp.manager import McpManager

    parsed = merge_servers(
        servers_from_toml(documents[user_file], source=str(user_file), scope="user"),
        servers_from_toml(documents[project_file], source=str(project_file), scope="project"),
        load_mcp_json(mcp_json) if mcp_json.is_file() else ParsedServers(),
        trusted=TrustStore().is_trusted(workspace, project_file),
    )
    notices = list(parsed.problems)
    if not parsed.servers:
        return None, notices
    policy = sandbox.policy if sandbox is not None else None
    manager = McpManager(parsed.servers, workspace=workspace, sandbox=policy)
    notices += manager.start_blocking()
    search = toolset.get("tool_search")
    for tool in manager.tools(reserved=toolset.names(), defer=None if search else False):
        toolset.push(tool)
    return manager, notices


def _mcp_tools(
    workspace: Path,
    sandbox: SandboxStatus | None,
    toolset: ToolSet,
    model: str,
    record: str | os.PathLike[str] | None,
) -> tuple[McpManager | None, list[str]]:
    """The MCP tools of a session: a ``replay:`` recording that holds MCP calls plays them
    back with no server started (:mod:`clawnb.mcp.replay`); otherwise the configured servers
    start, and with ``record`` their tools and results go into the recording too."""
    if is_offline_model(model):
        from ..mcp.replay import recorded_tools

        path = os.path.expanduser(model.split(":", 1)[1])
        replayed = recorded_tools(path)
        if replayed is not None:
            for replayed_tool in replayed:
                toolset.push(replayed_tool)
            names = ", ".join(t.definition.name for t in replayed)
            return None, [f"MCP: replaying the recorded calls of {names} (no server started)"]
    manager, notices = _start_mcp(workspace, sandbox, toolset)
    if manager is None:
        return None, notices
    from ..mcp.tools import McpTool, ValueBinder

    # a front end with a live namespace (the notebook) holds big structured results
    manager.binder = next((t for t in toolset if isinstance(t, ValueBinder)), None)
    if record is not None:
        from ..mcp.replay import McpRecorder

        manager.recorder = McpRecorder(record)
        manager.recorder.tools([t for t in toolset if isinstance(t, McpTool)])
    return manager, notices


def _checkpoints_dir(log: SessionLog) -> Path:
    """Where a saved conversation's undo checkpoints live: beside its session file."""
    return log.path.with_suffix(".checkpoints")


class UnavailableProvider:
    """The provider of a session whose model cannot be reached yet (a remote model and no
    key): the session can still be built, shown and configured (``%claw status``,
    ``/config``, ``/model``); only a turn sent to it fails, with the error that says what to
    do."""

    def __init__(self, model: str, error: str) -> None:
        self.model = model
        self.error = error

    async def chat(self, messages: list[Message], tools: list[Any]) -> Any:
        from ..errors import ProviderConfigError

        raise ProviderConfigError(self.error)

    async def stream_chat(
        self, messages: list[Message], tools: list[Any], on_event: Any = None
    ) -> Any:
        # it streams, so the session is built with the streaming loop the model it is
        # switched to (``/model``) will need
        return await self.chat(messages, tools)


def _skills(
    workspace: Path, config: Config, toolset: ToolSet, session: Callable[[], AgentSession]
) -> SessionSkills:
    """Discover the workspace's skills (the project's only when it is trusted) and add the
    read-only ``skill`` tool when the model may load at least one; its snippets run through
    the session's gate (:func:`clawnb.skills.runtime.run_snippets`)."""
    from ..executor import current_call
    from ..skills import SkillTool
    from ..skills.runtime import load_session_skills, run_snippets

    found = load_session_skills(workspace, context_window=config.max_context_tokens)
    invocable = found.catalog.model_invocable()
    if invocable and "skill" not in toolset:

        async def run_context(skill: Any, commands: Any) -> list[str]:
            call = current_call.get()  # the snippets' calls show under the skill call's card
            on_event = _nested(call.call_id, call.on_event, call.depth) if call else None
            return await run_snippets(session(), skill, commands, on_event)

        toolset.push(SkillTool(invocable, run_context=run_context, on_load=found.loaded))
    return found


def _nested(
    parent_id: str, on_event: AgentEventCallback | None, depth: int
) -> AgentEventCallback | None:
    if on_event is None:
        return None
    target = on_event

    async def nested(event: AnyAgentEvent) -> None:
        await emit(target, AgentEvent.Nested(parent_id, event, depth + 1))

    return nested


def refresh_system_prompt(history: list[Message], system_prompt: str) -> None:
    """A resumed conversation gets today's prompt (date, git state, instruction files) in
    place of the one it was saved with — whichever front end resumed it (the chat's
    ``/resume``, ``%claw resume`` after a kernel restart, the API). A compaction summary in
    that place is the conversation itself and stays."""
    if (
        history
        and isinstance(history[0], Message.System)
        and history[0].content != system_prompt
        and not history[0].content.startswith(SUMMARY_PREFIX)
    ):
        history[0] = Message.System(system_prompt)


def _spawner(session: Callable[[], AgentSession]) -> Callable[..., AgentSession]:
    """What the subagent tool calls for each task: a child of the session (built late — the
    session is made after its tools)."""

    def spawn(**options: Any) -> AgentSession:
        return session().child(**options)

    return spawn


HOOK_AGENT_PROMPT = (
    "You review one event for a hook the person configured. You may look with read-only "
    "tools. Answer on the first line with exactly `allow`, or `block: ` and the reason in one "
    "sentence; anything after the first line is ignored."
)


def _wire_hooks(session: AgentSession) -> None:
    """Give the session's hook engine what its actions need: ``prompt`` leaves a reminder
    (:meth:`AgentSession.remind`, after the history), ``agent`` asks a read-only child, and
    a compaction fires ``compact``."""
    hooks = session.hook_engine
    if hooks is None:
        return
    hooks.remind = session.remind

    async def ask_agent(prompt: str, timeout: float) -> str:
        child = session.child(read_only=True, max_turns=5, system_prompt=HOOK_AGENT_PROMPT)
        return await asyncio.wait_for(child.agent.chat([Message.User(prompt)]), timeout)

    hooks.agent_runner = ask_agent
    if not hooks.wants("compact"):
        return
    earlier = session.context.on_compact

    def on_compact(event: Any) -> None:
        if earlier is not None:
            earlier(event)
        hooks.fire_soon(
            "compact",
            message=event.focus,
            trigger=event.trigger,
            how=event.how,
            messages=event.messages,
            files=list(event.files),
            tokens_after=event.tokens_after,
        )

    session.context.on_compact = on_compact


def _memory_keeper(
    config: Config, workspace: Path, provider: AnyProvider, offline: bool, cost: CostTracker
) -> MemoryKeeper | None:
    """The session's auto memory, or ``None`` when it is off: ``memory = "off"``; or
    ``"auto"`` (the default) with a scripted or replayed model (a script has no turn for a
    review) or an untrusted workspace. The project's memories are read and written only in
    a trusted workspace, whatever the key says."""
    if config.memory == "off":
        return None
    from ..control.trust import TrustStore, project_config_path

    trusted = TrustStore().is_trusted(workspace, project_config_path(workspace))
    if config.memory == "auto" and (offline or not trusted):
        return None
    from ..memory.extract import MemoryKeeper

    return MemoryKeeper(provider, workspace, trusted=trusted, on_usage=cost.record)


def _duration(seconds: float) -> str:
    """``"3 days"``, ``"26 hours"``: a gap in words."""
    hours = int(seconds // 3600)
    if hours >= 48:
        return f"{hours // 24} days"
    return f"{hours} hours"


def _label(prompt: str) -> str:
    words = " ".join(prompt.lstrip()[:200].split())  # the head is enough for 40 characters
    return words if len(words) <= 40 else words[:39] + "…"


def _session_gate(
    config: Config,
    workspace: Path,
    mode: PermissionMode,
    approve: ApprovalCallback,
    checkpoints: Checkpoints,
    sandbox: SandboxStatus | None,
    parent: AgentSession | None = None,
) -> Gate:
    """The gate a session's tool calls pass — the config's rules in the session's mode —
    built the same way for a session and for its children. A child's shares its ``parent``'s
    hook engine (``once`` and the last runs in ``/hooks`` are the session's) and the folders
    the person added."""
    from ..gates import GatePipeline

    return GatePipeline.from_config(
        config,
        workspace=workspace,
        mode=_gate_mode(mode),
        approve=approve,
        checkpoints=checkpoints,
        sandbox=sandbox,
        hooks=parent.hook_engine if parent is not None else None,
        directories=getattr(parent.gate, "directories", None) if parent is not None else None,
    )


def _gate_mode(mode: PermissionMode) -> PermissionMode:
    """The permission mode the gate enforces for a session mode: plan mode's planning phase
    offers read-only tools only (the planner's phase), and the approved plan then runs with
    the usual questions."""
    return PermissionMode.DEFAULT if mode is PermissionMode.PLAN else mode


def _results_root(workspace: Path) -> Path | None:
    """Where over-long results are saved in full: ``<workspace>/.claw`` (its
    ``tool-results`` folder), inside the workspace so the model can ``read`` them — unless
    the repository made ``.claw`` or that folder a link, which is never written through (the
    results then go to a private temporary folder)."""
    claw = workspace / ".claw"
    if claw.is_symlink() or (claw / "tool-results").is_symlink():
        return None
    return claw


class _RedactSecrets:
    """``result_limit`` wrapper that replaces every known key with ``***``.

    Hiding the key variables from ``bash`` is not enough: a command can still read the chat
    process's environment (``/proc/$PPID/environ``) or a ``.env`` file, and a tool result goes
    to the screen, the session file and the model. So every result is scrubbed by the one
    redactor (:mod:`clawnb.control.secrets`: keys in any encoding) before it is limited (the saved full
    text too).
    """

    def __init__(self, inner: ResultLimit, provider: object = None) -> None:
        self.inner = inner

    def __call__(self, call: ToolCall, content: str) -> str:
        return self.inner(call, redact(content))

    def __getattr__(self, name: str) -> Any:  # the limiter's card and per-turn budget
        if name == "inner" or name.startswith("__"):  # copy/pickle before __init__ ran
            raise AttributeError(name)
        return getattr(self.inner, name)


def build_agent(
    config: Config | None = None,
    *,
    workspace: str | os.PathLike[str] | None = None,
    provider: AnyProvider | None = None,
    model: str | None = None,
    mode: str | None = None,
    approve: ApprovalCallback | None = None,
    streaming: bool = True,
    session: str | SessionLog | None = None,
    history: list[Message] | None = None,
    tools: Iterable[Tool] | None = None,
    extra_tools: Iterable[Tool] = (),
    subagents: bool = True,
    system_prompt: str | None = None,
    prompt_suffix: str | None = None,
    gate: Gate | None | bool = True,
    record: str | os.PathLike[str] | None = None,
    input_handler: InputHandler | None = None,
    ask_user: bool | None = None,
    web: bool = True,
    checkpoints: Checkpoints | None = None,
    skills: bool = True,
) -> AgentSession:
    """Build a ready agent from config.

    ``config`` defaults to :meth:`ConfigLoader.load` for ``workspace`` (default: the current
    directory). ``provider`` overrides the one ``model`` (default ``config.model``) selects.
    ``mode`` overrides ``config.permissions.mode``; ``approve`` answers permission questions
    until a front end routes them elsewhere with :meth:`AgentSession.handlers` (with neither,
    calls that need approval are refused with a clear result). ``session``: ``None`` keeps the
    history in memory (``history``, if given, is that list and is appended to in place),
    ``"new"`` persists a new session, an id or ``"latest"`` resumes one, a
    :class:`SessionLog` is used as is. ``gate=False`` (or ``None``) runs tools without any
    gate — for tests and trusted scripts only. ``record`` appends every model turn to a JSONL
    file that ``replay:<file>`` plays back later (compaction summaries are left out of it, as a
    replay summarises offline).

    Tools: ``tools`` replaces the standard set; ``extra_tools`` are added to it (the notebook's
    kernel tools); ``web=False`` leaves ``web_fetch`` out. The ``ask_user`` tool is offered when
    ``input_handler`` is given (it answers until :meth:`AgentSession.handlers` routes questions
    elsewhere) or ``ask_user=True`` (a front end that will attach a handler per turn).
    ``prompt_suffix`` is appended to the system prompt (front-end instructions).
    ``checkpoints`` lets a front end keep its undo stack across rebuilt sessions.
    ``skills=False`` leaves skills out (no listing, no ``skill`` tool, no ``/NAME``); with
    the standard tools they are discovered (:mod:`clawnb.skills.runtime`, docs/skills.md).
    """
    ws = Path(workspace if workspace is not None else os.getcwd()).absolute()
    watch_dotenv(ws)  # the workspace's .env keys are secrets too, though not in os.environ
    distrust(ws)  # clawnb's own imports never come from the workspace (clawnb.control.imports)
    if config is None:
        config = ConfigLoader.load(project_dir=ws)
    model_name = model or config.model
    if provider is None:
        try:  # a remote model without a key: refused before anything is sent, in every front end
            provider = make_provider(model_name, config, require_key=True)
        except ProviderConfigError as exc:
            provider = UnavailableProvider(model_name, str(exc))
    offline = is_offline_model(model_name)
    summarizer: AnyProvider | None = ExtractiveSummarizer() if offline else None
    if record is not None:
        from ..providers.replay import RecordingProvider

        if summarizer is None:
            summarizer = provider  # summaries go to the model, but not into the recording
        provider = RecordingProvider(provider, record)
    session_mode = PermissionMode.parse(mode or config.permissions.mode)
    from ..control.sandbox import status_from_config

    sandbox = status_from_config(config, ws)

    cost = CostTracker.for_model(model_name, config)
    if offline:
        # a script or a replay has no price: its cost says "not priced", never "$0.0000"
        cost = CostTracker(model=model_name, priced=False)
    from ..config import DEFAULT_MAX_OUTPUT_TOKENS

    context = ContextManager(
        config.max_context_tokens,
        config.preserve_recent,
        summarizer=summarizer,
        on_usage=cost.record,
        # compaction starts this far below the budget, so the reply still fits
        output_reserve=config.generation_for(model_name).max_output_tokens
        or DEFAULT_MAX_OUTPUT_TOKENS,
        workspace=ws,  # the recently read files are re-attached from here
    )
    approvals = ApprovalProxy(approve)
    questions = InputProxy(input_handler)
    checkpoints = checkpoints if checkpoints is not None else Checkpoints()

    the_gate: Gate | None
    if gate is True:
        the_gate = _session_gate(config, ws, session_mode, approvals, checkpoints, sandbox)
    elif gate is False or gate is None:
        the_gate = None
    else:
        the_gate = gate

    offer_ask = ask_user if ask_user is not None else input_handler is not None
    lean = tools is None and config.generation_for(model_name).tools == "lean"
    if tools is not None:
        toolset = ToolSet(tools)
    elif lean:  # [model] tools = "lean": five short schemas for a small window, no subagents
        from ..tools.lean import lean_tools

        toolset = lean_tools(ws, input_handler=questions if offer_ask else None, sandbox=sandbox)
        subagents = False
    else:
        from ..tools import default_tools

        toolset = default_tools(
            ws, input_handler=questions if offer_ask else None, web=web, sandbox=sandbox
        )
    for tool in extra_tools:
        toolset.push(tool)
    # files are re-attached after a compaction only if the read tool returned them
    context.file_state = getattr(toolset.get("read"), "file_state", None)
    mcp, notices = (
        _mcp_tools(ws, sandbox, toolset, model_name, record) if tools is None else (None, [])
    )
    session_skills = (
        _skills(ws, config, toolset, lambda: bundle) if skills and tools is None else None
    )
    if session_skills is not None:
        notices += session_skills.notices()
    # Over-long results keep head and tail; the full text is saved inside the workspace, where
    # the read tool (and the path checks) let the model open it. Every result is scrubbed of
    # keys first — the subagents' too.
    from ..tools.results import ResultLimiter

    result_limit = _RedactSecrets(ResultLimiter(directory=_results_root(ws)), provider)
    if subagents and "subagent" not in toolset:
        from ..tools.subagent import SubagentTool

        child_tools = [t for t in toolset if t.definition.name != "subagent"]
        # With the standard tools and gate, each subagent call is a child session (its own
        # tool instances and "Always allow" answers, the session's rules); hand-picked tools
        # or gate keep the book's shape: the given tools, behind the given gate.
        spawn = _spawner(lambda: bundle) if tools is None and gate is True else None
        toolset.push(
            SubagentTool(
                provider,
                lambda: ToolSet(child_tools),
                gate=the_gate,
                on_usage=cost.record,
                result_limit=result_limit,
                spawn=spawn,
            ).system_prompt(
                "You are a sub-agent working on one task for another agent. Use your tools, "
                "then answer with a short, factual report: that answer is all the other "
                "agent will see."
            )
        )

    keeper = _memory_keeper(config, ws, provider, offline, cost)
    instruction_sources: list[Path] = []
    if system_prompt is None:
        from ..control.trust import user_config_dir
        from ..instructions import USER_INSTRUCTIONS, InstructionLoader
        from ..prompt import SystemPromptBuilder
        from ..tools.tool_search import deferred_tools_section

        # the project's files root first, then the person's own (last word); @includes
        loader = InstructionLoader(
            config.instruction_files,
            user_file=user_config_dir() / USER_INSTRUCTIONS,
            includes=True,
        )
        builder = SystemPromptBuilder(
            ws,
            tools=[t for t in toolset if not traits_of(t).deferred],
            instruction_loader=loader,
            config_instructions=config.instructions,
        )
        deferred = deferred_tools_section(toolset)
        if deferred:
            builder.section("deferred_tools", deferred, static=True)
        if session_skills is not None and session_skills.listing.text:
            # dynamic: the listing depends on the workspace (and its trust), not the agent
            builder.section("skills", session_skills.listing.text)
        if keeper is not None:
            from ..memory.store import memory_section

            remembered = memory_section(ws, trusted=keeper.trusted)
            if remembered:  # read at the start: the prompt stays the same all session
                builder.section("memory", remembered)
        system_prompt = builder.build()
        instruction_sources = list(loader.sources)
    if prompt_suffix:
        # the front end's words (the notebook's path): redacted like the builder's sections
        system_prompt = f"{system_prompt}\n\n{redact(prompt_suffix)}"

    from ..agent import SimpleAgent, StreamingAgent

    loop_class = StreamingAgent if streaming else SimpleAgent
    agent = loop_class(
        provider,
        tools=list(toolset),
        gate=the_gate,
        max_turns=config.max_turns or None,
        system_prompt=system_prompt,
        context=context,
        result_limit=result_limit,
    )

    # the tool schemas count in every estimate of a request, beside the system prompt
    context.tools = lambda: agent.tools.active_definitions()
    if history and system_prompt:
        refresh_system_prompt(history, system_prompt)  # a notebook's resumed conversation
    bundle = AgentSession(
        agent=agent,
        history=history if history is not None else [],
        cost=cost,
        context=context,
        config=config,
        workspace=ws,
        model=model_name,
        mode=session_mode.value,
        sandbox=sandbox,
        approvals=approvals,
        questions=questions,
        checkpoints=checkpoints,
        extra_tools=list(extra_tools),
        web=web,
        offers_questions=offer_ask,
        mcp=mcp,
        notices=notices,
        skills=session_skills,
        instruction_sources=instruction_sources,
        memory=keeper,
    )
    _wire_hooks(bundle)
    if keeper is not None:  # gated, cheap; by the model in a read-only child when there is one
        from .log import sessions_root

        keeper.consolidate_if_due(
            sessions_root(ws, config.sessions_dir), None if offline else bundle
        )
    if isinstance(session, SessionLog):
        bundle.history = session
    elif session == "new":
        bundle.history = bundle._sessions().create(meta=bundle._meta())
    elif session is not None:
        bundle.resume(session)
    return bundle
