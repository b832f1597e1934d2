"""Book ``single_turn.rs`` run against clawnb."""

from clawnb.course import pytest_functions

globals().update(pytest_functions("single_turn"))
