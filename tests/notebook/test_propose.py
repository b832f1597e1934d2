"""propose_cell: the card's Insert below / Copy / Dismiss (clicks as comm messages, §4.8), the
set_next_input payload an Insert leaves for the front end, the headless fenced block, and
which notebook the agent is told it runs in."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat
import pytest

from clawnb.events import AgentEvent
from clawnb.notebook.approval import Approver
from clawnb.notebook.propose import (
    COPIED,
    DISMISSED,
    HEADLESS,
    INSERTED,
    CellProposals,
    ProposeCellTool,
)
from clawnb.notebook.text import TextView
from clawnb.notebook.where import current_notebook, notebook_context
from clawnb.notebook.widgets import WidgetView
from clawnb.types import Message
from tests.conftest import write_script

from .test_widgets import Sink, click

CODE = "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])"


class Payloads:
    """A shell's payload manager as IPython's own: the real class, outside a kernel."""

    def __init__(self) -> None:
        from IPython.core.payload import PayloadManager

        self.payload_manager = PayloadManager()


def running_card(view: Any, code: str = CODE, call_id: str = "p1") -> None:
    view(AgentEvent.ToolCall("propose_cell", "    [propose_cell]", call_id, {"code": code}))
    view(AgentEvent.ToolRunning(call_id, "propose_cell"))


def proposal_bar(view: WidgetView, call_id: str = "p1") -> dict[str, Any]:
    block = view.transcript.block_of(view.card(call_id))
    bars = [c for c in block.widget.children if "clawnb-proposal" in c._dom_classes]
    assert len(bars) == 1
    found: dict[str, Any] = {}
    for child in bars[0].children:
        for cls in ("clawnb-insert", "clawnb-copied", "clawnb-dismiss"):
            if cls in child._dom_classes:
                found[cls.removeprefix("clawnb-")] = child
        if hasattr(child, "value") and "clawnb-copy" in child.value:
            found["copy"] = child
    return found


async def wait_for_bar(view: WidgetView, call_id: str = "p1") -> dict[str, Any]:
    for _ in range(200):
        block = view.transcript.block_of(view.card(call_id))
        if block is not None and len(block.widget.children) > 2:
            return proposal_bar(view, call_id)
        await asyncio.sleep(0.01)
    raise AssertionError("the proposal never showed its buttons")


def widget_setup(shell: Any = None, *, can_insert: bool = True):
    sink = Sink()
    view = WidgetView(display=sink.display, clear_output=sink.clear_output)
    view.start()
    approver = Approver(view, how="widget")
    tool = ProposeCellTool()
    proposals = CellProposals(view, approver, shell, can_insert=can_insert)
    return view, tool, proposals


@contextmanager
def proposing(
    view: WidgetView,
    tool: ProposeCellTool,
    proposals: CellProposals,
    code: str = CODE,
    call_id: str = "p1",
) -> Iterator[asyncio.Future[str]]:
    """A propose_cell call under way, routed to ``proposals`` with its card drawn as running:
    the call's task, which waits for a click on the card."""
    running_card(view, code, call_id)
    with tool.routed(proposals):
        yield asyncio.ensure_future(tool.call({"code": code}))


async def test_insert_below_leaves_one_set_next_input_payload_and_never_runs(tmp_path):
    shell = Payloads()
    view, tool, proposals = widget_setup(shell)
    with proposing(view, tool, proposals) as task:
        bar = await wait_for_bar(view)
        assert set(bar) == {"insert", "copy", "copied", "dismiss"}
        assert bar["insert"].description == "Insert below"
        assert view.card("p1").status == "waiting for your answer"
        click(bar["insert"])
        assert await task == INSERTED
    assert shell.payload_manager.read_payload() == [
        {"source": "set_next_input", "text": CODE, "replace": False}
    ]
    assert len(view.transcript.block_of(view.card("p1")).widget.children) == 2  # bar gone

    # a second insert in the same cell: the front end reads one payload, so they join
    with proposing(view, tool, proposals, "print('second')", "p2") as task:
        click((await wait_for_bar(view, "p2"))["insert"])
        await task
    payload = shell.payload_manager.read_payload()
    assert len(payload) == 1 and payload[0]["text"] == f"{CODE}\n\nprint('second')"


async def test_in_the_clawnb_kernel_the_inserted_cell_runs_as_python():
    """In the clawnb kernel a plain cell is a prompt: the inserted cell starts with %%python."""
    from clawnb.notebook.kernel import prompt_transformer

    shell = Payloads()
    shell.input_transformers_cleanup = [prompt_transformer]
    view, tool, proposals = widget_setup(shell)
    with proposing(view, tool, proposals) as task:
        click((await wait_for_bar(view))["insert"])
        await task
    text = shell.payload_manager.read_payload()[0]["text"]
    assert text == f"%%python\n{CODE}"
    assert prompt_transformer(text.splitlines(True)) == CODE.splitlines(True)


@pytest.mark.parametrize(("button", "expected"), [("dismiss", DISMISSED), ("copied", COPIED)])
async def test_dismiss_and_copy_insert_nothing(button, expected):
    shell = Payloads()
    view, tool, proposals = widget_setup(shell)
    with proposing(view, tool, proposals) as task:
        bar = await wait_for_bar(view)
        # the visible Copy button copies in the browser and then clicks the hidden one
        assert "navigator.clipboard" in bar["copy"].value
        assert "import matplotlib.pyplot as plt" in bar["copy"].value  # in its textarea
        assert bar["copied"].layout.display == "none"
        click(bar[button])
        assert await task == expected
    assert shell.payload_manager.read_payload() == []


async def test_no_insert_button_when_the_cell_has_already_returned():
    view, tool, proposals = widget_setup(Payloads(), can_insert=False)
    with proposing(view, tool, proposals) as task:
        bar = await wait_for_bar(view)
        assert "insert" not in bar
        click(bar["dismiss"])
        assert await task == DISMISSED


async def test_headless_prints_a_fenced_block(capsys):
    view = TextView()
    approver = Approver(view, how="deny")
    tool = ProposeCellTool()
    with tool.routed(CellProposals(view, approver, Payloads())):
        assert await tool.call({"code": CODE}) == HEADLESS
    assert f"```python\n{CODE}\n```" in capsys.readouterr().out


async def test_propose_cell_outside_a_cell_is_a_clear_error():
    from clawnb.tools import ToolError

    with pytest.raises(ToolError, match="no notebook cell is running"):
        await ProposeCellTool().call({"code": CODE})
    with pytest.raises(ToolError, match="'code' is empty"):
        await ProposeCellTool().call({"code": "  "})


def test_claw_cell_headless_proposal_is_in_the_transcript(shell, tmp_path: Path, capsys):
    write_script(
        tmp_path / "s.jsonl",
        [
            {"tool_calls": [{"id": "p", "name": "propose_cell", "arguments": {"code": CODE}}]},
            {"text": "Proposed a plotting cell."},
        ],
    )
    assert shell.run_cell("%%claw --model scripted:s.jsonl\nplot it").success
    out = capsys.readouterr().out
    assert f"```python\n{CODE}\n```" in out
    results = [m for m in shell._clawnb_session.messages if isinstance(m, Message.ToolResult)]
    assert results[-1].content == HEADLESS


def test_current_notebook_from_the_front_end(tmp_path: Path, monkeypatch):
    nb = tmp_path / "work" / "analysis.ipynb"
    nb.parent.mkdir()
    nbformat.write(nbformat.v4.new_notebook(), nb)
    monkeypatch.setenv("JPY_SESSION_NAME", str(nb))
    assert current_notebook() == nb
    context = notebook_context(None, tmp_path)
    assert "notebook work/analysis.ipynb" in context and "unsaved changes" in context
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "renamed-since.ipynb"))
    assert current_notebook() is None and notebook_context(None, tmp_path) == ""

    class VSCodeShell:
        user_ns = {"__vsc_ipynb_file__": str(nb)}

    assert current_notebook(VSCodeShell()) == nb


def test_the_agent_is_told_which_notebook_it_is_in(shell, tmp_path: Path, monkeypatch):
    nb = tmp_path / "analysis.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), nb)
    monkeypatch.setenv("JPY_SESSION_NAME", str(nb))
    write_script(tmp_path / "s.jsonl", [{"text": "hi"}])
    assert shell.run_cell("%%claw --model scripted:s.jsonl\nwhere am I?").success
    system = shell._clawnb_session.messages[0]
    assert isinstance(system, Message.System)
    assert "run in the notebook analysis.ipynb" in system.content
    assert "propose_cell" in json.dumps([m.content for m in [system]])
