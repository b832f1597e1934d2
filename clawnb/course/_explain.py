"""Asserts that explain themselves: the chapter suites are compiled with their ``assert``
statements rewritten so that a failure carries the values that were compared.

``assert turn.text == "Hello"`` becomes, in effect::

    left = turn.text
    right = "Hello"
    if not (left == right):
        raise Mismatch("==", left, right, ...)

so the report can say *expected 'Hello', got None* instead of *assertion failed (line 12)*.
Each side is evaluated once, in the same order as before, so a test that awaits a provider call
inside its assert behaves exactly as it did. This is the idea behind pytest's assertion
rewriting, done here for the suites alone so that a learner's kernel needs no pytest.

The import hook below applies the rewrite to the suite modules (``clawnb.course.chNN_*`` and
``clawnb.course.extra_*``) however they are imported; it is installed by
``clawnb/course/__init__.py`` before any of them can load.
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Mismatch", "install"]

_OPS: dict[type[ast.cmpop], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
}

_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


@dataclass(eq=False)  # an exception compares by identity, like any other
class Mismatch(AssertionError):
    """A suite assert that failed, with what was compared.

    ``op`` is the comparison (``"=="``, ``"in"`` …) or ``"truth"`` / ``"falsity"`` for a bare
    ``assert x`` / ``assert not x``; ``left`` and ``right`` are the evaluated sides (for a bare
    assert, ``left`` is the value and ``right`` is unused); ``expected_on_left`` says the test
    wrote the expected value first (``assert "x" == got``); ``subject`` is the function a bare
    assert called (``raises`` …).
    """

    op: str
    left: Any
    right: Any = None
    message: Any = None
    expected_on_left: bool = False
    subject: str = ""

    def __post_init__(self) -> None:
        # str(exc) is the assert's own message, as for a plain AssertionError.
        super().__init__(self.message if self.message is not None else "")

    def explain(self) -> list[str]:
        """Lines saying what was expected and what came back."""
        note = [f"note: {self.message}"] if self.message not in (None, "") else []
        if self.op == "truth":
            if self.subject in ("raises", "_fails"):  # the suites' "it must fail" helpers
                return [*note, "expected: an error", "  actual: it succeeded"]
            return [*note, "expected: a true value", f"  actual: {_show(self.left)}"]
        if self.op == "falsity":
            return [*note, "expected: a false value", f"  actual: {_show(self.left)}"]
        actual, expected = self.left, self.right
        if self.expected_on_left:
            actual, expected = expected, actual
        if self.op in ("==", "is"):
            lines = [f"expected: {_show(expected)}", f"  actual: {_show(actual)}"]
            if _show(expected) == _show(actual):  # same text, different types or identity
                lines.append(
                    f"   types: expected {type(expected).__name__}, got {type(actual).__name__}"
                )
            return [*note, *lines]
        if self.op in ("!=", "is not"):
            return [
                *note,
                f"expected: anything but {_show(expected)}",
                f"  actual: {_show(actual)}",
            ]
        if self.op in ("in", "not in"):
            what = "to contain" if self.op == "in" else "not to contain"
            return [*note, f"expected: {what} {_show(self.left)}", f"  actual: {_show(self.right)}"]
        # An ordering: "expected: a value >= 5 / actual: 0" (the literal is the bound).
        op, actual, bound = self.op, self.left, self.right
        if self.expected_on_left:  # `5 <= ticks`
            op, actual, bound = _FLIPPED.get(op, op), self.right, self.left
        return [*note, f"expected: a value {op} {_show(bound)}", f"  actual: {_show(actual)}"]


def _show(value: Any, limit: int = 300) -> str:
    text = repr(value)
    if len(text) > limit:
        text = text[: limit - 20] + f"… ({len(text)} chars)"
    return text


def _is_literal(node: ast.expr) -> bool:
    """A value written out in the test (the expected side, by the suites' convention)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_is_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _is_literal(k) for k in node.keys) and all(
            _is_literal(v) for v in node.values
        )
    if isinstance(node, ast.UnaryOp):
        return _is_literal(node.operand)
    return False


def _callee(node: ast.expr) -> str:
    if isinstance(node, ast.Await):
        node = node.value
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name):
            return func.id
        if isinstance(func, ast.Attribute):
            return func.attr
    return ""


class _AssertRewriter(ast.NodeTransformer):
    def __init__(self) -> None:
        self.count = 0

    def _temp(self) -> str:
        self.count += 1
        # "@" cannot appear in source, so these names never clash with the test's own.
        return f"@clawnb_{self.count}"

    def visit_Assert(self, node: ast.Assert) -> Any:
        test, msg = node.test, node.msg or ast.Constant(None)
        fail = ast.Attribute(ast.Name("@clawnb_explain", ast.Load()), "Mismatch", ast.Load())
        statements: list[ast.stmt] = []
        check: ast.expr
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _OPS:
            left, right = self._temp(), self._temp()
            statements += [
                ast.Assign([ast.Name(left, ast.Store())], test.left),
                ast.Assign([ast.Name(right, ast.Store())], test.comparators[0]),
            ]
            check = ast.Compare(ast.Name(left, ast.Load()), test.ops, [ast.Name(right, ast.Load())])
            swapped = _is_literal(test.left) and not _is_literal(test.comparators[0])
            args = [
                ast.Constant(_OPS[type(test.ops[0])]),
                ast.Name(left, ast.Load()),
                ast.Name(right, ast.Load()),
                msg,
                ast.Constant(swapped),
            ]
        else:
            negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
            value_node = test.operand if isinstance(test, ast.UnaryOp) and negated else test
            value = self._temp()
            statements.append(ast.Assign([ast.Name(value, ast.Store())], value_node))
            check = (
                ast.UnaryOp(ast.Not(), ast.Name(value, ast.Load()))
                if negated
                else ast.Name(value, ast.Load())
            )
            args = [
                ast.Constant("falsity" if negated else "truth"),
                ast.Name(value, ast.Load()),
                ast.Constant(None),
                msg,
                ast.Constant(False),
                ast.Constant(_callee(value_node)),
            ]
        raise_ = ast.Raise(ast.Call(fail, args, []), None)
        statements.append(ast.If(ast.UnaryOp(ast.Not(), check), [raise_], []))
        for stmt in statements:
            ast.copy_location(stmt, node)
            for child in ast.walk(stmt):
                if not hasattr(child, "lineno") or child.lineno is None:
                    ast.copy_location(child, node)
        return statements


def rewrite(source: str, filename: str) -> Any:
    """Compile ``source`` with its asserts rewritten (see the module docstring)."""
    tree = ast.parse(source, filename)
    tree = _AssertRewriter().visit(tree)
    # The rewritten code reaches Mismatch through a hidden module-level name.
    tree.body.insert(
        _after_docstring_and_future(tree),
        ast.Import([ast.alias("clawnb.course._explain", "@clawnb_explain")]),
    )
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec", dont_inherit=True)


def _after_docstring_and_future(tree: ast.Module) -> int:
    index = 0
    for index, stmt in enumerate(tree.body):  # noqa: B007 - the index is the answer
        is_doc = index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
        is_future = isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
        if not (is_doc or is_future):
            return index
    return index + 1


def is_suite_module(fullname: str) -> bool:
    prefix = "clawnb.course."
    if not fullname.startswith(prefix):
        return False
    name = fullname[len(prefix) :]
    return "." not in name and (name.startswith("ch") or name.startswith("extra_"))


class _SuiteLoader(importlib.machinery.SourceFileLoader):
    """Loads a suite module from its source every time, rewritten (never from a .pyc that a
    plain import may have left behind)."""

    def get_code(self, fullname: str) -> Any:
        path = self.get_filename(fullname)
        return rewrite(Path(path).read_text(encoding="utf-8"), path)


class _SuiteFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if not is_suite_module(fullname):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not str(spec.origin or "").endswith(".py"):
            return None
        spec.loader = _SuiteLoader(fullname, str(spec.origin))
        return spec


def install() -> None:
    """Put the suite finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _SuiteFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _SuiteFinder())
