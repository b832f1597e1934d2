"""GlobTool and GrepTool beyond the book: hidden dirs, .gitignore, symlinks, ordering, caps,
binary and non-UTF-8 files, and the two grep engines giving identical output."""

from __future__ import annotations

import asyncio
import os

import pytest

from clawnb.tools import GlobTool, GrepTool, ToolError
from clawnb.tools.glob import compile_glob, sort_key
from clawnb.tools.grep import grep_search, system_grep

ENGINES = [
    "python",
    pytest.param(
        "grep", marks=pytest.mark.skipif(system_grep() is None, reason="no grep with -P on PATH")
    ),
]


def _tree(root, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


# ---------------------------------------------------------------- glob patterns


@pytest.mark.parametrize(
    ("pattern", "yes", "no"),
    [
        ("*.py", ["a.py", ".hidden.py"], ["d/a.py", "a.pyc"]),
        ("**/*.py", ["a.py", "d/a.py", "d/e/f.py"], ["a.pyi"]),
        ("src/**", ["src/a", "src/b/c"], ["srcx/a"]),
        ("**/*.{py,pyi}", ["x.pyi", "d/y.py"], ["z.pyc"]),
        ("d/?.txt", ["d/a.txt"], ["d/ab.txt", "d/a/b.txt"]),
        ("[ab]*.md", ["a1.md", "b.md"], ["c.md"]),
        ("[!ab]*.md", ["c.md"], ["a.md"]),
        ("**/test_*.py", ["test_x.py", "t/test_y.py"], ["t/x_test.py"]),
    ],
)
def test_compile_glob(pattern, yes, no):
    rx = compile_glob(pattern)
    for rel in yes:
        assert rx.match(rel), (pattern, rel)
    for rel in no:
        assert not rx.match(rel), (pattern, rel)


def test_sort_key_is_component_wise():
    assert sorted(["a-b", "a/b", "a/a"], key=sort_key) == ["a/a", "a/b", "a-b"]


# ---------------------------------------------------------------- glob tool


async def test_glob_skips_hidden_dirs_unless_named(tmp_path):
    _tree(tmp_path, {"a.yml": "", ".github/ci.yml": "", ".git/x.yml": "", "d/.cache/y.yml": ""})
    out = await GlobTool(tmp_path).call({"pattern": "**/*.yml"})
    assert out == "a.yml"
    out = await GlobTool(tmp_path).call({"pattern": ".github/*.yml"})
    assert out == ".github/ci.yml"
    out = await GlobTool(tmp_path).call({"pattern": "**/.cache/*.yml"})
    assert out == "d/.cache/y.yml"


async def test_glob_honours_gitignore(tmp_path):
    _tree(
        tmp_path,
        {
            ".gitignore": "build/\n*.log\n!keep.log\n",
            "src/a.py": "",
            "src/debug.log": "",
            "keep.log": "",
            "build/out.py": "",
            "src/.gitignore": "generated_*.py\n",
            "src/generated_x.py": "",
            "other/generated_y.py": "",
        },
    )
    tool = GlobTool(tmp_path)
    assert (await tool.call({"pattern": "**/*.py"})).split("\n") == [
        "other/generated_y.py",
        "src/a.py",
    ]
    assert await tool.call({"pattern": "**/*.log"}) == "keep.log"


async def test_glob_uses_enclosing_repo_gitignore(tmp_path):
    _tree(tmp_path, {".git/HEAD": "", ".gitignore": "*.tmp\n", "pkg/a.py": "", "pkg/b.tmp": ""})
    out = await GlobTool(tmp_path).call({"pattern": "*", "path": str(tmp_path / "pkg")})
    assert out == f"{tmp_path}/pkg/a.py"


async def test_glob_into_ignored_dir_still_lists_it(tmp_path):
    _tree(tmp_path, {".git/HEAD": "", ".gitignore": "venv/\n", "venv/lib/site.py": ""})
    out = await GlobTool(tmp_path).call({"pattern": "**/*.py", "path": "venv"})
    assert out == "venv/lib/site.py"


async def test_glob_symlinks(tmp_path):
    _tree(tmp_path, {"real/a.txt": "", "outside/b.txt": ""})
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "link.txt").symlink_to(tmp_path / "real" / "a.txt")
    (tmp_path / "ws" / "linkdir").symlink_to(tmp_path / "outside")
    (tmp_path / "ws" / "loop").symlink_to(tmp_path / "ws")
    out = await GlobTool(tmp_path / "ws").call({"pattern": "**/*"})
    assert out == "link.txt"  # symlinked file listed; symlinked dirs (and loops) not entered


async def test_glob_sorted_and_capped(tmp_path):
    _tree(tmp_path, {f"f{i:02}.txt": "" for i in range(30)})
    out = await GlobTool(tmp_path, max_results=5).call({"pattern": "*.txt"})
    assert out.split("\n") == [f"f{i:02}.txt" for i in range(5)] + ["… and 25 more files"]


async def test_glob_errors(tmp_path):
    with pytest.raises(ToolError, match="invalid glob pattern"):
        await GlobTool(tmp_path).call({"pattern": "[abc"})
    with pytest.raises(ToolError, match="missing 'pattern'"):
        await GlobTool(tmp_path).call({})
    assert await GlobTool(tmp_path).call({"pattern": "*", "path": "nope"}) == "no files matched"


async def test_glob_absolute_pattern(tmp_path):
    _tree(tmp_path, {"x/a.rs": "", "x/b.rs": ""})
    out = await GlobTool().call({"pattern": f"{tmp_path}/x/*.rs"})
    assert out == f"{tmp_path}/x/a.rs\n{tmp_path}/x/b.rs"


def test_glob_metadata():
    assert GlobTool.read_only and GlobTool.concurrency_safe


# ---------------------------------------------------------------- grep tool


@pytest.fixture
def code_tree(tmp_path):
    _tree(
        tmp_path,
        {
            ".gitignore": "dist/\n",
            "a.py": "import os\ndef main():\n    print('hi')  # TODO\n",
            "b/c.py": "x = 1\n# todo later\nTODO: two\n",
            "b/d.txt": "TODO in text\n",
            "dist/e.py": "TODO ignored\n",
            ".venv/f.py": "TODO hidden\n",
            "bin.dat": b"TODO\x00binary\n",
            "latin.txt": "caf\xe9 TODO\n".encode("latin-1"),
            "crlf.txt": b"TODO crlf\r\nnext\r\n",
            "noeol.txt": b"first\nTODO last",
            "long.txt": "TODO " + "x" * 2000 + "\n",
            "u.txt": "日本語 TODO é\n",
        },
    )
    (tmp_path / "link.py").symlink_to(tmp_path / "a.py")
    return tmp_path


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_output(code_tree, engine):
    tool = GrepTool(code_tree, engine=engine, max_line_chars=30)
    out = await tool.call({"pattern": "TODO"})
    assert tool.last_engine == engine
    assert out.split("\n") == [
        "a.py:3:     print('hi')  # TODO",
        "b/c.py:3: TODO: two",
        "b/d.txt:1: TODO in text",
        "crlf.txt:1: TODO crlf",
        "latin.txt:1: caf\ufffd TODO",
        "link.py:3:     print('hi')  # TODO",
        "long.txt:1: TODO " + "x" * 25 + "…",
        "noeol.txt:2: TODO last",
        "u.txt:1: 日本語 TODO é",
    ]


@pytest.mark.parametrize(
    ("pattern", "include"),
    [
        ("TODO", None),
        (r"(?i)todo", None),
        (r"^\s+print", None),
        (r"\d", None),
        (r"\w+\(\)", "*.py"),
        (r"TODO(?!:)", None),
        (r"(?<=# )TODO", None),
        (r"^$", None),
        (r"last$", None),
        ("import|x =", "*.{py,txt}"),
        ("TODO", "b/*"),
        ("日本", None),
        ("TODO é$", None),
    ],
)
async def test_grep_engines_agree(code_tree, pattern, include):
    if system_grep() is None:
        pytest.skip("no grep with -P on PATH")
    args = {"pattern": pattern} | ({"include": include} if include else {})
    by_python = await GrepTool(code_tree, engine="python").call(args)
    by_grep = await GrepTool(code_tree, engine="grep").call(args)
    assert by_python == by_grep
    assert by_python != "no matches found" or pattern == "^$"


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_cap(tmp_path, engine):
    _tree(tmp_path, {"many.txt": "hit\n" * 50})
    out = await GrepTool(tmp_path, engine=engine, max_results=3).call({"pattern": "hit"})
    assert out.split("\n") == [
        "many.txt:1: hit",
        "many.txt:2: hit",
        "many.txt:3: hit",
        "… and 47 more matches",
    ]


@pytest.mark.parametrize("engine", ENGINES)
async def test_grep_single_file_and_errors(code_tree, engine):
    tool = GrepTool(code_tree, engine=engine)
    assert await tool.call({"pattern": "x =", "path": "b/c.py"}) == "b/c.py:1: x = 1"
    assert await tool.call({"pattern": "nothing-here"}) == "no matches found"
    with pytest.raises(ToolError, match="invalid regex pattern"):
        await tool.call({"pattern": "(unclosed"})
    with pytest.raises(ToolError, match="invalid include pattern"):
        await tool.call({"pattern": "x", "include": "[abc"})
    with pytest.raises(ToolError, match="path does not exist: nope"):
        await tool.call({"pattern": "x", "path": "nope"})


async def test_grep_falls_back_when_grep_rejects_the_pattern(tmp_path):
    """PCRE caps group names at 32 characters, Python does not: when grep -P rejects a pattern
    that Python accepts, the Python scanner answers instead."""
    if system_grep() is None:
        pytest.skip("no grep with -P on PATH")
    _tree(tmp_path, {"a.txt": "abab\nabcd\n"})
    tool = GrepTool(tmp_path, engine="grep")
    name = "g" * 40
    out = await tool.call({"pattern": f"(?P<{name}>ab)(?P={name})"})
    assert out == "a.txt:1: abab"
    assert tool.last_engine == "python"


def test_grep_engine_validation():
    with pytest.raises(ValueError):
        GrepTool(engine="ripgrep")


def test_grep_metadata():
    assert GrepTool.read_only and GrepTool.concurrency_safe


@pytest.mark.parametrize("engine", ENGINES)
async def test_special_files_never_block_a_search(tmp_path, engine):
    """A FIFO in the tree would block a reader forever; only regular files are searched."""
    _tree(tmp_path, {"a.txt": "needle\n"})
    os.mkfifo(tmp_path / "pipe.txt")
    out = await GrepTool(tmp_path, engine=engine).call({"pattern": "needle"})
    assert out == "a.txt:1: needle"
    assert await GlobTool(tmp_path).call({"pattern": "*.txt"}) == "a.txt"


def _pids_reading(path: str) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    if path.encode() in fh.read():
                        pids.append(int(entry))
            except OSError:
                continue
    return pids


async def test_cancelled_grep_processes_are_killed(tmp_path):
    """grep blocked on a FIFO stands in for a long search: cancelling the call kills it."""
    exe = system_grep()
    if exe is None:
        pytest.skip("no grep with -P on PATH")
    fifo = str(tmp_path / "never-written")
    os.mkfifo(fifo)
    task = asyncio.create_task(grep_search(exe, "x", [fifo]))
    for _ in range(200):
        if _pids_reading(fifo):
            break
        await asyncio.sleep(0.01)
    assert _pids_reading(fifo), "grep did not start"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _pids_reading(fifo) == []


async def test_glob_cap_keeps_the_first_paths_in_order_and_counts_the_rest(tmp_path):
    # only max_results paths are held while walking; they must still be the first in order
    for d in ("b", "a", "c"):
        (tmp_path / d).mkdir()
        for i in range(30):
            (tmp_path / d / f"f{i:02d}.txt").write_text("")
    out = await GlobTool(tmp_path, max_results=4).call({"pattern": "**/*.txt"})
    assert out.split("\n") == [
        "a/f00.txt",
        "a/f01.txt",
        "a/f02.txt",
        "a/f03.txt",
        "… and 86 more files",
    ]
