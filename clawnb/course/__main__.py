"""``python -m clawnb.course``: run chapter checks, or build the exercise notebooks.

python -m clawnb.course list
python -m clawnb.course check ch01
python -m clawnb.course exercises notebooks notebooks/exercises
python -m clawnb.course tests notebooks            (refresh each chapter's list of its tests)
python -m clawnb.course progress notebooks/exercises [--run] [--watch]
python -m clawnb.course save notebooks/07_agentic_loop_deep_dive.ipynb   (re-run, keep outputs)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ._exercises import write_exercises
from ._suite import chapters, check


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m clawnb.course")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list chapters and their suites")
    run = sub.add_parser("check", help="run a chapter's (or a suite's) tests against clawnb")
    run.add_argument("target")
    ex = sub.add_parser("exercises", help="write exercise versions of the course notebooks")
    ex.add_argument("src", type=Path)
    ex.add_argument("dest", type=Path)
    prog = sub.add_parser("progress", help="which chapter notebooks pass")
    prog.add_argument("folder", type=Path, nargs="?", default=Path("."))
    prog.add_argument("--run", action="store_true", help="run notebooks not checked since saved")
    prog.add_argument(
        "--watch",
        action="store_true",
        help="re-check a notebook when it is saved: its first failure and hint, or the next chapter",
    )
    lists = sub.add_parser("tests", help="refresh the list of tests near each chapter's top")
    lists.add_argument("folder", type=Path)
    save = sub.add_parser("save", help="re-run solution notebooks and save their outputs")
    save.add_argument("notebooks", type=Path, nargs="+")
    args = parser.parse_args(argv)
    if args.command == "list":
        for chapter, suites in chapters().items():
            print(f"{chapter:8} {', '.join(suites)}")
        return 0
    if args.command == "check":
        return 0 if check(args.target).ok else 1
    if args.command == "progress":
        from ._progress import main as progress

        return progress(args.folder, args.run, args.watch)
    if args.command == "tests":
        from ._testlist import write_test_lists

        for path in write_test_lists(args.folder):
            print(f"wrote the test list of {path}")
        return 0
    if args.command == "save":
        from ._save import save_outputs

        for path in args.notebooks:
            dropped = save_outputs(path)
            print(
                f"saved {path}" + (f" ({dropped} widget view(s) kept as tables)" if dropped else "")
            )
        return 0
    for path in write_exercises(args.src, args.dest):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
