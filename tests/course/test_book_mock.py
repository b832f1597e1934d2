"""Book ``mock.rs`` (ch1) run against clawnb."""

from clawnb.course import pytest_functions

globals().update(pytest_functions("mock"))
