"""How many dangerous shell command shapes the CommandFilter catches.

Reads ``tests/safety/data/dangerous_commands.txt`` (``category<TAB>command`` per line) and
counts, per category, the shapes each filter blocks:

* ``book-raw`` — the book's seven default patterns matched against the trimmed line only
  (exactly the book's ``is_blocked``);
* ``book`` — the same patterns with clawnb's normalisation (each simple command of the line,
  unquoted, wrappers and ``VAR=`` prefixes removed);
* ``config`` — the config defaults (``rm -rf /``, ``sudo *``, ``curl * | bash``, ``curl * | sh``);
* ``recommended`` — ``CommandFilter.recommended()``, the list ``build_gate`` uses by default.

It also checks ``safe_commands.txt``: none of those may be blocked (false positives are
printed). This is a measured figure, not a pass/fail test: a blocklist cannot be complete,
which is why the permission engine asks before every bash call in the default mode. Prints the
table and, last, the ratio caught by ``recommended``.

    python benchmarks/command_filter_coverage.py [--misses]
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from clawnb.safety import DEFAULT_BLOCKED_COMMANDS, CommandFilter

# The corpus and its reader are the safety tests' (one copy, tests/safety/data/).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.safety.conftest import load_commands as load  # noqa: E402

FILTERS = {
    "book-raw": CommandFilter.default_filters(normalize=False),
    "book": CommandFilter.default_filters(),
    "config": CommandFilter(DEFAULT_BLOCKED_COMMANDS),
    "recommended": CommandFilter.recommended(),
}


def coverage() -> tuple[dict[str, dict[str, int]], dict[str, int], int, list[str]]:
    """Per-category counts, totals per filter, number of shapes, and the recommended misses."""
    rows = load("dangerous_commands.txt")
    table: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    totals: dict[str, int] = defaultdict(int)
    misses = []
    for category, command in rows:
        table[category]["shapes"] += 1
        for name, f in FILTERS.items():
            if f.is_blocked(command) is not None:
                table[category][name] += 1
                totals[name] += 1
            elif name == "recommended":
                misses.append(command)
    return table, totals, len(rows), misses


def false_positives() -> dict[str, list[str]]:
    safe = [command for _, command in load("safe_commands.txt")]
    return {name: [c for c in safe if f.is_blocked(c) is not None] for name, f in FILTERS.items()}


def render(show_misses: bool = False) -> str:
    table, totals, n, misses = coverage()
    names = list(FILTERS)
    lines = [f"{'category':<12} {'shapes':>6} " + " ".join(f"{n_:>11}" for n_ in names)]
    for category, counts in table.items():
        lines.append(
            f"{category:<12} {counts['shapes']:>6} " + " ".join(f"{counts[n_]:>11}" for n_ in names)
        )
    lines.append(f"{'total':<12} {n:>6} " + " ".join(f"{totals[n_]:>11}" for n_ in names))
    fp = false_positives()
    safe_n = len(load("safe_commands.txt"))
    lines.append(
        f"{'false pos.':<12} {safe_n:>6} " + " ".join(f"{len(fp[n_]):>11}" for n_ in names)
    )
    if show_misses:
        lines += ["", "missed by recommended:", *(f"  {m}" for m in misses)]
    lines += [
        "",
        "The filter is best-effort, not a sandbox; in the default mode every bash call is",
        "still sent for approval.",
        f"caught by recommended: {totals['recommended']}/{n} = {totals['recommended'] / n:.2f}",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list the shapes not caught")
    print(render(parser.parse_args().misses))


if __name__ == "__main__":
    main()
