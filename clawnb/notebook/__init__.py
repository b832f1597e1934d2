"""The Jupyter front end: ``%load_ext clawnb`` registers ``%%claw`` / ``%claw`` and the input
transformer that runs ``%%claw`` cells as top-level ``await`` (see :mod:`.magic`).

Loading is cheap: IPython is already imported in a kernel, and ipywidgets, httpx and the
engine's heavier modules load only when the first ``%%claw`` cell runs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["load_ipython_extension", "unload_ipython_extension"]


def _record_error(result: Any) -> None:
    # post_run_cell: remember each cell's error for Err[n] / Err references
    from .runner import get_session

    shell = getattr(_record_error, "shell", None)
    if shell is None:
        return
    error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
    if error is not None:
        get_session(shell).record_error(getattr(result, "execution_count", None), error)


def _note_cell(info: Any) -> None:
    # pre_run_cell: the number the running cell's prompt shows (In[n]). IPython has already
    # counted a cell that it stores in the history when this fires, so the count is one ahead
    shell = getattr(_record_error, "shell", None)
    if shell is None:
        return
    count = shell.execution_count
    shell._clawnb_cell = count - 1 if getattr(info, "store_history", False) else count


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics, the ``%%claw`` input transformer and the error recorder."""
    from ..control.imports import load

    # the notebook's folder is first on the kernel's sys.path: from here on clawnb's imports
    # go through the guard, which this puts in place (clawnb.control.imports)
    load("clawnb.notebook.magic")
    from .magic import ClawMagics, ClawTransformer, claw_completer

    if getattr(ipython, "_clawnb_loaded", False):
        return
    ipython.register_magics(ClawMagics)
    transformer = ClawTransformer(ipython)
    ipython.input_transformers_cleanup.append(transformer)
    _record_error.shell = ipython  # type: ignore[attr-defined]
    ipython.events.register("post_run_cell", _record_error)
    ipython.events.register("pre_run_cell", _note_cell)
    ipython._clawnb_transformer = transformer
    # Tab after "%claw " completes the registry's commands (IPython's complete_command hook)
    ipython.set_hook(
        "complete_command", lambda _ip, event: claw_completer(ipython, event), str_key="%claw"
    )
    ipython._clawnb_loaded = True
    _register_kernel_key(ipython)


def _register_kernel_key(ipython: Any) -> None:
    """The kernel's HMAC key signs every message to the kernel: whoever has it (and the
    ports) can run code in it. It is a secret like an API key, so a tool result that quotes
    it (a connection file read by bash, a traceback) is redacted."""
    from ..control.secrets import register_secret

    key = getattr(getattr(getattr(ipython, "kernel", None), "session", None), "key", None)
    if isinstance(key, bytes) and key:
        register_secret(key.decode("ascii", errors="replace"))


def unload_ipython_extension(ipython: Any) -> None:
    """Remove the transformer and the error recorder (magics stay, as IPython has no
    unregister; they keep working through the plain cell-magic path)."""
    transformer = getattr(ipython, "_clawnb_transformer", None)
    if transformer in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.remove(transformer)
    for event, callback in (("post_run_cell", _record_error), ("pre_run_cell", _note_cell)):
        try:
            ipython.events.unregister(event, callback)
        except ValueError:
            pass
    ipython._clawnb_loaded = False
