"""Run a notebook headless in a real kernel (nbclient) and print what happened.

``run_quickstart()`` executes ``notebooks/00_quickstart.ipynb`` on its offline scripted model,
with tool approvals answered by a policy (``CLAWNB_APPROVAL``, default ``allow`` here because
nobody is there to click), and prints a transcript: each cell's source and its outputs as
plain text. Command line::

    python -m clawnb.notebook.headless [NOTEBOOK] [--approval allow|deny] [--save OUT.ipynb]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["QUICKSTART", "main", "run_notebook", "run_quickstart", "transcript"]

QUICKSTART = Path(__file__).resolve().parents[2] / "notebooks" / "00_quickstart.ipynb"


@contextlib.contextmanager
def _env(**values: str | None) -> Iterator[None]:
    # the kernel inherits our environment; restore it afterwards
    saved = {k: os.environ.get(k) for k in values}
    try:
        _set_env(values)
        yield
    finally:
        _set_env(saved)


def _set_env(values: dict[str, str | None]) -> None:
    """Set each variable; ``None`` unsets it."""
    for k, v in values.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def run_notebook(
    path: str | os.PathLike[str],
    *,
    approval: str = "allow",
    timeout: int = 120,
    kernel_name: str | None = None,
    save: str | os.PathLike[str] | None = None,
) -> Any:
    """Execute ``path`` in a fresh kernel (cwd = the notebook's folder) and return the
    executed notebook. Raises nbclient's ``CellExecutionError`` if a cell fails."""
    import nbformat
    from nbclient import NotebookClient

    nb_path = Path(path).resolve()
    nb = nbformat.read(nb_path, as_version=4)
    options: dict[str, Any] = {"timeout": timeout, "allow_errors": False, "coalesce_streams": True}
    if kernel_name:
        options["kernel_name"] = kernel_name
    client = NotebookClient(nb, resources={"metadata": {"path": str(nb_path.parent)}}, **options)
    with _env(CLAWNB_APPROVAL=approval, PYTHONWARNINGS="ignore"):
        client.execute()
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
