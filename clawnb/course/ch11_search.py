"""Book chapter 11: GlobTool and GrepTool — the contract tests the chapter lists
(``test_grep_glob_*``, ``test_grep_grep_*``), 11 tests. The book ships no test file for
ch11; these follow the chapter's description of each test."""

from __future__ import annotations

from ._helpers import file_with, raises, tree
from ._suite import Suite

suite = Suite("search", "GlobTool and GrepTool", chapters=["ch11"])


def _glob(impl, pattern, path):
    return impl.GlobTool().call({"pattern": pattern, "path": str(path)})


def _grep(impl, pattern, path, **more):
    return impl.GrepTool().call({"pattern": pattern, "path": str(path), **more})


@suite.test
async def test_grep_glob_find_files(impl, tmp):
    result = await _glob(impl, "*.rs", tree(tmp, {"a.rs": "", "b.rs": "", "c.txt": ""}))
    assert "a.rs" in result
    assert "b.rs" in result
    assert "c.txt" not in result


@suite.test
async def test_grep_glob_recursive(impl, tmp):
    result = await _glob(impl, "**/*.rs", tree(tmp, {"top.rs": "", "sub/deep.rs": ""}))
    assert "top.rs" in result
    assert "deep.rs" in result


@suite.test
async def test_grep_glob_no_matches(impl, tmp):
    result = await _glob(impl, "*.xyz", tree(tmp, {"file.txt": ""}))
    assert "no files matched" in result


@suite.test
def test_grep_glob_definition(impl, tmp):
    assert impl.GlobTool().definition.name == "glob"


@suite.test
async def test_grep_grep_single_file(impl, tmp):
    path = file_with(tmp / "main.rs", 'fn main() {\n    println!("hello");\n}\n')
    result = await _grep(impl, "println", path)
    assert 'println!("hello")' in result
    assert ":2:" in result


@suite.test
async def test_grep_grep_directory(impl, tmp):
    line = "fn foo() {}"
    result = await _grep(impl, "fn foo", tree(tmp, {"one.rs": line, "two.rs": line}))
    # Every file in the folder is searched, each match reported as "path:line: text".
    expected = [f"{tmp / name}:1: {line}" for name in ("one.rs", "two.rs")]
    assert sorted(result.splitlines()) == expected


@suite.test
async def test_grep_grep_with_include(impl, tmp):
    both = tree(tmp, {"code.rs": "hello world\n", "data.txt": "hello world\n"})
    result = await _grep(impl, "hello", both, include="*.rs")
    assert "code.rs" in result
    assert "data.txt" not in result


@suite.test
async def test_grep_grep_no_matches(impl, tmp):
    result = await _grep(impl, "zzz_not_there", tree(tmp, {"file.txt": "some content\n"}))
    assert "no matches found" in result


@suite.test
async def test_grep_grep_regex(impl, tmp):
    result = await _grep(impl, r"\d{3}", tree(tmp, {"data.txt": "foo123\nbar456\nbaz789\nnone\n"}))
    for word in ("foo123", "bar456", "baz789"):
        assert word in result
    assert "none" not in result


@suite.test
async def test_grep_grep_nonexistent_path(impl, tmp):
    assert await raises(_grep(impl, "x", tmp / "does" / "not" / "exist"))


@suite.test
def test_grep_grep_definition(impl, tmp):
    assert impl.GrepTool().definition.name == "grep"
