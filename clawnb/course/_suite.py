"""Chapter suites: the book's tests, written once, run against any implementation.

A suite is a list of plain test functions ``test_x(impl, tmp)`` (sync or async). ``impl`` is
an :class:`Impl` namespace: ``impl.MockProvider`` is the learner's class when one was given to
:func:`check`, and clawnb's own otherwise. ``tmp`` is a fresh temporary directory
(:class:`pathlib.Path`).

pytest runs every suite against clawnb itself (``tests/course/test_book.py``), under the book's
test names; a notebook calls ``clawnb.course.check("ch01", MockProvider=MyMock)`` and gets a
cargo-like report that says, for each failure, what was expected, what came back, the lines of
the test and where the notebook teaches the rule.
"""

from __future__ import annotations

import ast
import difflib
import functools
import importlib
import inspect
import re
import sys
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._explain import Mismatch
from ._run import DEFAULT_TIMEOUT, TestTimeout, run_bounded
from ._where import taught_at

AFTER_CHECK: list[Callable[[Any], None]] = []
"""Called with the report of each check of the learner's own objects: ``progress`` records
it there (:mod:`clawnb.course._progress` adds itself, so this module needs no import of it)."""

__all__ = [
    "CheckReport",
    "Impl",
    "Skipped",
    "Suite",
    "TestResult",
    "check",
    "suite_names",
    "used_names",
]

TestFn = Callable[..., Any]


class CheckInterrupted(KeyboardInterrupt):
    """The learner interrupted a check. Still a ``KeyboardInterrupt`` (the cell stops, a
    script exits), but IPython shows it as one line: formatting a full traceback the first
    time in a kernel costs most of a second, and the kernel should be free at once."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]


class Skipped(Exception):
    """Raised by a suite test that cannot run here (a live endpoint without a key)."""


class Impl:
    """Implementation namespace: explicit overrides first, then clawnb's public names.

    It remembers which names a test used, so the report can say whose objects ran.
    """

    def __init__(self, **overrides: Any) -> None:
        self._overrides = overrides
        self._used: dict[str, bool] = {}  # name -> True if it was the learner's

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._overrides:
            self._used[name] = True
            return self._overrides[name]
        import clawnb

        from . import reference

        try:
            value = getattr(clawnb, name)
        except AttributeError:
            # Pieces only the course builds (the gate, hooked_call …) have a reference here.
            if name not in reference.__all__:
                raise AttributeError(
                    f"no implementation of {name!r} given or found in clawnb"
                ) from None
            value = getattr(reference, name)
        self._used.setdefault(name, False)
        return value


@dataclass
class Suite:
    """The tests of one book test file (``mock``, ``read``, …) and the chapters they check."""

    name: str
    title: str
    chapters: list[str] = field(default_factory=list)
    tests: dict[str, TestFn] = field(default_factory=dict)
    module: str = ""
    # test name -> the least time limit it gets (one that starts a real server, say), whatever
    # check()'s own limit is
    limits: dict[str, float] = field(default_factory=dict)

    def test(self, fn: TestFn | None = None, *, at_least: float | None = None) -> Any:
        """``@suite.test``, or ``@suite.test(at_least=20)`` for a test that needs longer than
        check()'s limit to do its job (the limit still stops a loop, only later)."""
        if fn is None:
            return functools.partial(self.test, at_least=at_least)
        if not fn.__name__.startswith("test_"):
            raise ValueError(f"suite test {fn.__name__} must start with 'test_'")
        self.tests[fn.__name__] = fn
        if at_least is not None:
            self.limits[fn.__name__] = at_least
        if not self.module:
            self.module = fn.__module__
        return fn


def _suite_modules() -> list[str]:
    import pkgutil

    import clawnb.course as package

    return sorted(i.name for i in pkgutil.iter_modules(package.__path__) if i.name[0] != "_")


def _discover() -> dict[str, Suite]:
    """Every module ``clawnb.course.<name>`` (not starting with ``_``) defines ``suite``."""
    found: dict[str, Suite] = {}
    for name in _suite_modules():
        suite = getattr(importlib.import_module(f"clawnb.course.{name}"), "suite", None)
        if isinstance(suite, Suite):
            found[suite.name] = suite
    return found


def suite_names() -> list[str]:
    return list(_discover())


def chapters() -> dict[str, list[str]]:
    """Chapter id (``ch01``, ``ch05a``, ``extras``) -> the suites that check it."""
    table: dict[str, list[str]] = {}
    for suite in _discover().values():
        for ch in suite.chapters:
            table.setdefault(ch, []).append(suite.name)
    return dict(sorted(table.items()))


def load_suite(name: str) -> Suite:
    """The suite called ``name``; its module is ``<chapter>_<name>``, imported on its own so
    one broken suite cannot take the others down."""
    for module in _suite_modules():
        if module.partition("_")[2] == name:
            suite = getattr(importlib.import_module(f"clawnb.course.{module}"), "suite", None)
            if isinstance(suite, Suite) and suite.name == name:
                return suite
    suites = _discover()
    try:
        return suites[name]
    except KeyError:
        known = sorted(suites) + list(chapters())
        close = difflib.get_close_matches(name, known, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise KeyError(
            f"unknown chapter or suite {name!r}.{hint} Known: {', '.join(known)}"
        ) from None


def suite_of(test_name: str) -> str:
    """The suite that holds a test."""
    for name, suite in _discover().items():
        if test_name in suite.tests:
            return name
    raise KeyError(test_name)


_last: dict[str, CheckReport] = {}


def last_report(target: str) -> CheckReport | None:
    """The report of the last ``check(target, …)`` in this process (for ``hint``)."""
    return _last.get(target)


def _resolve(target: str) -> list[Suite]:
    table = chapters()
    if target in table:
        return [load_suite(n) for n in table[target]]
    return [load_suite(target)]


@functools.cache
def used_names(suite_name: str) -> frozenset[str]:
    """The ``impl.<Name>`` objects a suite's tests use (read from its source)."""
    module = importlib.import_module(load_suite(suite_name).module)
    tree = ast.parse(Path(inspect.getfile(module)).read_text(encoding="utf-8"))
    return frozenset(
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "impl"
    )


def run_test(fn: TestFn, impl: Impl, tmp: Path, timeout: float = DEFAULT_TIMEOUT) -> None:
    """Run one suite test (sync or async) on its own thread and event loop, with a time limit
    that the kernel's interrupt also respects (see ``_run.py``)."""
    run_bounded(fn, impl, tmp, timeout=timeout)


# ----------------------------------------------------------------------------- the report


@dataclass
class TestResult:
    """One test's outcome. ``status`` is ``ok``, ``FAILED``, ``TIMED OUT`` or ``skipped``."""

    __test__ = False  # not a pytest test class

    name: str
    status: str
    detail: str = ""
    yours: tuple[str, ...] = ()  # the learner's objects the test used
    theirs: tuple[str, ...] = ()  # clawnb's objects the test used

    @property
    def counted(self) -> bool:
        """A pass counts only when the test ran at least one of the learner's objects."""
        return bool(self.yours)


@dataclass
class CheckReport:
    """What :func:`check` found; prints like ``cargo test``."""

    target: str
    results: list[TestResult]
    given: tuple[str, ...] = ()  # names the learner passed
    stubs: list[str] = field(default_factory=list)  # given objects still the exercise stub
    interrupted: bool = False

    @property
    def passed(self) -> int:
        return sum(1 for r in self.results if r.status == "ok" and (r.counted or not self.given))

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if r.status in ("FAILED", "TIMED OUT")) + len(self.stubs)

    @property
    def skipped(self) -> int:
        return sum(1 for r in self.results if r.status == "skipped")

    @property
    def not_counted(self) -> int:
        if not self.given:
            return 0
        return sum(1 for r in self.results if r.status == "ok" and not r.counted)

    @property
    def ok(self) -> bool:
        """Green only when nothing failed and at least one test ran the learner's code (a
        reference run with no objects given is green when clawnb passes)."""
        return self.failed == 0 and self.passed > 0 and not self.interrupted

    def whose(self) -> str:
        yours = sorted({n for r in self.results for n in r.yours})
        theirs = sorted({n for r in self.results for n in r.theirs} - set(yours))
        left = f"yours: {', '.join(yours)}" if yours else "yours: none"
        if not self.given:
            left = "yours: none given — this checks clawnb's reference"
        return f"{left} · clawnb's: {', '.join(theirs) if theirs else 'none'}"

    def __str__(self) -> str:
        lines = [f"running {len(self.results)} tests ({self.target})", self.whose()]
        for name in self.stubs:
            lines.append(f"stub {name} ... FAILED (still the exercise stub: write it first)")
        for r in self.results:
            mark = r.status
            if r.status == "ok" and self.given and not r.counted:
                mark = "ok (ran only clawnb's objects, not counted)"
            elif r.status == "skipped":
                mark = f"skipped ({r.detail})"
            lines.append(f"test {r.name} ... {mark}")
        failures = [r for r in self.results if r.status in ("FAILED", "TIMED OUT")]
        if failures:
            lines += ["", "failures:"]
            for first, same in _fold(failures):
                lines += ["", f"---- {first.name} ----", first.detail.rstrip()]
                if same:
                    names = ", ".join(r.name for r in same)
                    lines += ["", f"(the same failure in {len(same)} more: {names})"]
        if self.interrupted:
            lines += ["", "interrupted: the remaining tests did not run"]
        status = "ok" if self.ok else "FAILED"
        tail = f"{self.passed} passed; {self.failed} failed"
        if self.skipped:
            tail += f"; {self.skipped} skipped"
        if self.not_counted:
            tail += f"; {self.not_counted} not counted (used none of your objects)"
        if self.given and self.passed == 0 and self.failed == 0:
            tail += " — no test ran any of your objects"
        lines += ["", f"test result: {status}. {tail}"]
        return "\n".join(lines)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


def _fold(failures: list[TestResult]) -> list[tuple[TestResult, list[TestResult]]]:
    """Failures grouped by their report: one mistake behind a shared helper (a sync ``call``
    every test awaits) reads as one failure and a count, not a wall of copies."""
    groups: dict[str, tuple[TestResult, list[TestResult]]] = {}
    for result in failures:
        # What each test wanted differs; the failure is the same when the rest is.
        rest = [line for line in result.detail.splitlines() if not line.startswith("expected: ")]
        key = result.status + "\0" + "\n".join(rest)
        if key in groups:
            groups[key][1].append(result)
        else:
            groups[key] = (result, [])
    return list(groups.values())


def _suite_frame(tb: Any) -> traceback.FrameSummary | None:
    """The innermost frame that is inside a suite module (the line of the test that failed)."""
    from ._explain import is_suite_module

    found = None
    for frame, _ in traceback.walk_tb(tb):
        if is_suite_module(frame.f_globals.get("__name__", "")):
            found = frame
    if found is None:
        return None
    return traceback.FrameSummary(
        found.f_code.co_filename, _lineno(tb, found), found.f_code.co_name
    )


def _lineno(tb: Any, frame: Any) -> int:
    for f, lineno in traceback.walk_tb(tb):
        if f is frame:
            return lineno
    return frame.f_lineno


def _test_lines(where: traceback.FrameSummary, before: int = 3) -> list[str]:
    try:
        source = Path(where.filename).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    lineno = where.lineno or 0
    # Stay inside the test function: stop going up at its ``def`` line.
    start = lineno - 1
    while (
        start > 0
        and lineno - start <= before
        and not source[start].lstrip().startswith(("def ", "async def "))
    ):
        start -= 1
    if source[start].lstrip().startswith(("def ", "async def ", "@")):
        start += 1
    end = lineno
    # An assert can span lines; show it to its end (the next line that is less indented).
    while end < len(source) and source[end].startswith(" " * 8):
        end += 1
    out = []
    for i in range(start, end):
        mark = "->" if i == lineno - 1 else "  "
        out.append(f"  {mark} {i + 1:4} | {source[i]}")
    return out


def _failure_detail(exc: BaseException, target: str, used: dict[str, bool], fn: TestFn) -> str:
    from ._failure import expected_of, origin

    lines: list[str] = []
    tb = exc.__traceback__
    if isinstance(exc, TestTimeout) and exc.where is not None:
        tb = exc.where.__traceback__  # where the test was when it was stopped
    where = _suite_frame(tb)
    test_file = where.filename if where is not None else None
    if isinstance(exc, TestTimeout):
        lines.append(str(exc))
        running = origin(tb, test_file) if exc.where is not None else None
        if running:
            lines.append(f"it was running {running}")
    elif isinstance(exc, Mismatch):
        lines += exc.explain()
    elif isinstance(exc, AssertionError):
        lines.append(f"assertion failed: {exc}" if str(exc) else "assertion failed")
    else:
        # An exception instead of a comparison: still say what the test's line wanted.
        raised = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        expected = expected_of(fn, tb)
        early = expected == "an error"  # raises() catches what awaiting raises: not this
        if early:
            raised += " — raised when the call was made, before the test could await it"
        lines += [f"expected: {expected}", f"  actual: {raised}"]
        came_from = origin(tb, test_file)
        if came_from:
            lines.append(f"raised at {came_from}")
        if early or (
            isinstance(exc, TypeError) and "can't be used in 'await' expression" in str(exc)
        ):
            lines.append("hint: the test awaits this call — define it with async def")
    if where is not None:
        lines += ["", f"in the test ({Path(where.filename).name}, line {where.lineno}):"]
        lines += _test_lines(where)
    pointer = taught_at(_chapters_of(target), _under_test(used, tb, fn))
    if pointer:
        lines += ["", f"the rule: {pointer}"]
    return "\n".join(lines)


def _words(name: str) -> set[str]:
    """``StreamingAgent`` -> {streaming, agent}; ``parse_sse_line`` -> {parse, sse, line}."""
    return {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)}


def _under_test(used: dict[str, bool], tb: Any, fn: TestFn) -> list[str]:
    """The learner's objects a test used, the one it tests first: the one whose code raised;
    else the one the test's name speaks of (``test_streaming_parse_done``: parse_sse_line),
    one the suite is named for (the gate suite's ``gate``, not the engine it needs), and the
    last one the test reached for (a test builds what the component needs, then it)."""
    from ._failure import is_yours

    mine = [n for n, yours in used.items() if yours] or list(used)
    module = sys.modules.get(getattr(fn, "__module__", ""))
    suite = getattr(module, "suite", None)
    name = fn.__name__.removeprefix("test_")
    title = set()
    if isinstance(suite, Suite):
        name = name.removeprefix(suite.name + "_")
        title = set(re.findall(r"\w+", suite.title))
    spoken = _words(name)
    raiser = ""
    for frame, _ in traceback.walk_tb(tb):
        if is_yours(frame.f_code.co_filename):
            raiser = getattr(frame.f_code, "co_qualname", frame.f_code.co_name).split(".")[0]
    ranked = sorted(
        range(len(mine)),
        key=lambda i: (
            mine[i] != raiser,
            -len(_words(mine[i]) & spoken),
            mine[i] not in title,
            -i,  # the last reached for first
        ),
    )
    return [mine[i] for i in ranked]


def _chapters_of(target: str) -> list[str]:
    chapters = [target] if target.startswith("ch") or target == "extras" else []
    for one in _resolve(target):
        chapters += [c for c in one.chapters if c not in chapters]
    return chapters


# ----------------------------------------------------------------------------- stubs


def _only_raises_not_implemented(fn: Any) -> bool:
    try:
        source = inspect.getsource(fn)
    except (OSError, TypeError):
        return False
    try:
        tree = ast.parse(inspect.cleandoc("\n" + source) if source[:1].isspace() else source)
    except SyntaxError:
        return False
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not defs:
        return False
    body = defs[0].body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # a docstring
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc
    name = exc.func if isinstance(exc, ast.Call) else exc
    return isinstance(name, ast.Name) and name.id == "NotImplementedError"


def is_stub(obj: Any) -> bool:
    """True for an exercise stub left as it was: a function whose body only raises
    ``NotImplementedError``, or a class whose own methods all do, or whose public values are
    all ``None`` placeholders (``Allow = Deny = Ask = None``)."""
    if inspect.isfunction(obj):
        return _only_raises_not_implemented(obj)
    if not inspect.isclass(obj) or obj.__module__.startswith("clawnb"):
        return False
    own = vars(obj)
    methods = [
        v.__func__ if isinstance(v, (classmethod, staticmethod)) else v for v in own.values()
    ]
    methods = [m for m in methods if inspect.isfunction(m)]
    values = [v for k, v in own.items() if not k.startswith("_") and not callable(v)]
    if values and all(v is None for v in values) and not methods:
        return True
    return bool(methods) and all(_only_raises_not_implemented(m) for m in methods)


# ----------------------------------------------------------------------------- check()


def _check_names(target: str, suites: list[Suite], given: dict[str, Any]) -> None:
    known = sorted(set().union(*(used_names(s.name) for s in suites)))
    for name in given:
        if name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise TypeError(
            f"check({target!r}) has no use for {name!r}: no test of {target} would run it.{hint}"
            f" It checks: {', '.join(known)}"
        )


def check(
    target: str, *, verbose: bool = True, timeout: float = DEFAULT_TIMEOUT, **impl: Any
) -> CheckReport:
    """Run chapter ``target`` (``"ch01"``) or suite (``"mock"``) against ``impl`` overrides.

    Every test has ``timeout`` seconds; the kernel's interrupt stops the run within a second.
    Names the chapter never uses are refused (with a did-you-mean), so a typo cannot leave
    clawnb's object silently in place of yours. Prints a cargo-like report (unless
    ``verbose=False``) and returns it.
    """
    suites = _resolve(target)
    _check_names(target, suites, impl)
    stubs = sorted(name for name, obj in impl.items() if is_stub(obj))
    results: list[TestResult] = []
    seen: set[str] = set()
    report = CheckReport(target, results, tuple(impl), stubs)
    try:
        for suite in suites:
            for name, fn in suite.tests.items():
                if name in seen:
                    continue
                seen.add(name)
                limit = max(timeout, suite.limits.get(name, 0.0))
                results.append(_run_one(target, name, fn, Impl(**impl), limit))
    except KeyboardInterrupt:
        report.interrupted = True
        if verbose:
            print(report)
        raise CheckInterrupted(f"check({target!r}) stopped; the kernel is ready") from None
    _last[target] = report
    if impl:
        for observe in AFTER_CHECK:
            observe(report)
    if verbose:
        print(report)
    return report


def _run_one(target: str, name: str, fn: TestFn, namespace: Impl, timeout: float) -> TestResult:
    with tempfile.TemporaryDirectory(prefix="clawnb-check-") as tmp:
        status, detail = "ok", ""
        try:
            run_test(fn, namespace, Path(tmp), timeout)
        except Skipped as exc:
            status, detail = "skipped", str(exc)
        except TestTimeout as exc:
            status, detail = "TIMED OUT", _failure_detail(exc, target, namespace._used, fn)
        except Exception as exc:  # report every failure, keep going
            status, detail = "FAILED", _failure_detail(exc, target, namespace._used, fn)
    used = namespace._used
    return TestResult(
        name,
        status,
        detail,
        tuple(sorted(n for n, y in used.items() if y)),
        tuple(sorted(n for n, y in used.items() if not y)),
    )
