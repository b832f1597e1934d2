"""Book ``simple_agent_with_tools.rs`` (ch12) run against clawnb."""

from clawnb.course import pytest_functions

globals().update(pytest_functions("agent_tools"))
