"""notebook_read and notebook_edit on the repository's own notebooks and on hostile ones:
round trips, only-the-intended-cell-changes, ids, validation, clear errors."""

from __future__ import annotations

import base64
import json
import re
import struct
import sys
import zlib
from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clawnb.tools import EditTool, FileState, ToolError, WriteTool, default_tools
from clawnb.tools.ipynb import (
    NotebookEditTool,
    NotebookReadTool,
    image_size,
    render_notebook,
    structural_errors,
)

ROOT = Path(__file__).resolve().parents[2]
REPO_NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\x7f" * (3 * width) for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof0 + b"\xff\xd9"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def make_nb(cells: list[dict], minor: int = 5) -> dict:
    nb = nbformat.v4.new_notebook()
    nb.nbformat_minor = minor
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nb.cells = [nbformat.from_dict(c) for c in cells]
    return json.loads(nbformat.writes(nb))


def code(src: str, cid: str, outputs: list | None = None, count: int | None = 1) -> dict:
    return {
        "cell_type": "code",
        "id": cid,
        "metadata": {"tags": ["keep"]},
        "source": src,
        "outputs": outputs or [],
        "execution_count": count,
    }


def md(src: str, cid: str) -> dict:
    return {"cell_type": "markdown", "id": cid, "metadata": {}, "source": src}


def save(path: Path, nb: dict) -> Path:
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def tools(tmp_path):
    state = FileState()
    return NotebookReadTool(tmp_path, state), NotebookEditTool(tmp_path, state)


@pytest.fixture
def analysis(tmp_path):
    """A notebook with text, an image, an error and a markdown cell."""
    image = b64(png(640, 480))
    cells = [
        md("# Analysis", "intro"),
        code(
            "import pandas as pd\ndf = pd.read_csv('x.csv')",
            "load",
            [{"output_type": "stream", "name": "stdout", "text": "loaded 10 rows\n"}],
            count=1,
        ),
        code(
            "df.plot()",
            "plot",
            [
                {
                    "output_type": "display_data",
                    "data": {"image/png": image, "text/plain": "<Figure size 640x480>"},
                    "metadata": {},
                }
            ],
            count=2,
        ),
        code(
            "1/0",
            "boom",
            [
                {
                    "output_type": "error",
                    "ename": "ZeroDivisionError",
                    "evalue": "division by zero",
                    "traceback": ["\x1b[31mTraceback...\x1b[0m", "ZeroDivisionError: ..."],
                }
            ],
            count=3,
        ),
    ]
    return save(tmp_path / "analysis.ipynb", make_nb(cells))


def cells_of(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def validates(path: Path) -> None:
    nbformat.validate(nbformat.read(path, as_version=nbformat.NO_CONVERT))


# ---------------------------------------------------------------- notebook_read


async def test_read_shows_numbered_cells_ids_and_summarised_outputs(tools, analysis):
    read, _ = tools
    text = await read.call({"path": "analysis.ipynb"})
    assert text.splitlines()[0] == "analysis.ipynb: nbformat 4.5, 4 cells, kernel Python 3"
    assert "── cell 1 · id intro · markdown ──\n# Analysis" in text
    assert "── cell 2 · id load · code · In [1] ──\nimport pandas as pd" in text
    assert "[stdout] loaded 10 rows" in text
    assert "[image/png 640×480]" in text
    assert "<Figure size 640x480>" in text
    assert "[error] ZeroDivisionError: division by zero" in text
    assert "Traceback" not in text  # the exception line, not the traceback


async def test_read_offset_and_limit_select_cells(tools, analysis):
    read, _ = tools
    text = await read.call({"path": "analysis.ipynb", "offset": 2, "limit": 2})
    assert "showing cells 2-3 of 4" in text
    assert "cell 1 ·" not in text and "cell 4 ·" not in text
    assert "cell 2 ·" in text and "cell 3 ·" in text
    assert "1 more cells (read on with offset=4)" in text


async def test_a_long_notebook_stops_at_a_cell_boundary_and_says_where_to_go_on(tools, tmp_path):
    read, _ = tools
    cells = [code("\n".join(f"x{i}_{j} = {j}" for j in range(100)), f"c{i}") for i in range(60)]
    save(tmp_path / "long.ipynb", make_nb(cells))
    text = await read.call({"path": "long.ipynb"})
    assert len(text) < 41_000
    last = max(int(n) for n in re.findall(r"── cell (\d+) ·", text))
    assert f"showing cells 1-{last} of 60" in text
    assert text.rstrip().endswith(f"more cells (read on with offset={last + 1})")
    assert text.count("x0_99 = 99") == 1  # whole cells only
    more = await read.call({"path": "long.ipynb", "offset": last + 1})
    assert f"── cell {last + 1} ·" in more


async def test_read_can_leave_outputs_out(tools, analysis):
    read, _ = tools
    text = await read.call({"path": "analysis.ipynb", "outputs": False})
    assert "image/png" not in text and "(1 outputs not shown)" in text


async def test_read_truncates_a_huge_output(tools, tmp_path):
    read, _ = tools
    huge = "".join(f"line {i}\n" for i in range(200_000))  # ~1.5 MB of stdout
    nb = make_nb(
        [
            code(
                "for i in range(200000): print(f'line {i}')",
                "loop",
                [{"output_type": "stream", "name": "stdout", "text": huge}],
            )
        ]
    )
    save(tmp_path / "huge.ipynb", nb)
    text = await read.call({"path": "huge.ipynb"})
    assert len(text) < 3000
    assert "line 0" in text and "line 199999" in text  # head and tail
    assert "more lines" in text


async def test_read_sizes_png_jpeg_gif_and_survives_broken_images(tools, tmp_path):
    read, _ = tools
    gif = b"GIF89a" + struct.pack("<HH", 32, 16) + b"\x00" * 10
    outputs = [
        {
            "output_type": "display_data",
            "metadata": {},
            "data": {"image/jpeg": b64(jpeg(1024, 768))},
        },
        {"output_type": "display_data", "metadata": {}, "data": {"image/gif": b64(gif)}},
        {
            "output_type": "display_data",
            "metadata": {},
            "data": {"image/png": b64(b"\x00\xffnot a png")},
        },
        {
            "output_type": "display_data",
            "metadata": {},
            "data": {"application/pdf": b64(b"%PDF" * 500)},
        },
        {
            "output_type": "display_data",
            "metadata": {},
            "data": {
                "application/vnd.jupyter.widget-view+json": {
                    "model_id": "abc",
                    "version_major": 2,
                    "version_minor": 0,
                }
            },
        },
    ]
    save(tmp_path / "images.ipynb", make_nb([code("show()", "img", outputs)]))
    text = await read.call({"path": "images.ipynb"})
    assert "[image/jpeg 1024×768]" in text
    assert "[image/gif 32×16]" in text
    assert "[image/png 12 B]" in text  # unreadable header: its size instead
    assert "[application/pdf 2.0 KB]" in text
    assert "[widget]" in text
    assert "JVBER" not in text  # no base64 reaches the model


async def test_read_survives_cells_that_are_not_cells(tools, tmp_path):
    read, _ = tools
    nb = make_nb([code("x", "ok")])
    nb["cells"] += [7, {"cell_type": "code", "source": ["a", 1], "metadata": [], "outputs": "?"}]
    save(tmp_path / "odd.ipynb", nb)
    text = await read.call({"path": "odd.ipynb"})
    assert "── cell 2 · not a cell (int) ──" in text
    assert "── cell 3 · no id · code" in text
    assert "warning: this notebook is not valid nbformat: cell 2 is not an object" in text


def test_image_size_reads_only_headers():
    assert image_size("image/png", b64(png(3, 2))) == (3, 2)
    assert image_size("image/png", [b64(png(7, 9))[:20], b64(png(7, 9))[20:]]) == (7, 9)
    assert image_size("image/jpeg", b64(jpeg(640, 480))) == (640, 480)
    assert image_size("image/jpeg", "////") is None
    assert image_size("image/png", 42) is None


async def test_read_shows_every_cell_of_the_repository_notebooks(tools, tmp_path):
    read, _ = tools
    for source in REPO_NOTEBOOKS:
        target = tmp_path / source.name
        target.write_bytes(source.read_bytes())
        text = await read.call({"path": source.name})
        nb = nbformat.read(source, as_version=4)
        assert f"{len(nb.cells)} cell" in text.splitlines()[0]
        for number, cell in enumerate(nb.cells, 1):
            assert f"── cell {number} ·" in text
            first = cell.source.splitlines()[0] if cell.source else "(empty)"
            assert first in text


async def test_read_refuses_invalid_json_and_other_files_clearly(tools, tmp_path):
    read, _ = tools
    (tmp_path / "broken.ipynb").write_text('{"cells": [ {"secret": "sk-12345"', encoding="utf-8")
    with pytest.raises(ToolError, match=r"not valid notebook JSON: .* line 1") as info:
        await read.call({"path": "broken.ipynb"})
    assert "sk-12345" not in str(info.value)  # the file's content is never echoed
    (tmp_path / "old.ipynb").write_text(json.dumps({"nbformat": 3, "worksheets": []}))
    with pytest.raises(ToolError, match="nbformat 3 notebook"):
        await read.call({"path": "old.ipynb"})
    (tmp_path / "list.ipynb").write_text("[1, 2]")
    with pytest.raises(ToolError, match="no 'cells' list"):
        await read.call({"path": "list.ipynb"})
    (tmp_path / "bin.ipynb").write_bytes(b"\x89PNG\x00\xff\xfe")
    with pytest.raises(ToolError, match="not UTF-8"):
        await read.call({"path": "bin.ipynb"})
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ToolError, match="not a .ipynb file"):
        await read.call({"path": "notes.txt"})
    with pytest.raises(ToolError, match="does not exist"):
        await read.call({"path": "missing.ipynb"})


# ---------------------------------------------------------------- notebook_edit


async def test_replace_changes_only_that_cell_and_clears_its_outputs(tools, analysis):
    read, edit = tools
    before = cells_of(analysis)
    await read.call({"path": "analysis.ipynb"})
    result = await edit.call({"path": "analysis.ipynb", "cell_id": "plot", "source": "df.hist()"})
    assert result.startswith("edited analysis.ipynb: cell 3 (id plot, code) replaced")
    assert "-    1 | df.plot()" in result and "+    1 | df.hist()" in result
    after = cells_of(analysis)
    validates(analysis)
    assert len(after) == len(before)
    for i, (old, new) in enumerate(zip(before, after, strict=True)):
        if i != 2:
            assert new == old, f"cell {i + 1} changed"
    edited = after[2]
    assert "".join(edited["source"]) == "df.hist()"
    assert edited["outputs"] == [] and edited["execution_count"] is None
    assert edited["id"] == "plot" and edited["metadata"] == {"tags": ["keep"]}


async def test_edit_of_a_repository_notebook_changes_only_the_cells_lines(tools, tmp_path):
    """A notebook as Jupyter (or our generator) saved it: the file's text changes only where
    the edited cell is; every other line stays byte for byte."""
    read, edit = tools
    for source in REPO_NOTEBOOKS[:6]:
        target = tmp_path / source.name
        original = source.read_bytes()
        target.write_bytes(original)
        await read.call({"path": source.name})
        nb = nbformat.read(source, as_version=4)
        number = next(i for i, c in enumerate(nb.cells, 1) if c.cell_type == "code")
        await edit.call({"path": source.name, "cell_number": number, "source": "x = 1\ny = 2"})
        validates(target)
        old_lines = original.decode().splitlines()
        new_lines = target.read_text(encoding="utf-8").splitlines()
        import difflib

        changed = [
            op
            for op in difflib.SequenceMatcher(None, old_lines, new_lines).get_opcodes()
            if op[0] != "equal"
        ]
        assert changed, source.name
        first, last = changed[0][1], changed[-1][2]
        # all changed lines lie inside the one cell's JSON object, as the file stores it (its
        # source a list of lines, not the one string nbformat hands back)
        stored = json.loads(original)["cells"][number - 1]
        assert last - first < len(json.dumps(stored, indent=1).splitlines()) + 4
        after = nbformat.read(target, as_version=4)
        for i, (a, b) in enumerate(zip(nb.cells, after.cells, strict=True), 1):
            if i != number:
                assert a == b, (source.name, i)
        assert after.cells[number - 1].source == "x = 1\ny = 2"


async def test_edit_keeps_huge_outputs_and_images_of_other_cells_byte_for_byte(tools, tmp_path):
    read, edit = tools
    huge = "".join(f"row {i}\n" for i in range(150_000))
    image = b64(png(800, 600))
    nb = make_nb(
        [
            code("print(rows)", "log", [{"output_type": "stream", "name": "stdout", "text": huge}]),
            code(
                "plot()",
                "fig",
                [{"output_type": "display_data", "metadata": {}, "data": {"image/png": image}}],
            ),
            md("notes", "notes"),
        ]
    )
    path = save(tmp_path / "big.ipynb", nb)
    before = cells_of(path)
    await read.call({"path": "big.ipynb"})
    await edit.call({"path": "big.ipynb", "cell_id": "notes", "source": "better notes"})
    after = cells_of(path)
    assert after[:2] == before[:2]
    assert after[1]["outputs"][0]["data"]["image/png"] == image
    assert "".join(after[2]["source"]) == "better notes"
    validates(path)


async def test_crlf_and_ascii_escaped_notebooks_keep_their_layout(tools, tmp_path):
    read, edit = tools
    nb = make_nb([md("Café ☕", "m"), code("x = 1", "c")])
    text = json.dumps(nb, indent=1, ensure_ascii=True) + "\n"
    path = tmp_path / "win.ipynb"
    path.write_bytes(text.replace("\n", "\r\n").encode())
    await read.call({"path": "win.ipynb"})
    await edit.call({"path": "win.ipynb", "cell_id": "c", "source": "x = 2"})
    data = path.read_bytes()
    assert data.count(b"\r\n") == data.count(b"\n")  # every line end is still CRLF
    assert b"Caf\\u00e9 \\u2615" in data  # escapes kept as the file had them
    validates(path)


async def test_insert_after_and_before_with_new_ids(tools, analysis):
    read, edit = tools
    await read.call({"path": "analysis.ipynb"})
    out = await edit.call(
        {"path": "analysis.ipynb", "action": "insert", "cell_id": "load", "source": "df.head()"}
    )
    assert "cell 3 (id " in out and "code) inserted" in out
    await edit.call(
        {
            "path": "analysis.ipynb",
            "action": "insert",
            "cell_number": 1,
            "position": "before",
            "source": "Notes",
            "cell_type": "markdown",
        }
    )
    after = cells_of(analysis)
    validates(analysis)
    ids = [c["id"] for c in after]
    assert ids[0] not in ("intro", "load", "plot", "boom") and ids[1:3] == ["intro", "load"]
    assert ids[4:] == ["plot", "boom"]
    assert len(set(ids)) == len(ids)
    assert after[0]["cell_type"] == "markdown" and "outputs" not in after[0]
    assert "".join(after[3]["source"]) == "df.head()" and after[3]["outputs"] == []


async def test_insert_without_a_target_appends(tools, analysis):
    read, edit = tools
    await read.call({"path": "analysis.ipynb"})
    await edit.call({"path": "analysis.ipynb", "action": "insert", "source": "print('end')"})
    assert "".join(cells_of(analysis)[-1]["source"]) == "print('end')"


async def test_delete_removes_exactly_one_cell(tools, analysis):
    read, edit = tools
    before = cells_of(analysis)
    await read.call({"path": "analysis.ipynb"})
    out = await edit.call({"path": "analysis.ipynb", "action": "delete", "cell_id": "boom"})
    assert "cell 4 (id boom, code) deleted" in out and "-    1 | 1/0" in out
    assert cells_of(analysis) == before[:3]
    validates(analysis)


async def test_set_type_code_to_markdown_drops_code_only_fields(tools, analysis):
    read, edit = tools
    await read.call({"path": "analysis.ipynb"})
    out = await edit.call({"path": "analysis.ipynb", "cell_id": "boom", "cell_type": "markdown"})
    assert "type: code → markdown" in out
    cell = cells_of(analysis)[3]
    assert cell["cell_type"] == "markdown" and "".join(cell["source"]) == "1/0"
    assert "outputs" not in cell and "execution_count" not in cell
    validates(analysis)


async def test_nbformat_44_notebook_keeps_its_version_and_gets_no_ids(tools, tmp_path):
    read, edit = tools
    nb = make_nb([code("a = 1", "x1"), code("b = 2", "x2")], minor=4)
    for cell in nb["cells"]:
        del cell["id"]
    path = save(tmp_path / "old.ipynb", nb)
    text = await read.call({"path": "old.ipynb"})
    assert "nbformat 4.4" in text and "── cell 1 · no id · code" in text
    await edit.call({"path": "old.ipynb", "action": "insert", "cell_number": 1, "source": "c = 3"})
    await edit.call({"path": "old.ipynb", "cell_number": 3, "source": "b = 20"})
    data = json.loads(path.read_text())
    assert data["nbformat_minor"] == 4
    assert all("id" not in c for c in data["cells"])
    assert ["".join(c["source"]) for c in data["cells"]] == ["a = 1", "c = 3", "b = 20"]
    validates(path)


async def test_missing_ids_in_a_45_notebook_are_added_and_said(tools, tmp_path):
    read, edit = tools
    nb = make_nb([code("a = 1", "x1"), code("b = 2", "x2"), md("m", "x3")])
    del nb["cells"][0]["id"]
    nb["cells"][2]["id"] = "x2"  # a duplicate too
    path = save(tmp_path / "noid.ipynb", nb)
    text = await read.call({"path": "noid.ipynb"})
    assert "── cell 1 · no id · code" in text and "warning: this notebook is not valid" in text
    with pytest.raises(ToolError, match="no cell with id 'cell-1'.*cell_number=1"):
        await edit.call({"path": "noid.ipynb", "cell_id": "cell-1", "source": "a = 10"})
    out = await edit.call({"path": "noid.ipynb", "cell_number": 1, "source": "a = 10"})
    assert "gave 2 cells without a unique id a new one" in out
    cells = cells_of(path)
    assert len({c["id"] for c in cells}) == 3 and cells[1]["id"] == "x2"
    validates(path)


async def test_create_a_new_notebook_by_inserting(tools, tmp_path):
    _, edit = tools
    await edit.call({"path": "new.ipynb", "action": "insert", "source": "print(1)"})
    path = tmp_path / "new.ipynb"
    validates(path)
    assert ["".join(c["source"]) for c in cells_of(path)] == ["print(1)"]
    empty = save(tmp_path / "empty.ipynb", make_nb([]))
    await tools[0].call({"path": "empty.ipynb"})
    with pytest.raises(ToolError, match="has no cells; to add one, insert without cell_id"):
        await edit.call(
            {"path": "empty.ipynb", "action": "insert", "cell_number": 1, "source": "x"}
        )
    await edit.call({"path": "empty.ipynb", "action": "insert", "source": "x"})
    validates(empty)
    with pytest.raises(ToolError, match="does not exist; use action 'insert'"):
        await edit.call({"path": "other.ipynb", "source": "x"})


async def test_edit_needs_a_fresh_read(tools, analysis):
    read, edit = tools
    args = {"path": "analysis.ipynb", "cell_id": "load", "source": "x"}
    with pytest.raises(ToolError, match="must read 'analysis.ipynb'.*notebook_read"):
        await edit.call(args)
    await read.call({"path": "analysis.ipynb"})
    nb = json.loads(analysis.read_text())
    nb["cells"][0]["source"] = "# Changed in Jupyter"
    save(analysis, nb)
    with pytest.raises(ToolError, match="modified on disk since you last read it"):
        await edit.call(args)
    assert cells_of(analysis)[0]["source"] == "# Changed in Jupyter"


async def test_bad_edits_are_clear_errors_and_write_nothing(tools, analysis, tmp_path):
    read, edit = tools
    await read.call({"path": "analysis.ipynb"})
    original = analysis.read_bytes()
    cases = [
        ({"cell_id": "nope", "source": "x"}, "no cell with id 'nope'"),
        ({"cell_number": 9, "source": "x"}, "has 4 cells; cell_number must be 1-4"),
        ({"cell_id": "load", "cell_number": 2, "source": "x"}, "either cell_id or cell_number"),
        ({"source": "x"}, "say which cell"),
        ({"cell_id": "load"}, "replace needs 'source'"),
        ({"action": "insert"}, "insert needs 'source'"),
        ({"action": "move", "cell_id": "load"}, "action must be one of"),
        ({"cell_id": "load", "source": "x", "cell_type": "sql"}, "cell_type must be"),
        ({"cell_id": "load", "source": 3}, "'source' must be a string"),
    ]
    for extra, message in cases:
        with pytest.raises(ToolError, match=message):
            await edit.call({"path": "analysis.ipynb", **extra})
    assert analysis.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["analysis.ipynb"]


async def test_invalid_json_is_not_overwritten(tools, tmp_path):
    read, edit = tools
    broken = tmp_path / "broken.ipynb"
    broken.write_text('{"cells": [}', encoding="utf-8")
    FileState.record(edit.file_state, broken)
    with pytest.raises(ToolError, match="not valid notebook JSON"):
        await edit.call({"path": "broken.ipynb", "cell_number": 1, "source": "x"})
    assert broken.read_text() == '{"cells": [}'


async def test_preview_is_the_diff_the_edit_applies(tools, analysis):
    read, edit = tools
    await read.call({"path": "analysis.ipynb"})
    args = {"path": "analysis.ipynb", "cell_id": "load", "source": "import polars as pl"}
    shown = await edit.preview(args)
    assert shown.summary == "cell 2 (id load, code) replaced; its 1 outputs are cleared"
    assert shown.kind == "edit" and shown.after == "import polars as pl"
    assert "{" not in shown.diff and "outputs" not in shown.diff  # never the JSON
    assert "-    1 | import pandas as pd" in shown.diff
    assert "+    1 | import polars as pl" in shown.diff
    result = await edit.call(args)
    assert shown.diff in result
    assert "".join(cells_of(analysis)[1]["source"]) == shown.after


async def test_preview_raises_what_the_call_would(tools, analysis):
    _, edit = tools
    with pytest.raises(ToolError, match="notebook_read"):
        await edit.preview({"path": "analysis.ipynb", "cell_id": "load", "source": "x"})


async def test_structural_checks_work_without_nbformat(tools, analysis, monkeypatch):
    """nbformat is optional (the notebook extra): without it the tools still edit, with
    their own structural checks."""
    monkeypatch.setitem(sys.modules, "nbformat", None)  # import nbformat now fails
    read, edit = tools
    await read.call({"path": "analysis.ipynb"})
    await edit.call({"path": "analysis.ipynb", "cell_id": "load", "source": "y = 1"})
    monkeypatch.undo()
    validates(analysis)
    assert structural_errors(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {},
            "cells": [
                {"cell_type": "code", "metadata": {}, "source": "x", "id": "a b"},
                {"cell_type": "markdown", "metadata": {}, "source": "x", "id": "c", "outputs": []},
                {"cell_type": "sql", "metadata": {}, "source": 1, "id": "c"},
            ],
        }
    ) == [
        "cell 1: id 'a b' is missing or not a valid cell id",
        "cell 1: a code cell needs an outputs list",
        "cell 1: execution_count is missing or not an integer or null",
        "cell 2: a markdown cell cannot have outputs or an execution_count",
        "cell 3: cell_type 'sql' is not code, markdown or raw",
        "cell 3: source is not a string or a list of strings",
        "cell 3: id 'c' is used by another cell too",
    ]


async def test_edit_and_write_refuse_notebooks_and_point_to_notebook_edit(tmp_path, analysis):
    state = FileState()
    state.record(analysis)
    original = analysis.read_bytes()
    with pytest.raises(ToolError, match="Jupyter notebook; edit does not change.*notebook_edit"):
        await EditTool(tmp_path, state).call(
            {"path": "analysis.ipynb", "old_string": "df.plot()", "new_string": "df.hist()"}
        )
    with pytest.raises(ToolError, match="Jupyter notebook; write does not change.*notebook_edit"):
        await WriteTool(tmp_path, state).call({"path": "analysis.ipynb", "content": "{}"})
    with pytest.raises(ToolError, match="notebook_edit"):
        await WriteTool(tmp_path, state).call({"path": "NEW.IPYNB", "content": "{}"})
    assert analysis.read_bytes() == original and not (tmp_path / "NEW.IPYNB").exists()


def test_metadata_for_the_executor_and_the_modes(tmp_path):
    tools = default_tools(tmp_path, web=False)
    read, edit = tools.get("notebook_read"), tools.get("notebook_edit")
    assert read.read_only is True and read.concurrency_safe is True
    assert edit.read_only is False and edit.concurrency_safe is False


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
cell_like = st.fixed_dictionaries(
    {},
    optional={
        "cell_type": st.sampled_from(["code", "markdown", "raw", "sql"]) | json_values,
        "source": json_values,
        "outputs": st.lists(
            st.fixed_dictionaries(
                {"output_type": st.sampled_from(["stream", "error", "display_data", "x"])},
                optional={"text": json_values, "data": json_values, "ename": json_values},
            ),
            max_size=3,
        )
        | json_values,
        "metadata": json_values,
        "id": json_values,
        "attachments": json_values,
    },
)


@settings(max_examples=60, deadline=None)
@given(cells=st.lists(cell_like | json_values, max_size=5), minor=st.integers(0, 6))
def test_read_and_structural_checks_never_crash_on_hostile_cells(cells, minor):
    """Whatever is in the cells list, reading gives text and the checks give messages."""
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": minor}
    text = render_notebook(nb, "x.ipynb")
    assert text.startswith("x.ipynb: nbformat 4.")
    assert isinstance(structural_errors(nb), list)
