"""The "clawnb" kernel: installed as a kernelspec, every cell is a prompt, %%python is Python."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawnb.notebook.kernel import install, main, prompt_transformer
from tests.conftest import write_script

from .kernelclient import Kernel, kernel_env

pytestmark = pytest.mark.timeout(120)


def test_prompt_transformer_rules() -> None:
    assert prompt_transformer(["\n", "fix the bug\n"]) == ["%%claw\n", "fix the bug\n"]
    assert prompt_transformer(["%%python\n", "x = 1\n"]) == ["x = 1\n"]
    assert prompt_transformer(["%claw status\n"]) == ["%claw status\n"]
    assert prompt_transformer(["!ls\n"]) == ["!ls\n"]
    assert prompt_transformer(["\n"]) == ["\n"]


def test_install_writes_a_kernelspec(tmp_path: Path, capsys) -> None:
    assert main(["install", "--prefix", str(tmp_path)]) == 0
    spec = json.loads((tmp_path / "share/jupyter/kernels/clawnb/kernel.json").read_text())
    assert spec["argv"][1:3] == ["-m", "clawnb.notebook.kernel"]
    assert "clawnb" in capsys.readouterr().out


def test_every_cell_is_a_prompt_in_the_claw_kernel(tmp_path: Path) -> None:
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    install(prefix=tmp_path)
    write_script(tmp_path / "k.jsonl", [{"text": "hello from the claw kernel"}])
    env = kernel_env(tmp_path, JUPYTER_PATH=str(tmp_path / "share/jupyter"))
    ksm = KernelSpecManager(kernel_dirs=[str(tmp_path / "share/jupyter/kernels")])
    kernel = Kernel.__new__(Kernel)
    kernel.km = KernelManager(kernel_name="clawnb", kernel_spec_manager=ksm)
    kernel.km.start_kernel(cwd=str(tmp_path), env=env)
    kernel.kc = kernel.km.client()
    kernel.kc.start_channels()
    try:
        kernel.kc.wait_for_ready(timeout=60)
        assert kernel.execute("%claw model scripted:k.jsonl", allow_stdin=False).status == "ok"
        run = kernel.execute("say hello", allow_stdin=False)
        assert run.status == "ok" and "hello from the claw kernel" in run.text, run.text
        run = kernel.execute("%%python\nprint(6 * 7)", allow_stdin=False)
        assert run.text.strip() == "42"
    finally:
        kernel.close()
