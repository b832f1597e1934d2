"""``%claw rules`` in a real IPython shell: the rules of the project file and of the user file
both listed, each with the file it came from, and a project deny rule the user file took back
shown as such (no key needed)."""

from __future__ import annotations

from pathlib import Path


def test_claw_rules_lists_each_rule_with_its_layer(shell, tmp_path: Path, capsys) -> None:
    project = tmp_path / ".claw" / "config.toml"
    project.parent.mkdir()
    project.write_text(
        'protected_patterns = ["data/raw/**"]\n'
        '[permissions]\ndeny = ["bash(git push*)", "bash(curl *)"]\n'
    )
    user = tmp_path / ".config" / "clawnb" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text(
        'blocked_commands = ["npm publish*"]\n'
        '[permissions]\ndeny = ["bash(rm *)"]\noverride_project_deny = ["bash(curl *)"]\n'
    )
    shell.run_line_magic("claw", "rules")
    out = capsys.readouterr().out
    assert f"bash(git push*)  project {project}" in out
    assert f"bash(rm *)       user {user}" in out
    assert f"data/raw/**  project {project}" in out
    assert f"npm publish*  user {user}" in out
    assert "of the built-in recommended list" in out
    assert f"deny bash(curl *) from project {project}: taken back by override_project_deny" in out
