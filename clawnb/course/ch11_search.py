"""Book chapter 11: GlobTool and GrepTool — the contract tests the chapter lists
(``test_grep_glob_*``, ``test_grep_grep_*``), 11 tests. The book ships no test file for
ch11; these follow the chapter's description of each test."""

from __future__ import annotations

from ._helpers import raises
from ._suite import Suite

suite = Suite("search", "GlobTool and GrepTool", chapters=["ch11"])


@suite.test
async def test_grep_glob_find_files(impl, tmp):
    for name in ("a.rs", "b.rs", "c.txt"):
        (tmp / name).write_text("")
    result = await impl.GlobTool().call({"pattern": "*.rs", "path": str(tmp)})
    assert "a.rs" in result
    assert "b.rs" in result
    assert "c.txt" not in result


@suite.test
async def test_grep_glob_recursive(impl, tmp):
    (tmp / "top.rs").write_text("")
    (tmp / "sub").mkdir()
    (tmp / "sub" / "deep.rs").write_text("")
    result = await impl.GlobTool().call({"pattern": "**/*.rs", "path": str(tmp)})
    assert "top.rs" in result
    assert "deep.rs" in result


@suite.test
async def test_grep_glob_no_matches(impl, tmp):
    (tmp / "file.txt").write_text("")
    result = await impl.GlobTool().call({"pattern": "*.xyz", "path": str(tmp)})
    assert "no files matched" in result


@suite.test
def test_grep_glob_definition(impl, tmp):
    assert impl.GlobTool().definition.name == "glob"


@suite.test
async def test_grep_grep_single_file(impl, tmp):
    path = tmp / "main.rs"
    path.write_text('fn main() {\n    println!("hello");\n}\n')
    result = await impl.GrepTool().call({"pattern": "println", "path": str(path)})
    assert 'println!("hello")' in result
    assert ":2:" in result


@suite.test
async def test_grep_grep_directory(impl, tmp):
    (tmp / "one.rs").write_text("fn foo() {}\n")
    (tmp / "two.rs").write_text("fn foo() {}\n")
    result = await impl.GrepTool().call({"pattern": "fn foo", "path": str(tmp)})
    assert "one.rs" in result
    assert "two.rs" in result


@suite.test
async def test_grep_grep_with_include(impl, tmp):
    (tmp / "code.rs").write_text("hello world\n")
    (tmp / "data.txt").write_text("hello world\n")
    result = await impl.GrepTool().call({"pattern": "hello", "path": str(tmp), "include": "*.rs"})
    assert "code.rs" in result
    assert "data.txt" not in result


@suite.test
async def test_grep_grep_no_matches(impl, tmp):
    (tmp / "file.txt").write_text("some content\n")
    result = await impl.GrepTool().call({"pattern": "zzz_not_there", "path": str(tmp)})
    assert "no matches found" in result


@suite.test
async def test_grep_grep_regex(impl, tmp):
    (tmp / "data.txt").write_text("foo123\nbar456\nbaz789\nnone\n")
    result = await impl.GrepTool().call({"pattern": r"\d{3}", "path": str(tmp)})
    for word in ("foo123", "bar456", "baz789"):
        assert word in result
    assert "none" not in result


@suite.test
async def test_grep_grep_nonexistent_path(impl, tmp):
    call = impl.GrepTool().call({"pattern": "x", "path": str(tmp / "does" / "not" / "exist")})
    assert await raises(call)


@suite.test
def test_grep_grep_definition(impl, tmp):
    assert impl.GrepTool().definition.name == "grep"
