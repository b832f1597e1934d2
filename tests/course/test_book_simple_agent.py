"""Book ``simple_agent.rs`` run against clawnb."""

from clawnb.course import pytest_functions

globals().update(pytest_functions("simple_agent"))
