"""Book chapter 14: safety checks — ``safety.rs``, 15 tests.

The book's checks return ``Result<(), String>``; here a refusal is an exception (clawnb raises
``SafetyViolation``), so "is_err" means "raises" and "is_ok" means "returns"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._helpers import file_with
from ._suite import Suite

suite = Suite(
    "safety", "PathValidator, CommandFilter, ProtectedFileCheck, SafeToolWrapper", chapters=["ch14"]
)


def _fails(fn: Callable[..., Any], *args: Any) -> bool:
    try:
        fn(*args)
    except Exception:
        return True
    return False


# -- PathValidator ----------------------------------------------------------------------------


@suite.test
def test_safety_path_within_allowed(impl, tmp):
    f = file_with(tmp / "test.txt", "hello")
    assert not _fails(impl.PathValidator(tmp).validate_path, str(f))


@suite.test
def test_safety_path_outside_allowed(impl, tmp):
    assert _fails(impl.PathValidator(tmp).validate_path, "/etc/passwd")


@suite.test
def test_safety_path_traversal_blocked(impl, tmp):
    sub = tmp / "sub"
    sub.mkdir()
    assert _fails(impl.PathValidator(sub).validate_path, f"{sub}/../../../etc/passwd")


@suite.test
def test_safety_path_new_file_in_allowed(impl, tmp):
    assert not _fails(impl.PathValidator(tmp).validate_path, str(tmp / "new.txt"))


@suite.test
def test_safety_safety_check_read_tool(impl, tmp):
    f = file_with(tmp / "ok.txt", "ok")
    assert not _fails(impl.PathValidator(tmp).check, "read", {"path": str(f)})


@suite.test
def test_safety_safety_check_ignores_bash(impl, tmp):
    assert not _fails(impl.PathValidator(tmp).check, "bash", {"command": "ls"})


# -- CommandFilter ----------------------------------------------------------------------------


@suite.test
def test_safety_command_filter_blocks_rm_rf(impl, tmp):
    f = impl.CommandFilter.default_filters()
    assert f.is_blocked("rm -rf /") is not None
    assert f.is_blocked("rm -rf /*") is not None


@suite.test
def test_safety_command_filter_blocks_sudo(impl, tmp):
    assert impl.CommandFilter.default_filters().is_blocked("sudo rm file") is not None


@suite.test
def test_safety_command_filter_allows_safe(impl, tmp):
    f = impl.CommandFilter.default_filters()
    assert f.is_blocked("ls -la") is None
    assert f.is_blocked("echo hello") is None
    assert f.is_blocked("cargo test") is None


@suite.test
def test_safety_command_filter_safety_check(impl, tmp):
    f = impl.CommandFilter.default_filters()
    assert _fails(f.check, "bash", {"command": "sudo reboot"})
    assert not _fails(f.check, "bash", {"command": "echo safe"})


# -- ProtectedFileCheck -----------------------------------------------------------------------


@suite.test
def test_safety_protected_file_blocks_env(impl, tmp):
    check = impl.ProtectedFileCheck([".env", ".env.*"])
    assert _fails(check.check, "write", {"path": ".env"})
    assert _fails(check.check, "write", {"path": ".env.local"})


@suite.test
def test_safety_protected_file_allows_normal(impl, tmp):
    check = impl.ProtectedFileCheck([".env"])
    assert not _fails(check.check, "write", {"path": "src/main.rs"})


# -- SafeToolWrapper --------------------------------------------------------------------------


@suite.test
async def test_safety_wrapper_blocks_on_check_failure(impl, tmp):
    wrapped = impl.SafeToolWrapper.with_check(impl.ReadTool(), impl.PathValidator(tmp))
    result = await wrapped.call({"path": "/etc/passwd"})  # a result, not an exception
    assert "safety check failed" in result


@suite.test
async def test_safety_wrapper_allows_valid_call(impl, tmp):
    f = file_with(tmp / "allowed.txt", "content")
    wrapped = impl.SafeToolWrapper.with_check(impl.ReadTool(), impl.PathValidator(tmp))
    assert await wrapped.call({"path": str(f)}) == "content"


@suite.test
def test_safety_custom_blocked_commands(impl, tmp):
    f = impl.CommandFilter(["docker rm *", "npm publish*"])
    assert f.is_blocked("docker rm container") is not None
    assert f.is_blocked("npm publish") is not None
    assert f.is_blocked("docker ps") is None
