"""Book chapter 2 (and 6): ReadTool — ``read.rs``, 15 tests."""

from __future__ import annotations

from ._helpers import declaration, file_with, raises
from ._suite import Suite

suite = Suite("read", "ReadTool", chapters=["ch02", "ch06", "ch09"])


def _read(impl, path):
    return impl.ReadTool().call({"path": str(path)})


async def _read_back(impl, tmp, name, text):
    """What the tool reads from a file ``name`` that holds ``text``."""
    return await _read(impl, file_with(tmp / name, text))


@suite.test
def test_read_read_definition(impl, tmp):
    assert declaration(impl.ReadTool().definition) == ("read", True, {"path"})


@suite.test
async def test_read_read_file(impl, tmp):
    assert await _read_back(impl, tmp, "test.txt", "hello world") == "hello world"


@suite.test
async def test_read_read_missing_file(impl, tmp):
    assert await raises(_read(impl, tmp / "nope.txt"))


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
    assert await _read_back(impl, tmp, "empty.txt", "") == ""


@suite.test
async def test_read_read_multiline_file(impl, tmp):
    result = await _read_back(impl, tmp, "multi.txt", "line1\nline2\nline3")
    # Exactly the file: every line, in order, joined by its line breaks (no numbering added).
    assert result.split("\n") == ["line1", "line2", "line3"]


@suite.test
async def test_read_read_unicode_content(impl, tmp):
    result = await _read_back(impl, tmp, "unicode.txt", "hello 🌍 world — ünïcödé")
    assert "hello" in result and "world" in result


@suite.test
async def test_read_read_large_file(impl, tmp):
    assert len(await _read_back(impl, tmp, "large.txt", "x" * 100_000)) == 100_000


@suite.test
async def test_read_read_wrong_arg_type(impl, tmp):
    assert await raises(impl.ReadTool().call({"path": 42}))


@suite.test
async def test_read_read_null_path(impl, tmp):
    assert await raises(impl.ReadTool().call({"path": None}))


@suite.test
async def test_read_read_extra_args_ignored(impl, tmp):
    f = file_with(tmp / "extra.txt", "content")
    assert await impl.ReadTool().call({"path": str(f), "unexpected": "ignored"}) == "content"


@suite.test
async def test_read_read_preserves_whitespace(impl, tmp):
    text = "  leading\n\ttab\ntrailing  \n"
    assert await _read_back(impl, tmp, "ws.txt", text) == text


@suite.test
async def test_read_read_directory_fails(impl, tmp):
    assert await raises(_read(impl, tmp))
