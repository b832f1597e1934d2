"""Shared fixtures for the notebook layer: an IPython shell with the extension loaded, a fresh
session and workspace per test, and scripted-model files."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

FAKE_KEY = "sk-or-v1-" + "f4k3" * 12  # shaped like an OpenRouter key; never a real one


@pytest.fixture(scope="session", autouse=True)
def _close_ipython_loop():
    """The test shell runs cells on IPython's own asyncio loop, which IPython creates once and
    never closes: close it (and what still runs on it) when the tests are done, instead of
    leaving its sockets to a ResourceWarning at interpreter exit."""
    yield
    helpers = sys.modules.get("IPython.core.async_helpers")
    loop = getattr(helpers, "_asyncio_event_loop", None)
    if loop is not None and not loop.is_closed() and not loop.is_running():
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The global IPython test shell, extension loaded, cwd = a fresh workspace."""
    from IPython.testing.globalipapp import get_ipython

    ip = get_ipython()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CLAWNB_APPROVAL", raising=False)
    for name in ("CLAWNB_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY", "CLAWNB_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    ip.run_line_magic("load_ext", "clawnb")
    if hasattr(ip, "_clawnb_session"):
        del ip._clawnb_session
    yield ip
    if hasattr(ip, "_clawnb_session"):
        del ip._clawnb_session
    os.chdir(tmp_path)
