"""Book chapter 9: WriteTool — ``write.rs``, 11 tests."""

from __future__ import annotations

from ._helpers import raises
from ._suite import Suite

suite = Suite("write", "WriteTool", chapters=["ch09"])


@suite.test
def test_write_definition(impl, tmp):
    d = impl.WriteTool().definition
    assert d.name == "write"
    assert d.description


@suite.test
async def test_write_creates_file(impl, tmp):
    path = tmp / "out.txt"
    await impl.WriteTool().call({"path": str(path), "content": "hello"})
    assert path.read_text() == "hello"


@suite.test
async def test_write_creates_dirs(impl, tmp):
    path = tmp / "a" / "b" / "c" / "out.txt"
    await impl.WriteTool().call({"path": str(path), "content": "deep"})
    assert path.read_text() == "deep"


@suite.test
async def test_write_missing_arg(impl, tmp):
    assert await raises(impl.WriteTool().call({"path": str(tmp / "x.txt")}))


@suite.test
def test_write_default(impl, tmp):
    assert impl.WriteTool().definition.name == "write"


@suite.test
def test_write_definition_required_params(impl, tmp):
    required = impl.WriteTool().definition.parameters["required"]
    assert "path" in required
    assert "content" in required


@suite.test
async def test_write_overwrites_existing(impl, tmp):
    path = tmp / "overwrite.txt"
    path.write_text("old content")
    await impl.WriteTool().call({"path": str(path), "content": "new content"})
    assert path.read_text() == "new content"


@suite.test
async def test_write_empty_content(impl, tmp):
    path = tmp / "empty.txt"
    await impl.WriteTool().call({"path": str(path), "content": ""})
    assert path.read_text() == ""


@suite.test
async def test_write_returns_confirmation(impl, tmp):
    path = tmp / "confirm.txt"
    result = await impl.WriteTool().call({"path": str(path), "content": "data"})
    assert "wrote" in result
    assert str(path) in result


@suite.test
async def test_write_missing_path(impl, tmp):
    assert await raises(impl.WriteTool().call({"content": "data"}))


@suite.test
async def test_write_multiline_content(impl, tmp):
    path = tmp / "multi.txt"
    await impl.WriteTool().call({"path": str(path), "content": "line1\nline2\nline3"})
    assert path.read_text() == "line1\nline2\nline3"
