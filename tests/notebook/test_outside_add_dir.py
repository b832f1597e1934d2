"""Outside the workspace in a real kernel: a ``%%claw`` read of ``../data/sales.csv`` asks with
"outside the workspace" and the resolved path, and runs once the person says yes; after
``%claw add-dir ../data`` the same folder is read unasked and written in accept_edits mode —
also after the session is rebuilt for another model."""

from __future__ import annotations

import pytest

from tests.conftest import call_turn, write_script

from .kernelclient import Kernel, kernel_env

pytestmark = pytest.mark.timeout(120)


def test_outside_read_asks_then_add_dir_makes_the_folder_the_workspaces(tmp_path) -> None:
    ws, data = tmp_path / "ws", tmp_path / "data"
    ws.mkdir()
    data.mkdir()
    (data / "sales.csv").write_text("region,total\nnorth,12\n")
    write_script(
        ws / "s.jsonl",
        [call_turn("r1", "read", path="../data/sales.csv"), {"text": "north leads"}],
    )
    write_script(
        ws / "s2.jsonl",
        [
            {
                "tool_calls": [
                    {"id": "r2", "name": "read", "arguments": {"path": "../data/sales.csv"}},
                    {
                        "id": "w2",
                        "name": "write",
                        "arguments": {"path": "../data/summary.txt", "content": "north\n"},
                    },
                ]
            },
            {"text": "summary written"},
        ],
    )
    kernel = Kernel(ws, kernel_env(tmp_path, CLAWNB_FRONTEND_TIMEOUT="5"))
    try:
        assert kernel.execute("%load_ext clawnb").status == "ok"
        run = kernel.execute(
            "%%claw --model scripted:s.jsonl --approve stdin\nsales?", stdin_reply="y"
        )
        assert run.status == "ok" and "north leads" in run.text, run.text
        assert len(run.prompts) == 1
        assert "outside the workspace" in run.prompts[0]
        assert str(data / "sales.csv") in run.prompts[0]
        added = kernel.execute("%claw add-dir ../data")
        assert f"added for this session: {data}" in added.text, added.text
        listed = kernel.execute("%claw add-dir")
        assert str(data) in listed.text
        # another model: the session is rebuilt, and the added folder stays added
        run = kernel.execute(
            "%%claw --model scripted:s2.jsonl --mode accept_edits --approve stdin\nsummarise",
            stdin_reply="n",
        )
        assert run.status == "ok" and "summary written" in run.text, run.text
        assert run.prompts == []  # neither the read nor the write was asked
        assert (data / "summary.txt").read_text() == "north\n"
        refused = kernel.execute("%claw add-dir ../nowhere")
        assert "no such folder" in refused.text and "Traceback" not in refused.text
    finally:
        kernel.close()


async def test_the_card_says_outside_the_workspace_and_offers_no_always(tmp_path) -> None:
    """The notebook card for the gate's own question: its label names "outside the workspace"
    and the resolved path, and it has Approve and Deny only; Approve runs that one call."""
    import asyncio

    from clawnb.events import AgentEvent
    from clawnb.gates import build_gate
    from clawnb.notebook.approval import Approver
    from clawnb.tools import default_tools
    from clawnb.types import ToolCall

    from .test_widgets import buttons, click, make_view

    ws, data = tmp_path / "ws", tmp_path / "data"
    ws.mkdir()
    data.mkdir()
    (data / "sales.csv").write_text("north,12\n")
    (ws / "shared").symlink_to(data)
    view, _ = make_view()
    view.root._view_count = 1  # what a frontend does when it renders the view
    gate = build_gate(workspace=ws, approve=Approver(view, how="widget"))
    call = ToolCall("c1", "read", {"path": "shared/sales.csv"})
    view(AgentEvent.ToolCall("read", "    [read: shared/sales.csv]", "c1", call.arguments))
    tool = default_tools(ws, web=False).get("read")
    decision = asyncio.ensure_future(gate.before_tool(call, tool))
    for _ in range(100):
        await asyncio.sleep(0.01)
        if "c1" in view._buttons:
            break
    assert list(buttons(view, "c1")) == ["Approve", "Deny"]
    label = view.transcript.cards["c1"].label()
    assert "outside the workspace" in label and str(data / "sales.csv") in label
    click(buttons(view, "c1")["Approve"])
    assert await asyncio.wait_for(decision, 2) == call


@pytest.mark.parametrize(
    ("path", "what"),
    [("../data/sales.csv", "a read outside the workspace"), (".env", "opening a secret file")],
)
async def test_an_allow_policy_card_says_what_it_could_not_approve(tmp_path, path, what) -> None:
    from clawnb.events import AgentEvent
    from clawnb.gates import build_gate
    from clawnb.notebook.approval import Approver
    from clawnb.tools import default_tools
    from clawnb.types import ToolCall

    from .test_widgets import make_view

    ws, data = tmp_path / "ws", tmp_path / "data"
    ws.mkdir()
    data.mkdir()
    (data / "sales.csv").write_text("north,12\n")
    (ws / ".env").write_text("KEY=x\n")
    view, _ = make_view()
    gate = build_gate(workspace=ws, approve=Approver(view, how="allow"))
    call = ToolCall("c1", "read", {"path": path})
    view(AgentEvent.ToolCall("read", f"    [read: {path}]", "c1", call.arguments))
    refusal = await gate.before_tool(call, default_tools(ws, web=False).get("read"))
    assert f"cannot approve {what}; a person must" in refusal.content
    assert f"cannot approve {what}" in view.transcript.cards["c1"].label()
