"""The agent's tools. Each module holds one tool, named as the book names it."""

from .base import BaseTool, FileState, ToolError
from .bash import BashTool
from .edit import EditTool
from .read import ReadTool
from .write import WriteTool

__all__ = ["BaseTool", "BashTool", "EditTool", "FileState", "ReadTool", "ToolError", "WriteTool"]
