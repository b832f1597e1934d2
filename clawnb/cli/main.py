"""``python -m clawnb`` / ``clawnb``: the command line.

Subcommands:

* ``demo`` — an offline agent session: a scripted model drives the real tools in a scratch
  directory and the transcript is printed; ``demo --notebook`` runs the quick-start notebook
  headless in a real Jupyter kernel instead.
* ``kernel install`` — register the clawnb kernel, in which every cell is a prompt.
* ``chat`` — the interactive terminal chat (:mod:`clawnb.cli.chat`).
* ``trust [DIR]`` — trust a project folder, so its ``.claw/config.toml`` may widen what the
  agent does (``--revoke`` undoes it, ``--list`` shows the trusted folders).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI imports its commands' modules lazily, to start fast
    from .terminal import TerminalRenderer

__all__ = ["main"]


def _demo(args: argparse.Namespace) -> int:
    if args.notebook:
        from ..notebook.headless import main as run_headless

        return run_headless(["--approval", args.approval])
    from ..demo import DEMO_PROMPT, DEMO_SCRIPT
    from .terminal import TerminalRenderer

    script = Path(args.script) if args.script else DEMO_SCRIPT
    with tempfile.TemporaryDirectory(prefix="clawnb-demo-") as scratch:
        workspace = Path(args.workspace) if args.workspace else Path(scratch)
        workspace.mkdir(parents=True, exist_ok=True)
        out = TerminalRenderer(sys.stdout)
        print(f"clawnb demo — scripted offline model ({script.name}), workspace {workspace}")
        print("(The model's replies are replayed from a script; the tools really run.)\n")
        print(f"> {DEMO_PROMPT}\n")
        return asyncio.run(_run_demo(script, workspace, DEMO_PROMPT, out))


async def _run_demo(script: Path, workspace: Path, prompt: str, out: TerminalRenderer) -> int:
    from ..errors import ClawError
    from ..events import Approval, ApprovalRequest
    from ..session.assemble import build_agent
    from .terminal import printable

    async def approve(request: ApprovalRequest) -> Approval:
        # A person would click Approve/Deny here; the demo approves and says so.
        out.out.write(
            printable(f"    ? {request.summary.strip()} needs approval: approved (demo policy)")
            + "\n"
        )
        return Approval.allow_once()

    try:
        session = build_agent(
            workspace=workspace, model=f"scripted:{script}", approve=approve, subagents=False
        )
    except ClawError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        await session.send(prompt, out)
    except ClawError:
        return 1  # already reported through the Error event
    print(f"\n[{len(session.history):,} messages | {session.cost.report()}]")
    return 0


def _kernel(args: argparse.Namespace) -> int:
    from ..notebook.kernel import main as kernel_main

    return kernel_main(args.rest)


def _trust(args: argparse.Namespace) -> int:
    from ..config import trust_workspace
    from ..control.trust import TrustStore
    from ..errors import ClawError

    if args.list:
        folders = TrustStore().folders()
        for folder, entry in sorted(folders.items()):
            print(f"{folder}  {entry.get('config', '?')}  {entry.get('trusted_at', '')}")
        if not folders:
            print("no trusted folders")
        return 0
    try:
        print(trust_workspace(args.directory, revoke=args.revoke))
    except ClawError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _skills(args: argparse.Namespace) -> int:
    """``skills check [DIR]``: :mod:`clawnb.skills`' own command line."""
    from ..skills.__main__ import main as skills_main

    return skills_main(args.rest)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="clawnb", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = sub.add_parser("demo", help="run the offline demo session and print its transcript")
    demo.add_argument("--script", help="a scripted model file (JSON Lines of turns)")
    demo.add_argument("--workspace", help="directory for the demo's files (default: a temp dir)")
    demo.add_argument(
        "--notebook",
        action="store_true",
        help="run notebooks/00_quickstart.ipynb headless in a real kernel instead",
    )
    demo.add_argument(
        "--approval",
        choices=["allow", "deny"],
        default="allow",
        help="with --notebook: how the headless run answers approval requests",
    )
    demo.set_defaults(func=_demo)
    kernel = sub.add_parser("kernel", help="install the clawnb Jupyter kernel (cells are prompts)")
    kernel.add_argument("rest", nargs=argparse.REMAINDER, help="install [--user|--sys-prefix]")
    kernel.set_defaults(func=_kernel)
    trust = sub.add_parser(
        "trust", help="trust a project folder: its .claw/config.toml may then widen permissions"
    )
    trust.add_argument("directory", nargs="?", help="the project folder (default: current)")
    trust.add_argument("--revoke", action="store_true", help="stop trusting the folder")
    trust.add_argument("--list", action="store_true", help="list the trusted folders")
    trust.set_defaults(func=_trust)
    skills = sub.add_parser("skills", help="work with skills: skills check [DIR] validates them")
    skills.add_argument("rest", nargs=argparse.REMAINDER, help="check [DIR] [--context-window N]")
    skills.set_defaults(func=_skills)
    from .chat import add_chat_parser

    add_chat_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    status: int = args.func(args)
    return status
