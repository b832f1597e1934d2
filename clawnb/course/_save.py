"""Re-execute a solution notebook and save it with its outputs, as GitHub and nbval see it.

The "see it run" views display a live widget next to their static table; a saved notebook
keeps only the table: the widget's view key points at a model that exists only while the
kernel runs (GitHub and a reopened notebook could not draw it), and its state would bloat the
file with random ids (ARCHITECTURE §4.9)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def strip_widgets(nb: dict) -> int:
    """Drop widget views from outputs and saved widget state; returns how many views went."""
    dropped = 0
    for cell in nb.get("cells", []):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET_VIEW in data:
                del data[WIDGET_VIEW]
                dropped += 1
    nb.get("metadata", {}).pop("widgets", None)
    return dropped


def execute_notebook(
    path: Path,
    *,
    timeout: float = 120,
    allow_errors: bool = False,
    env: dict[str, str] | None = None,
) -> Any:
    """The notebook at ``path`` after running every cell in a fresh python3 kernel, its folder
    as the working directory (the notebook layer's runner, with the course's settings: no
    widget state kept). ``env`` is added to the kernel's environment only. Raises on a
    failing cell unless ``allow_errors``."""
    from ..notebook.headless import execute_notebook as execute

    return execute(
        path,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=allow_errors,
        env=env,
        store_widget_state=False,
    )


def save_outputs(path: Path, timeout: int = 120) -> int:
    """Run ``path`` in a fresh kernel (its folder as the working directory) and write it back
    with its outputs, widgets stripped. Raises on a failing cell; the file is then untouched."""
    import nbformat

    nb = execute_notebook(path, timeout=timeout)
    dropped = strip_widgets(nb)
    # write beside it, then rename: an interrupted save never leaves half a notebook
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".ipynb.tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        nbformat.write(nb, handle)
    os.replace(tmp, path)
    return dropped
