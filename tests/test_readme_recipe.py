"""The README's install and run lines work verbatim on a fresh machine.

The lines are read from README.md itself (its fenced ``bash`` blocks under "Quick start" and
"In Jupyter"), never copied here, and run in a copy of this checkout with a fresh
``python -m venv`` and a real ``pip install`` from PyPI — a full install of the ``notebook``
extra, not ``--system-site-packages`` over the dev environment: the dev environment has
JupyterLab through the ``e2e`` extra, so an install that reused it would not see the notebook
extra miss it (the failure this test was written for, issue 26). pip's cache is kept under the
user's cache folder, so later runs take about a minute; the first takes about three.

Two substitutions, both forced: ``jupyter lab NOTEBOOK`` would start a server that never
returns, so the README's command runs with ``--version`` instead of the notebook; and the
main command (``python -m clawnb demo --notebook``) runs with no key and every proxy pointed at
a closed port, so it can only pass offline.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

README = ROOT / "README.md"


def _section_commands(title: str) -> list[str]:
    """The command lines of the ``bash`` blocks in the README section ``## title``."""
    text = README.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", text, re.S | re.M)
    assert match, f"README.md has no section '## {title}'"
    lines: list[str] = []
    for block in re.findall(r"^```bash\n(.*?)^```", match.group(1), re.S | re.M):
        lines += [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    assert lines, f"README.md's '{title}' section has no bash block"
    return lines


def test_readme_names_its_lines() -> None:
    # the parse itself: what the slow test below runs
    quick = _section_commands("Quick start (fresh machine)")
    assert any("clawnb demo --notebook" in line for line in quick)
    jupyter = _section_commands("In Jupyter")
    assert any(line.startswith("pip install") and "[notebook]" in line for line in jupyter)
    assert any(line.startswith("jupyter lab") for line in jupyter)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _checkout_copy(dest: Path) -> None:
    """The files git would ship (tracked and new, not ignored), as the working tree has them."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for raw in listed:
        if not raw:
            continue
        source = ROOT / raw.decode()
        if source.is_file():
            target = dest / raw.decode()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def _run(line: str, cwd: Path, env: dict[str, str], timeout: float) -> str:
    proc = subprocess.run(
        ["bash", "-c", line],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"README line failed ({proc.returncode}): {line}\n{out[-3000:]}"
    return out


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git to list the checkout")
def test_readme_recipe_installs_and_runs_on_a_fresh_venv(tmp_path: Path) -> None:
    if os.environ.get("CLAWNB_OFFLINE_TESTS"):
        pytest.skip("CLAWNB_OFFLINE_TESTS: this test installs from PyPI")
    checkout = tmp_path / "clawnb"
    _checkout_copy(checkout)
    python_dir = str(Path(sys.base_prefix) / "bin")  # a python3 that is not the dev venv's
    base_env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
        and not k.startswith("CLAWNB_")
        and k not in ("OPENROUTER_API_KEY", "OPENAI_API_KEY")
    }
    base_env["PATH"] = os.pathsep.join([python_dir, "/usr/local/bin", "/usr/bin", "/bin"])
    base_env["HOME"] = str(tmp_path / "home")
    base_env["PIP_CACHE_DIR"] = str(Path.home() / ".cache" / "clawnb-readme-pip")
    base_env["PIP_PROGRESS_BAR"] = "off"
    dead = f"http://127.0.0.1:{_closed_port()}"
    offline = {**base_env, "HTTP_PROXY": dead, "HTTPS_PROXY": dead, "ALL_PROXY": dead}
    offline.pop("NO_PROXY", None)
    offline.pop("no_proxy", None)

    # Quick start: `python3 -m venv .venv && .venv/bin/pip install … && .venv/bin/python -m
    # clawnb demo --notebook`: the install steps with the network, the main command without.
    (quick,) = [line for line in _section_commands("Quick start (fresh machine)") if "demo" in line]
    steps = [step.strip() for step in quick.split("&&")]
    main_command = steps.pop()
    assert "clawnb demo" in main_command
    for step in steps:
        _run(step, checkout, base_env, timeout=420)
    demo = _run(main_command, checkout, offline, timeout=180)
    assert "claw" in demo.lower(), demo[-2000:]

    # In Jupyter: the same lines, in a shell where the new venv is the active one
    venv_env = {**base_env, "VIRTUAL_ENV": str(checkout / ".venv")}
    venv_env["PATH"] = str(checkout / ".venv" / "bin") + os.pathsep + base_env["PATH"]
    ran_lab = False
    for line in _section_commands("In Jupyter"):
        words = shlex.split(line)
        if words[:2] == ["jupyter", "lab"]:
            out = _run("jupyter lab --version", checkout, venv_env, timeout=120)
            assert re.search(r"^\d+\.\d+", out.strip()), out
            ran_lab = True
        else:
            _run(line, checkout, venv_env, timeout=420)
    assert ran_lab
    assert (checkout / ".venv" / "bin" / "jupyter-lab").exists()
