"""The book's tests (every chapter suite in ``clawnb/course/``) run against clawnb itself,
under the book's names: ``pytest tests/course -k test_edit_``.

The same runner as a learner's ``check()`` runs them (own thread, own event loop, time limit),
so the path a notebook takes is the path CI takes.
"""

import pytest

from clawnb.course import Impl, Skipped
from clawnb.course._suite import load_suite, run_test, suite_names

CASES = [(suite, name) for suite in suite_names() for name in load_suite(suite).tests]


@pytest.mark.parametrize(("suite", "name"), CASES, ids=[name for _, name in CASES])
def test_book(suite, name, tmp_path):
    try:
        # A longer limit than a learner's 5 s: CI shares its cores; pytest-timeout backs it.
        run_test(load_suite(suite).tests[name], Impl(), tmp_path, timeout=30)
    except Skipped as exc:
        pytest.skip(str(exc))
