"""The preview step of mutating tools: the change shown before approval is the change made,
and a call bound to fail is never put to the user."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from clawnb.events import Approval
from clawnb.gates import build_gate
from clawnb.tools import EditTool, FileState, ReadTool, ToolError, WriteTool
from clawnb.tools.base import ChangePreview, Previewing
from clawnb.tools.edit import PREVIEW_DIFF_LINES, render_diff
from clawnb.types import ToolCall

# small alphabets make repeated and overlapping fragments likely, which is where edits go wrong
LINE = st.text(alphabet="ab \t'\"x", max_size=8)
LINES = st.lists(LINE, min_size=0, max_size=12)


def _text(lines: list[str], final_newline: bool) -> str:
    text = "\n".join(lines)
    return text + "\n" if final_newline and lines else text


def _tools(workspace: str) -> tuple[ReadTool, EditTool, WriteTool]:
    state = FileState()
    return ReadTool(workspace, state), EditTool(workspace, state), WriteTool(workspace, state)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=LINES,
    final_newline=st.booleans(),
    span=st.tuples(st.integers(0, 200), st.integers(1, 20)),
    new=st.text(alphabet="ab\n'X", max_size=10),
)
def test_edit_applies_exactly_the_previewed_change(lines, final_newline, span, new) -> None:
    text = _text(lines, final_newline)
    assume(text)
    # a start inside the text by construction: assume(start < len(text)) threw most inputs
    # away and made Hypothesis fail its filter_too_much health check now and then
    start, length = span[0] % len(text), span[1]
    old = text[start : start + length]
    assume(old and text.count(old) == 1 and old != new)
    with tempfile.TemporaryDirectory() as workspace:
        Path(workspace, "f.txt").write_bytes(text.encode())
        read, edit, _write = _tools(workspace)

        async def run() -> tuple[ChangePreview, str]:
            await read.call({"path": "f.txt"})
            preview = await edit.preview({"path": "f.txt", "old_string": old, "new_string": new})
            # the preview wrote nothing
            assert Path(workspace, "f.txt").read_bytes() == text.encode()
            result = await edit.call({"path": "f.txt", "old_string": old, "new_string": new})
            return preview, result

        preview, result = asyncio.run(run())
        on_disk = Path(workspace, "f.txt").read_bytes().decode()
    assert preview.after == on_disk
    assert preview.before == text
    assert preview.diff == render_diff(text, on_disk, max_lines=PREVIEW_DIFF_LINES)
    # the model's result carries the same diff (the result caps it at fewer lines)
    assert render_diff(text, on_disk) in result


@settings(max_examples=100, deadline=None)
@given(existing=st.one_of(st.none(), LINES), content=st.text(alphabet="ab\n é", max_size=40))
def test_write_applies_exactly_the_previewed_content(existing, content) -> None:
    with tempfile.TemporaryDirectory() as workspace:
        target = Path(workspace, "sub", "w.txt")
        if existing is not None:
            target.parent.mkdir()
            target.write_text(_text(existing, True))
        read, _edit, write = _tools(workspace)

        async def run() -> ChangePreview:
            if existing is not None:
                await read.call({"path": "sub/w.txt"})
            preview = await write.preview({"path": "sub/w.txt", "content": content})
            assert target.exists() == (existing is not None)  # the preview wrote nothing
            await write.call({"path": "sub/w.txt", "content": content})
            return preview

        preview = asyncio.run(run())
        on_disk = target.read_bytes().decode()
    assert preview.after == on_disk
    if existing is None:
        assert preview.kind == "create"
        assert preview.summary.startswith("new file, ")
    else:
        assert preview.kind == "overwrite"
        assert preview.summary.startswith(f"overwrites {len(existing)} line")


async def test_write_preview_says_new_file_and_shows_numbered_content(tmp_path) -> None:
    preview = await WriteTool(tmp_path).preview({"path": "n.py", "content": "a = 1\nb = 2\n"})
    assert preview.summary == "new file, 2 lines"
    assert preview.diff.splitlines() == ["@@ -0,0 +1,2 @@", "+    1 | a = 1", "+    2 | b = 2"]


async def test_write_preview_of_an_overwrite_is_a_diff_with_context(tmp_path) -> None:
    (tmp_path / "o.txt").write_text("one\ntwo\nthree\nfour\n")
    state = FileState()
    await ReadTool(tmp_path, state).call({"path": "o.txt"})
    preview = await WriteTool(tmp_path, state).preview(
        {"path": "o.txt", "content": "one\ntwo\nTHREE\nfour\n"}
    )
    assert preview.summary == "overwrites 4 lines: 1 removed, 1 added"
    assert "-    3 | three" in preview.diff.splitlines()
    assert "+    3 | THREE" in preview.diff.splitlines()
    assert "     2 | two" in preview.diff.splitlines()  # context, with its line number


async def test_edit_preview_shows_the_change_where_it_is_in_the_file(tmp_path) -> None:
    (tmp_path / "inventory.py").write_text("a = 1\nb = 2\nc = 3\nd = 4\n")
    state = FileState()
    await ReadTool(tmp_path, state).call({"path": "inventory.py"})
    preview = await EditTool(tmp_path, state).preview(
        {"path": "inventory.py", "old_string": "c = 3", "new_string": "c = 30"}
    )
    assert preview.summary == "line 3: 1 removed, 1 added"
    assert preview.diff.splitlines() == [
        "@@ -1,4 +1,4 @@",
        "     1 | a = 1",
        "     2 | b = 2",
        "-    3 | c = 3",
        "+    3 | c = 30",
        "     4 | d = 4",
    ]
    assert isinstance(EditTool(tmp_path, state), Previewing)


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        ("unread", {"old_string": "x", "new_string": "y"}, "must read 'f.txt' before editing"),
        ("read", {"old_string": "nope", "new_string": "y"}, "not found"),
        ("read", {"old_string": "x", "new_string": "x"}, "identical"),
        ("read-dup", {"old_string": "x", "new_string": "y"}, "appears 2 times"),
        ("read-changed", {"old_string": "x", "new_string": "y"}, "modified on disk"),
    ],
)
async def test_edit_preview_fails_with_the_error_the_call_would_give(
    tmp_path, setup, args, message
) -> None:
    target = tmp_path / "f.txt"
    target.write_text("x x\n" if setup == "read-dup" else "x\n")
    state = FileState()
    if setup != "unread":
        await ReadTool(tmp_path, state).call({"path": "f.txt"})
    if setup == "read-changed":
        target.write_text("x\nchanged\n")
        os.utime(target, ns=(1, 1))
    edit = EditTool(tmp_path, state)
    with pytest.raises(ToolError, match=message) as previewed:
        await edit.preview({"path": "f.txt", **args})
    with pytest.raises(ToolError) as called:
        await edit.call({"path": "f.txt", **args})
    assert str(previewed.value) == str(called.value)


async def test_write_preview_refuses_a_directory_and_an_unread_file(tmp_path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "seen.txt").write_text("old\n")
    with pytest.raises(ToolError, match="is a directory"):
        await WriteTool(tmp_path).preview({"path": "d", "content": "x"})
    write = WriteTool(tmp_path, FileState())
    with pytest.raises(ToolError, match="must read 'seen.txt' before overwriting"):
        await write.preview({"path": "seen.txt", "content": "x"})


# -- the gate: preview before asking -----------------------------------------------------------


async def test_a_failing_precheck_becomes_the_result_without_a_question(tmp_path) -> None:
    (tmp_path / "inventory.py").write_text("stock = 1\n")
    asked: list[object] = []

    async def approve(request):
        asked.append(request)
        return Approval.allow_once()

    gate = build_gate(workspace=tmp_path, approve=approve)
    edit = EditTool(tmp_path, FileState())
    call = ToolCall("e1", "edit", {"path": "inventory.py", "old_string": "1", "new_string": "2"})
    decision = await gate.before_tool(call, edit)
    assert asked == []
    assert decision.outcome == "error"
    assert "must read 'inventory.py' before editing it" in decision.content
    assert (tmp_path / "inventory.py").read_text() == "stock = 1\n"


async def test_the_approval_request_carries_the_exact_change(tmp_path) -> None:
    (tmp_path / "inventory.py").write_text("stock = 1\n")
    state = FileState()
    await ReadTool(tmp_path, state).call({"path": "inventory.py"})
    asked: list[object] = []

    async def approve(request):
        asked.append(request)
        return Approval.allow_once()

    gate = build_gate(workspace=tmp_path, approve=approve)
    edit = EditTool(tmp_path, state)
    call = ToolCall("e1", "edit", {"path": "inventory.py", "old_string": "1", "new_string": "2"})
    assert await gate.before_tool(call, edit) is call
    (request,) = asked
    preview = request.details["preview"]
    assert preview.after == "stock = 2\n"
    await edit.call(call.arguments)
    assert (tmp_path / "inventory.py").read_text() == preview.after
