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
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..control.checkpoints import Checkpoints
from ..errors import ContextOverflowError
from ..events import AgentEvent
from ..session.log import SessionError, SessionLog, SessionStore
from ..session.protocol import Session
from ..session.reports import count
from ..types import Message, ToolResult
from .approval import Approver, NotebookInputHandler, PlanReviewer, env_policy
from .scrub import scrub
from .text import TextView
from .widgets import WidgetView

if TYPE_CHECKING:
    from ..config import Config
    from ..events import AnyAgentEvent
    from ..types import AnyProvider, Tool
    from ..usage import CostTracker
    from .propose import ProposeCellTool

__all__ = [
    "ClawInterrupted",
    "NotebookSession",
    "get_session",
    "repair_history",
    "run_claw",
]

NOTEBOOK_PROMPT = (
    "You are running inside the user's Jupyter notebook. Besides the file and shell tools you "
    "can inspect the user's kernel variables (inspect_variable), run Python in their live "
    "kernel (run_python, always approved by the user first) and propose code as a new cell "
    "for them to keep (propose_cell). Read and change .ipynb files with notebook_read and "
    "notebook_edit. Answer in Markdown."
)


INTERRUPTED_LINE = "interrupted: the turn was stopped; the conversation is kept"


class ClawInterrupted(KeyboardInterrupt):
    """Raised after an interrupted cell has cleaned up, so "Run All" stops like for any
    interrupted cell — with one short line instead of a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"KeyboardInterrupt: {INTERRUPTED_LINE}"]


class ClawFailed(Exception):
    """Raised after a cell whose turn failed (model or network error, no key, max turns) has
    cleaned up, so "Run All", nbclient and nbval stop as for any failing cell. The error itself
    is already in the cell's transcript; IPython shows this one line instead of a traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"ClawFailed: {self}"]


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
            while j < len(messages) and isinstance(result := messages[j], Message.ToolResult):
                got.append(result.id)
                j += 1
            if got != ids:
                have = {m.id: m for m in messages[i + 1 : j] if isinstance(m, Message.ToolResult)}
                fixed = [
                    have.get(cid) or ToolResult(cid, "error: interrupted by user") for cid in ids
                ]
                messages[i + 1 : j] = fixed
                j = i + 1 + len(fixed)
            i = j
        else:
            i += 1


@dataclass
class NotebookSession:
    """Everything ``%%claw`` cells in one kernel share. ``mode`` ``None`` means the project's
    configured mode (``.claw/config.toml``, user config, ``CLAWNB_MODE``), read at each cell."""

    shell: Any = None
    messages: list[Message] = field(default_factory=list)
    model: str | None = None
    base_url: str | None = None
    generation: dict[str, Any] = field(default_factory=dict)  # %%claw generation options
    mode: str | None = None
    cwd: str = field(default_factory=os.getcwd)
    max_turns: int | None = None
    always_allowed: set[str] = field(default_factory=set)
    checkpoints: Checkpoints = field(default_factory=Checkpoints)
    errors: dict[int, str] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    turns: int = 0
    cells: int = 0
    provider: AnyProvider | None = None
    provider_key: tuple[str, str, str | None, str] | None = None
    agent: Session | None = None  # clawnb's AgentSession, or a learner's own (%%claw --agent)
    agent_key: tuple[int, str, str | None, int, str | None] | None = None
    agent_spec: str | None = None
    running: bool = False
    proposals: ProposeCellTool | None = (
        None  # the session's propose_cell tool (each cell routes it to its view)
    )

    # -- configuration -------------------------------------------------------------------------

    def config(self) -> Config:
        from ..config import ConfigLoader, options_overlay

        config = ConfigLoader.load(project_dir=self.cwd)
        if self.base_url:
            config = config.model_copy(update={"base_url": self.base_url})
        if self.generation:
            config = config.merge(options_overlay(**self.generation, source="%%claw"))
        return config

    def resolved_model(self) -> tuple[str, str]:
        """``(model, base_url)``: cell/session options first, then the config layers."""
        if self.model and self.model.startswith("scripted:"):
            return self.model, ""
        try:
            config = self.config()
            default_model, default_url = config.model, config.base_url
        except Exception:  # a broken config file must not hide which model would be used
            from ..config import Config

            defaults = Config()  # the one set of defaults
            default_model, default_url = defaults.model, defaults.base_url
        return self.model or default_model, self.base_url or default_url

    def resolved_mode(self) -> str:
        """The mode a cell runs in: ``--mode`` / ``%claw mode`` if given, else the project's."""
        if self.mode is not None:
            return self.mode
        try:
            return str(self.config().permissions.mode)
        except Exception:  # the cell reports the broken config when it builds the agent
            return "default"

    def resolved_max_turns(self) -> int:
        """The turn limit for a cell: ``--max-turns`` if given, else the config's (0: none)."""
        if self.max_turns:
            return self.max_turns
        try:
            return int(self.config().max_turns or 0)
        except Exception:  # the cell reports the broken config when it builds the agent
            return 0

    def get_provider(self, replay: str | None = None) -> AnyProvider:
        """The session's provider, rebuilt only when model, endpoint or replay file change (so a
        scripted model continues its script across cells)."""
        from ..session.assemble import make_provider

        model, base_url = self.resolved_model()
        key = (model, base_url, replay, json.dumps(self.generation, sort_keys=True))
        if self.provider is not None and self.provider_key == key:
            return self.provider
        if replay:
            provider = make_provider(f"scripted:{_here(replay)}", self.config())
        elif model.startswith(("scripted:", "replay:")):
            prefix, path = model.split(":", 1)
            provider = make_provider(f"{prefix}:{_here(path)}", self.config())
        else:
            provider = make_provider(model, self.config(), require_key=True)
        self.provider, self.provider_key = provider, key
        self.agent = None
        return provider

    def agent_session(self, options: CellOptions) -> Session:
        """The engine's session (:func:`clawnb.build_agent`: config, gate, system prompt with
        project instructions, compaction, cost, subagents, checkpoints) over this kernel's
        provider, history and kernel tools; rebuilt only when the provider, workspace or
        recording change. Mode and turn limit are set per cell with ``configure``."""
        provider = self.get_provider(options.replay)
        model, _base_url = self.resolved_model()
        self._persist(model)
        key = (id(provider), self.cwd, options.record, id(self.messages), self.agent_spec)
        if self.agent is not None and self.agent_key == key:
            return self.agent
        if self.agent_spec:
            from ..session.custom import load_session

            agent = load_session(
                self.agent_spec, provider=provider, workspace=self.cwd, history=self.messages
            )
            self.agent, self.agent_key = agent, key
            return agent
        from ..session.assemble import AgentSession, build_agent

        if isinstance(self.agent, AgentSession) and self.agent.mcp is not None:
            self.agent.mcp.close()  # the session is rebuilt: its servers start again with it
        agent = build_agent(
            self.config(),
            workspace=self.cwd,
            provider=provider,
            model=model,
            mode=self.resolved_mode(),
            history=self.messages,
            extra_tools=self.kernel_tools(),
            ask_user=True,
            web=False,
            prompt_suffix=_prompt_suffix(self.shell, self.cwd),
            streaming=hasattr(provider, "stream_chat"),
            record=_here(options.record) if options.record else None,
            checkpoints=self.checkpoints,
        )
        for line in agent.notices:  # an MCP server that failed to start, or was not trusted
            print(f"warning: {scrub(line)}")
        self.agent, self.agent_key = agent, key
        return agent

    # -- persistence ----------------------------------------------------------------------------

    def sessions_store(self) -> SessionStore:
        """This workspace's session store, by the one rule the chat and the Python API use
        too (:meth:`SessionStore.for_workspace`: the user's data directory, or the
        ``sessions_dir`` config key)."""
        try:
            configured = self.config().sessions_dir
        except Exception:  # a broken config: the default place
            configured = None
        return SessionStore.for_workspace(self.cwd, configured)

    def sessions_root(self) -> Path:
        """Where this workspace's sessions are saved (:meth:`sessions_store`)."""
        return self.sessions_store().root

    def _persist(self, model: str) -> None:
        """From the first cell on, the conversation is a session file (written ahead of every
        tool, so a kernel crash loses nothing) and the undo checkpoints live next to it."""
        if isinstance(self.messages, SessionLog):
            return
        store = self.sessions_store()
        log = store.create(
            self.messages,
            meta={"model": model, "workspace": str(self.cwd), "front_end": "notebook"},
        )
        self.messages = log
        self._adopt_checkpoints(log)

    def _adopt_checkpoints(self, log: SessionLog) -> None:
        directory = log.path.with_suffix(".checkpoints")
        # applied inside this workspace (a checkpoint on disk does not say where it was made)
        saved = Checkpoints.open(directory, limit=self.checkpoints.limit, workspace=self.cwd)
        if len(saved) or not len(self.checkpoints):
            self.checkpoints = saved
        else:  # undo steps taken before the first cell (none in practice) stay in memory
            self.checkpoints.directory = directory

    def list_sessions(self) -> str:
        """``%claw sessions``: the saved conversations of this workspace, oldest first."""
        current = self.messages.id if isinstance(self.messages, SessionLog) else None
        store = self.sessions_store()
        infos = store.list()
        notice = store.workspace_notice()
        if not infos:
            return "\n".join([f"no saved sessions in {store.root}", *([notice] if notice else [])])
        lines = [("* " if info.id == current else "  ") + str(info) for info in infos]
        lines.append("(* this kernel's session; %claw resume ID continues one)")
        return "\n".join(lines + ([notice] if notice else []))

    def resume(self, session_id: str = "latest") -> str:
        """``%claw resume [ID]``: continue a saved conversation (after a kernel restart or
        crash): its messages, and its undo checkpoints — only from this workspace's store,
        never a session file the workspace itself holds."""
        store = self.sessions_store()
        current = self.messages if isinstance(self.messages, SessionLog) else None
        if session_id == "latest" and current is not None:
            others = [i for i in store.list() if i.id != current.id]
            if not others:
                notice = store.workspace_notice()
                raise SessionError(
                    f"no other session in {store.root}" + (f"; {notice}" if notice else "")
                )
            session_id = others[-1].id
        log = store.resume(session_id)
        if current is not None and current.path != log.path:
            current.close(discard_if_empty=True)
        self.messages = log
        self._adopt_checkpoints(log)
        self.agent = self.agent_key = None  # the next cell builds over the resumed history
        prompts = sum(1 for m in log if isinstance(m, Message.User))
        return (
            f"resumed session {log.id}: {count(len(log), 'message')}, "
            f"{count(prompts, 'prompt')}, {count(len(self.checkpoints), 'undo step')}"
        )

    def kernel_tools(self) -> list[Tool]:
        """The tools that reach into the user's kernel (none without a shell)."""
        if self.shell is None:
            return []
        from .kernel_tools import InspectVariableTool, RunPythonTool
        from .propose import ProposeCellTool

        if self.proposals is None:
            self.proposals = ProposeCellTool()
        return [
            InspectVariableTool(self.shell.user_ns),
            RunPythonTool(self.shell.user_ns, workspace=self.cwd),
            self.proposals,
        ]

    # -- line magic answers ---------------------------------------------------------------------

    def reset(self) -> str:
        """Forget the conversation, "always allow" answers and usage; a scripted model starts
        its script again (the provider is rebuilt on the next cell)."""
        if isinstance(self.messages, SessionLog):
            # the old conversation stays saved (%claw resume); the next cell starts a new one
            self.messages.close(discard_if_empty=True)
            self.checkpoints = Checkpoints(self.checkpoints.limit)
        self.messages = []
        self.provider = self.provider_key = None
        self.agent = self.agent_key = None
        self.always_allowed.clear()
        self.input_tokens = self.output_tokens = self.turns = 0
        return "conversation cleared"

    def status(self) -> str:
        model, base_url = self.resolved_model()
        user_turns = sum(1 for m in self.messages if isinstance(m, Message.User))
        allowed = ", ".join(sorted(self.always_allowed)) or "none"
        return "\n".join(
            [
                f"model: {model}" + (f" @ {base_url}" if base_url else ""),
                f"mode: {self._mode_line()}",
                f"workspace: {self.cwd}",
                f"conversation: {count(len(self.messages), 'message')}, "
                f"{count(user_turns, 'prompt')}",
                f"always allowed: {allowed}",
                f"checkpoints: {len(self.checkpoints)}",
                f"session: {self._session_line()}",
                f"bash: {self._sandbox_line()}",
                f"approval policy without a frontend: {env_policy()[0]}",
            ]
        )

    def _session_line(self) -> str:
        if isinstance(self.messages, SessionLog):
            return f"{self.messages.id} ({self.messages.path})"
        return f"not saved yet (the first cell starts one in {self.sessions_root()})"

    def _sandbox_line(self) -> str:
        if self.agent is not None and hasattr(self.agent, "sandbox_description"):
            return self.agent.sandbox_description()
        from ..control.sandbox import status_from_config

        try:
            return status_from_config(self.config(), self.cwd).describe()
        except Exception as exc:  # a broken config: the cell will say so in full
            return f"unknown ({type(exc).__name__})"

    def _mode_line(self) -> str:
        mode = self.resolved_mode()
        return mode if self.mode is not None else f"{mode} (from the project's configuration)"

    def history(self, limit: int = 100) -> str:
        """The conversation as a compact transcript (the chat's ``/history`` wording)."""
        from ..session.reports import transcript

        return scrub(transcript(self.messages, limit))

    def cost(self) -> str:
        tracker = getattr(self.agent, "cost", None)
        tokens_in = tracker.total_input_tokens if tracker is not None else self.input_tokens
        tokens_out = tracker.total_output_tokens if tracker is not None else self.output_tokens
        line = f"tokens: {tokens_in:,} in + {tokens_out:,} out"
        if tracker is not None and 0 < tracker.turn_count == tracker.unreported_turns:
            line = "tokens: not reported"  # a server that sends no usage did not use 0 tokens
        part = _cost_part(tracker) if tracker is not None else ""
        if part:
            return f"{line} | cost: {part}"
        model = self.resolved_model()[0]
        return f"{line} | cost: not priced (no price configured for {model!r})"

    def config_text(self) -> str:
        from .scrub import KEY_ENV_VARS, mask

        model, base_url = self.resolved_model()
        lines = [f"model = {model}", f"base_url = {base_url}", f"mode = {self._mode_line()}"]
        lines.append(f"workspace = {self.cwd}")
        lines.append(f"max_turns = {self.max_turns}")
        try:
            options = self.config().generation_for(model)
            shown = options.model_dump(exclude_none=True)
            lines.append("model options = " + (json.dumps(shown) if shown else "(defaults)"))
        except Exception:  # a broken config file is reported when a cell builds the agent
            pass
        from ..control.secrets import read_dotenv

        # the provider also takes keys from the notebook folder's .env: say where one is set
        dotenv = read_dotenv(Path.cwd() / ".env", KEY_ENV_VARS)
        for name in KEY_ENV_VARS:
            if not os.environ.get(name) and dotenv.get(name):
                lines.append(f"{name} = {mask(dotenv[name])} in .env")
            else:
                lines.append(f"{name} = {mask(os.environ.get(name))}")
        lines.append(f"CLAWNB_APPROVAL = {os.environ.get('CLAWNB_APPROVAL', '(not set)')}")
        return scrub("\n".join(lines))

    def record_error(self, count: int | None, error: BaseException | None) -> None:
        if count is None or error is None:
            return
        self.errors[count] = scrub(_user_traceback(error))
        while len(self.errors) > 50:
            del self.errors[min(self.errors)]


def _user_traceback(error: BaseException) -> str:
    """The traceback the user saw, for ``Err[n]``: the last frames of *their* code, without
    IPython's own frames (``run_code`` and friends) that tell the model nothing."""
    exc = traceback.TracebackException.from_exception(error)
    marker = os.sep + os.path.join("IPython", "core") + os.sep
    frames = [f for f in exc.stack if marker not in f.filename][-5:]
    exc.stack = traceback.StackSummary.from_list(frames)
    return "".join(exc.format()).rstrip()


def _here(path: str) -> Path:
    # script/record files are relative to the notebook's directory (the kernel's cwd), not
    # to the agent's workspace: they belong to the notebook, not to the project it edits
    return Path(os.path.expanduser(path)).absolute()


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


def make_view(shell: Any, *, quiet: bool = False, ui: str = "auto") -> TextView | WidgetView:
    """Widgets when a kernel with a frontend that can take stdin runs us (JupyterLab, VS
    Code); plain lines for terminals and headless runs (nbclient sets ``allow_stdin=False``,
    and nbval ignores display updates: §4.6)."""
    if ui == "text":
        return TextView(quiet=quiet)
    headless = _kernel(shell) is not None and not _stdin_allowed(shell)
    if ui == "widget" and headless:
        # nbclient/papermill store every widget's state in the saved notebook's metadata,
        # and nobody would see the widgets anyway
        print(
            "(--ui widget: no interactive frontend in this headless run, so plain lines; "
            "the saved notebook keeps no widget state)"
        )
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
    # --server/--max-output-tokens/--temperature/--tool-choice/--extra-body, as
    # clawnb.config.options_overlay takes them (kept for later cells, like --base-url)
    generation: dict[str, Any] = field(default_factory=dict)
    agent: str | None = None  # --agent MODULE[:FACTORY]: a session of one's own (custom_agent)


async def run_claw(
    shell: Any,
    options: CellOptions,
    body: str,
    *,
    view: TextView | WidgetView | None = None,
    raise_on_interrupt: bool = True,
) -> None:
    """Run one ``%%claw`` cell (see the module docstring). Returns ``None`` so the cell has no
    ``Out[n]``. After an interrupt it raises :class:`ClawInterrupted`, after a failed turn
    :class:`ClawFailed` (IPython shows one line and "Run All" stops) unless
    ``raise_on_interrupt`` is false — a background task must not
    raise a KeyboardInterrupt, which asyncio would propagate out of the kernel's loop."""
    from ..control.secrets import watch_dotenv
    from .interpolate import SecretInPromptError, expand_prompt

    session = get_session(shell)
    if session.running:
        print("%%claw: another %%claw cell is still running in this kernel")
        return None
    if options.new:
        session.reset()
    if options.model is not None:
        session.model = options.model
    if options.base_url is not None:
        session.base_url = options.base_url
    session.generation.update(options.generation)
    mode_before = session.mode
    if options.mode is not None:
        session.mode = options.mode
    if options.cwd is not None:
        session.cwd = os.path.abspath(os.path.expanduser(options.cwd))
    if options.max_turns is not None:
        session.max_turns = options.max_turns
    if options.agent is not None:
        session.agent_spec = options.agent or None  # --agent "" goes back to clawnb's agent
    if not body.strip():
        print("%%claw: the cell body is the prompt; it is empty (see %%claw --help)")
        return None
    # the workspace's .env keys are secrets before any agent is built: a {name} holding one
    # is refused like one holding an environment key
    watch_dotenv(session.cwd)
    try:
        prompt = expand_prompt(body.strip(), shell, session.errors)
    except SecretInPromptError as exc:
        print(f"%%claw: {exc}")  # nothing was sent; the history is unchanged
        return None
    view = view if view is not None else make_view(shell, quiet=options.quiet, ui=options.ui)
    approver = Approver(
        view,
        how=options.approve,
        always_allowed=session.always_allowed,
        stdin_allowed=_stdin_allowed(shell),
    )
    session.running = True
    session.cells += 1
    heartbeat = asyncio.ensure_future(_heartbeat())
    interrupted = False
    failed = too_long = False
    messages = session.messages
    view.start()

    def on_event(event: AnyAgentEvent) -> None:
        view(event)
        if isinstance(event, AgentEvent.TurnEnd):
            session.turns += 1
            usage = event.turn.usage
            if usage is not None:
                session.input_tokens += usage.input_tokens
                session.output_tokens += usage.output_tokens
            tracker = getattr(session.agent, "cost", None)  # not every Session prices turns
            if tracker is not None:
                view.transcript.cost = _cost_part(tracker)

    try:
        # From here on only the clawnb.session.protocol.Session protocol is used (configure,
        # handlers, send), so any agent that follows it can be driven by this cell.
        agent = session.agent_session(options)
        agent.configure(mode=session.resolved_mode(), max_turns=session.resolved_max_turns())
        label = f"cell {_cell_number(shell, session.cells)}"
        with (
            agent.handlers(approve=approver, ask=NotebookInputHandler(view, approver)),
            session.checkpoints.turn(label),
            _proposals(session, view, approver, shell, raise_on_interrupt),
        ):
            # the turn runs as a task of its own, so the status line's Stop can cancel it
            # exactly as the kernel's interrupt cancels the cell (same clean-up below)
            reviewer = PlanReviewer(view, approver)
            turn = asyncio.ensure_future(agent.send(prompt, on_event, review=reviewer))
            if hasattr(view, "on_stop"):
                view.on_stop = turn.cancel
            try:
                await turn
                if reviewer.executed and session.mode == "plan":
                    # the plan was carried out: later cells work as before planning (a plan
                    # mode set by the project's configuration stays, it is not ours to end)
                    session.mode = mode_before if mode_before != "plan" else None
            except asyncio.CancelledError:
                if not turn.done():
                    # the kernel interrupted the cell: the turn must finish its own clean-up
                    # (kill processes, fill results) before the history is checked below
                    turn.cancel()
                    await asyncio.wait([turn])
                raise
    except (asyncio.CancelledError, KeyboardInterrupt):
        interrupted = True
        if not raise_on_interrupt:
            # otherwise ClawInterrupted prints this very line just below the transcript
            view.note(INTERRUPTED_LINE)
    except Exception as exc:
        failed = True
        too_long = isinstance(exc, ContextOverflowError) and not exc.prompt_kept
        if not any(
            b.kind == "note" and b.text.startswith("error:") for b in view.transcript.blocks
        ):
            view.note(f"error: {type(exc).__name__}: {scrub(str(exc))}")
    finally:
        heartbeat.cancel()
        repair_history(messages)
        session.running = False
        view.finish()
    if interrupted and raise_on_interrupt:
        raise ClawInterrupted(INTERRUPTED_LINE)
    if failed and raise_on_interrupt:
        if too_long:
            raise ClawFailed(
                "this prompt is too long for the model's context window even after compacting "
                "the conversation; it was not kept, so the next cell works"
            )
        raise ClawFailed("the agent stopped on the error shown above; the history is kept")
    return None


def _prompt_suffix(shell: Any, workspace: str) -> str:
    """The notebook instructions, plus which notebook the cells run in when the front end
    said so (:mod:`clawnb.notebook.where`)."""
    from .where import notebook_context

    return "\n\n".join(p for p in (NOTEBOOK_PROMPT, notebook_context(shell, workspace)) if p)


def _proposals(
    session: NotebookSession,
    view: TextView | WidgetView,
    approver: Approver,
    shell: Any,
    in_cell: bool,
) -> AbstractContextManager[None]:
    """Route propose_cell to this cell's view; inserting needs the cell to still be running
    (a background task's cell has returned: its payload would land on the next cell)."""
    import contextlib

    from .propose import CellProposals

    if session.proposals is None:
        return contextlib.nullcontext()
    return session.proposals.routed(CellProposals(view, approver, shell, can_insert=in_cell))


def _cost_part(tracker: CostTracker) -> str:
    """``$0.0123`` when the model has a price; ``""`` when it has none (a scripted or local
    model: ``$0.0000`` would read like a real price)."""
    priced = getattr(tracker, "priced", False) and (
        getattr(tracker, "input_price_per_million", 0)
        or getattr(tracker, "output_price_per_million", 0)
    )
    if priced:
        return f"${tracker.total_cost():.4f}"
    return ""


def _cell_number(shell: Any, fallback: int) -> int:
    """The running cell's number as its prompt shows it (noted by the extension's
    ``pre_run_cell`` hook: during a cell IPython's ``execution_count`` is already one ahead)."""
    count = getattr(shell, "_clawnb_cell", None)
    if isinstance(count, int):
        return count
    return getattr(shell, "execution_count", fallback) if shell is not None else fallback
