"""``python -m clawnb.skills check [DIR] [--context-window N]``: see :mod:`clawnb.skills.check`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m clawnb.skills", description="Work with clawnb skills."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser(
        "check",
        help="validate every skill in DIR (a project, a folder of skills, or one skill)",
    )
    check.add_argument("directory", nargs="?", default=None, metavar="DIR")
    check.add_argument(
        "--context-window",
        type=int,
        default=None,
        metavar="TOKENS",
        help="the model's context window; the listing's budget is 1%% of it",
    )
    check.add_argument(
        "--run",
        action="store_true",
        help="also run each skill's examples/*.jsonl headless, on a temporary copy of the "
        "project (this runs the project's code)",
    )
    args = parser.parse_args(argv)
    from .check import check_skills

    report = check_skills(args.directory, context_window=args.context_window, run_examples=args.run)
    for line in report.problems:
        print(line)
    n = report.checked
    ran = (
        f", {report.examples_run} example{'s' * (report.examples_run != 1)} run" if args.run else ""
    )
    if report.ok:
        print(f"{n} skill{'s' if n != 1 else ''} checked{ran}, no problems")
        return 0
    p = len(report.problems)
    print(f"{n} skill{'s' if n != 1 else ''} checked{ran}, {p} problem{'s' if p != 1 else ''}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
