"""Book ch11 contract tests (``search``) run against clawnb."""

from clawnb.course import pytest_functions

globals().update(pytest_functions("search"))
