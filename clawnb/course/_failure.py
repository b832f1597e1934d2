"""What a failure report says about where it happened and what the test wanted.

Two questions a learner asks of a red test that raised instead of comparing:

* **Which of my lines?** The innermost frame of *the learner's* code — a notebook cell, their
  exported package, any file that is not Python's own library, an installed package or
  clawnb — not the innermost frame overall, which is often inside ``json``, ``re`` or
  ``asyncio`` and says nothing about the bug. :func:`origin` names that line and, when the
  exception came from further in, the library place too.
* **What was expected?** The test's line that was running when it raised: an ``assert``'s
  expected side (the literal one, else the right-hand one, as the rewritten asserts report
  it), an error for ``assert await raises(...)``, or for any other line that it should run
  without an error (:func:`expected_of`).
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import re
import site
import sysconfig
import textwrap
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["expected_of", "is_yours", "origin", "place"]

# A notebook cell's code: ipykernel compiles each cell under /tmp/ipykernel_<pid>/<hash>.py;
# older IPython uses <ipython-input-…>; anything else in angle brackets (exec of a string, the
# course's own learner trials) is not a file either.
_CELL = re.compile(r"(?:^<(?!frozen ).*>$)|(?:ipykernel_\d+[/\\][^/\\]+\.py$)")


@functools.cache
def _library_roots() -> tuple[str, ...]:
    roots = {str(Path(__file__).resolve().parents[1])}  # clawnb itself
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(key):
            roots.add(os.path.realpath(paths[key]))
    try:
        roots.update(os.path.realpath(p) for p in site.getsitepackages())
    except AttributeError:  # some embedded interpreters have no site.getsitepackages
        pass
    return tuple(sorted(root.rstrip(os.sep) + os.sep for root in roots))


def is_yours(filename: str) -> bool:
    """Whether code in ``filename`` is the learner's: a notebook cell or a file outside
    Python's library, the installed packages and clawnb."""
    if filename.startswith("<frozen"):
        return False
    if filename.startswith("<"):
        return True
    return not os.path.realpath(filename).startswith(_library_roots())


def place(frame: traceback.FrameSummary) -> str:
    """``your code, line 12`` for a notebook cell, ``your code (ch09_file_tools.py, line 12)``
    for a file of the learner's, ``decoder.py:353`` for a library's."""
    if is_yours(frame.filename):
        if _CELL.search(frame.filename):
            return f"your code, line {frame.lineno}"
        return f"your code ({Path(frame.filename).name}, line {frame.lineno})"
    return f"{Path(frame.filename).name}:{frame.lineno}"


def origin(tb: TracebackType | None, test_file: str | None) -> str | None:
    """Where the exception in ``tb`` came from: the learner's innermost line (and the library
    place under it), or the library place; None when the test itself raised it."""
    frames = traceback.extract_tb(tb) if tb is not None else []
    if not frames or (test_file is not None and frames[-1].filename == test_file):
        return None
    last = frames[-1]
    mine = [f for f in frames if is_yours(f.filename)]
    if not mine:
        return f"{place(last)}: {last.line or ''}"
    text = f"{place(mine[-1])}: {mine[-1].line or ''}"
    if mine[-1] is not last:
        text += f"  (inside {place(last)})"
    return text


def _test_frame(fn: Callable[..., Any], tb: TracebackType | None) -> tuple[Any, int] | None:
    found = None
    code = getattr(fn, "__code__", None)
    for frame, lineno in traceback.walk_tb(tb):
        if frame.f_code is code:
            found = (frame, lineno)
    return found


def _statement_at(fn: Callable[..., Any], lineno: int) -> ast.stmt | None:
    """The innermost statement of ``fn`` (not a nested def) that spans file line ``lineno``."""
    try:
        lines, start = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return None
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return None
    best: ast.stmt | None = None
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        ):
            continue
        first, last = node.lineno + start - 1, (node.end_lineno or node.lineno) + start - 1
        if first <= lineno <= last and (best is None or node.lineno >= best.lineno):
            best = node
    return best


def _value(node: ast.expr, scope: dict[str, Any]) -> str:
    """A side of an assert as the report shows it: a literal's repr, a local's value, else
    the source text."""
    from ._explain import _show

    try:
        return _show(ast.literal_eval(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.Name) and node.id in scope:
        return _show(scope[node.id])
    return f"`{ast.unparse(node)}`"


def expected_of(fn: Callable[..., Any], tb: TracebackType | None) -> str:
    """What the test's running line expected when the exception in ``tb`` stopped it."""
    from ._explain import _FLIPPED, _OPS, _callee, _is_literal

    found = _test_frame(fn, tb)
    statement = _statement_at(fn, found[1]) if found else None
    if not isinstance(statement, ast.Assert):
        return "the line marked -> to run without an error"
    scope = dict(found[0].f_locals) if found else {}
    test = statement.test
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _OPS:
        op = _OPS[type(test.ops[0])]
        left, right = test.left, test.comparators[0]
        if op in ("in", "not in"):
            return f"{'to contain' if op == 'in' else 'not to contain'} {_value(left, scope)}"
        expected = left if _is_literal(left) and not _is_literal(right) else right
        if op in ("==", "is"):
            return _value(expected, scope)
        if op in ("!=", "is not"):
            return f"anything but {_value(expected, scope)}"
        if expected is left:  # `5 <= ticks`: say it the way round the report does
            return f"a value {_FLIPPED[op]} {_value(left, scope)}"
        return f"a value {op} {_value(right, scope)}"
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return "a false value"
    if _callee(test) in ("raises", "_fails"):
        return "an error"
    return "a true value"
