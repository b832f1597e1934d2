"""Book ``bash.rs`` (ch10) run against clawnb."""

from clawnb.course import pytest_functions

globals().update(pytest_functions("bash"))
