"""The course: the book's tests as chapter suites.

``check("ch01", MockProvider=MyMock)`` runs chapter 1's tests against your objects (anything
not given comes from clawnb) and prints a cargo-like report. pytest runs the very same suites
against clawnb itself.
"""

from ._explain import install as _install_assert_rewriting

# Before any suite module can be imported: their asserts are compiled to report both sides.
_install_assert_rewriting()

from ._export import export, parts  # noqa: E402
from ._hints import hint  # noqa: E402
from ._progress import progress  # noqa: E402
from ._suite import CheckReport, Impl, Skipped, Suite, chapters, check, suite_names  # noqa: E402

__all__ = [
    "CheckReport",
    "Impl",
    "Skipped",
    "Suite",
    "chapters",
    "check",
    "export",
    "hint",
    "parts",
    "progress",
    "suite_names",
]
