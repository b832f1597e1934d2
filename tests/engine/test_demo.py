"""``python -m clawnb demo``: the README's main job, offline."""

import subprocess
import sys


def run(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "clawnb", "demo", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )


def test_demo_runs_offline_and_really_uses_the_tools(tmp_path):
    result = run("--workspace", str(tmp_path))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "scripted" in out  # it says honestly that the model is replayed
    assert "needs approval: approved (demo policy)" in out
    assert "Hello, world!" in out and "Hello, Ada!" in out  # real bash output
    assert "print(greet(*sys.argv[1:2]))" in (tmp_path / "greet.py").read_text()


def test_demo_with_a_malformed_script_fails_clearly(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n{"text": \n')
    result = run("--script", str(bad), "--workspace", str(tmp_path / "ws"))
    assert result.returncode == 2
    assert "line 2 is not valid JSON" in result.stderr
    assert "Traceback" not in result.stderr


def test_demo_script_running_out_is_reported_not_a_traceback(tmp_path):
    short = tmp_path / "short.jsonl"
    short.write_text(
        '{"text": "Let me look.", "tool_calls": '
        '[{"id": "c1", "name": "bash", "arguments": {"command": "echo hi"}}]}\n'
    )
    result = run("--script", str(short), "--workspace", str(tmp_path / "ws"))
    assert result.returncode == 1
    assert "no more turns" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_demo_notebook_runs_the_quickstart_in_a_real_kernel():
    result = subprocess.run(
        [sys.executable, "-m", "clawnb", "demo", "--notebook"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "%%claw" in result.stdout
    assert "approved by policy" in result.stdout


def test_kernel_install_subcommand_writes_a_kernelspec(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "clawnb", "kernel", "install", "--prefix", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    specs = list(tmp_path.glob("share/jupyter/kernels/*/kernel.json"))
    assert len(specs) == 1 and "clawnb" in specs[0].read_text()
