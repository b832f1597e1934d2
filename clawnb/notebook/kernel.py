"""The clawnb kernel: a Python kernel in which every cell is a prompt.

It is IPython's kernel with one extra input transformer in front of ``%%claw``'s: a cell is
sent to the agent as if it began with ``%%claw``, except

* a cell starting with ``%%python`` runs the rest as ordinary Python;
* a cell that is ``/COMMAND [ARGS]`` (``/status``, ``/mode plan``, ``/help``) runs that command
  from the one registry (:mod:`clawnb.session.commands`), as ``%claw COMMAND`` does;
* a cell starting with ``%`` or ``!`` (``%claw status``, ``%%claw --new``, ``!ls``) runs as
  IPython would;
* an empty cell does nothing.

Install the kernelspec with ``python -m clawnb kernel install [--user|--sys-prefix]`` (or
:func:`install`); then pick "clawnb" in JupyterLab's launcher.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..control.imports import load

__all__ = ["KERNEL_NAME", "install", "kernel_spec", "main", "prompt_transformer"]

KERNEL_NAME = "clawnb"
DISPLAY_NAME = "clawnb (agent)"


def prompt_transformer(lines: list[str]) -> list[str]:
    """Make a plain cell a ``%%claw`` prompt (see the module docstring)."""
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start == len(lines):
        return lines
    first = lines[start].lstrip()
    if first.startswith("%%python"):
        return lines[start + 1 :]
    if first.startswith(("%", "!")):
        return lines[start:]
    return ["%%claw\n", *lines[start:]]


def kernel_spec(python: str | None = None) -> dict[str, Any]:
    return {
        "argv": [
            python or sys.executable,
            "-m",
            "clawnb.notebook.kernel",
            "-f",
            "{connection_file}",
        ],
        "display_name": DISPLAY_NAME,
        "language": "python",
        "interrupt_mode": "signal",
        "metadata": {"debugger": False},
    }


def install(
    *, user: bool = False, sys_prefix: bool = False, prefix: str | os.PathLike[str] | None = None
) -> str:
    """Register the "clawnb" kernelspec; return the directory it was installed to."""
    load("jupyter_client.kernelspec")
    from jupyter_client.kernelspec import KernelSpecManager

    if sys_prefix:
        prefix = sys.prefix
    with tempfile.TemporaryDirectory() as tmp:
        spec_dir = Path(tmp) / KERNEL_NAME
        spec_dir.mkdir()
        (spec_dir / "kernel.json").write_text(json.dumps(kernel_spec(), indent=1))
        return KernelSpecManager().install_kernel_spec(
            str(spec_dir),
            KERNEL_NAME,
            user=user,
            prefix=str(prefix) if prefix is not None else None,
        )


def _make_kernel_class() -> type:
    load("ipykernel.ipkernel")
    from ipykernel.ipkernel import IPythonKernel

    class ClawKernel(IPythonKernel):
        implementation = "clawnb"
        implementation_version = "0.1"
        banner = "clawnb: every cell is a prompt; %%python runs Python"

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            from . import load_ipython_extension

            load_ipython_extension(self.shell)
            assert self.shell is not None  # ipykernel made it in super().__init__
            self.shell.input_transformers_cleanup.insert(0, prompt_transformer)
            # commands are typed "/status" here (a cell is a prompt or a /command)
            self.shell._clawnb_frontend = "kernel"

    return ClawKernel


def launch() -> None:
    """Start the kernel (what the kernelspec's argv runs)."""
    load("ipykernel.kernelapp")
    from ipykernel.kernelapp import IPKernelApp

    IPKernelApp.launch_instance(kernel_class=_make_kernel_class())


def main(argv: list[str] | None = None) -> int:
    """``kernel install [--user|--sys-prefix|--prefix DIR]``: the CLI's ``kernel`` command."""
    parser = argparse.ArgumentParser(prog="python -m clawnb kernel")
    sub = parser.add_subparsers(dest="command", required=True)
    inst = sub.add_parser("install", help="register the clawnb kernelspec")
    where = inst.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="install for the current user")
    where.add_argument("--sys-prefix", action="store_true", help="install into sys.prefix")
    where.add_argument("--prefix", help="install under this prefix")
    args = parser.parse_args(argv)
    path = install(user=args.user, sys_prefix=args.sys_prefix, prefix=args.prefix)
    print(f"installed kernelspec {KERNEL_NAME!r} in {path}")
    return 0


if __name__ == "__main__":
    # `python -m clawnb.notebook.kernel install …` installs; anything else (the kernelspec's
    # `-f {connection_file}`) starts the kernel
    if len(sys.argv) > 1 and sys.argv[1] == "install":
        raise SystemExit(main(sys.argv[1:]))
    launch()
