"""clawnb.trust: the control-file predicate."""

from __future__ import annotations

import os

from clawnb.trust import command_mentions_control_file, control_paths, is_control_file


def test_control_files_are_recognised_in_every_spelling(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".claw").mkdir(parents=True)
    home = tmp_path / "cfg"
    for path in (
        ".claw/config.toml",
        "./.claw/hooks/x.sh",
        "sub/.claw/config.toml",
        "CLAUDE.md",
        "docs/AGENTS.md",
        "claude.md",
        ".claw/instructions.md",
        str(ws / ".claw" / "config.toml"),
        "src/../.claw/config.toml",
        str(home / "clawnb" / "config.toml"),
        str(home / "clawnb" / "trust.json"),
    ):
        assert is_control_file(path, ws, config_home=home), path


def test_ordinary_files_are_not_control_files(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    for path in ("src/app.py", "README.md", "claw/config.toml", ".clawrc", "notes/CLAUDE.md.bak"):
        assert not is_control_file(path, ws, config_home=tmp_path / "cfg"), path


def test_a_symlink_to_a_control_file_is_a_control_file(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".claw").mkdir(parents=True)
    (ws / ".claw" / "config.toml").write_text("")
    os.symlink(ws / ".claw" / "config.toml", ws / "notes.md")
    assert is_control_file("notes.md", ws, config_home=tmp_path / "cfg")


def test_control_paths_lists_what_a_sandbox_mounts_read_only(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".claw").mkdir(parents=True)
    (ws / "CLAUDE.md").write_text("x")
    home = tmp_path / "cfg"
    assert control_paths(ws, config_home=home) == [ws / ".claw", ws / "CLAUDE.md"]
    everything = control_paths(ws, config_home=home, existing_only=False)
    assert home / "clawnb" in everything and ws / "AGENTS.md" in everything


def test_commands_naming_control_files_are_flagged(tmp_path):
    home = tmp_path / "cfg"
    for cmd in (
        "echo x > .claw/config.toml",
        "cat ./.claw/config.toml",
        "sed -i s/a/b/ CLAUDE.md",
        "cp evil AGENTS.md",
        "rm -rf ~/.config/clawnb",
        f"echo > {home}/clawnb/x",
        'printf "%s" > "$XDG_CONFIG_HOME/clawnb/config.toml"',
        "cd .claw && ls",
    ):
        assert command_mentions_control_file(cmd, config_home=home), cmd
    for cmd in ("ls -la", "git status", "python app.py", "cat claw.txt", "echo .clawrc"):
        assert not command_mentions_control_file(cmd, config_home=home), cmd
