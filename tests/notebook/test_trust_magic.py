"""%claw trust: the notebook's way to trust the workspace's project config (issue 10 item 4)."""

from __future__ import annotations

from pathlib import Path

from clawnb.config import ConfigLoader


def test_claw_trust_lets_the_project_config_widen_and_revoke_undoes_it(
    shell, tmp_path: Path, capsys
):
    (tmp_path / ".claw").mkdir()
    (tmp_path / ".claw" / "config.toml").write_text('[permissions]\nmode = "accept_edits"\n')
    assert ConfigLoader.load(project_dir=tmp_path).permissions.mode == "default"
    shell.run_line_magic("claw", "trust")
    assert "trusted:" in capsys.readouterr().out
    assert ConfigLoader.load(project_dir=tmp_path).permissions.mode == "accept_edits"
    shell.run_line_magic("claw", "trust --revoke")
    assert "no longer trusted" in capsys.readouterr().out
    assert ConfigLoader.load(project_dir=tmp_path).permissions.mode == "default"
