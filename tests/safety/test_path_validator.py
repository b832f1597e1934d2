"""PathValidator against corpora of escape attempts and of legitimate paths."""

from __future__ import annotations

import os

import pytest
from conftest import Sandbox, load_paths

from clawnb.safety import PathValidator, SafetyViolation

ESCAPES = load_paths("path_escapes.json")
LEGIT = load_paths("legit_paths.json")


def test_corpora_are_big_enough():
    assert len(ESCAPES) >= 50
    assert len(LEGIT) >= 15
    assert any("\x00" in e["path"] for e in ESCAPES)
    assert any("\uff0e" in e["path"] for e in LEGIT)


@pytest.mark.parametrize("entry", ESCAPES, ids=[e["why"] for e in ESCAPES])
def test_escape_attempt_is_blocked(sandbox: Sandbox, entry):
    validator = PathValidator(sandbox.ws)
    path = sandbox.expand(entry["path"])
    with pytest.raises(SafetyViolation):
        validator.validate_path(path)
    for tool in ("read", "write", "edit"):
        with pytest.raises(SafetyViolation):
            validator.check(tool, {"path": path})


@pytest.mark.parametrize("entry", LEGIT, ids=[e["why"] for e in LEGIT])
def test_legitimate_path_is_allowed(sandbox: Sandbox, entry):
    validator = PathValidator(sandbox.ws)
    resolved = validator.validate_path(sandbox.expand(entry["path"]))
    assert resolved == sandbox.ws or sandbox.ws in resolved.parents
    validator.check("write", {"path": sandbox.expand(entry["path"])})


def test_outside_message_is_the_books(sandbox: Sandbox):
    validator = PathValidator(sandbox.ws)
    with pytest.raises(SafetyViolation) as err:
        validator.validate_path("/etc/passwd")
    assert str(err.value) == f"path /etc/passwd is outside allowed directory {sandbox.ws}"


def test_symlink_target_is_reported(sandbox: Sandbox):
    with pytest.raises(SafetyViolation) as err:
        PathValidator(sandbox.ws).validate_path("link_out/new.txt")
    assert str(sandbox.outside / "new.txt") in str(err.value)


def test_nul_byte_and_tilde_and_loop_messages(sandbox: Sandbox):
    validator = PathValidator(sandbox.ws)
    with pytest.raises(SafetyViolation, match="NUL byte"):
        validator.validate_path("a\x00b")
    with pytest.raises(SafetyViolation, match="home directory"):
        validator.validate_path("~/x")
    with pytest.raises(SafetyViolation, match="too many levels of symbolic links"):
        validator.validate_path("loop_a")
    with pytest.raises(SafetyViolation, match="empty"):
        validator.validate_path("")
    with pytest.raises(SafetyViolation, match="expected a string"):
        validator.validate_path(42)  # type: ignore[arg-type]


def test_relative_paths_join_the_workspace_not_the_cwd(sandbox: Sandbox):
    # The cwd is the sandbox root; "file.txt" still means ws/file.txt.
    assert PathValidator(sandbox.ws).validate_path("file.txt") == sandbox.ws / "file.txt"


def test_workspace_given_through_a_symlink(sandbox: Sandbox):
    alias = sandbox.root / "ws_alias"
    os.symlink(sandbox.ws, alias)
    validator = PathValidator(alias)
    assert validator.allowed_dir == str(sandbox.ws)
    assert validator.validate_path("file.txt") == sandbox.ws / "file.txt"
    with pytest.raises(SafetyViolation):
        validator.validate_path("../outside/secret.txt")


def test_check_looks_at_every_path_argument_and_glob_prefixes(sandbox: Sandbox):
    validator = PathValidator(sandbox.ws)
    with pytest.raises(SafetyViolation):
        validator.check("grep", {"pattern": "x", "path": "/etc"})
    with pytest.raises(SafetyViolation):
        validator.check("notebook_edit", {"notebook_path": "../outside/n.ipynb"})
    with pytest.raises(SafetyViolation):
        validator.check("glob", {"pattern": "/etc/**/*.conf"})
    with pytest.raises(SafetyViolation):
        validator.check("glob", {"pattern": "../outside/*"})
    validator.check("glob", {"pattern": "**/*.py"})
    validator.check("glob", {"pattern": f"{sandbox.ws}/sub/*.txt"})
    validator.check("bash", {"command": "cat /etc/passwd"})  # bash is the permission engine's


def test_book_tool_restriction(sandbox: Sandbox):
    validator = PathValidator(sandbox.ws, tools=PathValidator.BOOK_TOOLS)
    validator.check("grep", {"path": "/etc"})  # not one of read/write/edit
    with pytest.raises(SafetyViolation):
        validator.check("read", {"path": "/etc/passwd"})


def test_root_as_workspace_allows_everything_absolute():
    assert str(PathValidator("/").validate_path("/etc/passwd")) == "/etc/passwd"
