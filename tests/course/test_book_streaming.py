"""Book ``streaming.rs`` (ch5a/5b) run against clawnb."""

from clawnb.course import pytest_functions

globals().update(pytest_functions("streaming"))
