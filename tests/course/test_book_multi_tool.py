"""Book ``multi_tool.rs`` (ch12) run against clawnb."""

from clawnb.course import pytest_functions

globals().update(pytest_functions("multi_tool"))
