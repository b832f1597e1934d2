"""``%%claw`` and ``%claw``: thin magics over :mod:`clawnb.notebook.runner`.

The cell does **not** run inside the cell magic. On ipykernel >= 7.4 (and in any IPython
with ``autoawait`` on the asyncio runner) an input transformer rewrites a ``%%claw`` cell into a
top-level ``await`` of :func:`claw_cell`, so the agent runs on the kernel's own loop while the
kernel keeps serving widget clicks and "Run All" waits for it (ARCHITECTURE §4.1-4.2). The
plain cell magic remains as the fallback: with no running loop it uses ``asyncio.run``; on older
kernels it starts a background task with a Stop button and returns at once (§4.4).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from ..control.imports import load
from ..permissions import PermissionMode

if TYPE_CHECKING:
    from .runner import CellOptions

__all__ = [
    "ClawMagics",
    "ClawTransformer",
    "claw_cell",
    "claw_command",
    "claw_completer",
    "parse_options",
]

MODES = tuple(mode.value for mode in PermissionMode)  # the one list of modes
_CELL = re.compile(r"^%%claw(?:[ \t]+(.*))?$")
_LINE = re.compile(r"^%claw(?:[ \t]+(.*))?$")


@magic_arguments()
@argument("--model", help="model id, or scripted:FILE for an offline scripted model")
@argument("--base-url", dest="base_url", help="OpenAI-compatible endpoint (API root)")
@argument("--mode", choices=MODES, help="permission mode (kept for later cells)")
@argument(
    "--approve",
    choices=("auto", "widget", "stdin", "allow", "deny"),
    default="auto",
    help="how tool approvals are answered (default auto: buttons, else stdin, else "
    "CLAWNB_APPROVAL)",
)
@argument("--new", action="store_true", help="start a fresh conversation")
@argument("--cwd", help="workspace directory for the tools (kept for later cells)")
@argument("--max-turns", dest="max_turns", type=int, help="stop after this many model turns")
@argument("--record", metavar="FILE", help="append the model's turns to FILE (JSON Lines)")
@argument("--replay", metavar="FILE", help="replay model turns from FILE instead of a model")
@argument("--quiet", action="store_true", help="show only the final answer")
@argument(
    "--server", help="local server kind: auto, llama.cpp, llama-cpp-python, ollama, vllm, ..."
)
@argument("--max-output-tokens", dest="max_output_tokens", type=int, help="cap on each reply")
@argument("--temperature", type=float, help="sampling temperature")
@argument("--tool-choice", dest="tool_choice", help="auto, none, required, or a tool name")
@argument("--extra-body", dest="extra_body", help="extra request fields, a JSON object")
@argument(
    "--agent",
    metavar="MODULE[:FACTORY]",
    help="run your own agent (FACTORY defaults to make_session; kept for later cells; "
    '--agent "" goes back to clawnb\'s)',
)
@argument(
    "--ui",
    choices=("auto", "widget", "text"),
    default="auto",
    help="rendering: widgets, plain text, or auto (widgets when a frontend can show them)",
)
def _claw_signature(line: str = "") -> None:
    """%%claw [options] — the cell body is the prompt for the agent.

    The conversation carries on across %%claw cells in this kernel. {name} inserts a kernel
    variable; In[n], Out[n], Err[n] and Err attach cells, outputs and errors. A body that is
    /COMMAND runs a command instead (%claw help lists them). Every conversation is saved in
    the user's data directory.
    """


_claw_signature.parser.prog = "%%claw"
# IPython's help formatter writes usage as a reST block with its own "%" in front ("%%%claw");
# --help prints for a person, so plain argparse help
_claw_signature.parser.formatter_class = argparse.HelpFormatter


def parse_options(line: str) -> CellOptions | None:
    """The options of a ``%%claw`` line; ``None`` when ``--help`` printed the help."""
    if {"-h", "--help"} & set(line.split()):
        print(_claw_signature.parser.format_help())
        return None
    from ..config import GENERATION_FLAGS
    from .runner import CellOptions  # the runner (and the engine) load on the first cell

    ns = parse_argstring(_claw_signature, line)
    if ns.max_turns is not None and ns.max_turns < 1:
        raise UsageError("--max-turns must be at least 1")
    if ns.cwd is not None and not os.path.isdir(os.path.expanduser(ns.cwd)):
        # kept for later cells: a typo would leave every tool working in a missing folder
        raise UsageError(f"--cwd {ns.cwd}: no such directory")
    generation = {
        name: getattr(ns, name) for name in GENERATION_FLAGS if getattr(ns, name) is not None
    }
    for name, value in generation.items():
        # IPython splits magic lines without removing quotes: '{"top_k": 20}' keeps its own
        if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] in "'\"":
            generation[name] = value[1:-1]
    if generation:
        from ..config import options_overlay
        from ..errors import ConfigError

        try:  # checked now, so a typo is a usage error, not a failed turn
            options_overlay(**generation, source="%%claw")
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
    # every other flag is the CellOptions field of the same name
    flags = {f.name: getattr(ns, f.name) for f in fields(CellOptions) if f.name != "generation"}
    return CellOptions(**flags, generation=generation)


async def claw_cell(shell: Any, line: str, body: str) -> None:
    """What a transformed ``%%claw`` cell awaits. ``{var}``/``$var`` in the option line are
    expanded as IPython does for any magic line."""
    if shell is not None and ("{" in line or "$" in line):
        line = shell.var_expand(line, depth=0)
    from .runner import run_claw

    options = parse_options(line)
    if options is None:
        return None
    await run_claw(shell, options, body)
    return None


def _kernel_supports_await(shell: Any) -> bool:
    """True when awaiting in a cell keeps widget comms flowing: not an ipykernel, or
    ipykernel >= 7.4 (§4.1)."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return True
    try:
        from importlib.metadata import PackageNotFoundError, version

        major, minor = (int(p) for p in version("ipykernel").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        return False
    return (major, minor) >= (7, 4)


class ClawTransformer:
    """IPython cleanup transformer: ``%%claw ARGS\\nBODY`` → ``await claw_cell(...)``."""

    has_side_effects = False

    def __init__(self, shell: Any) -> None:
        self.shell = shell

    def active(self) -> bool:
        from IPython.core import interactiveshell

        return (
            bool(getattr(self.shell, "autoawait", False))
            # IPython's own asyncio runner (not trio/curio); it does not export the name
            and self.shell.loop_runner is getattr(interactiveshell, "_asyncio_runner", None)
            and _kernel_supports_await(self.shell)
        )

    def __call__(self, lines: list[str]) -> list[str]:
        if not lines:
            return lines
        line_command = _LINE.match(lines[0].rstrip("\r\n"))
        if line_command is not None and not any(rest.strip() for rest in lines[1:]):
            # a cell that holds only "%claw compact": awaited, so a command that waits for
            # the model or a server works too
            if not self.active():
                return lines
            args = (line_command.group(1) or "").strip()
            return [
                "await __import__('clawnb.notebook.magic', fromlist=['claw_command'])"
                f".claw_command(get_ipython(), {args!r})\n"
            ]
        match = _CELL.match(lines[0].rstrip("\r\n"))
        if match is None or not self.active():
            return lines
        line = (match.group(1) or "").strip()
        body = "".join(lines[1:])
        return [
            "await __import__('clawnb.notebook.magic', fromlist=['claw_cell'])"
            f".claw_cell(get_ipython(), {line!r}, {body!r})\n"
        ]


@magics_class
class ClawMagics(Magics):
    """``%%claw`` (fallback path) and the ``%claw`` line magic."""

    def __init__(self, shell: Any) -> None:
        super().__init__(shell)
        self._background: asyncio.Task[None] | None = None

    # IPython types its magic decorators for plain functions only (``Never`` for methods)
    @cell_magic("claw")  # type: ignore[arg-type]
    def claw(self, line: str, cell: str) -> None:
        from .runner import run_claw

        options = parse_options(line)
        if options is None:
            return None
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            try:
                asyncio.run(run_claw(self.shell, options, cell))
            except KeyboardInterrupt:
                pass  # the runner already printed the "interrupted" line
            return None
        # a loop is running but we cannot await it (old ipykernel, autoawait off):
        # run in the background with a Stop button (§4.4)
        self._background = asyncio.ensure_future(
            run_claw(self.shell, options, cell, raise_on_interrupt=False)
        )
        self._show_stop_button(self._background)
        return None

    def _show_stop_button(self, task: asyncio.Task[None]) -> None:
        try:
            widgets = load("ipywidgets")
            display = load("IPython.display").display
        except ImportError:
            print("%%claw is running in the background; interrupting will not stop it")
            return
        stop = widgets.Button(description="Stop", button_style="warning")
        stop.on_click(lambda _b: task.cancel())
        task.add_done_callback(lambda _t: stop.close())
        display(stop)

    @line_magic("claw")  # type: ignore[arg-type]
    def claw_line(self, line: str) -> None:
        """%claw COMMAND [ARGS] — the session's commands (%claw help lists them; no command:
        status). The same registry serves the chat's /COMMAND and a %%claw cell whose body
        is /COMMAND."""
        _finish_now(claw_command(self.shell, line), line)
        return None


def _finish_now(coro: Any, line: str) -> None:
    """Run a command's coroutine from a plain (synchronous) line magic: with ``asyncio.run``
    when no loop runs; inside a kernel's running loop it is stepped once — every command but
    those that wait for the model or a server finishes there — and a command that would
    have to wait is refused with what to do instead (a cell holding only the ``%claw`` line
    is awaited by :class:`ClawTransformer`, so there it works)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(coro)
        return
    try:
        coro.send(None)
    except StopIteration:
        return
    coro.close()
    raise UsageError(
        f"%claw {line.strip()} waits for the model or a server: run it alone in a cell"
    )


async def claw_command(shell: Any, line: str) -> None:
    """What ``%claw LINE`` runs (awaited by a cell that holds only that line)."""
    if shell is not None and ("{" in line or "$" in line):
        line = shell.var_expand(line, depth=0)
    words = line.split()
    if not words:
        line = "status"
    elif words[0] in ("--help", "-h"):
        line = "help"
    from .runner import run_command

    await run_command(shell, line, prefix="%claw ")
    return None


def claw_completer(shell: Any, event: Any) -> list[str]:
    """IPython's ``complete_command`` hook for ``%claw``: the command names the registry
    offers here and the session's skills (once a cell or command has built it), then a mode
    after ``mode`` and a command name after ``help``."""
    from ..session.commands import COMMANDS
    from .runner import frontend_of, skill_names

    frontend = frontend_of(shell)
    before = event.text_until_cursor.split()
    if event.text_until_cursor.endswith((" ", "\t")):
        before.append("")
    words = before[1:]  # after "%claw"
    if len(words) <= 1:
        start = words[0] if words else ""
        skills = [name for name in skill_names(shell) if name.startswith(start)]
        return [*COMMANDS.complete(start, frontend), *sorted(skills)]
    if len(words) == 2 and words[0] == "mode":
        return [m for m in (*MODES, "project") if m.startswith(words[1])]
    if len(words) == 2 and words[0] == "help":
        return COMMANDS.complete(words[1], frontend)
    return []
