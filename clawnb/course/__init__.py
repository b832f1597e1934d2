"""The course: the book's tests as chapter suites.

``check("ch01", MockProvider=MyMock)`` runs chapter 1's tests against your objects (anything
not given comes from clawnb) and prints a cargo-like report. pytest runs the very same suites
against clawnb itself.
"""

from ._suite import CheckReport, Impl, Suite, chapters, check, pytest_functions, suite_names

__all__ = ["CheckReport", "Impl", "Suite", "chapters", "check", "pytest_functions", "suite_names"]
