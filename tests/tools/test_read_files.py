"""ReadTool on awkward files: binary, non-UTF-8, symlinks, and the FileState it records."""

from __future__ import annotations

import pytest

from clawnb.tools import FileState, ReadTool, ToolError


async def test_binary_file_is_refused(tmp_path):
    target = tmp_path / "img.bin"
    target.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ToolError, match="looks like a binary file"):
        await ReadTool().call({"path": str(target)})


async def test_non_utf8_is_decoded_with_replacement(tmp_path):
    target = tmp_path / "latin.txt"
    target.write_bytes("café\n".encode("latin-1"))
    assert await ReadTool().call({"path": str(target)}) == "caf\ufffd\n"


async def test_symlink_is_followed_and_recorded_for_its_target(tmp_path):
    (tmp_path / "real.txt").write_text("data")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    state = FileState()
    assert await ReadTool(tmp_path, state).call({"path": "link.txt"}) == "data"
    assert (tmp_path / "real.txt") in state
    state.check_fresh(tmp_path / "real.txt", "editing")  # no error: it was read


async def test_failed_read_records_nothing(tmp_path):
    state = FileState()
    with pytest.raises(ToolError):
        await ReadTool(tmp_path, state).call({"path": "missing.txt"})
    assert (tmp_path / "missing.txt") not in state
