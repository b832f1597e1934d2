"""WriteTool and EditTool beyond the book: atomic writes, symlinks, quote folding, diffs and
read-before-edit."""

from __future__ import annotations

import os
import stat

import pytest

from clawnb.tools import EditTool, FileState, ReadTool, ToolError, WriteTool
from clawnb.tools.edit import find_unique, normalize_quotes, render_diff
from clawnb.tools.write import atomic_write

# ---------------------------------------------------------------- write


async def test_write_is_atomic_when_the_write_fails(tmp_path, monkeypatch):
    """A failure half-way leaves the old file intact and no temp file behind."""
    target = tmp_path / "f.txt"
    target.write_text("old content")
    real_write = os.write
    calls = {"n": 0}

    def failing_write(fd, data):
        calls["n"] += 1
        real_write(fd, bytes(data)[:3])  # some bytes land in the temp file ...
        raise OSError(28, "No space left on device")  # ... then the disk is full

    monkeypatch.setattr(os, "write", failing_write)
    with pytest.raises(ToolError, match="failed to write"):
        await WriteTool().call({"path": str(target), "content": "new content that is long"})
    monkeypatch.undo()
    assert calls["n"] == 1
    assert target.read_text() == "old content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def test_atomic_write_replaces_in_one_step(tmp_path):
    """The file is replaced by rename: a reader holding the old file keeps the old bytes."""
    target = tmp_path / "f.txt"
    target.write_text("old")
    with open(target) as held:
        atomic_write(target, b"new")
        assert held.read() == "old"  # same inode, untouched
    assert target.read_text() == "new"


async def test_write_keeps_permissions_of_existing_file(tmp_path):
    target = tmp_path / "run.sh"
    target.write_text("#!/bin/sh\n")
    target.chmod(0o751)
    await WriteTool().call({"path": str(target), "content": "#!/bin/sh\necho hi\n"})
    assert stat.S_IMODE(target.stat().st_mode) == 0o751


async def test_write_keeps_all_permission_bits_of_existing_file_whatever_the_umask(tmp_path):
    # 0o666 is also what a new file asks for: the old file's bits still win over the umask
    target = tmp_path / "shared.txt"
    target.write_text("old")
    target.chmod(0o666)
    old = os.umask(0o022)
    try:
        await WriteTool().call({"path": str(target), "content": "new"})
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666


async def test_write_new_file_respects_umask(tmp_path):
    old = os.umask(0o027)
    try:
        await WriteTool().call({"path": str(tmp_path / "n.txt"), "content": "x"})
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "n.txt").stat().st_mode) == 0o640


async def test_write_through_symlink_replaces_target_not_link(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    await WriteTool().call({"path": str(link), "content": "new"})
    assert link.is_symlink()
    assert real.read_text() == "new"


async def test_write_relative_path_uses_workspace(tmp_path):
    result = await WriteTool(tmp_path).call({"path": "sub/x.txt", "content": "hi"})
    assert result == "wrote sub/x.txt"
    assert (tmp_path / "sub" / "x.txt").read_text() == "hi"


async def test_write_to_directory_is_a_clear_error(tmp_path):
    with pytest.raises(ToolError, match="is a directory"):
        await WriteTool().call({"path": str(tmp_path), "content": "x"})


async def test_write_non_ascii_content_is_utf8(tmp_path):
    target = tmp_path / "u.txt"
    await WriteTool().call({"path": str(target), "content": "héllo “world” 日本"})
    assert target.read_bytes() == "héllo “world” 日本".encode()


# ---------------------------------------------------------------- edit


def test_normalize_quotes_keeps_length():
    text = "‘a’ “b” ′ ″"
    assert normalize_quotes(text) == "'a' \"b\" ' \""
    assert len(normalize_quotes(text)) == len(text)


async def test_edit_with_straight_quotes_replaces_curly_original(tmp_path):
    target = tmp_path / "q.py"
    target.write_text("a = “hello”\nb = ‘keep’\n")
    result = await EditTool().call(
        {"path": str(target), "old_string": 'a = "hello"', "new_string": 'a = "bye"'}
    )
    # Only the matched span changed; the untouched line keeps its curly quotes.
    assert target.read_text() == 'a = "bye"\nb = ‘keep’\n'
    assert "normalising quotes" in result


async def test_edit_quote_folding_still_requires_uniqueness(tmp_path):
    target = tmp_path / "q.txt"
    target.write_text("say “hi”\nsay \u201chi\u201d\n")
    with pytest.raises(ToolError, match="appears 2 times"):
        await EditTool().call({"path": str(target), "old_string": 'say "hi"', "new_string": "x"})


async def test_edit_error_messages_name_the_count(tmp_path):
    target = tmp_path / "e.txt"
    target.write_text("x x x")
    with pytest.raises(ToolError) as many:
        await EditTool().call({"path": str(target), "old_string": "x", "new_string": "y"})
    assert str(many.value) == f"old_string appears 3 times in '{target}', must be unique"
    with pytest.raises(ToolError) as none:
        await EditTool().call({"path": str(target), "old_string": "zz", "new_string": "y"})
    assert str(none.value) == f"old_string not found in '{target}'"
    assert target.read_text() == "x x x"


async def test_edit_result_has_diff_with_line_numbers(tmp_path):
    target = tmp_path / "d.txt"
    target.write_text("one\ntwo\nthree\nfour\nfive\nsix\n")
    result = await EditTool().call(
        {"path": str(target), "old_string": "four", "new_string": "FOUR\nfour-b"}
    )
    assert result.startswith(f"edited {target}\n\n@@ -2,5 +2,6 @@")
    lines = result.split("\n")
    assert "-    4 | four" in lines
    assert "+    4 | FOUR" in lines
    assert "+    5 | four-b" in lines
    assert "     3 | three" in lines  # context uses the new numbering
    assert "     6 | five" in lines


def test_render_diff_caps_length():
    before = "\n".join(f"l{i}" for i in range(100))
    after = "\n".join(f"L{i}" for i in range(100))
    diff = render_diff(before, after)
    assert diff.splitlines()[-1].startswith("… (")
    assert len(diff.splitlines()) == 41


async def test_edit_crlf_file_with_lf_old_string(tmp_path):
    target = tmp_path / "w.txt"
    target.write_bytes(b"a\r\nb\r\nc\r\n")
    result = await EditTool().call(
        {"path": str(target), "old_string": "a\nb", "new_string": "A\nB"}
    )
    assert target.read_bytes() == b"A\r\nB\r\nc\r\n"
    assert "CRLF" in result


async def test_edit_refuses_binary_and_non_utf8(tmp_path):
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"abc\x00def")
    with pytest.raises(ToolError, match="binary"):
        await EditTool().call({"path": str(binary), "old_string": "abc", "new_string": "x"})
    latin = tmp_path / "l.txt"
    latin.write_bytes("café".encode("latin-1"))
    with pytest.raises(ToolError, match="not valid UTF-8"):
        await EditTool().call({"path": str(latin), "old_string": "caf", "new_string": "x"})
    assert latin.read_bytes() == "café".encode("latin-1")


async def test_edit_through_symlink(tmp_path):
    real = tmp_path / "real.txt"
    real.write_text("hello world")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    await EditTool().call({"path": str(link), "old_string": "world", "new_string": "there"})
    assert link.is_symlink()
    assert real.read_text() == "hello there"


async def test_edit_empty_or_identical_strings_are_errors(tmp_path):
    target = tmp_path / "e.txt"
    target.write_text("abc")
    with pytest.raises(ToolError, match="must not be empty"):
        await EditTool().call({"path": str(target), "old_string": "", "new_string": "x"})
    with pytest.raises(ToolError, match="identical"):
        await EditTool().call({"path": str(target), "old_string": "a", "new_string": "a"})


def test_find_unique_exact_wins_over_folded():
    text = "it’s and it's"
    start, end, how = find_unique(text, "it's", "p")
    assert how == "" and start == 9 and text[start:end] == "it's"


# ---------------------------------------------------------------- read-before-edit


@pytest.fixture
def tools(tmp_path):
    state = FileState()
    return ReadTool(tmp_path, state), WriteTool(tmp_path, state), EditTool(tmp_path, state)


async def test_edit_unread_file_is_refused(tmp_path, tools):
    _, _, edit = tools
    (tmp_path / "f.txt").write_text("hello")
    with pytest.raises(ToolError, match="must read 'f.txt' before editing"):
        await edit.call({"path": "f.txt", "old_string": "hello", "new_string": "bye"})
    assert (tmp_path / "f.txt").read_text() == "hello"


async def test_overwrite_unread_file_is_refused_but_new_file_is_fine(tmp_path, tools):
    _, write, _ = tools
    (tmp_path / "old.txt").write_text("keep me")
    with pytest.raises(ToolError, match="before overwriting"):
        await write.call({"path": "old.txt", "content": "gone"})
    assert (tmp_path / "old.txt").read_text() == "keep me"
    assert await write.call({"path": "new.txt", "content": "fresh"}) == "wrote new.txt"


async def test_read_then_edit_then_edit_again(tmp_path, tools):
    read, write, edit = tools
    (tmp_path / "f.txt").write_text("a b c")
    await read.call({"path": "f.txt"})
    await edit.call({"path": "f.txt", "old_string": "a", "new_string": "x"})
    # the agent's own edit refreshed the record: a second edit needs no re-read
    await edit.call({"path": "f.txt", "old_string": "c", "new_string": "z"})
    # and a file the agent created itself can be edited and overwritten
    await write.call({"path": "g.txt", "content": "1"})
    await edit.call({"path": "g.txt", "old_string": "1", "new_string": "2"})
    await write.call({"path": "g.txt", "content": "3"})
    assert (tmp_path / "f.txt").read_text() == "x b z"
    assert (tmp_path / "g.txt").read_text() == "3"


async def test_file_changed_behind_the_agents_back(tmp_path, tools):
    read, write, edit = tools
    target = tmp_path / "f.txt"
    target.write_text("version 1")
    await read.call({"path": "f.txt"})
    target.write_text("version 2 by someone else")
    st = target.stat()
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    with pytest.raises(ToolError, match="modified on disk since you last read it"):
        await edit.call({"path": "f.txt", "old_string": "version", "new_string": "v"})
    with pytest.raises(ToolError, match="modified on disk"):
        await write.call({"path": "f.txt", "content": "mine"})
    assert target.read_text() == "version 2 by someone else"
    await read.call({"path": "f.txt"})
    await edit.call({"path": "f.txt", "old_string": "version", "new_string": "v"})
    assert target.read_text() == "v 2 by someone else"


async def test_same_mtime_but_new_size_is_still_detected(tmp_path, tools):
    read, _, edit = tools
    target = tmp_path / "f.txt"
    target.write_text("short")
    await read.call({"path": "f.txt"})
    st = target.stat()
    target.write_text("much longer content")
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # same timestamp, new size
    with pytest.raises(ToolError, match="modified on disk"):
        await edit.call({"path": "f.txt", "old_string": "much", "new_string": "x"})


async def test_read_through_symlink_counts_for_the_target(tmp_path, tools):
    read, _, edit = tools
    (tmp_path / "real.txt").write_text("abc")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    await read.call({"path": "link.txt"})
    await edit.call({"path": "real.txt", "old_string": "b", "new_string": "B"})
    assert (tmp_path / "real.txt").read_text() == "aBc"


async def test_without_file_state_there_is_no_guard(tmp_path):
    """The book's tools (no FileState) edit files they never read."""
    target = tmp_path / "f.txt"
    target.write_text("hello")
    await EditTool().call({"path": str(target), "old_string": "hello", "new_string": "bye"})
    assert target.read_text() == "bye"


async def test_edit_that_changes_nothing_says_so(tmp_path):
    target = tmp_path / "q.txt"
    target.write_text("say \u201chi\u201d\n")
    out = await EditTool().call(
        {"path": str(target), "old_string": 'say "hi"', "new_string": "say \u201chi\u201d"}
    )
    assert out.endswith("(no change: the file already read like that)")
    assert target.read_text() == "say \u201chi\u201d\n"
