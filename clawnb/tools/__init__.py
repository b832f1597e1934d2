"""The agent's tools. Each module holds one tool, named as the book names it."""

from .base import BaseTool, FileState, ToolError
from .read import ReadTool

__all__ = ["BaseTool", "FileState", "ReadTool", "ToolError"]
