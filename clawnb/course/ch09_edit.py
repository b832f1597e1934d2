"""Book chapter 9: EditTool — ``edit.rs``, 14 tests."""

from __future__ import annotations

from ._helpers import raises
from ._suite import Suite

suite = Suite("edit", "EditTool", chapters=["ch09"])


def _edit(impl, path, old, new):
    return impl.EditTool().call({"path": str(path), "old_string": old, "new_string": new})


@suite.test
def test_edit_definition(impl, tmp):
    d = impl.EditTool().definition
    assert d.name == "edit"
    assert d.description


@suite.test
async def test_edit_replaces_string(impl, tmp):
    path = tmp / "edit.txt"
    path.write_text("hello world")
    await _edit(impl, path, "hello", "goodbye")
    assert path.read_text() == "goodbye world"


@suite.test
async def test_edit_not_found(impl, tmp):
    path = tmp / "edit.txt"
    path.write_text("hello world")
    assert await raises(_edit(impl, path, "missing", "replacement"))


@suite.test
async def test_edit_not_unique(impl, tmp):
    path = tmp / "edit.txt"
    path.write_text("aaa")
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
    path = tmp / "confirm.txt"
    path.write_text("foo bar")
    result = await _edit(impl, path, "foo", "baz")
    assert "edited" in result
    assert str(path) in result


@suite.test
async def test_edit_missing_file(impl, tmp):
    assert await raises(_edit(impl, tmp / "no_such_file.txt", "old", "new"))


@suite.test
async def test_edit_replace_with_empty(impl, tmp):
    path = tmp / "del.txt"
    path.write_text("remove this part")
    await _edit(impl, path, " this part", "")
    assert path.read_text() == "remove"


@suite.test
async def test_edit_replace_with_longer(impl, tmp):
    path = tmp / "grow.txt"
    path.write_text("short")
    await _edit(impl, path, "short", "a much longer replacement string")
    assert path.read_text() == "a much longer replacement string"


@suite.test
async def test_edit_multiline_replacement(impl, tmp):
    path = tmp / "multi.txt"
    path.write_text("line1\nline2\nline3")
    await _edit(impl, path, "line2", "replaced2\nextra_line")
    assert path.read_text() == "line1\nreplaced2\nextra_line\nline3"


@suite.test
async def test_edit_missing_old_string_arg(impl, tmp):
    path = tmp / "edit.txt"
    path.write_text("content")
    call = impl.EditTool().call({"path": str(path), "new_string": "replacement"})
    assert await raises(call)


@suite.test
async def test_edit_missing_new_string_arg(impl, tmp):
    path = tmp / "edit.txt"
    path.write_text("content")
    assert await raises(impl.EditTool().call({"path": str(path), "old_string": "content"}))


@suite.test
async def test_edit_preserves_rest_of_file(impl, tmp):
    path = tmp / "preserve.txt"
    path.write_text("header\ntarget_line\nfooter")
    await _edit(impl, path, "target_line", "replaced_line")
    content = path.read_text()
    assert content.startswith("header\n")
    assert "replaced_line" in content
    assert content.endswith("\nfooter")
