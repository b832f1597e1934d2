"""Book context_manager suite run against clawnb."""

from clawnb.course import pytest_functions

globals().update(pytest_functions("context_manager"))
