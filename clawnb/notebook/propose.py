"""``propose_cell``: hand code back to the person as a cell they can keep.

The model calls ``propose_cell(code)``; the person decides. In a live front end the tool's
card shows the code with **Insert below**, **Copy** and **Dismiss**, and the tool waits for
the click (like ``ask_user``), so the model learns what became of its proposal:

* **Insert below** asks the front end for a new code cell under the running ``%%claw`` cell,
  through IPython's ``set_next_input`` payload (``replace=False``), which JupyterLab 4 and
  Notebook 7 turn into ``insertCell(index + 1, {cell_type: "code", source})`` when the cell's
  execute reply arrives. The new cell is never executed. Measured facts (JupyterLab 4.6.6,
  see docs/notebook.md): the front end reads only the first ``set_next_input`` payload of a
  reply, and only from an ``ok`` reply — so several inserts in one cell are joined into one
  new cell, and a cell that ends in an error or an interrupt inserts nothing (the tool says
  so in advance: the code is also in the transcript). ipywidgets offers no route to the
  notebook model (the JupyterLab application object is not reachable from a widget without a
  front-end extension of our own), which is why the payload is the mechanism.
* **Copy** copies the code to the clipboard in the browser (no kernel round trip needed for
  the copy itself; a hidden button then tells the kernel, so the tool can return).
* **Dismiss** drops it.

Without a front end (nbclient, nbval, papermill, a terminal) nothing can be clicked: the code
is printed as a fenced block in the transcript and the tool returns at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
from collections.abc import Iterator
from typing import Any

from ..control.imports import load
from ..tools.base import BaseTool, ToolError, require_str
from ..types import JSON, ToolDefinition, ToolTraits
from .transcript import ANSWERING, RUNNING
from .widgets import WidgetView

__all__ = ["CellProposals", "ProposeCellTool", "fenced"]

INSERTED = (
    "the user chose Insert below: the code becomes a new code cell right below the %%claw "
    "cell when this cell finishes (it is not run)"
)
COPIED = "the user copied the code to the clipboard"
DISMISSED = "the user dismissed the proposed cell"
HEADLESS = (
    "no notebook front end is attached, so the code was printed in the transcript as a code "
    "block for the user to copy"
)


def fenced(code: str, lang: str = "python") -> str:
    ticks = "```"
    while ticks in code:
        ticks += "`"
    return f"{ticks}{lang}\n{code.rstrip(chr(10))}\n{ticks}"


# The Copy button is plain HTML: the clipboard can only be written by code running in the
# browser on a user gesture. After copying it clicks the hidden ipywidgets button next to
# it, which is how the kernel learns of the choice.
_COPY_JS = (
    "const box=this.closest('.clawnb-proposal');"
    "const code=box.querySelector('textarea').value;"
    "const done=()=>{this.textContent='Copied';"
    "const b=box.querySelector('.clawnb-copied');if(b){b.click();}};"
    "const fallback=()=>{const t=document.createElement('textarea');t.value=code;"
    "document.body.appendChild(t);t.select();try{document.execCommand('copy');}catch(e){}"
    "t.remove();done();};"
    "if(navigator.clipboard&&window.isSecureContext){"
    "navigator.clipboard.writeText(code).then(done,fallback);}else{fallback();}"
)


class CellProposals:
    """One ``%%claw`` cell's way of showing proposals: widgets when a front end rendered the
    cell, else printed code blocks. ``shell`` receives the insert payload; ``can_insert`` is
    false when the cell has already returned (old kernels run the agent as a background task,
    and a payload would then land on whatever cell runs next)."""

    def __init__(
        self, view: Any, approver: Any, shell: Any = None, *, can_insert: bool = True
    ) -> None:
        self.view = view
        self.approver = approver
        self.shell = shell
        self.can_insert = can_insert and _payloads(shell) is not None
        self.inserted: list[str] = []

    async def propose(self, code: str) -> str:
        how, _why = await self.approver.channel()
        if how == "widget" and isinstance(self.view, WidgetView):
            card = self._card()
            block = self.view.transcript.block_of(card) if card is not None else None
            if block is not None and block.widget is not None:
                return await self._ask_widget(card, block, code)
        if how == "stdin" and self.can_insert:
            print(fenced(code), flush=True)
            reply = await self.approver.ask_line("Insert it as a new cell below? [y/N]: ")
            if reply.strip().lower() in ("y", "yes"):
                self._insert(code)
                return INSERTED
            return DISMISSED
        print(fenced(code), flush=True)
        return HEADLESS

    def _card(self) -> Any:
        """The running ``propose_cell`` card (the tool is not told its call id)."""
        for card in reversed(list(self.view.transcript.cards.values())):
            if card.name == "propose_cell" and card.status == RUNNING:
                return card
        return None

    async def _ask_widget(self, card: Any, block: Any, code: str) -> str:
        w = load("ipywidgets")

        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str] = loop.create_future()

        def choose(value: str) -> Any:
            def on_click(_button: Any) -> None:
                if not answer.done():
                    answer.set_result(value)

            return on_click

        controls: list[Any] = []
        if self.can_insert:
            insert = w.Button(description="Insert below", button_style="primary")
            insert.tooltip = "add this code as a new cell below this one (it is not run)"
            insert.add_class("clawnb-insert")
            insert.on_click(choose("insert"))
            controls.append(insert)
        copy = w.HTML(
            value=(
                "<button class='jupyter-button widget-button clawnb-copy' type='button' "
                f'title="copy the code to the clipboard" onclick="{html.escape(_COPY_JS)}">'
                "Copy</button>"
                f"<textarea hidden>{html.escape(code)}</textarea>"
            )
        )
        copied = w.Button(description="copied", layout=w.Layout(display="none"))
        copied.add_class("clawnb-copied")
        copied.on_click(choose("copy"))
        dismiss = w.Button(description="Dismiss")
        dismiss.add_class("clawnb-dismiss")
        dismiss.on_click(choose("dismiss"))
        controls += [copy, copied, dismiss]
        bar = w.HBox(controls)
        bar.add_class("clawnb-proposal")
        # the code reaches the browser before the buttons that act on it
        self.view.set_status(card, ANSWERING)
        self.view.throttle.flush_now()
        block.widget.children = (*block.widget.children[:2], bar)
        try:
            choice = await answer
        finally:
            block.widget.children = tuple(block.widget.children[:2])
            for control in (*controls, bar):
                control.close()
            if card.status == ANSWERING:
                self.view.set_status(card, RUNNING)
        if choice == "insert":
            self._insert(code)
            return INSERTED
        return COPIED if choice == "copy" else DISMISSED

    def _insert(self, code: str) -> None:
        """Ask the front end for a new cell below this one when the cell finishes."""
        payloads = _payloads(self.shell)
        if payloads is None:
            raise ToolError("this front end cannot insert cells; the code is in the transcript")
        self.inserted.append(code.rstrip("\n"))
        text = "\n\n".join(self.inserted)
        if _every_cell_is_a_prompt(self.shell):
            text = "%%python\n" + text  # in the clawnb kernel a plain cell is a prompt
        payloads.write_payload(
            {"source": "set_next_input", "text": text, "replace": False},
            single=True,  # the front end reads one: several inserts become one new cell
        )


def _every_cell_is_a_prompt(shell: Any) -> bool:
    """Whether the shell is the clawnb kernel's (its transformer makes every cell a prompt)."""
    from .kernel import prompt_transformer

    return prompt_transformer in (getattr(shell, "input_transformers_cleanup", None) or ())


def _payloads(shell: Any) -> Any:
    return getattr(shell, "payload_manager", None) if shell is not None else None


class ProposeCellTool(BaseTool):
    """``propose_cell``: show code to the person as a cell they can insert (see the module
    docstring). Read-only: it changes nothing by itself — the person's click does, and only
    in the notebook's front end."""

    traits = ToolTraits(read_only=True, concurrency_safe=False)

    def __init__(self) -> None:
        self.target: CellProposals | None = None
        self.definition = ToolDefinition(
            "propose_cell",
            "Propose Python code to the user as a new notebook cell. They see it with "
            "'Insert below' (it becomes a cell under the current %%claw cell, not run), "
            "'Copy' and 'Dismiss'; the result says which they chose. Use it when the user "
            "wants code to keep in their notebook rather than have it run for them.",
        ).param("code", "string", "The cell's Python source", True)

    @contextlib.contextmanager
    def routed(self, target: CellProposals) -> Iterator[None]:
        """Show proposals through ``target`` for one cell."""
        previous, self.target = self.target, target
        try:
            yield
        finally:
            self.target = previous

    async def call(self, args: JSON) -> str:
        code = require_str(args, "code")
        if not code.strip():
            raise ToolError("'code' is empty; propose the cell's source")
        if self.target is None:
            raise ToolError("no notebook cell is running to show the proposal in")
        return await self.target.propose(code)
