"""Book cost_tracker suite run against clawnb."""

from clawnb.course import pytest_functions

globals().update(pytest_functions("cost_tracker"))
