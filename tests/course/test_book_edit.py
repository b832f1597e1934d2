"""Book ``edit.rs`` (ch9) run against clawnb."""

from clawnb.course import pytest_functions

globals().update(pytest_functions("edit"))
