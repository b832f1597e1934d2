"""One ``%%claw`` cell, start to finish, and the conversation that outlives it.

:class:`NotebookSession` is what a kernel keeps beside its one
:class:`~clawnb.session.assemble.AgentSession` — which alone holds the conversation, model,
mode, checkpoints, cost and "always allow" answers: the cell options kept for later cells,
the kernel tools and the errors of earlier cells (for ``Err[n]``). :func:`run_command` runs a
``%claw`` command (or a ``%%claw`` body ``/CMD``) through the one command registry with a
:class:`NotebookHost`.

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
import contextlib
import os
import re
import signal
import threading
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from IPython.core.error import UsageError

from ..errors import ClawError, ContextOverflowError
from ..events import AgentEvent
from ..session.commands import COMMANDS, NOTEBOOK, Command, CommandContext
from ..session.protocol import Session
from ..types import Message, ToolResult
from .approval import Approver, NotebookInputHandler, PlanReviewer, env_policy
from .scrub import scrub
from .text import TextView
from .transcript import PromptCells
from .widgets import WidgetView

if TYPE_CHECKING:
    from ..config import Config
    from ..events import AnyAgentEvent
    from ..session.assemble import AgentSession
    from ..types import Tool
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
    cleaned up, so "Run All", nbclient and nbval stop as for any failing cell. Its message is
    the error's own line (the transcript does not repeat it); IPython shows this one line
    instead of a traceback, and headless runs report it."""

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
    """What a kernel keeps beside its one :class:`~clawnb.session.assemble.AgentSession`.

    The conversation, model, mode, checkpoints, cost, resume and "Always allow" answers live
    in the session (``agent``) and nowhere else; this object keeps the kernel's side only: the
    cell options kept for later cells that say how a session is built (workspace, endpoint,
    generation options, turn limit, ``--agent``), the kernel tools, the errors of earlier cells
    (for ``Err[n]``) and the cell bookkeeping. The session is built on the first cell or
    command and rebuilt, over the same conversation and checkpoints, only when what it is
    built from changes."""

    shell: Any = None
    base_url: str | None = None
    generation: dict[str, Any] = field(default_factory=dict)  # %%claw generation options
    cwd: str = field(default_factory=os.getcwd)
    max_turns: int | None = None
    errors: dict[int, str] = field(default_factory=dict)
    cells: int = 0
    agent: Session | None = None  # clawnb's AgentSession, or a learner's own (%%claw --agent)
    agent_key: tuple[Any, ...] | None = None
    agent_spec: str | None = None
    running: bool = False
    proposals: ProposeCellTool | None = (
        None  # the session's propose_cell tool (each cell routes it to its view)
    )
    # after ``--new``: the model and mode the next session starts with (a new conversation,
    # not new settings); ``None`` once that session is built
    carried: tuple[str, str] | None = None
    # the cell (In [n]) that sent each prompt, for %claw history
    prompt_cells: PromptCells = field(default_factory=PromptCells)
    kernel_noted: bool = False  # this kernel's first cell looked for a restart (hooks)

    # -- what the session holds, read through it -----------------------------------------------

    @property
    def messages(self) -> list[Message]:
        """The conversation (the session's history; empty before the first cell)."""
        return self.agent.history if self.agent is not None else []

    @property
    def mode(self) -> str | None:
        """The session's permission mode (``None`` before there is a session)."""
        return str(self.agent.mode) if _own(self.agent) else None

    # -- configuration -------------------------------------------------------------------------

    def config(self) -> Config:
        from ..config import ConfigLoader, options_overlay

        config = ConfigLoader.load(project_dir=self.cwd)
        if self.base_url:
            config = config.model_copy(update={"base_url": self.base_url})
        if self.generation:
            config = config.merge(options_overlay(**self.generation, source="%%claw"))
        return config

    def apply(self, options: CellOptions) -> None:
        """The cell's options that are kept for later cells (``--cwd``, ``--base-url``, the
        generation options, ``--max-turns``, ``--agent``); ``--new`` starts a new
        conversation. ``--model`` and ``--mode`` go to the session itself."""
        if options.new:
            self.reset()
        if options.base_url is not None:
            self.base_url = options.base_url
        self.generation.update(options.generation)
        if options.cwd is not None:
            self.cwd = os.path.abspath(os.path.expanduser(options.cwd))
        if options.max_turns is not None:
            self.max_turns = options.max_turns
        if options.agent is not None:
            self.agent_spec = options.agent or None  # --agent "" goes back to clawnb's agent

    def resolved_max_turns(self) -> int:
        """The turn limit for a cell: ``--max-turns`` if given, else the config's (0: none)."""
        if self.max_turns:
            return self.max_turns
        try:
            return int(self.config().max_turns or 0)
        except Exception:  # the cell reports the broken config when it builds the agent
            return 0

    def _provider(self, model: str, config: Config, replay: str | None, require_key: bool) -> Any:
        """The provider for ``model``; without a key for a remote model either the error
        (a cell: it says how to fix it) or an :class:`UnavailableProvider` (a command:
        ``%claw status`` works before any key is set)."""
        from ..errors import ProviderConfigError
        from ..session.assemble import UnavailableProvider, make_provider

        if replay:
            return make_provider(f"scripted:{_here(replay)}", config)
        if model.startswith(("scripted:", "replay:")):
            prefix, path = model.split(":", 1)
            return make_provider(f"{prefix}:{_here(path)}", config)
        try:
            return make_provider(model, config, require_key=True)
        except ProviderConfigError as exc:
            if require_key:
                raise
            return UnavailableProvider(model, str(exc))

    def agent_session(
        self, options: CellOptions | None = None, *, require_key: bool = True
    ) -> Session:
        """The kernel's session (:func:`clawnb.build_agent`: config, gate, system prompt with
        project instructions, compaction, cost, subagents, checkpoints) with the kernel tools.
        Built once; rebuilt — over the same conversation, checkpoints and mode — only when the
        model a cell names, the config, the workspace, the endpoint, the recording or replay
        change (so a scripted model continues its script across cells)."""
        from ..session.assemble import UnavailableProvider

        options = options if options is not None else CellOptions()
        config = self.config()
        old = self.agent
        model = options.model
        if model is None:
            model = getattr(old, "model", None) or (self.carried or (config.model, ""))[0]
        key = (
            self.cwd,
            config.model_dump_json(),
            options.record,
            options.replay,
            self.agent_spec,
        )
        reusable = (
            old is not None
            and self.agent_key == key
            and getattr(old, "model", model) == model
            and not (
                require_key and isinstance(getattr(old, "provider", None), UnavailableProvider)
            )
        )
        if reusable and old is not None:
            return old
        provider = self._provider(model, config, options.replay, require_key)
        history = old.history if old is not None else []
        if self.agent_spec:
            from ..session.custom import load_session
            from ..session.log import SessionLog, SessionStore

            if not isinstance(history, SessionLog):
                # a learner's own session is saved from its first cell as clawnb's is (and as
                # it was before the one-session change): it only offers the Session protocol,
                # so the kernel hands it a session file of this workspace's store to append to
                history = SessionStore.for_workspace(self.cwd, config.sessions_dir).create(
                    history,
                    meta={
                        "model": model,
                        "workspace": str(self.cwd),
                        "front_end": "notebook",
                        "agent": self.agent_spec,
                    },
                )
            agent: Session = load_session(
                self.agent_spec, provider=provider, workspace=self.cwd, history=history
            )
        else:
            agent = self._build(config, provider, model, old, history, options)
        if _own(old) and old is not agent and old.mcp is not None:
            old.mcp.close()  # the session is rebuilt: its servers start again with it
        self.agent, self.agent_key, self.carried = agent, key, None
        return agent

    def _build(
        self,
        config: Config,
        provider: Any,
        model: str,
        old: Session | None,
        history: list[Message],
        options: CellOptions,
    ) -> AgentSession:
        from ..permissions import PermissionMode
        from ..session.assemble import build_agent

        mode = None
        checkpoints = None
        if _own(old):
            checkpoints = old.checkpoints
            # a mode the person chose stays; one that only followed the old config follows
            # the new one (a trusted project's mode, an edited config.toml)
            if old.mode != PermissionMode.parse(old.config.permissions.mode).value:
                mode = old.mode
        elif self.carried is not None:
            mode = self.carried[1]
        agent = build_agent(
            config,
            workspace=self.cwd,
            provider=provider,
            model=model,
            mode=mode,
            history=history,
            extra_tools=self.kernel_tools(),
            ask_user=True,
            web=False,
            prompt_suffix=_prompt_suffix(self.shell, self.cwd),
            streaming=hasattr(provider, "stream_chat"),
            record=_here(options.record) if options.record else None,
            checkpoints=checkpoints,
        )
        if _own(old) and old.hook_engine is not None and agent.hook_engine is not None:
            # the same conversation: its session_start has been, its session_end is to come
            agent.hook_engine.session_started = old.hook_engine.session_started
        if _own(old) and old.workspace == agent.workspace:
            agent.keep_allowed(old.allowed_for_session())  # the person's answers still hold
            for folder in getattr(old.gate, "directories", ()):  # and the folders they added
                getattr(agent.gate, "add_directory", lambda _: None)(folder)
        for line in agent.notices:  # an MCP server that failed to start, or was not trusted
            print(f"warning: {scrub(line)}")
        return agent

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

    def reset(self) -> str:
        """``--new``: a new conversation with a new session (its "Always allow" answers and
        usage start empty, a scripted model starts its script again); the old conversation
        stays saved (``%claw resume``), the model and mode carry over."""
        old = self.agent
        if _own(old):
            self.carried = (old.model, old.mode)
            old.close()
        elif old is not None:
            close = getattr(old, "close", None)
            if callable(close):
                close()
        self.agent = self.agent_key = None
        return "conversation cleared"

    def record_error(self, count: int | None, error: BaseException | None) -> None:
        if count is None or error is None:
            return
        self.errors[count] = scrub(_user_traceback(error))
        while len(self.errors) > 50:
            del self.errors[min(self.errors)]


def _own(agent: object) -> TypeGuard[AgentSession]:
    """Whether ``agent`` is clawnb's own session (not a learner's ``--agent``)."""
    from ..session.assemble import AgentSession

    return isinstance(agent, AgentSession)


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


class LoopBlocked(ClawError):
    """A session of the person's own held the kernel's event loop when they interrupted."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            f"your agent blocked the event loop for {seconds:.0f} s, so the interrupt could not "
            "reach it: a synchronous call inside async def (time.sleep, subprocess.run, a "
            "blocking read) stops every other task — await asyncio.sleep or "
            "asyncio.create_subprocess_exec instead. It was stopped; the kernel is free"
        )


class _LoopWatch:
    """The heartbeat (see the module docstring), and what it tells: while a session of the
    person's own runs a turn, an interrupt (SIGINT) that finds the loop without a tick for a
    second means the agent's code blocks it — ipykernel's interrupt is a callback on that
    loop and would wait for the block to end (a 30 s ``time.sleep`` ran to its end). The
    signal handler then raises :class:`LoopBlocked` right there, in the blocking call, and
    the cell ends as a failed one. Otherwise the signal takes its usual path."""

    def __init__(self) -> None:
        self.tick = time.monotonic()

    async def beat(self) -> None:
        while True:
            self.tick = time.monotonic()
            await asyncio.sleep(0.1)

    @contextlib.contextmanager
    def armed(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # signal handlers belong to the main thread
            return
        previous = signal.getsignal(signal.SIGINT)

        def on_interrupt(signum: int, frame: Any) -> None:
            stalled = time.monotonic() - self.tick
            if stalled > 1.0:
                raise LoopBlocked(stalled)
            if callable(previous):  # ipykernel's own way (its wakeup fd is written anyway)
                previous(signum, frame)

        signal.signal(signal.SIGINT, on_interrupt)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)


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
    plan: bool = False,
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
    session.apply(options)
    if command_line(body) is not None:
        # a cell whose body is "/status", "/plan fix the tests": the one command registry
        await run_command(shell, body.strip(), options=options, prefix=_cell_prefix(shell))
        return None
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
    ui = CellFrontEnd.open(shell, options, view)
    view = ui.view
    session.running = True
    session.cells += 1
    watch = _LoopWatch()
    heartbeat = asyncio.ensure_future(watch.beat())
    interrupted = False
    failed = too_long = False
    messages: list[Message] = []
    # Why the turn stopped is the cell's red error line (ClawFailed), shown once: the loop's
    # Error event is held back and becomes that line when the turn then fails — and goes to
    # the transcript after all if the turn goes on, or when nothing will raise (a background
    # task), so no error is ever dropped.
    failure: list[str] = []
    view.start()
    hooks: Any = None  # the session's hook engine, once there is a session
    noted: Any = None

    def on_event(event: AnyAgentEvent) -> None:
        if raise_on_interrupt and isinstance(event, AgentEvent.Error):
            failure.append(event.message)
            return
        if failure:
            view(AgentEvent.Error(failure.pop()))  # it was not the end of the turn
        view(event)
        if isinstance(event, AgentEvent.ToolResult) and event.name.startswith("mcp__"):
            view.attach_images(event.id, _tool_images(session.agent, event))
        if isinstance(event, AgentEvent.TurnEnd):
            tracker = getattr(session.agent, "cost", None)  # not every Session prices turns
            if tracker is not None:
                view.transcript.cost = _cost_part(tracker)

    try:
        # From here on only the clawnb.session.protocol.Session protocol is used (configure,
        # handlers, send), so any agent that follows it can be driven by this cell.
        agent = session.agent_session(options)
        messages = agent.history
        mode_before = session.mode
        from ..session.custom import counted, plan_turn, set_mode

        if options.mode is not None:
            if _own(agent):
                agent.configure(mode=options.mode)
            else:  # taken, or refused in one line: never accepted and then ignored
                set_mode(agent, options.mode, f"--agent {session.agent_spec}")
        agent.configure(max_turns=session.resolved_max_turns())
        if _own(agent):
            # from the first cell on the conversation is a session file (written ahead of
            # every tool, so a kernel crash loses nothing), the undo checkpoints beside it
            agent.persist({"front_end": "notebook"})
            messages = agent.history
        label = f"cell {_cell_number(shell, session.cells)}"
        hooks = await _cell_hooks(shell, session, agent, "pre_cell", message=prompt, cell=label)
        noted = _noted_line(agent, label)  # auto memory's "noted: …" when its review ends
        with (
            session.prompt_cells.cell(_cell_number(shell, session.cells), agent),
            ui.attached(agent, session, shell, in_cell=raise_on_interrupt),
            agent.checkpoints.turn(label) if _own(agent) else contextlib.nullcontext(),
            contextlib.nullcontext() if _own(agent) else watch.armed(),
        ):
            # the turn runs as a task of its own, so the status line's Stop can cancel it
            # exactly as the kernel's interrupt cancels the cell (same clean-up below)
            reviewer = ui.review
            tap = on_event if _own(agent) else counted(agent, on_event)  # TurnEnd for %claw cost
            if plan and _own(agent):
                sent = agent.run_plan(prompt, on_event, reviewer)
            elif plan:  # a session of the person's own, in plan mode for this cell
                sent = plan_turn(agent, prompt, tap, reviewer, f"--agent {session.agent_spec}")
            else:
                sent = agent.send(prompt, tap, review=reviewer)
            turn = asyncio.ensure_future(sent)
            if hasattr(view, "on_stop"):
                view.on_stop = turn.cancel
            try:
                await turn
                if hooks is not None:
                    await hooks.fire("post_cell", message=turn.result(), cell=label)
                if reviewer.executed and session.mode == "plan" and _own(agent):
                    # the plan was carried out: later cells work as before planning (a plan
                    # mode set by the project's configuration stays, it is not ours to end)
                    back = mode_before if mode_before not in (None, "plan") else None
                    agent.configure(mode=back or agent.config.permissions.mode)
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
        if hooks is not None:
            await hooks.fire("cell_error", message=prompt, error=f"{type(exc).__name__}: {exc}")
        too_long = isinstance(exc, ContextOverflowError) and not exc.prompt_kept
        if too_long and getattr(exc, "fixed_tokens", None):
            # the agent's own prompt does not fit the window: the prompt is not to blame
            too_long, failure[:] = False, [f"{exc}; this prompt was not kept"]
        if too_long and failure:
            # the red line explains what to do about it; the server's own words stay above
            view(AgentEvent.Error(failure.pop()))
        if not failure:  # failed before the loop (building the session) or outside it
            failure.append(
                str(exc) if isinstance(exc, ClawError) else f"{type(exc).__name__}: {exc}"
            )
        if not raise_on_interrupt and not any(
            b.kind == "note" and b.text.startswith("error:") for b in view.transcript.blocks
        ):
            view.note(f"error: {scrub(failure[-1])}")
    finally:
        heartbeat.cancel()
        repair_history(messages)
        session.running = False
        if failure and not failed:  # the loop reported an error and still ended the turn
            view(AgentEvent.Error(failure.pop()))
        view.finish()
        if noted is not None:
            noted.place(bool(getattr(getattr(agent, "memory", None), "tasks", None)))
    if interrupted and raise_on_interrupt:
        raise ClawInterrupted(INTERRUPTED_LINE)
    if failed and raise_on_interrupt:
        if too_long:
            raise ClawFailed(
                "this prompt is too long for the model's context window even after compacting "
                "the conversation; it was not kept, so the next cell works"
            )
        raise ClawFailed(f"{scrub(failure[-1])} (the history is kept)")
    return None


async def _cell_hooks(
    shell: Any, session: NotebookSession, agent: Any, event: str, **values: Any
) -> Any:
    """The session's hook engine after firing ``event`` (``pre_cell``) — and, on this
    kernel's first cell, ``kernel_restart`` when an earlier kernel ran clawnb for the same
    notebook; ``None`` for a session without configured hooks."""
    hooks = getattr(agent, "hook_engine", None) if _own(agent) else None
    if hooks is None:
        return None
    notebook = getattr(shell, "user_ns", {}).get("__session__") or os.environ.get(
        "JPY_SESSION_NAME"
    )
    if not session.kernel_noted and isinstance(notebook, str) and notebook:
        session.kernel_noted = True
        from ..hooks import kernel_restarted
        from ..session.log import sessions_root

        store = sessions_root(agent.workspace, agent.config.sessions_dir)
        if kernel_restarted(store, notebook):
            await hooks.fire("kernel_restart", message=notebook)
    await hooks.fire(event, **values)
    return hooks


_COMMAND = re.compile(r"/([A-Za-z?][\w-]*)(?:\s|$)")


def command_line(body: str) -> str | None:
    """The command a ``%%claw`` body (or a claw-kernel cell) names — ``"/status"``,
    ``"/plan fix the tests"`` — or ``None`` for a prompt, also one that starts with a path
    (``"/etc/hosts: what is it?"``)."""
    text = body.strip()
    return text if _COMMAND.match(text) else None


def _cell_prefix(shell: Any) -> str:
    """How commands are typed here: ``/status`` in the claw kernel, ``%claw status`` in any
    other kernel (where a ``%%claw`` body ``/status`` works too)."""
    return "/" if frontend_of(shell) == "kernel" else "%claw "


def frontend_of(shell: Any) -> str:
    """``"kernel"`` in the claw kernel (every cell a prompt), else ``"notebook"``."""
    return "kernel" if getattr(shell, "_clawnb_frontend", None) == "kernel" else "notebook"


def skill_names(shell: Any) -> list[str]:
    """The ``/NAME`` skills and prompt commands of the kernel's session, for completion
    (none before a session is built: Tab never builds one)."""
    agent = get_session(shell).agent
    skills = agent.skills if _own(agent) else None
    return [skill.name for skill in skills.user_invocable()] if skills is not None else []


class CommandUsageError(UsageError):
    """A command's mistake (an unknown name, a wrong argument), shown as IPython shows a
    ``UsageError``: one line. A subclass, so IPython renders it through
    ``_render_traceback_`` — ipykernel 7.4 fails to reply to an awaited cell (the claw
    kernel's, ``%claw`` alone in a cell) whose first error is a plain ``UsageError``, which
    is printed without passing through the kernel's traceback hook."""

    def _render_traceback_(self) -> list[str]:
        return [f"UsageError: {self}"]


class NotebookHost:
    """The notebook as a :class:`~clawnb.session.commands.CommandHost`: what a command
    says is printed in the cell that ran it; a turn it starts (``plan``) runs as a
    ``%%claw`` cell does, cards and approvals included."""

    def __init__(self, shell: Any, options: CellOptions | None = None, *, prefix: str) -> None:
        self.shell = shell
        self.frontend = frontend_of(shell)
        self.prefix = prefix
        self.options = options if options is not None else CellOptions()

    def quit(self) -> None:
        return None  # a kernel is not ended by a command (no "exit" is offered here)

    async def run_turn(self, prompt: str, *, plan: bool = False) -> str | None:
        cell = CellOptions(
            approve=self.options.approve, quiet=self.options.quiet, ui=self.options.ui
        )
        await run_claw(self.shell, cell, prompt, plan=plan)
        return None  # the cell showed it as it ran

    def cell_of(self, message: Message) -> int | None:
        """The cell (``In [n]``) that sent ``message``, for ``history``."""
        return get_session(self.shell).prompt_cells.number_of(message)

    def status_lines(self) -> list[str]:
        return [f"approval policy without a frontend: {env_policy()[0]}"]

    def config_lines(self) -> list[str]:
        return [f"CLAWNB_APPROVAL = {os.environ.get('CLAWNB_APPROVAL', '(not set)')}"]


def _errors(ctx: CommandContext) -> str:
    """``%claw errors``: the failed cells this kernel remembers, for ``Err[n]``."""
    errors = get_session(ctx.host.shell).errors if isinstance(ctx.host, NotebookHost) else {}
    if not errors:
        return "no cell has failed yet (Err[n] attaches cell n's error to a prompt)"
    lines = [f"  Err[{n}]: {text.splitlines()[-1] if text else ''}" for n, text in errors.items()]
    return "\n".join(["failed cells (Err[n] attaches one to a prompt):", *lines])


COMMANDS.add(
    Command(
        "errors",
        "the failed cells this kernel remembers, which Err[n] attaches",
        _errors,
        frontends=NOTEBOOK,
        engine_only=False,
        needs_session=False,
    ),
    replace=True,
)


async def run_command(
    shell: Any, line: str, *, options: CellOptions | None = None, prefix: str | None = None
) -> None:
    """Run the command ``line`` names (``"status"``, ``"/mode plan"``) through the one
    registry (:mod:`clawnb.session.commands`) and print what it says. The session is built
    for it if there is none yet — without a key too (``%claw status`` before any key is
    set); a usage mistake or an unknown name is one ``UsageError`` line."""
    from ..errors import ClawError, CommandError
    from ..session.commands import split_command

    session = get_session(shell)
    host = NotebookHost(shell, options, prefix=prefix or _cell_prefix(shell))
    command = COMMANDS.find(split_command(line)[0])
    try:
        agent: Any = session.agent
        # a name that is no built-in command may be one of the session's skills
        if command is None or (command.needs_session and command.offered_in(host.frontend)):
            agent = session.agent_session(options, require_key=False)
        # what the command itself asks (a skill's snippets are bash calls) is answered by the
        # cell's policy, as a turn's calls are: --approve, else stdin, else CLAWNB_APPROVAL
        approver = Approver(
            TextView(quiet=True), how=host.options.approve, stdin_allowed=_stdin_allowed(shell)
        )
        with agent.handlers(approve=approver) if agent is not None else contextlib.nullcontext():
            text = await COMMANDS.dispatch(line, session=agent, host=host)
    except CommandError as exc:
        raise CommandUsageError(scrub(str(exc))) from None
    except ClawError as exc:  # a broken config file, a session that will not resume
        raise CommandUsageError(f"{type(exc).__name__}: {scrub(str(exc))}") from None
    if text:
        print(scrub(text))


def _prompt_suffix(shell: Any, workspace: str) -> str:
    """The notebook instructions, plus which notebook the cells run in when the front end
    said so (:mod:`clawnb.notebook.where`)."""
    from .where import notebook_context

    return "\n\n".join(p for p in (NOTEBOOK_PROMPT, notebook_context(shell, workspace)) if p)


@dataclass
class CellFrontEnd:
    """What one ``%%claw`` cell shows and asks through, built once on one view: the approver
    (cards, stdin or a policy), ``ask_user``'s handler, the plan reviewer and the proposal
    cards. The session sees only the hooks :meth:`attached` hands it; the kernel-side state
    stays in :class:`NotebookSession`."""

    view: TextView | WidgetView
    approver: Approver
    ask: NotebookInputHandler
    review: PlanReviewer

    @classmethod
    def open(
        cls, shell: Any, options: CellOptions, view: TextView | WidgetView | None = None
    ) -> CellFrontEnd:
        view = view if view is not None else make_view(shell, quiet=options.quiet, ui=options.ui)
        approver = Approver(view, how=options.approve, stdin_allowed=_stdin_allowed(shell))
        return cls(
            view, approver, NotebookInputHandler(view, approver), PlanReviewer(view, approver)
        )

    @contextlib.contextmanager
    def attached(
        self, agent: Session, session: NotebookSession, shell: Any, *, in_cell: bool
    ) -> Iterator[None]:
        """The cell's approvals and questions answer the agent's, and propose_cell shows here
        — inserting only while the cell still runs (a background task's cell has returned:
        its payload would land on the next cell)."""
        from .propose import CellProposals

        with agent.handlers(approve=self.approver, ask=self.ask):
            if session.proposals is None:
                yield
                return
            cards = CellProposals(self.view, self.approver, shell, can_insert=in_cell)
            with session.proposals.routed(cards):
                yield


def _noted_line(agent: Any, label: str) -> Any:
    """Where auto memory says what it noted from this cell (:mod:`clawnb.memory.notice`), or
    ``None`` when memory is off; the memories learnt here record ``label`` as their source."""
    memory = getattr(agent, "memory", None) if _own(agent) else None
    if memory is None:
        return None
    from IPython.display import display

    from ..memory.notice import NotedLine

    class Shown:
        def __init__(self, text: str) -> None:
            self.handle = display({"text/plain": text}, raw=True, display_id=True)

        def update(self, text: str) -> None:
            self.handle.update({"text/plain": text}, raw=True)

    def show(text: str) -> Any:
        return Shown(text)

    agent.memory_source = label
    memory.on_noted = line = NotedLine(show)
    return line


def _tool_images(agent: Any, event: Any) -> tuple[Any, ...]:
    """The images an MCP tool's call returned (kept by the tool for the card, keyed by the
    call's id), taken so they are shown once."""
    from ..mcp.tools import McpTool

    tools = getattr(agent, "tools", None)
    tool = tools.get(event.name) if tools is not None else None
    if not isinstance(tool, McpTool):
        return ()
    return tool.attachments.pop(event.id, ())


def _cost_part(tracker: CostTracker) -> str:
    """The footer's cost as every front end words it (:meth:`CostTracker.cost_label`):
    ``$0.0123``, ``free`` or ``not priced`` (never ``$0.0000`` for a model nobody priced)."""
    label = getattr(tracker, "cost_label", None)  # a session's own tracker may lack it
    return label() if callable(label) else ""


def _cell_number(shell: Any, fallback: int) -> int:
    """The running cell's number as its prompt shows it (noted by the extension's
    ``pre_run_cell`` hook: during a cell IPython's ``execution_count`` is already one ahead)."""
    count = getattr(shell, "_clawnb_cell", None)
    if isinstance(count, int):
        return count
    return getattr(shell, "execution_count", fallback) if shell is not None else fallback
