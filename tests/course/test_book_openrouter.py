"""Book ``openrouter.rs`` (ch5b) run against clawnb."""

from clawnb.course import pytest_functions

globals().update(pytest_functions("openrouter"))
