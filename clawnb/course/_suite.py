"""Chapter suites: the book's tests, written once, run against any implementation.

A suite is a list of plain test functions ``test_x(impl, tmp)`` (sync or async). ``impl`` is
an :class:`Impl` namespace: ``impl.MockProvider`` is the learner's class when one was given to
:func:`check`, and clawnb's own otherwise. ``tmp`` is a fresh temporary directory
(:class:`pathlib.Path`).

pytest collects every suite against clawnb itself through :func:`pytest_functions`, under the
book's test names; a notebook calls ``clawnb.course.check("ch01", MockProvider=MyMock)`` and
gets a cargo-like report.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import inspect
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CheckReport", "Impl", "Suite", "check", "pytest_functions", "suite_names"]

TestFn = Callable[..., Any]


class Impl:
    """Implementation namespace: explicit overrides first, then clawnb's public names."""

    def __init__(self, **overrides: Any) -> None:
        self._overrides = overrides

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._overrides:
            return self._overrides[name]
        import clawnb

        try:
            return getattr(clawnb, name)
        except AttributeError:
            raise AttributeError(
                f"no implementation of {name!r} given or found in clawnb"
            ) from None


@dataclass
class Suite:
    """The tests of one book test file (``mock``, ``read``, …) and the chapters they check."""

    name: str
    title: str
    chapters: list[str] = field(default_factory=list)
    tests: dict[str, TestFn] = field(default_factory=dict)

    def test(self, fn: TestFn) -> TestFn:
        if not fn.__name__.startswith("test_"):
            raise ValueError(f"suite test {fn.__name__} must start with 'test_'")
        self.tests[fn.__name__] = fn
        return fn


def _discover() -> dict[str, Suite]:
    """Every module ``clawnb.course.<name>`` (not starting with ``_``) defines ``suite``."""
    import pkgutil

    import clawnb.course as package

    found: dict[str, Suite] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"clawnb.course.{info.name}")
        suite = getattr(module, "suite", None)
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
    import pkgutil

    import clawnb.course as package

    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.startswith("_") and info.name.partition("_")[2] == name:
            suite = getattr(importlib.import_module(f"clawnb.course.{info.name}"), "suite", None)
            if isinstance(suite, Suite) and suite.name == name:
                return suite
    suites = _discover()
    try:
        return suites[name]
    except KeyError:
        known = ", ".join(sorted(suites) + list(chapters()))
        raise KeyError(f"unknown chapter or suite {name!r}; known: {known}") from None


def _resolve(target: str) -> list[Suite]:
    table = chapters()
    if target in table:
        return [load_suite(n) for n in table[target]]
    return [load_suite(target)]


def run_test(fn: TestFn, impl: Impl, tmp: Path) -> None:
    """Run one suite test (sync or async). Async tests get their own event loop; inside a
    running loop (a notebook cell) they run on a worker thread."""
    if not inspect.iscoroutinefunction(fn):
        fn(impl, tmp)
        return
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(fn(impl, tmp))
        return
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, fn(impl, tmp)).result()


@dataclass
class CheckReport:
    """What :func:`check` found; prints like ``cargo test``."""

    target: str
    results: list[tuple[str, str | None]]  # (test name, failure text or None)

    @property
    def passed(self) -> int:
        return sum(1 for _, err in self.results if err is None)

    @property
    def failed(self) -> int:
        return len(self.results) - self.passed

    @property
    def ok(self) -> bool:
        return self.failed == 0

    def __str__(self) -> str:
        lines = [f"running {len(self.results)} tests ({self.target})"]
        for name, err in self.results:
            lines.append(f"test {name} ... {'ok' if err is None else 'FAILED'}")
        failures = [(n, e) for n, e in self.results if e is not None]
        if failures:
            lines += ["", "failures:"]
            for name, err in failures:
                lines += ["", f"---- {name} ----", err.rstrip()]
        status = "ok" if self.ok else "FAILED"
        lines += ["", f"test result: {status}. {self.passed} passed; {self.failed} failed"]
        return "\n".join(lines)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


def _failure_text(exc: BaseException) -> str:
    if isinstance(exc, AssertionError):
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" (line {frames[-1].lineno})" if frames else ""
        return f"assertion failed{where}: {exc}" if str(exc) else f"assertion failed{where}"
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()


def check(target: str, *, verbose: bool = True, **impl: Any) -> CheckReport:
    """Run chapter ``target`` (``"ch01"``) or suite (``"mock"``) against ``impl`` overrides.

    Prints a cargo-like report (unless ``verbose=False``) and returns it.
    """
    namespace = Impl(**impl)
    results: list[tuple[str, str | None]] = []
    seen: set[str] = set()
    for suite in _resolve(target):
        for name, fn in suite.tests.items():
            if name in seen:
                continue
            seen.add(name)
            with tempfile.TemporaryDirectory(prefix="clawnb-check-") as tmp:
                try:
                    run_test(fn, namespace, Path(tmp))
                    results.append((name, None))
                except Exception as exc:  # report every failure, keep going
                    results.append((name, _failure_text(exc)))
    report = CheckReport(target, results)
    if verbose:
        print(report)
    return report


def pytest_functions(suite_name: str) -> dict[str, Callable[[Path], None]]:
    """Module-level pytest tests for a suite, keeping the book's names::

    globals().update(pytest_functions("mock"))
    """
    suite = load_suite(suite_name)
    tests: dict[str, Callable[[Path], None]] = {}
    for name, fn in suite.tests.items():

        def wrapper(tmp_path: Path, _fn: TestFn = fn) -> None:
            run_test(_fn, Impl(), tmp_path)

        wrapper.__name__ = wrapper.__qualname__ = name
        wrapper.__doc__ = fn.__doc__
        tests[name] = wrapper
    return tests
