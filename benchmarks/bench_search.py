"""Search tools on a large real tree: clawnb's GrepTool against ripgrep (``rg``) and ``grep -rn``,
GlobTool against ``find``, in one run.

The tree defaults to the Python standard library directory of the running interpreter
(with whatever site-packages it holds: tens of thousands of files). Each search runs a few
times (best wall time kept, caches warm) and the match *sets* are compared — (path, line) for
grep, paths for glob — so a speed-up that loses matches would show as a mismatch. Binary
files are left out on both sides (``grep -rn`` reports them on stderr only).

ripgrep is the peer that matters (it is what Claude Code's search runs): it searches the same
tree with its own defaults (``rg -n``: .gitignore honoured, hidden files skipped), so its
match set may differ a little from the tool's; the set comparison is printed per pattern.

Prints one line per search, then the overall ratios, the last one being GrepTool wall time /
rg wall time (goal ≤ 1.2).

    python benchmarks/bench_search.py [--root DIR] [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sysconfig
import time

from clawnb.control.secrets import is_secret_file
from clawnb.tools.glob import GlobTool
from clawnb.tools.grep import GrepTool, system_grep, system_rg

# Patterns that mean the same to grep's basic regexes and to Perl-style regexes.
GREP_PATTERNS = ["def __init__", "import os", "TODO", "class [A-Z][a-z]*Error"]
GLOB_PATTERNS = [("**/*.py", "*.py"), ("**/test_*.py", "test_*.py"), ("**/*.txt", "*.txt")]


def best_of(repeat: int, fn):
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def parse_grep_lines(lines: list[str], sep: str) -> set[tuple[str, int]]:
    found = set()
    for line in lines:
        path, _, rest = line.partition(":")
        number = rest.split(sep, 1)[0]
        if number.isdigit():
            found.add((path, int(number)))
    return found


def not_secret(found: set[tuple[str, int]]) -> set[tuple[str, int]]:
    """The peers know nothing of the tool's rule that a directory search never answers from
    a secret file (``.env``, keys, ``credentials.*``); compare like with like."""
    return {(path, line) for path, line in found if not is_secret_file(path)}


def peer_grep(root: str, pattern: str) -> set[tuple[str, int]]:
    out = subprocess.run(["grep", "-rn", pattern, root], capture_output=True)
    text = out.stdout.decode("utf-8", errors="replace")
    return not_secret(parse_grep_lines(text.splitlines(), ":"))


def peer_rg(root: str, pattern: str) -> set[tuple[str, int]]:
    out = subprocess.run(["rg", "-n", "--no-config", "-e", pattern, root], capture_output=True)
    text = out.stdout.decode("utf-8", errors="replace")
    return not_secret(parse_grep_lines(text.splitlines(), ":"))


def ours_grep(root: str, pattern: str, engine: str) -> set[tuple[str, int]]:
    tool = GrepTool(max_results=None, engine=engine)
    lines = asyncio.run(tool.matches(pattern, root))
    return parse_grep_lines(lines, ": ")


def peer_find(root: str, name: str) -> set[str]:
    out = subprocess.run(["find", root, "-name", name, "-type", "f"], capture_output=True)
    return set(os.fsdecode(p) for p in out.stdout.splitlines())


def ours_glob(root: str, pattern: str) -> set[str]:
    return set(GlobTool(max_results=None).matches(pattern, root))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", default=sysconfig.get_paths()["stdlib"])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    files = sum(len(f) for _, _, f in os.walk(root))
    engine = "rg" if system_rg() else "grep" if system_grep() else "python"
    print(f"tree: {root} ({files} files); grep engine: {engine}; best of {args.repeat}")

    totals = {"grep": [0.0, 0.0], "rg": [0.0, 0.0], "glob": [0.0, 0.0]}
    identical = True
    for pattern in GREP_PATTERNS:
        t_peer, peer = best_of(args.repeat, lambda p=pattern: peer_grep(root, p))
        t_rg, by_rg = best_of(args.repeat, lambda p=pattern: peer_rg(root, p))
        t_ours, ours = best_of(args.repeat, lambda p=pattern: ours_grep(root, p, engine))
        t_py, by_python = best_of(1, lambda p=pattern: ours_grep(root, p, "python"))
        same = ours == peer
        identical &= same and by_python == ours
        totals["grep"][0] += t_ours
        totals["grep"][1] += t_peer
        totals["rg"][0] += t_ours
        totals["rg"][1] += t_rg
        print(
            f"grep {pattern!r:28} matches={len(ours):6} same_as_grep={same} "
            f"same_as_rg={ours == by_rg} python_engine_same={by_python == ours} "
            f"ours={t_ours:.3f}s python_engine={t_py:.3f}s grep -rn={t_peer:.3f}s "
            f"rg={t_rg:.3f}s ratio_rg={t_ours / t_rg:.2f}"
        )
        if not same:
            print(f"    only ours: {sorted(ours - peer)[:5]}  only grep: {sorted(peer - ours)[:5]}")
        if ours != by_rg:
            print(f"    only ours: {sorted(ours - by_rg)[:5]}  only rg: {sorted(by_rg - ours)[:5]}")
    for pattern, name in GLOB_PATTERNS:
        t_peer, peer = best_of(args.repeat, lambda n=name: peer_find(root, n))
        t_ours, ours = best_of(args.repeat, lambda p=pattern: ours_glob(root, p))
        same = ours == peer
        identical &= same
        totals["glob"][0] += t_ours
        totals["glob"][1] += t_peer
        print(
            f"glob {pattern!r:28} files={len(ours):7} same_as_peer={same} "
            f"ours={t_ours:.3f}s find={t_peer:.3f}s ratio={t_ours / t_peer:.2f}"
        )
        if not same:
            print(f"    only ours: {sorted(ours - peer)[:5]}  only find: {sorted(peer - ours)[:5]}")
    grep_ratio = totals["grep"][0] / totals["grep"][1]
    glob_ratio = totals["glob"][0] / totals["glob"][1]
    rg_ratio = totals["rg"][0] / totals["rg"][1]
    print(f"identical match sets (all engines and grep -rn): {identical}")
    print(f"ratio grep (GrepTool / grep -rn): {grep_ratio:.2f}x (goal <= 1.5x)")
    print(f"ratio glob (GlobTool / find): {glob_ratio:.2f}x (goal <= 1.5x)")
    print(f"ratio grep (GrepTool / rg): {rg_ratio:.2f}x (goal <= 1.2x)")


if __name__ == "__main__":
    main()
