"""Run a course notebook headless in a real python3 kernel (shared by the notebook and
capstone tests)."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def execute(
    path: Path, *, allow_errors: bool = False, timeout: int = 60, env: dict[str, str] | None = None
) -> nbformat.NotebookNode:
    """The notebook at ``path`` after running every cell, in its own folder; ``env`` is added
    to the kernel's environment (this process's stays as it is)."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=allow_errors,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute(**({"env": {**os.environ, **env}} if env else {}))
    return nb
