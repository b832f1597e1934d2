"""Run a notebook headless in a real kernel (nbclient) and print what happened.

``run_quickstart()`` executes ``notebooks/00_quickstart.ipynb`` on its offline scripted model,
with tool approvals answered by a policy (``CLAWNB_APPROVAL``, default ``allow`` here because
nobody is there to click), and prints a transcript: each cell's source and its outputs as
plain text. Command line::

    python -m clawnb.notebook.headless [NOTEBOOK] [--approval allow|deny] [--save OUT.ipynb]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from ..control.imports import load

__all__ = ["QUICKSTART", "execute_notebook", "main", "run_notebook", "run_quickstart", "transcript"]

QUICKSTART = Path(__file__).resolve().parents[2] / "notebooks" / "00_quickstart.ipynb"


def execute_notebook(
    path: str | os.PathLike[str],
    *,
    timeout: float = 120,
    kernel_name: str | None = None,
    allow_errors: bool = False,
    env: dict[str, str] | None = None,
    **options: Any,
) -> Any:
    """The notebook at ``path`` after running every cell in a fresh kernel, its folder as the
    working directory. ``env`` is added to the kernel's environment only (this process's stays
    as it is); ``options`` go to nbclient's ``NotebookClient``. Raises nbclient's
    ``CellExecutionError`` on a failing cell unless ``allow_errors``."""
    load("nbformat")  # the installed ones, never a module of the current folder
    load("nbclient")
    import nbformat
    from nbclient import NotebookClient

    nb_path = Path(path).resolve()
    nb = nbformat.read(nb_path, as_version=4)
    if kernel_name:
        options["kernel_name"] = kernel_name
    client = NotebookClient(
        nb,
        timeout=timeout,
        allow_errors=allow_errors,
        resources={"metadata": {"path": str(nb_path.parent)}},
        **options,
    )
    client.execute(**({"env": {**os.environ, **env}} if env else {}))
    return nb


def run_notebook(
    path: str | os.PathLike[str],
    *,
    approval: str = "allow",
    timeout: int = 120,
    kernel_name: str | None = None,
    save: str | os.PathLike[str] | None = None,
) -> Any:
    """Execute ``path`` in a fresh kernel (cwd = the notebook's folder), tool approvals
    answered by the ``approval`` policy, and return the executed notebook (also written to
    ``save``). Raises nbclient's ``CellExecutionError`` if a cell fails."""
    load("nbformat")
    import nbformat

    nb = execute_notebook(
        path,
        timeout=timeout,
        kernel_name=kernel_name,
        env={"CLAWNB_APPROVAL": approval, "PYTHONWARNINGS": "ignore"},
        coalesce_streams=True,
    )
    if save is not None:
        nbformat.write(nb, save)
    return nb


def _output_text(output: Any) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return output.get("text", "")
    if kind in ("display_data", "execute_result"):
        data = output.get("data", {})
        return data.get("text/plain", "") + "\n"
    if kind == "error":
        return f"{output.get('ename')}: {output.get('evalue')}\n"
    return ""


def transcript(nb: Any) -> str:
    """The executed notebook as text: sources prefixed ``In [n]:``, outputs below."""
    lines: list[str] = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            continue
        lines.append(
            f"In [{cell.get('execution_count') or ' '}]: " + cell.source.replace("\n", "\n    ")
        )
        for output in cell.get("outputs", []):
            text = _output_text(output).rstrip("\n")
            if text:
                lines.append(text)
        lines.append("")
    return "\n".join(lines)


def run_quickstart(approval: str = "allow", *, out: Any = None) -> Any:
    """Execute the quickstart notebook offline and print its transcript; return the notebook."""
    nb = run_notebook(QUICKSTART, approval=approval)
    print(transcript(nb), file=out or sys.stdout)
    return nb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m clawnb.notebook.headless")
    parser.add_argument("notebook", nargs="?", default=str(QUICKSTART))
    parser.add_argument("--approval", choices=("allow", "deny"), default="allow")
    parser.add_argument("--save", help="write the executed notebook here")
    parser.add_argument("--timeout", type=int, default=120)
    args = parser.parse_args(argv)
    nb = run_notebook(args.notebook, approval=args.approval, timeout=args.timeout, save=args.save)
    print(transcript(nb))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
