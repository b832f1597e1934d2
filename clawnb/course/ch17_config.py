"""Book chapter 17: Config and ConfigLoader — ``config.rs``, 8 tests.

Adapted from the book: the environment variable is ``CLAWNB_MODEL`` (the book's
``MINI_CLAW_MODEL``), and ``ConfigLoader.load`` is pointed at the temporary directory for the
project and user files so the test never reads your real home directory.
"""

from __future__ import annotations

import os

from ._suite import Suite

suite = Suite("config", "Config and ConfigLoader", chapters=["ch17"])


@suite.test
def test_config_default_config(impl, tmp):
    config = impl.Config()
    assert config.model == "openrouter/free"
    assert config.max_context_tokens == 100_000
    assert config.preserve_recent == 6
    assert config.protected_patterns
    assert config.blocked_commands


@suite.test
def test_config_load_from_toml(impl, tmp):
    toml_text = """
        model = "anthropic/claude-sonnet-4"
        max_context_tokens = 50000
    """
    config = impl.Config.from_toml(toml_text)
    assert config.model == "anthropic/claude-sonnet-4"
    assert config.max_context_tokens == 50000


@suite.test
def test_config_default_fills_missing_fields(impl, tmp):
    config = impl.Config.from_toml('model = "test-model"')
    assert config.model == "test-model"
    assert config.preserve_recent == 6
    assert config.instructions is None


@suite.test
def test_config_load_nonexistent_path(impl, tmp):
    assert impl.ConfigLoader.load_path(tmp / "__nonexistent_config__.toml") is None


@suite.test
def test_config_mcp_server_config(impl, tmp):
    config = impl.Config.from_toml(
        """
        [[mcp_servers]]
        name = "filesystem"
        command = "npx"
        args = ["@anthropic/mcp-server-filesystem"]
        """
    )
    assert len(config.mcp_servers) == 1
    assert config.mcp_servers[0].name == "filesystem"
    assert config.mcp_servers[0].command == "npx"


@suite.test
def test_config_hooks_config(impl, tmp):
    config = impl.Config.from_toml(
        """
        [[hooks.pre_tool]]
        command = "echo pre"
        tool_pattern = "bash"
        timeout_ms = 3000
        """
    )
    assert len(config.hooks.pre_tool) == 1
    assert config.hooks.pre_tool[0].command == "echo pre"
    assert config.hooks.pre_tool[0].timeout_ms == 3000


@suite.test
def test_config_env_override(impl, tmp):
    saved = os.environ.get("CLAWNB_MODEL")
    os.environ["CLAWNB_MODEL"] = "test/env-model"
    try:
        config = impl.ConfigLoader.load(project_dir=tmp, config_home=tmp / "config-home")
        assert config.model == "test/env-model"
    finally:
        if saved is None:
            os.environ.pop("CLAWNB_MODEL", None)
        else:
            os.environ["CLAWNB_MODEL"] = saved


@suite.test
def test_config_protected_patterns_default(impl, tmp):
    config = impl.Config()
    assert ".env" in config.protected_patterns
    assert ".git/**" in config.protected_patterns


@suite.test
def test_config_env_beats_files(impl, tmp):
    # Not in the book: the environment is the last layer, so it wins over both files.
    (tmp / ".claw").mkdir()
    (tmp / ".claw" / "config.toml").write_text('model = "project/model"\n')
    home = tmp / "home"
    (home / "clawnb").mkdir(parents=True)
    (home / "clawnb" / "config.toml").write_text('model = "user/model"\n')
    config = impl.ConfigLoader.load(project_dir=tmp, config_home=home, env={})
    assert config.model == "user/model"
    config = impl.ConfigLoader.load(
        project_dir=tmp, config_home=home, env={"CLAWNB_MODEL": "env/model"}
    )
    assert config.model == "env/model"
