"""The notebook's own hook events in %%claw cells (a real IPython shell, real shell commands):
pre_cell and post_cell around a cell, cell_error for a cell that fails, kernel_restart on the
first cell of a new kernel for a notebook an earlier kernel ran clawnb in."""

from __future__ import annotations

from pathlib import Path

from clawnb.hooks import kernel_restarted
from clawnb.session.log import sessions_root
from tests.conftest import write_script


def _user_hooks(tmp_path: Path, events: list[str]) -> None:
    folder = tmp_path / ".config" / "clawnb"
    folder.mkdir(parents=True, exist_ok=True)
    # $PWD: a file a user-config hook names is one of its scripts, kept read-only
    (folder / "config.toml").write_text(
        "".join(
            f'[[hooks.{event}]]\ncommand = "echo $EVENT: $MESSAGE$ERROR >> $PWD/hooks.log"\n'
            for event in events
        )
    )


def _lines(tmp_path: Path) -> list[str]:
    log = tmp_path / "hooks.log"
    return log.read_text().splitlines() if log.exists() else []


def test_pre_cell_and_post_cell_fire_once_per_cell(shell, tmp_path: Path) -> None:
    _user_hooks(tmp_path, ["pre_cell", "post_cell", "cell_error", "turn_end"])
    write_script(tmp_path / "s.jsonl", [{"text": "one"}, {"text": "two"}])
    assert shell.run_cell("%%claw --model scripted:s.jsonl\nfirst").success
    assert shell.run_cell("%%claw\nsecond").success
    assert _lines(tmp_path) == [
        "pre_cell: first",
        "turn_end: one",
        "post_cell: one",
        "pre_cell: second",
        "turn_end: two",
        "post_cell: two",
    ]


def test_a_failing_cell_fires_cell_error_not_post_cell(shell, tmp_path: Path) -> None:
    _user_hooks(tmp_path, ["post_cell", "cell_error"])
    write_script(tmp_path / "s.jsonl", [{"text": "the only answer"}])
    assert shell.run_cell("%%claw --model scripted:s.jsonl\nfirst").success
    assert not shell.run_cell("%%claw\nsecond").success  # the script has run out
    lines = _lines(tmp_path)
    assert lines[0] == "post_cell: the only answer"
    assert len(lines) == 2 and lines[1].startswith("cell_error: second")


def test_kernel_restart_fires_on_the_first_cell_of_a_new_kernel(shell, tmp_path: Path) -> None:
    _user_hooks(tmp_path, ["kernel_restart", "pre_cell"])
    write_script(tmp_path / "s.jsonl", [{"text": "a"}, {"text": "b"}])
    shell.user_ns["__session__"] = str(tmp_path / "analysis.ipynb")
    try:
        # an earlier kernel (another process) ran clawnb for this notebook
        store = sessions_root(tmp_path)
        assert kernel_restarted(store, str(tmp_path / "analysis.ipynb"), pid=1) is False
        assert shell.run_cell("%%claw --model scripted:s.jsonl\nfirst").success
        assert shell.run_cell("%%claw\nsecond").success
    finally:
        del shell.user_ns["__session__"]
    assert _lines(tmp_path) == [
        f"kernel_restart: {tmp_path / 'analysis.ipynb'}",
        "pre_cell: first",
        "pre_cell: second",
    ]


def test_a_notebook_first_run_in_a_kernel_is_no_restart(tmp_path: Path) -> None:
    assert kernel_restarted(tmp_path, "nb.ipynb", pid=100) is False  # never seen
    assert kernel_restarted(tmp_path, "nb.ipynb", pid=100) is False  # the same kernel
    assert kernel_restarted(tmp_path, "other.ipynb", pid=100) is False
    assert kernel_restarted(tmp_path, "nb.ipynb", pid=101) is True  # a new kernel
    (tmp_path / "kernels.json").write_text("not json")
    assert kernel_restarted(tmp_path, "nb.ipynb", pid=102) is False  # a broken record: unknown


def test_percent_claw_hooks_lists_the_hooks_their_layer_and_last_runs(
    shell, tmp_path: Path, capsys
) -> None:
    _user_hooks(tmp_path, ["pre_cell"])
    write_script(tmp_path / "s.jsonl", [{"text": "a"}])
    assert shell.run_cell("%%claw --model scripted:s.jsonl\nfirst").success
    capsys.readouterr()
    shell.run_line_magic("claw", "hooks")
    out = capsys.readouterr().out
    config = tmp_path / ".config" / "clawnb" / "config.toml"
    assert "1. pre_cell: command 'echo $EVENT: $MESSAGE$ERROR >> $PWD/hooks.log'" in out
    assert f"— user {config}" in out
    assert "pre_cell: exit 0" in out
