"""One ``%%claw`` cell, start to finish, and the conversation that outlives it.

:class:`NotebookSession` is the per-kernel state: the message history (shared by every
``%%claw`` cell), the model, mode and workspace, "always allow" answers, file checkpoints,
usage totals and the errors of earlier cells (for ``Err[n]``).

:func:`run_claw` runs one cell as a coroutine on the kernel's own event loop (the input
transformer makes the cell a top-level ``await``): expand the prompt, build the agent, stream
its events into a view, answer approvals, and always leave the history valid — also when the
kernel is interrupted, which arrives here as ``CancelledError``.

Why the heartbeat: ipykernel turns SIGINT into a callback on the loop, but a signal that lands
on another thread does not wake a loop blocked in ``select`` with a long timeout (measured on
ipykernel 7.4: an interrupt during a 100 s wait was not seen at all). A task that wakes every
0.1 s while the cell runs bounds the delay.
"""

from __future__ import annotations

import asyncio
import json
import os
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..events import AgentEvent
from ..executor import Gate, Refusal
from ..types import AssistantTurn, Message, ToolCall, ToolResult
from .approval import Approver, NotebookInputHandler, env_policy
from .checkpoint import Checkpoints
from .render import TextView, WidgetView
from .secrets import scrub

__all__ = [
    "ClawInterrupted",
    "NotebookGate",
    "NotebookSession",
    "RecordingProvider",
    "get_session",
    "repair_history",
    "run_claw",
]

SYSTEM_PROMPT = (
    "You are clawnb, a coding agent running inside the user's Jupyter notebook. Use the tools "
    "to read and change files in the workspace and to inspect or run code in the live kernel. "
    "Be concise; answer in Markdown."
)
INTERRUPTED_LINE = "interrupted: the turn was stopped; the conversation is kept"


class ClawInterrupted(KeyboardInterrupt):
    """Raised after an interrupted cell has cleaned up, so "Run All" stops like for any
    interrupted cell — with one short line instead of a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"KeyboardInterrupt: {INTERRUPTED_LINE}"]


def repair_history(messages: list[Message]) -> None:
    """Make sure every assistant turn's tool calls are answered, in order (appending
    ``error: interrupted by user`` results where a result is missing)."""
    i = 0
    while i < len(messages):
        msg = messages[i]
        if isinstance(msg, Message.Assistant) and msg.turn.tool_calls:
            ids = [c.id for c in msg.turn.tool_calls]
            j = i + 1
            got = []
            while j < len(messages) and isinstance(messages[j], Message.ToolResult):
                got.append(messages[j].id)
                j += 1
            if got != ids:
                have = {m.id: m for m in messages[i + 1 : j] if isinstance(m, Message.ToolResult)}
                fixed = [have.get(cid) or ToolResult(cid, "error: interrupted by user") for cid in ids]
                messages[i + 1 : j] = fixed
                j = i + 1 + len(fixed)
            i = j
        else:
            i += 1


class RecordingProvider:
    """Wraps a provider and appends every turn it returns to a JSON Lines file that
    :class:`~clawnb.providers.replay.ScriptedProvider` can replay (``--record`` / ``--replay``)."""

    def __init__(self, inner: Any, path: str | os.PathLike[str]) -> None:
        self.inner = inner
        self.path = Path(path)

    def _save(self, turn: AssistantTurn) -> AssistantTurn:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"turn": turn.to_dict()}, ensure_ascii=False) + "\n")
        return turn

    async def chat(self, messages: list[Message], tools: list[Any]) -> AssistantTurn:
        return self._save(await self.inner.chat(messages, tools))

    async def stream_chat(self, messages: list[Message], tools: list[Any], on_event: Any = None):
        if not hasattr(self.inner, "stream_chat"):
            return await self.chat(messages, tools)
        return self._save(await self.inner.stream_chat(messages, tools, on_event))


class NotebookGate(Gate):
    """The engine's gate plus what the notebook adds: a checkpoint of every file about to be
    changed, and a question before every ``always_ask`` tool (``run_python``) even in modes
    that would not ask."""

    def __init__(self, inner: Gate | None, approver: Approver, session: NotebookSession) -> None:
        self.inner = inner
        self.approver = approver
        self.session = session

    async def agent_start(self, prompt: str) -> None:
        if self.inner is not None:
            await self.inner.agent_start(prompt)

    async def agent_end(self, response: str) -> None:
        if self.inner is not None:
            await self.inner.agent_end(response)

    async def before_tool(self, call: ToolCall, tool: Any) -> ToolCall | Refusal:
        decision: ToolCall | Refusal = call
        if self.inner is not None:
            decision = await self.inner.before_tool(call, tool)
        if isinstance(decision, Refusal):
            return decision
        if getattr(tool, "always_ask", False) and decision.id not in self.approver.asked:
            from ..events import ApprovalRequest
            from ..executor import tool_summary

            answer = await self.approver(
                ApprovalRequest(decision, tool_summary(decision).strip(), "runs code in the kernel")
            )
            if not answer.allowed:
                reason = f": {answer.reason}" if answer.reason else ""
                return Refusal(f"error: the user denied this tool call{reason}", "denied")
        self.session.checkpoints.before_tool(decision.name, decision.arguments, self.session.cwd)
        return decision

    async def after_tool(self, call: ToolCall, result: str) -> str:
        if self.inner is not None:
            return await self.inner.after_tool(call, result)
        return result


@dataclass
class NotebookSession:
    """Everything ``%%claw`` cells in one kernel share."""

    shell: Any = None
    messages: list[Message] = field(default_factory=list)
    model: str | None = None
    base_url: str | None = None
    mode: str = "default"
    cwd: str = field(default_factory=os.getcwd)
    max_turns: int | None = None
    always_allowed: set[str] = field(default_factory=set)
    checkpoints: Checkpoints = field(default_factory=Checkpoints)
    errors: dict[int, str] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    turns: int = 0
    cells: int = 0
    provider: Any = None
    provider_key: tuple[Any, ...] | None = None
    cost_tracker: Any = None
    file_state: Any = None
    running: bool = False

    # -- configuration -------------------------------------------------------------------------

    def config(self) -> Any:
        from ..config import ConfigLoader

        return ConfigLoader.load(project_dir=self.cwd)

    def resolved_model(self) -> tuple[str, str]:
        """``(model, base_url)``: cell/session options first, then the config layers."""
        if self.model and self.model.startswith("scripted:"):
            return self.model, ""
        try:
            config = self.config()
            default_model, default_url = config.model, config.base_url
        except Exception:  # a broken config file must not hide which model would be used
            default_model, default_url = "openrouter/free", "https://openrouter.ai/api/v1"
        return self.model or default_model, self.base_url or default_url

    def get_provider(self, replay: str | None = None, record: str | None = None) -> Any:
        """The session's provider, rebuilt only when model, endpoint or files change (so a
        scripted model continues its script across cells)."""
        model, base_url = self.resolved_model()
        key = (model, base_url, replay, record)
        if self.provider is not None and self.provider_key == key:
            return self.provider
        provider: Any
        if replay:
            from ..providers.replay import ScriptedProvider

            provider = ScriptedProvider.from_file(_here(replay))
        elif model.startswith("scripted:"):
            from ..providers.replay import ScriptedProvider

            provider = ScriptedProvider.from_file(_here(model.removeprefix("scripted:")))
        else:
            from ..providers.openai import OpenAICompatProvider

            provider = OpenAICompatProvider(model, base_url=base_url)
        if record:
            provider = RecordingProvider(provider, _here(record))
        self.provider, self.provider_key = provider, key
        self.cost_tracker = None
        return provider

    def get_cost_tracker(self) -> Any:
        if self.cost_tracker is None:
            from ..usage import CostTracker

            model, _ = self.resolved_model()
            try:
                self.cost_tracker = CostTracker.for_model(model, self.config())
            except Exception:
                self.cost_tracker = CostTracker(model=model, priced=False)
        return self.cost_tracker

    def tools(self, input_handler: Any = None) -> list[Any]:
        """The engine's standard tools for the workspace (one FileState for the whole
        session, so read-before-edit spans cells) plus the kernel tools."""
        from ..tools import FileState, default_tools
        from .tools import InspectVariableTool, RunPythonTool

        if self.file_state is None:
            self.file_state = FileState()
        tools: list[Any] = list(
            default_tools(self.cwd, file_state=self.file_state, input_handler=input_handler, web=False)
        )
        if self.shell is not None:
            tools += [InspectVariableTool(self.shell.user_ns), RunPythonTool(self.shell.user_ns)]
        return tools

    def gate(self, approver: Approver) -> NotebookGate:
        from ..gates import GatePipeline

        try:
            inner = GatePipeline.from_config(
                self.config(), workspace=self.cwd, mode=self.mode, approve=approver
            )
        except Exception:
            from ..gates import build_gate

            inner = build_gate(mode=self.mode, workspace=self.cwd, approve=approver)
        if inner.permissions is not None:
            # the cell's mode wins over the config's; plan mode restricts the tools itself
            # (PlanAgent) and executes an accepted plan under the default rules
            inner.permissions.set_mode("default" if self.mode == "plan" else self.mode)
        return NotebookGate(inner, approver, self)

    # -- line magic answers ---------------------------------------------------------------------

    def reset(self) -> str:
        self.messages.clear()
        self.always_allowed.clear()
        self.input_tokens = self.output_tokens = self.turns = 0
        if self.cost_tracker is not None:
            self.cost_tracker.reset()
        return "conversation cleared"

    def status(self) -> str:
        model, base_url = self.resolved_model()
        user_turns = sum(1 for m in self.messages if isinstance(m, Message.User))
        allowed = ", ".join(sorted(self.always_allowed)) or "none"
        return "\n".join(
            [
                f"model: {model}" + (f" @ {base_url}" if base_url else ""),
                f"mode: {self.mode}",
                f"workspace: {self.cwd}",
                f"conversation: {len(self.messages)} messages, {user_turns} prompts",
                f"always allowed: {allowed}",
                f"checkpoints: {len(self.checkpoints)}",
                f"approval policy without a frontend: {env_policy()[0]}",
            ]
        )

    def history(self, limit: int = 200) -> str:
        lines = []
        for msg in self.messages:
            match msg:
                case Message.System(content=content):
                    lines.append(f"system: {_short(content, limit)}")
                case Message.User(content=content):
                    lines.append(f"user: {_short(content, limit)}")
                case Message.Assistant(turn=turn):
                    calls = ", ".join(f"{c.name}({_short(json.dumps(c.arguments), 60)})" for c in turn.tool_calls)
                    text = _short(turn.text or "", limit)
                    lines.append("assistant: " + text + (f" [calls: {calls}]" if calls else ""))
                case Message.ToolResult(id=call_id, content=content):
                    lines.append(f"  result {call_id}: {_short(content, limit)}")
        return scrub("\n".join(lines) or "(empty conversation)")

    def cost(self) -> str:
        tracker = self.get_cost_tracker() if self.provider is not None else None
        if tracker is not None:
            return tracker.summary()
        return f"tokens: {self.input_tokens} in + {self.output_tokens} out"

    def config_text(self) -> str:
        from .secrets import KEY_ENV_VARS, mask

        model, base_url = self.resolved_model()
        lines = [f"model = {model}", f"base_url = {base_url}", f"mode = {self.mode}"]
        lines.append(f"workspace = {self.cwd}")
        lines.append(f"max_turns = {self.max_turns}")
        for name in KEY_ENV_VARS:
            lines.append(f"{name} = {mask(os.environ.get(name))}")
        lines.append(f"CLAWNB_APPROVAL = {os.environ.get('CLAWNB_APPROVAL', '(not set)')}")
        return scrub("\n".join(lines))

    def record_error(self, count: int | None, error: BaseException | None) -> None:
        if count is None or error is None:
            return
        text = "".join(traceback.format_exception(error, limit=-5)).rstrip()
        self.errors[count] = scrub(text)
        while len(self.errors) > 50:
            del self.errors[min(self.errors)]


def _here(path: str) -> Path:
    # script/record files are relative to the notebook's directory (the kernel's cwd), not
    # to the agent's workspace: they belong to the notebook, not to the project it edits
    return Path(os.path.expanduser(path)).absolute()


def _short(text: str, limit: int) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def get_session(shell: Any) -> NotebookSession:
    """The shell's session (created on first use)."""
    session = getattr(shell, "_clawnb_session", None)
    if session is None:
        session = NotebookSession(shell=shell)
        shell._clawnb_session = session
    return session


def _kernel(shell: Any) -> Any:
    return getattr(shell, "kernel", None)


def _stdin_allowed(shell: Any) -> bool:
    kernel = _kernel(shell)
    if kernel is not None:
        return bool(getattr(kernel, "_allow_stdin", False))
    import sys

    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


def make_view(shell: Any, *, quiet: bool = False, ui: str = "auto") -> Any:
    """Widgets when a kernel with a frontend that can take stdin runs us (JupyterLab, VS
    Code); plain lines for terminals and headless runs (nbclient sets ``allow_stdin=False``,
    and nbval ignores display updates: §4.6)."""
    if ui == "text":
        return TextView(quiet=quiet)
    if ui == "widget" or (_kernel(shell) is not None and _stdin_allowed(shell)):
        try:
            return WidgetView(quiet=quiet)
        except ImportError:
            pass
    return TextView(quiet=quiet)


async def _heartbeat() -> None:
    while True:
        await asyncio.sleep(0.1)


@dataclass
class CellOptions:
    model: str | None = None
    base_url: str | None = None
    mode: str | None = None
    approve: str = "auto"
    new: bool = False
    cwd: str | None = None
    max_turns: int | None = None
    record: str | None = None
    replay: str | None = None
    quiet: bool = False
    ui: str = "auto"


async def run_claw(shell: Any, options: CellOptions, body: str, *, view: Any = None) -> None:
    """Run one ``%%claw`` cell (see the module docstring). Returns ``None`` so the cell has no
    ``Out[n]``."""
    from .interpolate import expand_prompt

    session = get_session(shell)
    if options.new:
        session.reset()
    if options.model is not None:
        session.model = options.model
    if options.base_url is not None:
        session.base_url = options.base_url
    if options.mode is not None:
        session.mode = options.mode
    if options.cwd is not None:
        session.cwd = os.path.abspath(os.path.expanduser(options.cwd))
    if options.max_turns is not None:
        session.max_turns = options.max_turns
    if not body.strip():
        print("%%claw: the cell body is the prompt; it is empty (see %%claw --help)")
        return None
    if session.running:
        print("%%claw: another %%claw cell is still running in this kernel")
        return None
    prompt = expand_prompt(body.strip(), shell, session.errors)
    view = view if view is not None else make_view(shell, quiet=options.quiet, ui=options.ui)
    approver = Approver(
        view,
        how=options.approve,
        always_allowed=session.always_allowed,
        stdin_allowed=_stdin_allowed(shell),
    )
    session.running = True
    session.cells += 1
    session.checkpoints.begin(f"cell {getattr(shell, 'execution_count', session.cells)}")
    heartbeat = asyncio.ensure_future(_heartbeat())
    interrupted = False
    messages = session.messages
    view.start()

    def on_event(event: Any) -> None:
        view(event)
        if isinstance(event, AgentEvent.TurnEnd):
            session.turns += 1
            usage = event.turn.usage
            if usage is not None:
                session.input_tokens += usage.input_tokens
                session.output_tokens += usage.output_tokens
            if session.cost_tracker is not None:
                session.cost_tracker.record(usage)
                view.transcript.cost = _cost_part(session.cost_tracker)

    try:
        provider = session.get_provider(options.replay, options.record)
        session.get_cost_tracker()
        tools = session.tools(NotebookInputHandler(view, approver))
        gate = session.gate(approver)
        agent_options = dict(
            tools=tools,
            gate=gate,
            max_turns=session.max_turns,
            system_prompt=SYSTEM_PROMPT,
        )
        messages.append(Message.User(prompt))
        if session.mode == "plan":
            await _run_plan(provider, agent_options, messages, view, approver, on_event)
        else:
            from ..agent import SimpleAgent, StreamingAgent

            if hasattr(provider, "stream_chat"):
                await StreamingAgent(provider, **agent_options).chat(messages, on_event)
            else:
                await SimpleAgent(provider, **agent_options).chat(messages, on_event)
    except (asyncio.CancelledError, KeyboardInterrupt):
        interrupted = True
        view.note(INTERRUPTED_LINE)
    except Exception as exc:
        if not any(b.kind == "note" and b.text.startswith("error:") for b in view.transcript.blocks):
            view.note(f"error: {type(exc).__name__}: {scrub(str(exc))}")
    finally:
        heartbeat.cancel()
        repair_history(messages)
        session.checkpoints.end()
        session.running = False
        view.finish()
    if interrupted:
        raise ClawInterrupted(INTERRUPTED_LINE)
    return None


def _cost_part(tracker: Any) -> str:
    if getattr(tracker, "priced", False):
        return f"${tracker.total_cost():.4f}"
    return ""


async def _run_plan(
    provider: Any,
    agent_options: dict[str, Any],
    messages: list[Message],
    view: Any,
    approver: Approver,
    on_event: Any,
) -> None:
    """Plan mode: plan read-only, then Execute (same history) or Revise with feedback."""
    from ..planning import PlanAgent

    agent = PlanAgent(provider, **agent_options)
    while True:
        plan = await agent.plan(messages, on_event)
        how, why = await approver.channel()
        if how == "widget" and isinstance(view, WidgetView):
            choice = await view.choose("Plan ready — execute it?", ["Execute", "Revise"])
        elif how == "stdin":
            reply = approver.input_fn("Execute the plan? [y]es / [r]evise / [n]o: ").strip().lower()
            choice = "Execute" if reply in ("y", "yes") else "Revise" if reply.startswith("r") else "Stop"
        else:
            choice = "Execute" if how == "allow" else "Stop"
            view.note(f"plan {'executed' if how == 'allow' else 'not executed'} ({why})")
        if choice == "Execute":
            await agent.execute(messages, on_event)
            return
        if choice == "Stop":
            return
        if isinstance(view, WidgetView) and how == "widget":
            feedback = await view.choose("What should change in the plan?", [])
        else:
            feedback = approver.input_fn("What should change? ")
        messages.append(Message.User(f"Revise the plan: {feedback}"))
        if not plan:
            return
