"""Book ``ask.rs`` (extra) run against clawnb."""

from clawnb.course import pytest_functions

globals().update(pytest_functions("ask"))
