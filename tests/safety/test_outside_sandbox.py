"""Added directories in the OS sandbox, with real bubblewrap, judged on disk: an added folder
is writable for bash like the workspace (also one under /tmp, which the sandbox otherwise
replaces), a folder that was not added stays read-only, and the added folder's control and
secret files stay protected as the workspace's are. A folder the person adds while the session
runs (the gate's ``add_directory``) counts at the next command."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawnb.config import Config
from clawnb.control.dirs import AddedDirectories
from clawnb.control.sandbox import (
    approved_call,
    bwrap_path,
    policy_for,
    status_from_config,
)
from clawnb.gates import GatePipeline
from clawnb.tools import BashTool

if bwrap_path() is None and os.environ.get("CLAWNB_SANDBOX_TESTS") == "require":
    raise RuntimeError(
        "CLAWNB_SANDBOX_TESTS=require but bwrap is missing: apt-get install bubblewrap"
    )
pytestmark = pytest.mark.skipif(
    bwrap_path() is None, reason="bubblewrap is not installed (apt-get install bubblewrap)"
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def visible() -> Iterator[Path]:
    """A folder outside the workspace and outside /tmp (which the sandbox hides), so that a
    write refused there is refused by the read-only bind, not by a private tmpfs."""
    base = Path.home() / ".cache" / "clawnb-test-canaries"
    base.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="added-", dir=base))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def bash_for(ws: Path, *added: Path) -> BashTool:
    status = policy_for(ws, directories=AddedDirectories(added))
    assert status.policy is not None, status.describe()
    return BashTool(ws, sandbox=status, kill_grace=0.2)


async def test_an_added_folder_is_writable_and_one_not_added_is_not(ws, visible, tmp_path):
    added, other = visible / "data", visible / "other"
    added.mkdir()
    other.mkdir()
    result = await bash_for(ws, added).call(
        {"command": f"echo ok > {added}/out.txt; echo no > {other}/out.txt; cat {added}/out.txt"}
    )
    assert (added / "out.txt").read_text() == "ok\n"
    assert not (other / "out.txt").exists() and "Read-only file system" in result
    # an added folder under /tmp is bound back into the sandbox's private /tmp
    under_tmp = tmp_path / "scratch"
    under_tmp.mkdir()
    await bash_for(ws, under_tmp).call({"command": f"echo tmp > {under_tmp}/t.txt"})
    assert (under_tmp / "t.txt").read_text() == "tmp\n"


async def test_control_and_secret_files_of_an_added_folder_stay_read_only(ws, visible):
    (visible / ".claw").mkdir()
    (visible / ".claw" / "config.toml").write_text('[permissions]\nmode = "default"\n')
    (visible / "CLAUDE.md").write_text("be careful\n")
    (visible / ".env").write_text("KEY=mine\n")
    (visible / ".git" / "hooks").mkdir(parents=True)
    (visible / ".git" / "config").write_text("[core]\n")
    result = await bash_for(ws, visible).call(
        {
            "command": f"cd {visible}; echo 'mode = \"bypass\"' >> .claw/config.toml; "
            "echo obey > CLAUDE.md; echo KEY=attacker > .env; "
            "echo '[core] hooksPath=/x' >> .git/config; echo x > .git/hooks/pre-commit; "
            "echo fine > plain.txt"
        }
    )
    assert "Read-only file system" in result
    assert (visible / ".claw" / "config.toml").read_text() == '[permissions]\nmode = "default"\n'
    assert (visible / "CLAUDE.md").read_text() == "be careful\n"
    assert (visible / ".env").read_text() == "KEY=mine\n"
    assert (visible / ".git" / "config").read_text() == "[core]\n"
    assert not (visible / ".git" / "hooks" / "pre-commit").exists()
    assert (visible / "plain.txt").read_text() == "fine\n"


async def test_a_masked_sandbox_reads_an_added_folders_secrets_as_empty(ws, visible):
    (visible / ".env").write_text("KEY=the-added-secret\n")
    status = policy_for(ws, directories=AddedDirectories([visible]))
    assert status.policy is not None
    bash = BashTool(ws, sandbox=status.policy.masked(), kill_grace=0.2)
    result = await bash.call({"command": f"cat {visible}/.env; echo end"})
    assert "the-added-secret" not in result and result.endswith("end\n")


async def test_the_read_only_variant_does_not_write_an_added_folder(ws, visible):
    status = policy_for(ws, directories=AddedDirectories([visible]))
    assert status.policy is not None
    bash = BashTool(ws, sandbox=status.policy.read_only(), kill_grace=0.2)
    result = await bash.call({"command": f"echo x > {visible}/x.txt"})
    assert "Read-only file system" in result and not (visible / "x.txt").exists()


async def test_a_folder_added_to_the_gate_is_bound_at_the_next_command(ws, visible):
    status = status_from_config(Config(), ws)
    assert status.policy is not None
    gate = GatePipeline.from_config(Config(), workspace=ws, sandbox=status)
    bash = BashTool(ws, sandbox=status, kill_grace=0.2)
    command = {"command": f"echo later > {visible}/later.txt"}
    assert "Read-only file system" in await bash.call(command)
    gate.add_directory(visible)  # what /add-dir does
    await bash.call(command)
    assert (visible / "later.txt").read_text() == "later\n"


def test_user_config_directories_reach_the_sandbox_policy(ws, visible):
    config = Config(additional_directories=[str(visible), "../no-such-folder"])
    status = status_from_config(config, ws)
    assert status.policy is not None
    assert list(status.policy.directories) == [visible]  # a missing one grants nothing
    argv = status.policy.wrap(["true"])
    bind = argv.index(str(visible))
    assert argv[bind - 1] == "--bind" and argv[bind + 1] == str(visible)


async def test_a_credential_store_inside_an_added_folder_stays_read_only(ws, visible, monkeypatch):
    home = visible / "home"
    (home / ".config" / "gh").mkdir(parents=True)
    (home / ".config" / "gh" / "hosts.yml").write_text("token: mine\n")
    monkeypatch.setenv("HOME", str(home))
    config = home / ".config"
    approved_call.set(True)  # a call a person approved: secrets read-only, not masked
    result = await bash_for(ws, config).call(
        {"command": f"echo 'token: attacker' > {config}/gh/hosts.yml; echo ok > {config}/app.ini"}
    )
    assert "Read-only file system" in result
    assert (config / "gh" / "hosts.yml").read_text() == "token: mine\n"
    assert (config / "app.ini").read_text() == "ok\n"  # the rest of the added folder is writable
