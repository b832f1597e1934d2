"""Config layers add up: a deny rule, a protected pattern, a blocked command or a hook from
the project and one from the user file both apply, to real calls decided by the real gate of
a real session (config files in temporary folders, the sandbox off, ``bypass`` mode so that
nothing but the rule under test can stop a call). Only the user file may take something away,
by name — and ``/rules`` shows it."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawnb.config import Config, ConfigLoader
from clawnb.errors import ConfigError
from clawnb.gates import GatePipeline
from clawnb.permissions import Permission
from clawnb.session.assemble import build_agent
from clawnb.types import Message
from tests.conftest import call_turn, scripted_model


def _files(tmp: Path, project: str, user: str) -> tuple[Path, Path]:
    ws = tmp / "proj"
    (ws / ".claw").mkdir(parents=True, exist_ok=True)
    (ws / ".claw" / "config.toml").write_text(project)
    home = tmp / "xdg"
    (home / "clawnb").mkdir(parents=True, exist_ok=True)
    (home / "clawnb" / "config.toml").write_text(user + '\n[sandbox]\nmode = "off"\n')
    return ws, home


def _load(tmp: Path, project: str, user: str) -> tuple[Config, Path]:
    ws, home = _files(tmp, project, user)
    return ConfigLoader.load(project_dir=ws, config_home=home, env={}, trusted=True), ws


async def _run(config: Config, ws: Path, turns: list[dict]) -> dict[str, str]:
    """One prompt of a scripted session making ``turns``' calls; the results by call id."""
    model = scripted_model(ws.parent / "script.jsonl", [*turns, {"text": "done"}])
    session = build_agent(config, workspace=ws, model=model, mode="bypass")
    await session.send("go")
    return {m.id: m.content for m in session.history if isinstance(m, Message.ToolResult)}


def _bash(call_id: str, command: str) -> dict:
    return call_turn(call_id, "bash", command=command)


async def test_deny_rules_from_the_project_and_the_user_both_refuse(tmp_path):
    config, ws = _load(
        tmp_path,
        '[permissions]\ndeny = ["bash(touch from-project*)"]\n',
        '[permissions]\ndeny = ["bash(touch from-user*)"]\n',
    )
    results = await _run(
        config,
        ws,
        [
            _bash("p", "touch from-project.txt"),
            _bash("u", "touch from-user.txt"),
            _bash("ok", "touch neither.txt"),
        ],
    )
    assert not (ws / "from-project.txt").exists(), results["p"]
    assert not (ws / "from-user.txt").exists(), results["u"]
    assert (ws / "neither.txt").exists(), results["ok"]
    assert "touch from-project*" in results["p"] and "touch from-user*" in results["u"]


async def test_protected_patterns_from_the_project_and_the_user_both_protect(tmp_path):
    config, ws = _load(
        tmp_path,
        'protected_patterns = ["project-secret.txt"]\n',
        'protected_patterns = ["user-*"]\n',
    )
    results = await _run(
        config,
        ws,
        [
            call_turn("p", "write", path="project-secret.txt", content="x"),
            call_turn("u", "write", path="user-key.txt", content="x"),
            call_turn("d", "write", path=".env", content="x"),  # the built-in ones still hold
            call_turn("ok", "write", path="notes.txt", content="x"),
        ],
    )
    for name in ("project-secret.txt", "user-key.txt", ".env"):
        assert not (ws / name).exists(), name
    assert (ws / "notes.txt").read_text() == "x"
    assert "protected" in results["p"] and "protected" in results["u"]


async def test_blocked_commands_from_the_project_and_the_user_add_to_the_built_in_list(tmp_path):
    config, ws = _load(
        tmp_path,
        'blocked_commands = ["touch project-blocked*"]\n',
        'blocked_commands = ["touch user-blocked*"]\n',
    )
    results = await _run(
        config,
        ws,
        [
            _bash("p", "touch project-blocked"),
            _bash("u", "touch user-blocked"),
            _bash("b", "history -c"),  # one of the built-in list's patterns
            _bash("ok", "touch fine"),
        ],
    )
    assert not (ws / "project-blocked").exists() and not (ws / "user-blocked").exists()
    assert (ws / "fine").exists()
    assert "blocked command" in results["b"]


async def test_hooks_from_the_project_and_the_user_both_run(tmp_path):
    config, ws = _load(
        tmp_path,
        '[[hooks.pre_tool]]\ncommand = "echo project >> hook.log"\n',
        '[[hooks.pre_tool]]\ncommand = "echo user >> hook.log"\n',
    )
    (ws / "notes.txt").write_text("hello")
    await _run(config, ws, [call_turn("r", "read", path="notes.txt")])
    assert (ws / "hook.log").read_text().split() == ["project", "user"]


async def test_the_user_file_takes_back_a_project_deny_only_by_name_and_rules_shows_it(tmp_path):
    config, ws = _load(
        tmp_path,
        '[permissions]\ndeny = ["bash(touch taken-back*)", "bash(touch still-denied*)"]\n',
        '[permissions]\noverride_project_deny = ["bash(touch taken-back*)", "bash(typo*)"]\n'
        'deny = ["bash(rm *)"]\n',
    )
    model = scripted_model(
        tmp_path / "script.jsonl",
        [_bash("a", "touch taken-back"), _bash("b", "touch still-denied"), {"text": "done"}],
    )
    session = build_agent(config, workspace=ws, model=model, mode="bypass")
    await session.send("go")
    assert (ws / "taken-back").exists()
    assert not (ws / "still-denied").exists()
    shown = await session.command("/rules")
    assert shown is not None
    project_file = str(ws / ".claw" / "config.toml")
    user_file = str(tmp_path / "xdg" / "clawnb" / "config.toml")
    deny = shown.split("ask")[0]
    assert f"bash(touch still-denied*)  project {project_file}" in deny
    assert "bash(rm *)" in deny and f"user {user_file}" in deny
    overridden = shown.split("overridden (not in effect):")[1]
    assert f"deny bash(touch taken-back*) from project {project_file}" in overridden
    assert f"override_project_deny in user {user_file}" in overridden
    assert "'bash(typo*)'" in overridden and "matches no project-only deny rule" in overridden


def test_rules_lists_each_list_with_its_layer(tmp_path):
    from clawnb.session.reports import rules_text

    config, ws = _load(
        tmp_path,
        'protected_patterns = ["data/**"]\nblocked_commands = ["npm publish*"]\n'
        '[permissions]\nask = ["bash(git *)"]\n[[hooks.post_tool]]\ncommand = "echo p"\n',
        '[permissions]\nallow = ["bash(git status*)"]\n',
    )
    text = rules_text(config)
    project = f"project {ws / '.claw' / 'config.toml'}"
    assert f"data/**  {project}" in text
    assert ".env     built-in" in text
    assert f"npm publish*  {project}" in text
    assert f"{len(Config().blocked_commands)} patterns of the built-in recommended list" in text
    assert f"bash(git *)  {project}" in text
    assert "bash(git status*)  user " in text
    assert f"echo p  {project}" in text


@pytest.mark.parametrize(
    "text, key",
    [
        ("blocked_commands_replace = true\n", "blocked_commands_replace"),
        (
            '[permissions]\noverride_project_deny = ["bash(x)"]\n',
            "permissions.override_project_deny",
        ),
    ],
)
@pytest.mark.parametrize("trusted", [True, False])
def test_a_project_file_may_not_take_protections_away(tmp_path, text, key, trusted):
    ws, home = _files(tmp_path, text, "")
    with pytest.raises(ConfigError) as err:
        ConfigLoader.load(project_dir=ws, config_home=home, env={}, trusted=trusted)
    message = str(err.value)
    assert str(ws / ".claw" / "config.toml") in message and f"key '{key}'" in message
    assert "\n" not in message


async def test_blocked_commands_replace_in_the_user_file_drops_only_the_built_in_list(tmp_path):
    config, ws = _load(
        tmp_path,
        'blocked_commands = ["touch project-blocked*"]\n',
        'blocked_commands_replace = true\nblocked_commands = ["touch user-blocked*"]\n',
    )
    assert config.blocked_commands == ["touch project-blocked*", "touch user-blocked*"]
    results = await _run(
        config,
        ws,
        [
            _bash("b", "history -c && touch ran"),  # built in: no longer refused
            _bash("p", "touch project-blocked"),
            _bash("u", "touch user-blocked"),
        ],
    )
    assert (ws / "ran").exists(), results["b"]
    assert not (ws / "project-blocked").exists() and not (ws / "user-blocked").exists()
    from clawnb.session.reports import rules_text

    assert "blocked_commands_replace = true" in rules_text(config)


def test_ask_beats_allow_whatever_layer_each_comes_from(tmp_path):
    # the documented order: deny, then ask, then allow, across every layer
    config, ws = _load(
        tmp_path,
        '[permissions]\nask = ["bash(git push*)"]\nallow = ["bash(git status*)"]\n',
        '[permissions]\nallow = ["bash(git push origin*)", "bash(ls*)"]\n',
    )
    engine = GatePipeline.from_config(config, workspace=ws).permissions
    assert engine is not None
    assert engine.evaluate("bash", {"command": "git push origin main"}) is Permission.Ask
    assert engine.evaluate("bash", {"command": "git status"}) is Permission.Allow  # project's
    assert engine.evaluate("bash", {"command": "ls -l"}) is Permission.Allow  # user's


def test_without_any_file_the_gate_uses_the_recommended_blocklist(tmp_path):
    from clawnb.safety import RECOMMENDED_BLOCKED_COMMANDS, CommandFilter

    config = ConfigLoader.load(project_dir=tmp_path, config_home=tmp_path / "none", env={})
    gate = GatePipeline.from_config(config, workspace=tmp_path)
    (blocklist,) = [c for c in gate.checks if isinstance(c, CommandFilter)]
    assert blocklist.patterns == list(RECOMMENDED_BLOCKED_COMMANDS)
