"""Book ``plan_agent.rs`` run against clawnb."""

from clawnb.course import pytest_functions

globals().update(pytest_functions("plan_agent"))
