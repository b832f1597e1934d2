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


async def test_max_bytes_set_on_an_instance_refuses_a_bigger_whole_read(tmp_path):
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    tool = ReadTool(tmp_path)
    tool.max_bytes = 8
    with pytest.raises(ToolError, match="read it in windows with offset and limit"):
        await tool.call({"path": "notes.txt"})
    assert await tool.call({"path": "notes.txt", "offset": 2, "limit": 1}) == "2\ttwo"
    assert await ReadTool(tmp_path).call({"path": "notes.txt"}) == "one\ntwo\nthree\n"


# -- bounded memory --------------------------------------------------------------------------

_PEAK_RSS = """
import asyncio, sys
from clawnb.tools import ReadTool
tool = ReadTool(sys.argv[1])
out = asyncio.run(tool.call({"path": "big.log", "limit": 1}))
assert out == "1\\tline 1", out
out = asyncio.run(tool.call({"path": "big.log", "offset": 9999, "limit": 2}))
assert out == "9999\\tline 9999\\n10000\\tline 10000", out
try:
    asyncio.run(tool.call({"path": "big.log"}))
except Exception as exc:
    print("whole:", exc)
# VmHWM: this process's own peak (ru_maxrss would count the forked parent's pages too)
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print("peak_kib", int(hwm.split()[1]))
"""


def test_read_with_limit_streams_a_2gb_sparse_file_under_100mb_rss(tmp_path):
    import subprocess
    import sys

    big = tmp_path / "big.log"
    with open(big, "wb") as fh:
        fh.write(b"".join(b"line %d\n" % i for i in range(1, 10001)))
        fh.truncate(2 * 1024**3)  # a 2 GiB file: the rest is a hole (no disk used)
    proc = subprocess.run(
        [sys.executable, "-c", _PEAK_RSS, str(tmp_path)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "whole: 'big.log' is 2.0 GiB" in proc.stdout
    assert "read it in windows with offset and limit" in proc.stdout
    peak_mib = int(proc.stdout.split("peak_kib")[1]) / 1024
    assert peak_mib < 100, f"peak RSS {peak_mib:.0f} MiB"


async def test_an_over_long_line_is_cut_in_a_window(tmp_path):
    (tmp_path / "min.js").write_bytes(b"short\n" + b"x" * 1_000_000 + b"\nafter\n")
    out = await ReadTool(tmp_path).call({"path": "min.js", "offset": 2, "limit": 2})
    first, second = out.split("\n")
    assert first.startswith("2\txxxx") and len(first) < 70_000
    assert first.endswith(f"[... {1_000_000 - 64 * 1024} more bytes of this line not shown ...]")
    assert second == "3\tafter"


async def test_windows_count_lines_as_a_whole_read_would(tmp_path):
    (tmp_path / "mixed.txt").write_bytes(b"a\r\nb\rc\n\nd")
    out = await ReadTool(tmp_path).call({"path": "mixed.txt", "offset": 2, "limit": 10})
    assert out == "2\tb\n3\tc\n4\t\n5\td"
    assert out.split("\n") == [
        f"{n}\t{line}" for n, line in enumerate("a\r\nb\rc\n\nd".splitlines()[1:], 2)
    ]
