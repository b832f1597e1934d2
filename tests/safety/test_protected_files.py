"""ProtectedFileCheck: the book's anchoring plus trailing parts, normalisation and symlinks."""

from __future__ import annotations

import pytest

from clawnb.safety import DEFAULT_PROTECTED_PATTERNS, ProtectedFileCheck, SafetyViolation


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        ".env.local",
        "./.env",
        "config/.env",
        "/srv/app/.env.production",
        ".git/config",
        ".git/hooks/pre-commit",
        "/repo/.git/config",  # the book's anchored glob missed this one
        "sub/../.git/HEAD",
        "src/../.env",
    ],
)
def test_protected(path):
    check = ProtectedFileCheck(DEFAULT_PROTECTED_PATTERNS)
    with pytest.raises(SafetyViolation, match="is protected"):
        check.check("write", {"path": path})
    with pytest.raises(SafetyViolation):
        check.check("edit", {"path": path})


@pytest.mark.parametrize(
    "path", ["src/main.rs", "env.txt", ".envrc", ".github/workflows/ci.yml", "docs/git/x.md"]
)
def test_not_protected(path):
    ProtectedFileCheck(DEFAULT_PROTECTED_PATTERNS).check("write", {"path": path})


def test_message_is_the_books():
    with pytest.raises(SafetyViolation) as err:
        ProtectedFileCheck([".env"]).check("write", {"path": ".env"})
    assert str(err.value) == "file `.env` is protected (matches pattern `.env`)"


def test_reads_and_other_tools_are_not_checked():
    check = ProtectedFileCheck(DEFAULT_PROTECTED_PATTERNS)
    check.check("read", {"path": ".env"})
    check.check("bash", {"command": "cat .env"})
    check.check("write", {"content": "x"})
    check.check("write", None)


def test_symlink_to_a_protected_file(tmp_path):
    (tmp_path / ".env").write_text("KEY=1")
    (tmp_path / "settings").symlink_to(".env")
    check = ProtectedFileCheck(DEFAULT_PROTECTED_PATTERNS, workspace=tmp_path)
    with pytest.raises(SafetyViolation, match="settings"):
        check.check("write", {"path": "settings"})


async def test_safe_tool_wrapper_delegates_and_fails_closed(tmp_path):
    from clawnb.safety import PathValidator, SafeToolWrapper
    from clawnb.tools.read import ReadTool
    from clawnb.tools.write import WriteTool

    class Broken:
        def check(self, tool_name, args):
            raise KeyError("bug")

    wrapped = SafeToolWrapper(WriteTool(tmp_path), [PathValidator(tmp_path), Broken()])
    assert wrapped.definition.name == "write"
    assert wrapped.read_only is False and SafeToolWrapper(ReadTool(), []).read_only is True
    assert SafeToolWrapper(ReadTool(), []).concurrency_safe is True
    result = await wrapped.call({"path": "a.txt", "content": "x"})
    assert result == "error: safety check failed: KeyError: 'bug'"
    assert not (tmp_path / "a.txt").exists()
    result = await wrapped.call({"path": "../b.txt", "content": "x"})
    assert result.startswith("error: safety check failed: path ")
