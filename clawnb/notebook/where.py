"""Which notebook a ``%%claw`` cell is running in, as far as the front end tells the kernel.

* **JupyterLab / Notebook 7 / jupyter_server**: a kernel started for a notebook gets
  ``JPY_SESSION_NAME`` in its environment, the notebook's absolute path (jupyter_server 2.x:
  the kernel's working directory joined with the notebook's name).
* **VS Code**: the Jupyter extension puts ``__vsc_ipynb_file__`` in the user namespace.

What the kernel cannot know: a notebook renamed or moved after its kernel started keeps the
old name in ``JPY_SESSION_NAME`` (the variable is set once, at kernel start), and the file on
disk is the last *saved* version — edits the person has not saved yet are only in the
browser. Nothing here guesses beyond that: no candidate, no notebook line in the prompt.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["current_notebook", "notebook_context"]


def current_notebook(shell: Any = None) -> Path | None:
    """The notebook file the kernel serves, if the front end said so and it exists."""
    candidates: list[str] = []
    user_ns = getattr(shell, "user_ns", None)
    if isinstance(user_ns, dict):
        vsc = user_ns.get("__vsc_ipynb_file__")
        if isinstance(vsc, str):
            candidates.append(vsc)
    env = os.environ.get("JPY_SESSION_NAME")
    if env:
        candidates.append(env)
    for raw in candidates:
        path = Path(os.path.expanduser(raw))
        if not path.is_absolute():
            path = Path.cwd() / path
        if path.suffix.lower() == ".ipynb" and path.is_file():
            return path
    return None


def notebook_context(shell: Any, workspace: str | os.PathLike[str]) -> str:
    """The line the system prompt gets about the notebook the conversation lives in ("" when
    the kernel was not told)."""
    path = current_notebook(shell)
    if path is None:
        return ""
    try:
        shown = os.path.relpath(path, workspace)
    except ValueError:  # another drive (Windows)
        shown = str(path)
    if shown.startswith(".."):
        shown = str(path)
    return (
        f"The user's %%claw cells run in the notebook {shown}. notebook_read shows its last "
        "saved version on disk (unsaved changes in the browser are not visible; ask the user "
        "to save if it matters). To change one of its cells use notebook_edit; to give the "
        "user code to keep as a new cell below the current one, use propose_cell."
    )
