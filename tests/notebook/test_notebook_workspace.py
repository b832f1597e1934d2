"""Notebooks as the agent's workspace, through the control plane: the gate's path rules,
permission modes, approval and ``%claw undo`` for ``notebook_read`` / ``notebook_edit``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import nbformat
import pytest

from clawnb.gates import build_gate
from clawnb.permissions import Permission, PermissionEngine
from clawnb.tools import default_tools
from clawnb.types import ToolCall
from tests.conftest import write_script


def small_notebook(path: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title", id="title"),
        nbformat.v4.new_code_cell("x = 1", id="first"),
    ]
    nbformat.write(nb, path)
    return path


async def test_gate_keeps_notebook_tools_inside_the_workspace(tmp_path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    small_notebook(tmp_path / "outside.ipynb")
    gate = build_gate(mode="bypass", workspace=workspace)
    tools = default_tools(workspace, web=False)
    # a read outside asks (refused here: nobody to ask, even in bypass); an edit is refused
    read = {"path": "../outside.ipynb"}
    decision = await gate.before_tool(
        ToolCall("c", "notebook_read", read), tools.get("notebook_read")
    )
    assert getattr(decision, "outcome", None) == "denied"
    assert "reads outside the workspace" in decision.content
    edit = {"path": str(tmp_path / "outside.ipynb"), "cell_number": 1}
    decision = await gate.before_tool(
        ToolCall("c", "notebook_edit", edit), tools.get("notebook_edit")
    )
    assert getattr(decision, "outcome", None) == "blocked"
    assert "outside allowed directory" in decision.content


def test_modes_treat_notebook_edit_like_edit(tmp_path):
    tools = default_tools(tmp_path, web=False)
    read, edit = tools.get("notebook_read"), tools.get("notebook_edit")
    plan = PermissionEngine.for_mode("plan")
    assert plan.decide(read).permission is Permission.Allow
    assert plan.decide(edit).permission is Permission.Deny
    assert PermissionEngine.for_mode("default").decide(edit).permission is Permission.Ask
    assert PermissionEngine.for_mode("accept_edits").decide(edit).permission is Permission.Allow


def test_claw_undo_restores_an_edited_notebook(shell, tmp_path: Path, monkeypatch) -> None:
    path = small_notebook(tmp_path / "analysis.ipynb")
    original = path.read_bytes()
    write_script(
        tmp_path / "s.jsonl",
        [
            {
                "tool_calls": [
                    {"id": "r", "name": "notebook_read", "arguments": {"path": "analysis.ipynb"}}
                ]
            },
            {
                "tool_calls": [
                    {
                        "id": "e",
                        "name": "notebook_edit",
                        "arguments": {
                            "path": "analysis.ipynb",
                            "cell_id": "first",
                            "source": "x = 2",
                        },
                    }
                ]
            },
            {"text": "changed the first code cell"},
        ],
    )
    monkeypatch.setenv("CLAWNB_APPROVAL", "allow")
    assert shell.run_cell("%%claw --model scripted:s.jsonl\nchange x").success
    assert json.loads(path.read_text())["cells"][1]["source"] == ["x = 2"]
    shell.run_line_magic("claw", "undo")
    assert path.read_bytes() == original


def test_denied_notebook_edit_leaves_the_file(shell, tmp_path: Path, capsys) -> None:
    path = small_notebook(tmp_path / "analysis.ipynb")
    original = path.read_bytes()
    write_script(
        tmp_path / "s.jsonl",
        [
            {
                "tool_calls": [
                    {"id": "r", "name": "notebook_read", "arguments": {"path": "analysis.ipynb"}},
                ]
            },
            {
                "tool_calls": [
                    {
                        "id": "e",
                        "name": "notebook_edit",
                        "arguments": {"path": "analysis.ipynb", "cell_number": 2, "source": "y"},
                    }
                ]
            },
            {"text": "ok"},
        ],
    )
    # no frontend and no policy: the approval is denied, nothing is written
    assert shell.run_cell("%%claw --model scripted:s.jsonl\nchange x").success
    assert path.read_bytes() == original
    assert "denied" in capsys.readouterr().out


@pytest.mark.parametrize("tool", ["edit", "write"])
def test_edit_and_write_on_a_notebook_tell_the_model_to_use_notebook_edit(
    shell, tmp_path: Path, monkeypatch, capsys, tool
) -> None:
    path = small_notebook(tmp_path / "analysis.ipynb")
    original = path.read_bytes()
    args = (
        {"path": "analysis.ipynb", "old_string": "x = 1", "new_string": "x = 2"}
        if tool == "edit"
        else {"path": "analysis.ipynb", "content": "{}"}
    )
    write_script(
        tmp_path / "s.jsonl",
        [
            {"tool_calls": [{"id": "r", "name": "read", "arguments": {"path": "analysis.ipynb"}}]},
            {"tool_calls": [{"id": "e", "name": tool, "arguments": args}]},
            {"text": "ok"},
        ],
    )
    monkeypatch.setenv("CLAWNB_APPROVAL", "allow")
    shell.run_cell("%%claw --model scripted:s.jsonl\nchange x")
    result = [m.content for m in shell._clawnb_session.messages if getattr(m, "id", None) == "e"][0]
    assert "notebook_edit" in result and result.startswith("error:")
    assert path.read_bytes() == original


async def test_approval_request_carries_the_cell_diff_not_json(tmp_path):
    """What the approval card shows: the cell's number, id and source diff, computed before
    the question; an edit bound to fail (unread notebook) is never put to the user."""
    path = small_notebook(tmp_path / "analysis.ipynb")
    asked = []

    async def approve(request):
        asked.append(request)
        return True

    gate = build_gate(mode="default", workspace=tmp_path, approve=approve)
    tools = default_tools(tmp_path, web=False)
    edit = tools.get("notebook_edit")
    args = {"path": "analysis.ipynb", "cell_id": "first", "source": "x = 2"}
    refused = await gate.before_tool(ToolCall("c1", "notebook_edit", args), edit)
    assert not asked and "notebook_read" in refused.content
    await tools.get("notebook_read").call({"path": "analysis.ipynb"})
    decision = await gate.before_tool(ToolCall("c2", "notebook_edit", args), edit)
    assert isinstance(decision, ToolCall)
    change = asked[0].details["preview"]
    assert change.summary == "cell 2 (id first, code) replaced"
    assert "-    1 | x = 1" in change.diff and "+    1 | x = 2" in change.diff
    assert '"cell_type"' not in change.diff
    assert path.read_text().count("x = 1") == 1  # nothing written before approval


async def test_the_approval_card_shows_the_cell_number_id_and_diff_never_json(tmp_path):
    """Through the real gate and the notebook's approver: the card waiting for the click
    shows which cell changes and how; Approve then writes exactly that."""
    from clawnb.events import AgentEvent
    from clawnb.notebook.approval import Approver

    from .test_widgets import buttons, click, make_view, shown_html

    path = small_notebook(tmp_path / "analysis.ipynb")
    view, _sink = make_view()
    approver = Approver(view, how="widget")
    gate = build_gate(mode="default", workspace=tmp_path, approve=approver)
    tools = default_tools(tmp_path, web=False)
    await tools.get("notebook_read").call({"path": "analysis.ipynb"})
    args = {"path": "analysis.ipynb", "cell_id": "first", "source": "x = 2\nprint(x)"}
    call = ToolCall("c1", "notebook_edit", args)
    view(AgentEvent.ToolCall("notebook_edit", "    [notebook_edit: analysis.ipynb]", "c1", args))
    task = asyncio.ensure_future(gate.before_tool(call, tools.get("notebook_edit")))
    for _ in range(200):
        if "c1" in view._buttons:
            break
        await asyncio.sleep(0.01)
    view.throttle.flush_now()
    card = shown_html(view.transcript.block_of(view.card("c1")).widget)
    assert "cell 2 (id first, code) replaced" in card
    assert "x = 1" in card and "print(x)" in card  # old → new source, as a diff
    assert "cell_type" not in card and "&quot;source&quot;" not in card  # never the JSON
    click(buttons(view, "c1")["Approve"])
    assert isinstance(await task, ToolCall)
    await tools.get("notebook_edit").call(args)
    assert json.loads(path.read_text())["cells"][1]["source"] == ["x = 2\n", "print(x)"]


async def test_a_notebook_path_leading_to_a_secret_file_is_asked_and_never_echoed(tmp_path):
    """The shared secret-file rule covers notebook_read (a symlink named .ipynb to .env);
    and were it approved, the parse error would not quote the file."""
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234\n")
    (tmp_path / "leak.ipynb").symlink_to(tmp_path / ".env")
    tools = default_tools(tmp_path, web=False)
    read = tools.get("notebook_read")
    gate = build_gate(mode="bypass", workspace=tmp_path)  # no one to approve
    decision = await gate.before_tool(ToolCall("c", "notebook_read", {"path": "leak.ipynb"}), read)
    assert not isinstance(decision, ToolCall)
    assert "sk-proj" not in decision.content
    with pytest.raises(Exception) as info:
        await read.call({"path": "leak.ipynb"})
    assert "sk-proj" not in str(info.value)
