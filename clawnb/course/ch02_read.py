"""Book chapter 2 (and 6): ReadTool — ``read.rs``, 15 tests."""

from __future__ import annotations

from ._helpers import raises
from ._suite import Suite

suite = Suite("read", "ReadTool", chapters=["ch02", "ch06", "ch09"])


@suite.test
def test_read_read_definition(impl, tmp):
    d = impl.ReadTool().definition
    assert d.name == "read"
    assert d.description
    assert "path" in d.parameters["required"]


@suite.test
async def test_read_read_file(impl, tmp):
    f = tmp / "test.txt"
    f.write_text("hello world")
    assert await impl.ReadTool().call({"path": str(f)}) == "hello world"


@suite.test
async def test_read_read_missing_file(impl, tmp):
    assert await raises(impl.ReadTool().call({"path": str(tmp / "nope.txt")}))


@suite.test
async def test_read_read_missing_arg(impl, tmp):
    assert await raises(impl.ReadTool().call({}))


@suite.test
def test_read_read_definition_has_path_property(impl, tmp):
    props = impl.ReadTool().definition.parameters["properties"]
    assert props["path"]["type"] == "string"


@suite.test
def test_read_read_default(impl, tmp):
    assert impl.ReadTool().definition.name == "read"


@suite.test
async def test_read_read_empty_file(impl, tmp):
    f = tmp / "empty.txt"
    f.write_text("")
    assert await impl.ReadTool().call({"path": str(f)}) == ""


@suite.test
async def test_read_read_multiline_file(impl, tmp):
    f = tmp / "multi.txt"
    f.write_text("line1\nline2\nline3")
    assert await impl.ReadTool().call({"path": str(f)}) == "line1\nline2\nline3"


@suite.test
async def test_read_read_unicode_content(impl, tmp):
    f = tmp / "unicode.txt"
    f.write_text("hello 🌍 world — ünïcödé", encoding="utf-8")
    result = await impl.ReadTool().call({"path": str(f)})
    assert "hello" in result and "world" in result


@suite.test
async def test_read_read_large_file(impl, tmp):
    f = tmp / "large.txt"
    f.write_text("x" * 100_000)
    assert len(await impl.ReadTool().call({"path": str(f)})) == 100_000


@suite.test
async def test_read_read_wrong_arg_type(impl, tmp):
    assert await raises(impl.ReadTool().call({"path": 42}))


@suite.test
async def test_read_read_null_path(impl, tmp):
    assert await raises(impl.ReadTool().call({"path": None}))


@suite.test
async def test_read_read_extra_args_ignored(impl, tmp):
    f = tmp / "extra.txt"
    f.write_text("content")
    assert await impl.ReadTool().call({"path": str(f), "unexpected": "ignored"}) == "content"


@suite.test
async def test_read_read_preserves_whitespace(impl, tmp):
    f = tmp / "ws.txt"
    f.write_text("  leading\n\ttab\ntrailing  \n")
    assert await impl.ReadTool().call({"path": str(f)}) == "  leading\n\ttab\ntrailing  \n"


@suite.test
async def test_read_read_directory_fails(impl, tmp):
    assert await raises(impl.ReadTool().call({"path": str(tmp)}))
