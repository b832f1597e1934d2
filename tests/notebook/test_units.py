"""Small pieces of the notebook layer: interpolation, references, the scrubber, checkpoints,
history repair and the kernel tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawnb.control.checkpoints import Checkpoints
from clawnb.notebook.interpolate import collect_references, interpolate
from clawnb.notebook.kernel_tools import InspectVariableTool, RunPythonTool
from clawnb.notebook.runner import repair_history
from clawnb.notebook.scrub import mask, register_secret, scrub
from clawnb.tools.base import ToolError
from clawnb.types import AssistantTurn, Message, ToolCall, ToolResult

from .conftest import FAKE_KEY


class Obj:
    shape = (2, 3)
    _secret = "hidden"


def test_interpolation_rules() -> None:
    ns = {"x": 41, "o": Obj(), "name": "Ada"}
    assert interpolate("{x} {name}", ns) == "41 Ada"
    assert interpolate("{o.shape}", ns) == "(2, 3)"
    assert (
        interpolate("{o._secret} {missing} {1+1} { x }", ns) == "{o._secret} {missing} {1+1} { x }"
    )
    assert interpolate('{{x}} and {"json": 1}', ns) == '{x} and {"json": 1}'
    long = interpolate("{s}", {"s": "a" * 5000})
    assert len(long) < 4100 and "more characters" in long


def test_references_attach_cells_outputs_and_errors() -> None:
    refs = collect_references(
        "compare In[1] with Out[1], see Err[2], Err, and In[9]",
        inputs=["", "x = 1"],
        outputs={1: [1, 2]},
        errors={2: "ZeroDivisionError: division by zero"},
    )
    labels = dict(refs)
    assert labels["In[1]"] == "x = 1"
    assert labels["Out[1]"] == "[1, 2]"
    assert "ZeroDivisionError" in labels["Err[2]"] and "from cell 2" in labels["Err"]
    assert "no input cell 9" in labels["In[9]"]
    assert collect_references("no refs here, Error is a word") == []


def test_scrubber_and_mask(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "plain-looking-secret-value")
    assert scrub("x plain-looking-secret-value y") == "x *** y"
    assert scrub(f"k={FAKE_KEY}") == "k=***"
    assert scrub("Authorization: Bearer abcdefghijklmnop") == "Authorization: Bearer ***"
    assert scrub("sk-short and ordinary text") == "sk-short and ordinary text"
    register_secret("registered-secret-123")
    assert "registered" not in scrub("a registered-secret-123 b")
    assert FAKE_KEY[-4:] not in mask(FAKE_KEY) and mask(None) == "(not set)"
    assert mask(FAKE_KEY) == f"*** (set, {len(FAKE_KEY)} characters)"
    assert mask("short") == "*** (set)"


def test_checkpoints_restore_and_remove(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("before")
    cps = Checkpoints()
    cps.begin("cell 1")
    cps.before_tool("write", {"path": "old.txt"}, tmp_path)
    cps.before_tool("write", {"path": "new.txt"}, tmp_path)
    cps.before_tool("read", {"path": "old.txt"}, tmp_path)  # not a file-changing tool
    (tmp_path / "old.txt").write_text("after")
    cps.before_tool("write", {"path": "old.txt"}, tmp_path)  # first snapshot wins
    (tmp_path / "new.txt").write_text("created")
    cps.end()
    cps.begin("cell 2")  # changes nothing: leaves no checkpoint
    cps.end()
    assert len(cps) == 1
    report = cps.undo()
    assert "restored" in report and "removed" in report
    assert (tmp_path / "old.txt").read_text() == "before"
    assert not (tmp_path / "new.txt").exists()
    assert cps.undo() == "nothing to undo"


def test_repair_history_fills_missing_results_in_order() -> None:
    turn = AssistantTurn(None, [ToolCall("a", "read"), ToolCall("b", "bash")])
    messages = [Message.User("hi"), Message.Assistant(turn), ToolResult("b", "late")]
    repair_history(messages)
    assert [(m.id, m.content) for m in messages[2:]] == [
        ("a", "error: interrupted by user"),
        ("b", "late"),
    ]


async def test_kernel_tools() -> None:
    ns: dict = {"df": Obj(), "xs": [1, 2]}
    inspect = InspectVariableTool(ns)
    out = await inspect.call({"name": "df"})
    assert "shape: (2, 3)" in out and "type:" in out
    with pytest.raises(ToolError, match="no variable 'nope'"):
        await inspect.call({"name": "nope"})
    with pytest.raises(ToolError, match="not a variable name"):
        await inspect.call({"name": "xs[0]"})
    run = RunPythonTool(ns)
    assert (
        await run.call({"code": "print('a'); import sys; print('b', file=sys.stderr)"})
        == "a\nstderr: b"
    )
    assert await run.call({"code": "y = 2"}) == "(no output)" and ns["y"] == 2
    with pytest.raises(ToolError, match="ZeroDivisionError"):
        await run.call({"code": "1/0"})
    with pytest.raises(ToolError, match="syntax error"):
        await run.call({"code": "def ("})
    big = await run.call({"code": "print('x' * 20000)"})
    assert "truncated" in big and len(big) < 10_200
