"""Book chapter 9: WriteTool — ``write.rs``, 11 tests, and one of ours."""

from __future__ import annotations

from ._helpers import declaration, file_with, raises
from ._suite import Suite

suite = Suite("write", "WriteTool", chapters=["ch09"])


def _write(impl, path, content):
    return impl.WriteTool().call({"path": str(path), "content": content})


async def _written(impl, path, content):
    """What the file at ``path`` holds after writing ``content`` to it."""
    await _write(impl, path, content)
    return path.read_text()


@suite.test
def test_write_definition(impl, tmp):
    assert declaration(impl.WriteTool().definition) == ("write", True, {"path", "content"})


@suite.test
async def test_write_creates_file(impl, tmp):
    assert await _written(impl, tmp / "out.txt", "hello") == "hello"


@suite.test
async def test_write_creates_dirs(impl, tmp):
    assert await _written(impl, tmp / "a" / "b" / "c" / "out.txt", "deep") == "deep"


@suite.test
async def test_write_missing_arg(impl, tmp):
    assert await raises(impl.WriteTool().call({"path": str(tmp / "x.txt")}))


@suite.test
def test_write_default(impl, tmp):
    assert impl.WriteTool().definition.name == "write"


@suite.test
def test_write_definition_required_params(impl, tmp):
    assert {"path", "content"} <= set(impl.WriteTool().definition.parameters["required"])


@suite.test
async def test_write_overwrites_existing(impl, tmp):
    path = file_with(tmp / "overwrite.txt", "old content")
    assert await _written(impl, path, "new content") == "new content"


@suite.test
async def test_write_empty_content(impl, tmp):
    assert await _written(impl, tmp / "empty.txt", "") == ""


@suite.test
async def test_write_returns_confirmation(impl, tmp):
    path = tmp / "confirm.txt"
    result = await _write(impl, path, "data")
    assert "wrote" in result
    assert str(path) in result


@suite.test
async def test_write_does_not_echo_the_content(impl, tmp):
    # Not in the book: the model wrote the content itself; sending it back doubles what every
    # later request carries (a 2,000-line file costs its tokens again on every turn).
    content = "".join(f"line {n}: the content the model just wrote\n" for n in range(200))
    result = await _write(impl, tmp / "big.txt", content)
    echoed = [line for line in content.splitlines() if line in result]
    assert echoed == [], "the result repeats the file's content"


@suite.test
async def test_write_missing_path(impl, tmp):
    assert await raises(impl.WriteTool().call({"content": "data"}))


@suite.test
async def test_write_multiline_content(impl, tmp):
    content = "line1\nline2\nline3"
    assert await _written(impl, tmp / "multi.txt", content) == content
