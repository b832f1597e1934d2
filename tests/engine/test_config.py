"""Config layering: defaults ← project ← user ← environment, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawnb.config import Config, ConfigLoader, ConfigOverlay, user_config_path
from clawnb.errors import ConfigError


def _project(tmp: Path, text: str) -> Path:
    path = tmp / "proj" / ".claw" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return tmp / "proj"


def _user(tmp: Path, text: str) -> Path:
    path = tmp / "xdg" / "clawnb" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return tmp / "xdg"


def _load(tmp: Path, env: dict[str, str] | None = None) -> Config:
    return ConfigLoader.load(
        project_dir=tmp / "proj", config_home=tmp / "xdg", env=env or {}, trusted=True
    )


def test_no_files_gives_defaults(tmp_path):
    assert _load(tmp_path) == Config()


def test_layers_apply_in_order(tmp_path):
    _project(tmp_path, 'model = "project/model"\npreserve_recent = 3\nbase_url = "http://p"')
    _user(tmp_path, 'model = "user/model"')
    config = _load(tmp_path, {"CLAWNB_BASE_URL": "http://env"})
    assert config.model == "user/model"  # user beats project
    assert config.preserve_recent == 3  # project value kept where user is silent
    assert config.base_url == "http://env"  # environment beats both


def test_env_overrides_all_three_variables(tmp_path):
    _user(tmp_path, 'model = "user/model"\nmax_context_tokens = 5000')
    config = _load(
        tmp_path,
        {
            "CLAWNB_MODEL": "env/m",
            "CLAWNB_BASE_URL": "http://x/v1",
            "CLAWNB_MAX_CONTEXT_TOKENS": "777",
        },
    )
    assert (config.model, config.base_url, config.max_context_tokens) == (
        "env/m",
        "http://x/v1",
        777,
    )


def test_set_field_wins_even_when_equal_to_default(tmp_path):
    _project(tmp_path, 'model = "project/model"\nmax_context_tokens = 5000')
    # The user file re-asserts the defaults: they must win over the project's values.
    _user(tmp_path, 'model = "openrouter/free"\nmax_context_tokens = 100000')
    config = _load(tmp_path)
    assert config.model == "openrouter/free"
    assert config.max_context_tokens == 100_000


def test_an_empty_safety_list_in_a_later_layer_removes_nothing(tmp_path):
    # the safety lists add up: an empty list adds nothing (only blocked_commands_replace in
    # the user file drops the built-in blocklist, and the project's additions stay then)
    _project(tmp_path, 'blocked_commands = ["npm publish*"]')
    _user(tmp_path, "protected_patterns = []\nblocked_commands = []")
    config = _load(tmp_path)
    assert config.protected_patterns == Config().protected_patterns
    assert config.blocked_commands == [*Config().blocked_commands, "npm publish*"]


def test_unset_fields_leave_lower_layers_alone(tmp_path):
    _project(tmp_path, 'protected_patterns = ["secrets/**"]')
    _user(tmp_path, 'model = "u"')
    assert _load(tmp_path).protected_patterns == [*Config().protected_patterns, "secrets/**"]


def test_tables_merge_key_by_key(tmp_path):
    _project(
        tmp_path,
        '[permissions]\ndeny = ["bash(rm *)"]\n'
        '[[hooks.post_tool]]\ncommand = "echo post"\n'
        '[pricing."a/*"]\ninput = 1.0\noutput = 2.0\n',
    )
    _user(
        tmp_path,
        '[permissions]\nmode = "accept_edits"\n'
        '[[hooks.pre_tool]]\ncommand = "echo pre"\n'
        '[pricing."b"]\ninput = 3\noutput = 4\n',
    )
    config = _load(tmp_path)
    assert config.permissions.mode == "accept_edits"
    assert config.permissions.deny == ["bash(rm *)"]
    assert [h.command for h in config.hooks.pre_tool] == ["echo pre"]
    assert [h.command for h in config.hooks.post_tool] == ["echo post"]
    assert set(config.pricing) == {"a/*", "b"}


def test_safety_lists_never_come_from_the_environment(tmp_path):
    env = {
        "CLAWNB_BLOCKED_COMMANDS": "[]",
        "CLAWNB_PROTECTED_PATTERNS": "",
        "CLAWNB_PERMISSIONS": "bypass",
        "CLAWNB_MODEL": "env/m",
    }
    config = _load(tmp_path, env)
    assert config.model == "env/m"
    assert config.blocked_commands == Config().blocked_commands
    assert config.protected_patterns == Config().protected_patterns
    assert config.permissions.mode == "default"


def test_empty_env_values_are_unset(tmp_path):
    _user(tmp_path, 'model = "user/model"')
    assert _load(tmp_path, {"CLAWNB_MODEL": "  "}).model == "user/model"


@pytest.mark.parametrize("raw", ["abc", "0", "-5", "1.5"])
def test_bad_env_number_names_the_variable(tmp_path, raw):
    with pytest.raises(ConfigError, match=r"CLAWNB_MAX_CONTEXT_TOKENS.*positive integer"):
        _load(tmp_path, {"CLAWNB_MAX_CONTEXT_TOKENS": raw})


def test_invalid_toml_names_the_file(tmp_path):
    project = _project(tmp_path, "model = \n")
    with pytest.raises(ConfigError) as err:
        _load(tmp_path)
    message = str(err.value)
    assert str(project / ".claw" / "config.toml") in message
    assert "invalid TOML" in message


def test_wrong_type_names_file_key_and_problem(tmp_path):
    _user(tmp_path, 'max_context_tokens = "lots"')
    with pytest.raises(ConfigError) as err:
        _load(tmp_path)
    message = str(err.value)
    assert str(tmp_path / "xdg" / "clawnb" / "config.toml") in message
    assert "max_context_tokens" in message
    assert "integer" in message and "'lots'" in message


def test_nested_wrong_type_names_the_dotted_key(tmp_path):
    _project(tmp_path, "[[hooks.pre_tool]]\ncommand = 42\n")
    with pytest.raises(ConfigError, match=r"key 'hooks\.pre_tool\.0\.command'"):
        _load(tmp_path)


def test_unknown_key_is_reported(tmp_path):
    _project(tmp_path, 'modle = "typo"')
    with pytest.raises(ConfigError, match=r"key 'modle': unknown key"):
        _load(tmp_path)


def test_bad_values_are_rejected(tmp_path):
    with pytest.raises(ConfigError, match="max_context_tokens"):
        Config.from_toml("max_context_tokens = 0", "x.toml")
    with pytest.raises(ConfigError, match="permissions.mode"):
        Config.from_toml('[permissions]\nmode = "yolo"', "x.toml")


def test_load_path_missing_is_none_but_broken_is_an_error(tmp_path):
    assert ConfigLoader.load_path(tmp_path / "none.toml") is None
    bad = tmp_path / "bad.toml"
    bad.write_text("[[[")
    with pytest.raises(ConfigError, match="bad.toml"):
        ConfigLoader.load_path(bad)


def test_user_config_path_follows_xdg(tmp_path):
    assert user_config_path(env={"XDG_CONFIG_HOME": str(tmp_path)}) == (
        tmp_path / "clawnb" / "config.toml"
    )
    assert user_config_path(env={}).parts[-3:] == (".config", "clawnb", "config.toml")


def test_overlay_records_what_was_set():
    overlay = ConfigOverlay.from_toml('model = "openrouter/free"\nblocked_commands = []')
    assert overlay.model_fields_set == {"model", "blocked_commands"}


def test_pricing_lookup_exact_then_longest_glob():
    config = Config.from_toml(
        '[pricing."*"]\ninput = 9\noutput = 9\n'
        '[pricing."anthropic/*"]\ninput = 3\noutput = 15\n'
        '[pricing."anthropic/claude-haiku"]\ninput = 1\noutput = 5\n'
    )
    assert config.pricing_for("anthropic/claude-haiku").input == 1
    assert config.pricing_for("anthropic/claude-sonnet-4").input == 3
    assert config.pricing_for("other").input == 9
    assert Config().pricing_for("anything") is None


def test_docs_cover_every_key():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "config.md").read_text()
    for key in Config.model_fields:
        assert f"`{key}`" in doc, key


def test_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "proj" / ".claw" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_bytes(b'\xef\xbb\xbfmodel = "bom/model"\n')
    assert _load(tmp_path).model == "bom/model"


def test_non_utf8_file_is_a_clear_error(tmp_path):
    path = tmp_path / "proj" / ".claw" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_bytes(b'model = "caf\xe9"\n')
    with pytest.raises(ConfigError, match="not UTF-8"):
        _load(tmp_path)


def test_project_config_is_found_from_a_subdirectory_of_the_repository(tmp_path):
    from clawnb.config import ConfigLoader, project_config_path

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".claw").mkdir()
    (repo / ".claw" / "config.toml").write_text('[permissions]\ndeny = ["bash(rm *)"]\n')
    sub = repo / "notebooks" / "deep"
    sub.mkdir(parents=True)
    assert project_config_path(sub) == repo / ".claw" / "config.toml"
    config = ConfigLoader.load(project_dir=sub, config_home=tmp_path / "home", env={})
    assert config.permissions.deny == ["bash(rm *)"]


def test_project_config_search_stops_at_the_repository_and_outside_one(tmp_path):
    from clawnb.config import project_config_path

    # a config above the repository root does not belong to the project
    (tmp_path / ".claw").mkdir()
    (tmp_path / ".claw" / "config.toml").write_text('model = "outer"\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    assert project_config_path(repo / "x") == repo / "x" / ".claw" / "config.toml"
    # outside any repository only the directory itself counts
    plain = tmp_path / "plain" / "sub"
    plain.mkdir(parents=True)
    assert project_config_path(plain) == plain / ".claw" / "config.toml"
