"""Book chapter 9: EditTool — ``edit.rs``, 14 tests."""

from __future__ import annotations

from ._helpers import declaration, file_with, raises
from ._suite import Suite

suite = Suite("edit", "EditTool", chapters=["ch09"])


def _edit(impl, path, old, new):
    return impl.EditTool().call({"path": str(path), "old_string": old, "new_string": new})


async def _edited(impl, tmp, before, old, new):
    """The file's text after editing ``old`` into ``new`` in a file that held ``before``."""
    path = file_with(tmp / "edit.txt", before)
    await _edit(impl, path, old, new)
    return path.read_text()


@suite.test
def test_edit_definition(impl, tmp):
    expected = ("edit", True, {"path", "old_string", "new_string"})
    assert declaration(impl.EditTool().definition) == expected


@suite.test
async def test_edit_replaces_string(impl, tmp):
    assert await _edited(impl, tmp, "hello world", "hello", "goodbye") == "goodbye world"


@suite.test
async def test_edit_not_found(impl, tmp):
    path = file_with(tmp / "edit.txt", "hello world")
    assert await raises(_edit(impl, path, "missing", "replacement"))


@suite.test
async def test_edit_not_unique(impl, tmp):
    path = file_with(tmp / "edit.txt", "aaa")
    assert await raises(_edit(impl, path, "a", "b"))


@suite.test
def test_edit_default(impl, tmp):
    assert impl.EditTool().definition.name == "edit"


@suite.test
def test_edit_definition_required_params(impl, tmp):
    required = impl.EditTool().definition.parameters["required"]
    for name in ("path", "old_string", "new_string"):
        assert name in required


@suite.test
async def test_edit_returns_confirmation(impl, tmp):
    path = file_with(tmp / "confirm.txt", "foo bar")
    result = await _edit(impl, path, "foo", "baz")
    assert "edited" in result
    assert str(path) in result


@suite.test
async def test_edit_missing_file(impl, tmp):
    assert await raises(_edit(impl, tmp / "no_such_file.txt", "old", "new"))


@suite.test
async def test_edit_replace_with_empty(impl, tmp):
    assert await _edited(impl, tmp, "remove this part", " this part", "") == "remove"


@suite.test
async def test_edit_replace_with_longer(impl, tmp):
    longer = "a much longer replacement string"
    assert await _edited(impl, tmp, "short", "short", longer) == longer


@suite.test
async def test_edit_multiline_replacement(impl, tmp):
    after = await _edited(impl, tmp, "line1\nline2\nline3", "line2", "replaced2\nextra_line")
    assert after == "line1\nreplaced2\nextra_line\nline3"


@suite.test
async def test_edit_missing_old_string_arg(impl, tmp):
    path = file_with(tmp / "edit.txt", "content")
    assert await raises(impl.EditTool().call({"path": str(path), "new_string": "replacement"}))


@suite.test
async def test_edit_missing_new_string_arg(impl, tmp):
    path = file_with(tmp / "edit.txt", "content")
    assert await raises(impl.EditTool().call({"path": str(path), "old_string": "content"}))


@suite.test
async def test_edit_preserves_rest_of_file(impl, tmp):
    after = await _edited(impl, tmp, "header\ntarget_line\nfooter", "target_line", "replaced_line")
    assert after.startswith("header\n")
    assert "replaced_line" in after
    assert after.endswith("\nfooter")
