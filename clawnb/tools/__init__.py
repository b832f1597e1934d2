"""The agent's tools (book ch2, ch9–12, extras). Each module holds one tool, named as the book
names it; :func:`default_tools` wires the standard set (book ch12, "the tool registry")."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from ..types import Tool, ToolSet, traits_of
from .ask import (
    AskTool,
    ChannelInputHandler,
    CliInputHandler,
    InputHandler,
    MockInputHandler,
    UserInputRequest,
)
from .base import BaseTool, FileState, ToolError
from .bash import BashTool
from .edit import EditTool
from .glob import GlobTool
from .grep import GrepTool
from .ipynb import NotebookEditTool, NotebookReadTool
from .read import ReadTool
from .results import ResultLimiter, truncate_middle
from .tool_search import (
    Deferred,
    ToolSearchTool,
    active_definitions,
    defer,
    deferred_tools_section,
)
from .web_fetch import WebFetchTool
from .write import WriteTool

__all__ = [
    "AskTool",
    "BaseTool",
    "BashTool",
    "ChannelInputHandler",
    "CliInputHandler",
    "Deferred",
    "EditTool",
    "FileState",
    "GlobTool",
    "GrepTool",
    "InputHandler",
    "MockInputHandler",
    "NotebookEditTool",
    "NotebookReadTool",
    "ReadTool",
    "ResultLimiter",
    "ToolError",
    "ToolSearchTool",
    "UserInputRequest",
    "WebFetchTool",
    "WriteTool",
    "active_definitions",
    "default_tools",
    "defer",
    "deferred_tools_section",
    "truncate_middle",
]


def default_tools(
    workspace: str | os.PathLike[str] | None = None,
    *,
    file_state: FileState | None = None,
    input_handler: InputHandler | None = None,
    web: bool = True,
    allow_private: bool = False,
    deferred: Iterable[str] = ("web_fetch",),
    bash_timeout: int = 120,
    sandbox: Any = None,
) -> ToolSet:
    """The standard tool set for an agent working in ``workspace``.

    ``read``, ``write``, ``edit``, ``bash``, ``glob``, ``grep``, ``notebook_read`` and
    ``notebook_edit`` always; ``ask_user`` when an
    ``input_handler`` is given; ``web_fetch`` when ``web`` (``allow_private`` lets it reach
    local addresses). The read, write, edit and notebook tools share one :class:`FileState` (a new one
    unless given), which enforces read-before-edit for the session. Tools named in
    ``deferred`` are hidden from the model until ``tool_search`` (added when any tool is
    deferred) loads them. ``sandbox`` (a :class:`~clawnb.control.sandbox.SandboxStatus` or policy)
    confines the bash tool's commands.
    """
    state = file_state if file_state is not None else FileState()
    tools: list[Tool] = [
        ReadTool(workspace, state),
        WriteTool(workspace, state),
        EditTool(workspace, state),
        BashTool(workspace, timeout=bash_timeout, sandbox=sandbox),
        GlobTool(workspace),
        GrepTool(workspace),
        NotebookReadTool(workspace, state),
        NotebookEditTool(workspace, state),
    ]
    if input_handler is not None:
        tools.append(AskTool(input_handler))
    if web:
        tools.append(WebFetchTool(allow_private=allow_private))
    hidden = set(deferred)
    tools = [defer(t) if t.definition.name in hidden else t for t in tools]
    toolset = ToolSet(tools)
    if any(traits_of(t).deferred for t in tools):
        toolset.push(ToolSearchTool(toolset))
    return toolset
