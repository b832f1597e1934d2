"""The agent's tools. Each module holds one tool, named as the book names it."""

from .base import BaseTool, FileState, ToolError
from .bash import BashTool
from .edit import EditTool
from .glob import GlobTool
from .grep import GrepTool
from .read import ReadTool
from .write import WriteTool

__all__ = ["BaseTool", "BashTool", "EditTool", "FileState", "GlobTool", "GrepTool", "ReadTool", "ToolError", "WriteTool"]
