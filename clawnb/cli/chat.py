"""``python -m clawnb chat``: the terminal front end (the book's ``examples/chat``).

A streaming REPL over :func:`clawnb.session.assemble.build_agent`: the answer appears as the model
writes it, each tool call shows as a one-line summary with a short result preview, and a call
that needs permission stops for a question — ``y`` (once), ``n`` (deny; ``n <reason>`` tells
the model why) or ``a``/``always`` — a numbered list of the scoped "always" the gate offers
(``git status*``, ``edit src/**``, an MCP tool or server) for this session, saved for this
project (``.claw/rules.local.toml``) or saved for the person (``~/.config/clawnb/rules.toml``);
``a 2`` picks at once. A control file, a secret file or a read outside the workspace offers
no ``[a]lways``.

Commands come from the one registry every front end shares (:mod:`clawnb.session.commands`):
``/plan <task>`` (read-only planning, then execute / revise / drop), ``/cost``, ``/compact``,
``/undo``, ``/sessions``, ``/resume [id]``, ``/clear``, ``/status``, ``/history``, ``/config``,
``/mode``, ``/model``, ``/trust``; ``/help`` lists them, Tab completes their names.

Ctrl-C while the agent works cancels that turn — the stream is closed, running tools are
killed, the history stays valid — and the prompt comes back; Ctrl-C at the prompt clears the
line; Ctrl-D (or ``/exit``) quits. Every message is saved as it happens, in this workspace's
session store in the user's data directory (``--no-save`` to keep it in memory only), so
``--resume`` picks a conversation up again after a crash.

Offline: ``--model scripted:<file>`` (or ``replay:<file>``) plays a scripted model; the
tools still run for real. ``--record FILE`` saves a live session's model turns so that
``--model replay:FILE`` can play it back without a network or a key.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

if TYPE_CHECKING:  # the engine loads when the chat starts, not when the CLI parses
    from ..config import Config
    from ..events import (
        AgentEventCallback,
        AnyAgentEvent,
        Approval,
        ApprovalCallback,
        ApprovalRequest,
    )
    from ..planning import PlanReview, PlanVerdict
    from ..session.assemble import AgentSession
    from ..session.protocol import Session
    from ..tools.ask import InputHandler
    from ..types import Message
    from .terminal import StatusLine, TerminalRenderer

T = TypeVar("T")

__all__ = ["add_chat_parser", "chat_main"]

_QUIT_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


def add_chat_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Register the ``chat`` subcommand on an argparse sub-parser collection."""
    p = sub.add_parser("chat", help="interactive terminal chat with the agent")
    p.add_argument("--model", help="model name, or scripted:<file> / replay:<file> (offline)")
    p.add_argument(
        "--workspace",
        "--cwd",
        dest="workspace",
        help="project directory the agent works in (default: current directory)",
    )
    from ..permissions import PermissionMode

    p.add_argument(
        "--mode",
        choices=[m.value for m in PermissionMode],
        help="permission mode (default: from config, else 'default'); in plan mode every "
        "message is planned first and runs only once you approve the plan",
    )
    p.add_argument(
        "--approve",
        choices=["ask", "allow", "deny"],
        default="ask",
        help="answer permission questions by asking (default), or always allow/deny",
    )
    p.add_argument(
        "--resume",
        nargs="?",
        const="latest",
        metavar="ID",
        help="continue a saved session (default: the latest)",
    )
    p.add_argument("--no-save", action="store_true", help="do not save the session to disk")
    p.add_argument(
        "--record",
        metavar="FILE",
        help="append every model turn to FILE (replay it with --model replay:FILE)",
    )
    p.add_argument("--no-color", action="store_true", help="plain output without colours")
    p.add_argument(
        "--agent",
        metavar="MODULE[:FACTORY]",
        help="chat with your own agent: MODULE's make_session() (see clawnb.session.custom)",
    )
    _add_model_options(p)
    p.set_defaults(func=chat_main)
    return p


def _add_model_options(p: argparse.ArgumentParser) -> None:
    """Endpoint and generation flags; each overrides the config's ``base_url`` / ``[model]``."""
    from ..providers.profiles import SERVER_KINDS

    g = p.add_argument_group("model endpoint and generation (override the config)")
    g.add_argument("--base-url", help="OpenAI-compatible API root, e.g. http://127.0.0.1:8080/v1")
    g.add_argument(
        "--server", choices=SERVER_KINDS, help="local server kind (default: auto-detect)"
    )
    g.add_argument(
        "--max-output-tokens", type=int, metavar="N", help="cap on each reply (0: no cap)"
    )
    g.add_argument("--temperature", type=float, metavar="T")
    g.add_argument("--tool-choice", metavar="auto|none|required|TOOL")
    g.add_argument("--extra-body", metavar="JSON", help="extra request fields, a JSON object")


def _chat_config(args: argparse.Namespace) -> Config | None:
    """The config layers plus this command line's endpoint/generation flags (``None`` when
    no flag was given, so build_agent loads the layers itself)."""
    from ..config import GENERATION_FLAGS, ConfigLoader, options_overlay

    generation = {name: getattr(args, name) for name in GENERATION_FLAGS}
    overlay = options_overlay(base_url=args.base_url, **generation, source="command line")
    if not overlay.model_fields_set:
        return None
    workspace = os.path.abspath(args.workspace or os.getcwd())
    return ConfigLoader.load(project_dir=workspace).merge(overlay)


class _Console:
    """Terminal input: the prompt uses ``input()`` (line editing); questions asked while a
    turn runs are read without blocking the event loop, so Ctrl-C can still cancel it."""

    def __init__(self, out: TextIO | StatusLine) -> None:
        self.out = out

    async def ask(self, prompt: str) -> str:
        # Typeahead goes before the question appears, never after: the flush also drops keys
        # the kernel has not yet processed, so flushing once the prompt is visible swallowed a
        # Ctrl-C (or an answer) pressed as it appeared (seen on a loaded machine: no ^C echo,
        # no interruption, the question kept waiting).
        _discard_typeahead()
        self.out.write(prompt)
        self.out.flush()
        try:
            return await self._read()
        finally:
            # the answer's Enter (or the "\n" written on Ctrl-C) ended the prompt's line
            if hasattr(self.out, "at_line_start"):  # a StatusLine
                self.out.at_line_start = True

    async def _read(self) -> str:
        if not sys.stdin.isatty():
            # Piped input is buffered by sys.stdin (input() already read ahead): keep reading
            # through the same buffer. Nothing to interrupt interactively anyway.
            return _blocking_readline()
        loop = asyncio.get_running_loop()
        fd = sys.stdin.fileno()
        done: asyncio.Future[str] = loop.create_future()
        buffer = bytearray()

        def readable() -> None:
            try:
                chunk = os.read(fd, 1024)
            except OSError:
                chunk = b""
            if not chunk:
                if not done.done():
                    done.set_exception(EOFError())
                return
            buffer.extend(chunk)
            if b"\n" in buffer and not done.done():
                line = bytes(buffer).split(b"\n", 1)[0]
                done.set_result(line.decode("utf-8", errors="replace"))

        try:
            loop.add_reader(fd, readable)
        except (OSError, ValueError, NotImplementedError):
            return await asyncio.to_thread(_blocking_readline)
        try:
            return await done
        except asyncio.CancelledError:
            # Ctrl-C at the question: the cursor is still after the prompt, and whatever is
            # printed next (the call's "interrupted" result) must start on a line of its own.
            self.out.write("\n")
            self.out.flush()
            raise
        finally:
            loop.remove_reader(fd)


def _discard_typeahead() -> None:
    """Only keys pressed after a question may answer it: a pasted or typed-ahead line such
    as "a = compute()" would otherwise answer "[a]lways" to a question it never saw."""
    if not sys.stdin.isatty():
        return
    with contextlib.suppress(OSError, ImportError, ValueError):
        import termios

        termios.tcflush(sys.stdin.fileno(), termios.TCIFLUSH)


def _enable_bracketed_paste(session: Any = None) -> bool:
    """A pasted block of several lines becomes one message, sent when Enter is pressed.

    Python turns readline's bracketed-paste mode off (bpo-42819); without it every pasted
    line is a message of its own, and the rest of a paste could answer the questions that
    the first line's turn asks. Returns whether readline edits the prompt's line (only on a
    terminal that is not ``dumb``).
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return False
    if os.environ.get("TERM", "dumb") == "dumb":  # it would not understand the escapes
        return False
    with contextlib.suppress(ImportError, OSError, ValueError):
        import readline

        readline.parse_and_bind("set enable-bracketed-paste on")
        _enable_completion(readline, session)
        return True
    return False


def command_completions(text: str, session: Any = None) -> list[str]:
    """What Tab offers for ``text`` at the start of the line: ``/co`` → ``/compact``,
    ``/config``, ``/cost`` (names from the registry every front end shares), and the
    session's skills and prompt commands a person can run (``/st`` → ``/stock-report``)."""
    if not text.startswith("/"):
        return []
    from ..session.commands import COMMANDS

    names = set(COMMANDS.complete(text[1:], "chat"))
    skills = getattr(session, "skills", None)
    if skills is not None:
        names |= {s.name for s in skills.user_invocable() if s.name.startswith(text[1:])}
    return ["/" + name for name in sorted(names)]


def _enable_completion(readline: Any, session: Any = None) -> None:
    def complete(text: str, state: int) -> str | None:
        if readline.get_begidx() != 0:  # only the command name, at the start of the line
            return None
        matches = command_completions(text, session)
        return matches[state] if state < len(matches) else None

    readline.set_completer_delims(" \t\n")
    readline.set_completer(complete)
    readline.parse_and_bind("tab: complete")


def _blocking_readline() -> str:
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\n")


class _ChatInput:
    """Answers the ``ask_user`` tool at the terminal (numbered options; a number picks one)."""

    def __init__(self, app: ChatApp) -> None:
        self.app = app

    async def ask(self, question: str, options: list[str]) -> str:
        self.app.say(f"\n  {question}")
        for i, option in enumerate(options, 1):
            self.app.say(f"    {i}) {option}")
        try:
            answer = (await self.app.console.ask("  > ")).strip()
        except EOFError:  # Ctrl-D / end of piped input: say so, not a bare "error: "
            from ..tools.base import ToolError

            raise ToolError("the user gave no answer (end of input)") from None
        if answer.isdigit() and 1 <= int(answer) <= len(options):
            return options[int(answer) - 1]
        return answer


class ChatApp:
    """The REPL. One event loop for the whole chat; each turn runs as a task that Ctrl-C
    cancels."""

    def __init__(self, args: argparse.Namespace, out: TextIO | None = None) -> None:
        self.args = args
        from .terminal import StatusLine

        # everything the chat writes goes through one StatusLine, so the running indicator
        # is erased before any of it (a result, a question, a notice)
        self.out = StatusLine(out or sys.stdout)
        self.console = _Console(self.out)
        self.loop = asyncio.new_event_loop()
        self.session: AgentSession | _OwnAgent | None = None
        self._error_shown = False
        self.terminated = 0  # the signal (SIGTERM/SIGHUP) that cancelled a turn, if any
        self._renderer: TerminalRenderer | None = None  # the current turn's renderer
        self.color = not args.no_color and not os.environ.get("NO_COLOR") and self.out.isatty()
        self._changes_shown: set[str] = set()  # calls whose diff the question showed whole

    # -- output -------------------------------------------------------------------------------
    def say(self, text: str = "") -> None:
        from .terminal import printable

        # approval questions and ask_user quote the model's arguments: no raw control chars
        self.out.write(printable(text) + "\n")
        self.out.flush()

    @property
    def clawnb_session(self) -> AgentSession:
        """clawnb's own session, for the commands only it offers (:meth:`command` refuses
        them for an ``--agent`` session before they get here)."""
        from ..session.assemble import AgentSession

        if not isinstance(self.session, AgentSession):
            raise TypeError(f"not clawnb's session: {self.session!r}")
        return self.session

    def renderer(self) -> AgentEventCallback:
        from ..events import AgentEvent
        from .terminal import TerminalRenderer

        inner = TerminalRenderer(
            self.out,
            color=self.color,
            previewed=self._changes_shown,
        )
        self._renderer = inner

        def on_event(event: AnyAgentEvent) -> None:
            if isinstance(event, AgentEvent.Error):
                self._error_shown = True
            inner(event)

        return on_event

    def notice(self, message: str) -> None:
        """A warning from the engine (a retry, a compaction that fell short) on its own line,
        not glued to the answer that is streaming."""
        if self._renderer is not None:
            self._renderer.end_text()
        self.say(f"warning: {message}")

    # -- approvals ----------------------------------------------------------------------------
    async def approve(self, request: ApprovalRequest) -> Approval:
        from ..events import Approval

        policy = self.args.approve
        if policy == "allow":
            # the gate decides what a policy may allow (not a change to the agent's own
            # configuration): the chat only says that no person answered
            return Approval.allow_by_policy("--approve allow")
        if policy == "deny":
            return Approval.deny("denied by --approve deny")
        reason = f" ({request.reason})" if request.reason else ""
        summary, name = request.summary.strip(), request.call.name
        change = request.details.get("preview") if request.details else None
        args = request.call.arguments
        # What the call would do comes first, then the question: a person reads the change
        # (or the command), then answers. `again` pages it once more on "v" when the screen
        # showed only part of it.
        question = f"  ? allow {summary}{reason}"
        again: Callable[[], Awaitable[object]] | None = None
        self.say()
        if change is not None:
            # the notebook card's preview (ChangePreview): a one-line summary and the whole
            # numbered diff, a screenful at a time when it is longer than the screen
            rows = change.diff.split("\n") if change.diff else []
            self._say_styled(f"  {summary} {change.summary}", "1")
            unseen = await self._page_diff(rows)
            self._changes_shown.add(request.call.id)  # the result says only its first line
            if unseen:
                self.say(f"  ({unseen} diff lines not shown: v shows the whole diff)")

                async def again() -> int:
                    return await self._page_diff(rows, always=True)

        elif "\n" in summary or len(summary) > 300:
            # numbered, blank runs collapsed, totals last; a long one as head and tail with
            # the hidden line count, whole on "v": its first line stays on the screen
            # (clawnb.safety.command_display, terminal.approval_view)
            subject = summary.removeprefix(f"[{name}: ").removesuffix("]")
            again = self._show_command(name, subject)
            question = f"  ? allow {name}{reason}"
        elif summary == f"[{name}]" and isinstance(args, dict) and args:
            # the summary names no command or path (subagent, web_fetch, an MCP tool): show
            # what the call would do, so that the answer is an informed one — code (a
            # run_python-style `code` argument) as numbered lines, the rest as JSON
            import json

            code = args.get("code")
            if isinstance(code, str) and code.strip():
                again = self._show_command(name, code)
                args = {k: v for k, v in args.items() if k != "code"}
            if args:
                shown = json.dumps(args, ensure_ascii=False)
                self.say(f"    {shown if len(shown) <= 500 else shown[:499] + '…'}")
        self._say_styled(question, "1")
        # a control file, a secret file, a read outside: only "this call" (the gate decides)
        explicit = bool(request.details.get("explicit_only")) if request.details else False
        offers = list(request.details.get("always") or []) if request.details else []
        choices = (
            "[y]es / [n]o"
            + ("" if explicit else " / [a]lways")
            + (" / [v]iew whole" if again else "")
        )
        while True:
            try:
                answer = (await self.console.ask(f"  {choices}: ")).strip()
            except EOFError:
                return Approval.deny("no answer (end of input)")
            word, _, rest = answer.partition(" ")
            word = word.lower().rstrip(":,")
            if again is not None and word in ("v", "view"):
                try:
                    await again()
                except EOFError:
                    return Approval.deny("no answer (end of input)")
                self._say_styled(question, "1")
                continue
            if word in ("y", "yes"):
                return Approval.allow_once()
            if word in ("a", "always") and not explicit:
                if not offers:
                    return Approval.allow_session()
                chosen = await self._ask_always(offers, rest.strip())
                if chosen is not None:
                    return chosen
                self._say_styled(question, "1")
                continue
            if word in ("n", "no"):
                return Approval.deny(rest.strip())
            self.say(
                "  please answer y, n (optionally with a reason)" + ("" if explicit else " or a")
            )

    async def _ask_always(self, offers: list[dict[str, Any]], pick: str) -> Approval | None:
        """The scoped "always" the gate offered, and how long it lasts: numbered choices —
        each offer for this session, and a saveable one saved for this project
        (``.claw/rules.local.toml``) or for the person (``~/.config/clawnb/rules.toml``).
        ``a 2`` picks at once; Enter goes back to the question (``None``)."""
        from ..control.saved_rules import always_rows
        from ..events import Approval

        home = os.path.expanduser("~")

        def short(text: str) -> str:
            return text.replace(home + os.sep, "~" + os.sep) if len(home) > 1 else text

        rows = [(rule, save, short(text)) for rule, save, text in always_rows(offers)]
        if not pick:
            self.say("  always allow:")
            for n, (_rule, _save, text) in enumerate(rows, 1):
                self.say(f"    {n}  {text}")
            try:
                pick = (await self.console.ask(f"  which (1-{len(rows)}, Enter: back): ")).strip()
            except EOFError:
                return Approval.deny("no answer (end of input)")
        if not pick:
            return None
        if not pick.isdigit() or not 1 <= int(pick) <= len(rows):
            self.say(f"  no choice {pick!r}: answer 1 to {len(rows)}")
            return None
        rule, save, text = rows[int(pick) - 1]
        self.say(f"  always: {text}")
        return Approval.allow_always(rule, save)

    def _show_command(self, name: str, command: str) -> Callable[[], Awaitable[None]] | None:
        """Show ``command`` as the question does (:func:`~.terminal.approval_view`); what
        pages through the whole of it when the view was shortened, else ``None``."""
        from .terminal import approval_view

        rows, shortened = approval_view(command)
        self._say_styled(f"  [{name}]", "1")
        for row in rows:
            self.say(f"    {row}")
        if not shortened:
            return None

        async def page() -> None:
            await self._page(command)

        return page

    def _say_styled(self, text: str, code: str) -> None:
        """:meth:`say` in colour (an SGR ``code``) when the chat has colours on."""
        from .terminal import printable

        shown = printable(text)
        if self.color and code:
            shown = f"\x1b[{code}m{shown}\x1b[0m"
        self.out.write(shown + "\n")
        self.out.flush()

    async def _page_diff(self, rows: list[str], *, always: bool = False) -> int:
        """Every row of a diff, coloured; when a person is at the terminal and it is longer
        than the screen (or ``always``), a screenful at a time — Enter: the next one, q: on to
        the question. Returns how many rows were not shown (q); never cuts silently."""
        import shutil

        from .terminal import diff_colour

        # a screen holds the call's header, the summary, the rows, the question and the
        # answer line; what is piped in (no terminal) is answers, never "more" keys
        page = max(8, shutil.get_terminal_size((80, 24)).lines - 5)
        if not sys.stdin.isatty() or (len(rows) <= page and not always):
            for row in rows:
                self._say_styled(f"    {row}", diff_colour(row))
            return 0
        for start in range(0, len(rows), page):
            for row in rows[start : start + page]:
                self._say_styled(f"    {row}", diff_colour(row))
            end = min(start + page, len(rows))
            if end < len(rows):
                more = await self.console.ask(
                    "  -- more: Enter for the next page, q to stop "
                    f"({end} of {len(rows)} diff lines shown) -- "
                )
                if more.strip().lower().startswith("q"):
                    return len(rows) - end
        return 0

    async def _page(self, command: str) -> None:
        """The whole command, a screenful at a time (Enter: the next one, q: back to the
        question), every line escaped and numbered as the question numbers them."""
        import shutil

        from ..safety import command_display

        rows = command_display(command)
        page = max(8, shutil.get_terminal_size((80, 24)).lines - 2)
        for start in range(0, len(rows), page):
            for row in rows[start : start + page]:
                self.say(f"    {row}")
            if start + page < len(rows):
                more = await self.console.ask("  -- more: Enter for the next page, q to stop -- ")
                if more.strip().lower().startswith("q"):
                    return

    # -- turns --------------------------------------------------------------------------------
    def run(self, coro: Coroutine[object, None, T]) -> T | None:
        """Run one turn; Ctrl-C cancels it. Returns its result, or None if interrupted or
        failed (failures were already shown through the Error event or are printed here)."""
        from ..errors import ClawError

        self._error_shown = False
        compactions = self.session.context.compactions if self.session is not None else 0
        task = self.loop.create_task(coro)
        try:
            self.loop.add_signal_handler(signal.SIGINT, task.cancel)
            # A closed terminal (SIGHUP) or `kill` (SIGTERM) must not end the process with a
            # tool still running: its process group (`sleep 1000 &` included) would outlive
            # us. Cancel the turn the way Ctrl-C does, then quit.
            for sig in _QUIT_SIGNALS:
                self.loop.add_signal_handler(sig, self._terminate, sig, task)
        except (NotImplementedError, RuntimeError):  # not the main thread / no signals
            pass
        try:
            return self.loop.run_until_complete(task)
        except asyncio.CancelledError:
            if self._renderer is not None:
                self._renderer.end_text()  # the words held back (see TerminalRenderer)
            self.say("\n(interrupted — the turn was cancelled; the conversation is intact)")
        except ClawError as exc:
            if not self._error_shown:
                self.say(f"error: {exc}")
            hint = _error_hint(exc)
            if hint:
                self.say(hint)
        finally:
            if self._renderer is not None:
                self._renderer.close()  # no running indicator outlives its turn
            try:
                for sig in (signal.SIGINT, *_QUIT_SIGNALS):
                    self.loop.remove_signal_handler(sig)
            except (NotImplementedError, RuntimeError):
                pass
            if self.session is not None and self.session.context.compactions > compactions:
                self.say(
                    f"(context compacted: the conversation is now "
                    f"{len(self.session.history)} messages)"
                )
        return None

    def _terminate(self, sig: int, task: asyncio.Task[object]) -> None:
        self.terminated = sig
        task.cancel()

    # -- commands -----------------------------------------------------------------------------
    async def review_plan(self, plan: str) -> PlanVerdict:
        """The chat's plan reviewer (``/plan`` and ``--mode plan``): execute, drop, or type
        what should change."""
        from ..planning import PlanVerdict

        try:
            answer = (
                await self.console.ask("execute this plan? [y]es / [n]o / or type changes: ")
            ).strip()
        except EOFError:
            answer = "n"
        if answer.lower() in ("y", "yes"):
            return PlanVerdict.execute()
        if answer.lower() in ("n", "no", ""):
            self.say("(plan dropped)")
            return PlanVerdict.stop()
        return PlanVerdict.revise(answer)

    def command(self, line: str) -> bool:
        """Handle a ``/command`` through the one registry (:mod:`clawnb.session.commands`);
        False means quit."""
        from ..session.commands import COMMANDS

        host = _ChatHost(self)
        session = self.session.inner if isinstance(self.session, _OwnAgent) else self.session
        text = self.run(COMMANDS.dispatch(line, session=session, host=host))
        if text:
            self.say(text)
        return not host.quitting

    # -- main ---------------------------------------------------------------------------------
    def start(self) -> int:
        """Build the agent, greet, run the REPL; the exit status."""
        notices = _NoticeHandler(self)
        logging.getLogger("clawnb").addHandler(notices)
        try:
            return self._start()
        finally:
            logging.getLogger("clawnb").removeHandler(notices)

    def _ask_trust(self) -> None:
        """The one-time question when the project's config would widen what the agent does
        (base_url, hooks, allow rules, a permissive mode) and the folder is not trusted yet."""
        from ..config import trust_workspace, untrusted_project
        from ..errors import ClawError

        if self.args.approve != "ask" or not sys.stdin.isatty():
            return  # nobody to ask: the config stays restricted and the notice says why
        try:
            found = untrusted_project(self.args.workspace or os.getcwd())
        except ClawError:
            return  # build_agent reports a broken file
        if found is None:
            return
        path, ignored = found
        self.say(f"{path} is not trusted yet; it sets: {', '.join(ignored)}")
        self.say("  a project's config can route your API key elsewhere and run commands.")
        try:
            answer = input("  trust this folder? [y]es / [n]o: ").strip().lower()
        except EOFError:
            answer = ""
        if answer in ("y", "yes"):
            self.say(trust_workspace(self.args.workspace or os.getcwd()))

    def _start_own_agent(self) -> int:
        """``--agent``: the REPL over a session of the user's own (the course's capstone)."""
        from ..config import ConfigLoader
        from ..errors import ClawError
        from ..session.assemble import is_offline_model, make_provider
        from ..session.custom import load_session, set_mode

        args = self.args
        workspace = os.path.abspath(args.workspace or os.getcwd())
        try:
            config = _chat_config(args) or ConfigLoader.load(project_dir=workspace)
            model = args.model or config.model
            provider = make_provider(model, config, require_key=not is_offline_model(model))
            inner = load_session(args.agent, provider=provider, workspace=workspace, history=[])
            if args.mode:  # taken, or refused in one line: never accepted and then ignored
                set_mode(inner, args.mode, f"--agent {args.agent}")
        except ClawError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        own = self.session = _OwnAgent(inner, self.approve, _ChatInput(self), args.agent)
        self.say(f"clawnb chat — your agent {args.agent} ({type(inner).__name__}), model {model}")
        self.say("type a message; /help for commands; Ctrl-D to quit\n")
        return self.repl(own)

    def _start(self) -> int:
        from ..errors import ClawError
        from ..session.assemble import UnavailableProvider, build_agent, is_offline_model
        from ..session.log import SessionLog

        args = self.args
        if args.agent:
            return self._start_own_agent()
        self._ask_trust()
        try:
            s = build_agent(
                _chat_config(args),
                workspace=args.workspace,
                model=args.model,
                mode=args.mode,
                approve=self.approve,
                session=None if args.no_save else (args.resume or "new"),
                record=args.record,
                input_handler=_ChatInput(self),
            )
        except ClawError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        self.session = s
        self.say(f"clawnb chat — model {s.model}, mode {s.mode}, workspace {s.workspace}")
        self.say(f"(bash: {s.sandbox_description()})")  # said once, as [sandbox] mode=auto asks
        for line in s.notices:  # an MCP server that failed to start, one that was not trusted
            self.say(f"warning: {line}")
        if is_offline_model(s.model):
            self.say(
                "(scripted model: its replies are replayed from a file; the tools run for real)"
            )
        elif isinstance(s.provider, UnavailableProvider):  # no key: every message is refused
            self.say(f"warning: {s.provider.error}")
        if args.resume:
            self.say(f"(resumed {s.session_id}: {len(s.history)} messages)")
        elif isinstance(s.history, SessionLog):
            self.say(f"(saving to {s.history.path})")
        self.say("type a message; /help for commands; Ctrl-D to quit\n")
        return self.repl(s)

    def repl(self, session: AgentSession | _OwnAgent) -> int:
        line_editor = _enable_bracketed_paste(session)
        cancelled = False  # the last key at the prompt was a Ctrl-C
        try:
            while True:
                try:
                    line = input("you> ")
                except EOFError:
                    self.say()
                    return 0
                except KeyboardInterrupt:
                    if cancelled:  # a second Ctrl-C in a row quits, as Ctrl-D does
                        self._end_prompt_line(line_editor)
                        return 0
                    cancelled = True
                    self._end_prompt_line(line_editor)
                    self._say_styled("(line cleared: Ctrl-C again or Ctrl-D quits)", "2")
                    continue
                cancelled = False
                self.out.at_line_start = True
                line = line.strip()
                if not line:
                    continue
                if line in ("exit", "quit"):
                    return 0
                if line.startswith("/"):
                    if not self.command(line):
                        return 0
                else:
                    self.run(session.send(line, self.renderer(), review=self.review_plan))
                if self.terminated:
                    return 128 + self.terminated
        finally:
            self._say_total(session)
            session.close()
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            self.loop.close()

    def _end_prompt_line(self, line_editor: bool) -> None:
        """After Ctrl-C at the prompt: leave the cursor at the start of a clean line. Readline
        has already gone back to the line's start (its ``\r``), so writing there left
        ``^Cu> `` over ``you> ``: erase the line instead. Without readline the terminal
        echoed ``^C`` after what was typed: end that line."""
        self.out.write("\r\x1b[K" if line_editor else "\n")
        self.out.flush()

    def _say_total(self, session: AgentSession | _OwnAgent) -> None:
        """The chat's last line when a model answered at all: what the session used, worded
        as ``/cost`` and every other front end word it (``not priced``, never ``$0.0000``)."""
        cost = getattr(session, "cost", None)
        if cost is None or not getattr(cost, "turn_count", 0):
            return
        with contextlib.suppress(OSError, ValueError):  # a closed terminal (SIGHUP)
            self.say(f"(this session: {cost.report()})")


class _ChatHost:
    """The chat as a :class:`~clawnb.session.commands.CommandHost`."""

    frontend = "chat"
    prefix = "/"

    def __init__(self, app: ChatApp) -> None:
        self.app = app
        self.quitting = False

    def quit(self) -> None:
        self.quitting = True

    async def run_turn(self, prompt: str, *, plan: bool = False) -> str | None:
        if isinstance(self.app.session, _OwnAgent):  # the Session protocol's plan mode
            own = self.app.session
            await own.send(prompt, self.app.renderer(), review=self.app.review_plan, plan=plan)
            return None
        session = self.app.clawnb_session
        if plan:
            await session.run_plan(prompt, self.app.renderer(), self.app.review_plan)
        else:
            await session.send(prompt, self.app.renderer(), review=self.app.review_plan)
        return None  # the renderer showed it as it streamed

    def status_lines(self) -> list[str]:
        return [f"approvals: {self.app.args.approve}"]

    def config_lines(self) -> list[str]:
        return []


class _OwnAgent:
    """A session of the user's own (``--agent``) as the REPL sees it: its ``send`` runs with
    the chat's approver and question handler attached (the Session protocol's ``handlers``),
    and the few things the REPL reads of clawnb's session have neutral values."""

    class _NoCompaction:
        compactions = 0

    def __init__(
        self, inner: Session, approve: ApprovalCallback, ask: InputHandler, name: str = "agent"
    ) -> None:
        self.inner = inner
        self.name = name
        self.approve = approve
        self.ask = ask
        self.context = self._NoCompaction()

    @property
    def history(self) -> list[Message]:
        return self.inner.history

    @property
    def mode(self) -> str:
        return str(self.inner.mode)

    async def send(
        self, prompt: str, on_event: AgentEventCallback, *, review: PlanReview, plan: bool = False
    ) -> str:
        # what the REPL passes (it always renders and always reviews plans); the TurnEnd
        # events are counted for /cost
        from ..session.custom import counted, plan_turn

        tap = counted(self.inner, on_event)
        with self.inner.handlers(approve=self.approve, ask=self.ask):
            if plan:
                return await plan_turn(self.inner, prompt, tap, review, f"--agent {self.name}")
            return await self.inner.send(prompt, tap, review=review)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()


def _error_hint(exc: Exception) -> str | None:
    """What the person can do about a provider error the chat shows."""
    from ..errors import BadRequestError, ContextOverflowError

    if isinstance(exc, ContextOverflowError):
        if getattr(exc, "fixed_tokens", 0):  # the agent's own prompt: its line says what to do
            return "(that message was not kept)" if not exc.prompt_kept else None
        if exc.prompt_kept:
            return (
                "(the conversation outgrew the model's context window during this turn; the "
                "next message compacts it first — or give the server a larger context)"
            )
        return (
            "(that message is too long for the model's context window even after compacting "
            "the conversation, so it was not kept: shorten it, or give the server a larger "
            "context)"
        )
    if isinstance(exc, BadRequestError):
        text = f"{getattr(exc, 'code', '')} {getattr(exc, 'message', '')} {exc}".lower()
        if "context" in text and any(
            w in text for w in ("length", "window", "too long", "maximum", "exceed")
        ):
            return (
                "(the conversation is longer than the model accepts: /compact summarises "
                "it, /clear starts afresh)"
            )
    return None


class _NoticeHandler(logging.Handler):
    """Routes clawnb's log warnings (retries, compaction) through :meth:`ChatApp.notice`;
    Python's fallback handler wrote them to stderr in the middle of the streamed text."""

    def __init__(self, app: ChatApp) -> None:
        super().__init__(logging.WARNING)
        self.app = app

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.app.notice(record.getMessage())
        except Exception:  # pragma: no cover - a broken terminal must not break the turn
            self.handleError(record)


def _format_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
) -> str:
    return f"warning: {message}\n"


def chat_main(args: argparse.Namespace) -> int:
    """Entry point of ``python -m clawnb chat``."""
    if args.resume and args.no_save:
        # resuming means appending to that session's file; it used to be ignored silently
        # and the banner said "(resumed None: 0 messages)"
        print(
            "error: --resume continues a saved session, so it cannot be combined with --no-save",
            file=sys.stderr,
        )
        return 2
    import warnings

    # e.g. a session whose last line a crash cut off: a user wants the message, not the
    # source line that issued it
    warnings.formatwarning = _format_warning
    if args.workspace:
        Path(args.workspace).mkdir(parents=True, exist_ok=True)
    return ChatApp(args).start()
