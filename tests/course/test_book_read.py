"""Book ``read.rs`` (ch2) run against clawnb."""

from clawnb.course import pytest_functions

globals().update(pytest_functions("read"))
