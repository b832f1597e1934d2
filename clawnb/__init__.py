"""clawnb — a Claude-Code-style coding agent that lives inside Jupyter.

``import clawnb`` is cheap: public names load on first use, and nothing here imports httpx,
IPython or ipywidgets. In a notebook, ``%load_ext clawnb`` registers the ``%%claw`` magic.

What clawnb imports on first use comes from the installed environment only, never from the
workspace or the current folder (:mod:`clawnb.control.imports`): the public names below and
the notebook extension load through that guard.
"""

# No ``from __future__ import annotations`` here: it is an import too, and ``python -m clawnb``
# runs this file before anything else with the current folder first on sys.path (below).
import os as _os
import sys as _sys


def _forget_the_current_folder() -> None:
    """``python -m clawnb …`` (or ``-m clawnb.anything``): Python put the current folder first
    on ``sys.path`` before it ran this file, so a ``typing.py``, ``pydantic.py`` … of the
    folder the person happens to be in (a cloned repository) would be imported in its place.
    The ``clawnb`` command (a console script) puts its own bin folder there instead, which is
    harmless, and ``python -P`` / ``-I`` add nothing. Only the entry Python added for ``-m``
    goes: while it looks for the module, ``sys.argv[0]`` is ``"-m"``."""
    if _sys.argv[:1] != ["-m"] or not _sys.path:
        return
    argv = getattr(_sys, "orig_argv", [])
    # the word after "-m" (or after a cluster of short flags ending in it, like "-Bm")
    flags = [i for i, a in enumerate(argv[1:-1], 1) if a[:1] == "-" and a[1:].isalpha()]
    target = next((argv[i + 1] for i in flags if argv[i].endswith("m")), "")
    if target != "clawnb" and not target.startswith("clawnb."):
        return  # another program's -m run imported clawnb: its sys.path is its own
    try:
        here = _os.path.realpath(_os.getcwd())
    except OSError:
        return
    if _sys.path[0] and _os.path.realpath(_sys.path[0]) == here:
        del _sys.path[0]


_forget_the_current_folder()
del _forget_the_current_folder

from typing import TYPE_CHECKING, Any  # noqa: E402

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # types (ch4)
    "AssistantTurn": "clawnb.types",
    "Message": "clawnb.types",
    "StopReason": "clawnb.types",
    "TokenUsage": "clawnb.types",
    "Tool": "clawnb.types",
    "ToolCall": "clawnb.types",
    "ToolDefinition": "clawnb.types",
    "ToolSet": "clawnb.types",
    "Provider": "clawnb.types",
    "StreamProvider": "clawnb.types",
    # events
    "AgentEvent": "clawnb.events",
    "StreamEvent": "clawnb.events",
    "Approval": "clawnb.events",
    "ApprovalRequest": "clawnb.events",
    # errors
    "ClawError": "clawnb.errors",
    "ProviderError": "clawnb.errors",
    # providers
    "MockProvider": "clawnb.providers.mock",
    "MockStreamProvider": "clawnb.providers.mock",
    "ScriptedProvider": "clawnb.providers.replay",
    "RecordingProvider": "clawnb.providers.replay",
    "OpenAICompatProvider": "clawnb.providers.openai",
    "OpenRouterProvider": "clawnb.providers.openai",
    # streaming (ch5a)
    "parse_sse_line": "clawnb.providers.sse",
    "StreamAccumulator": "clawnb.providers.sse",
    "SSEDecoder": "clawnb.providers.sse",
    "ChunkNormaliser": "clawnb.providers.sse",
    # provider errors
    "ProviderHTTPError": "clawnb.errors",
    "RateLimitError": "clawnb.errors",
    "BadRequestError": "clawnb.errors",
    "ContextOverflowError": "clawnb.errors",
    "AuthenticationError": "clawnb.errors",
    "ServerError": "clawnb.errors",
    "ProviderConnectionError": "clawnb.errors",
    "ProviderTimeout": "clawnb.errors",
    "StreamError": "clawnb.errors",
    # loops
    "single_turn": "clawnb.agent",
    "SimpleAgent": "clawnb.agent",
    "StreamingAgent": "clawnb.agent",
    "tool_summary": "clawnb.executor",
    "ToolExecutor": "clawnb.executor",
    "Gate": "clawnb.executor",
    # tools
    "ReadTool": "clawnb.tools.read",
    "WriteTool": "clawnb.tools.write",
    "EditTool": "clawnb.tools.edit",
    "BashTool": "clawnb.tools.bash",
    "GlobTool": "clawnb.tools.glob",
    "GrepTool": "clawnb.tools.grep",
    "AskTool": "clawnb.tools.ask",
    "InputHandler": "clawnb.tools.ask",
    "MockInputHandler": "clawnb.tools.ask",
    "CliInputHandler": "clawnb.tools.ask",
    "ChannelInputHandler": "clawnb.tools.ask",
    "UserInputRequest": "clawnb.tools.ask",
    "WebFetchTool": "clawnb.tools.web_fetch",
    "ToolSearchTool": "clawnb.tools.tool_search",
    "defer": "clawnb.tools.tool_search",
    "ResultLimiter": "clawnb.tools.results",
    "FileState": "clawnb.tools.base",
    "ToolError": "clawnb.tools.base",
    "default_tools": "clawnb.tools",
    # config, cost, instructions, prompt, context, sessions, subagents (ch8, ch17-18, extras)
    "Config": "clawnb.config",
    "ConfigOverlay": "clawnb.config",
    "ConfigLoader": "clawnb.config",
    "ConfigError": "clawnb.errors",
    "CostTracker": "clawnb.usage",
    "InstructionLoader": "clawnb.instructions",
    "SystemPromptBuilder": "clawnb.prompt",
    "ContextManager": "clawnb.context",
    "ExtractiveSummarizer": "clawnb.context",
    "SessionLog": "clawnb.session.log",
    "SessionStore": "clawnb.session.log",
    "SubagentTool": "clawnb.tools.subagent",
    "build_agent": "clawnb.session.assemble",
    "AgentSession": "clawnb.session.assemble",
    # safety and control (ch13-16)
    "Permission": "clawnb.permissions",
    "PermissionDecision": "clawnb.permissions",
    "PermissionEngine": "clawnb.permissions",
    "PermissionMode": "clawnb.permissions",
    "PermissionRule": "clawnb.permissions",
    "SafetyCheck": "clawnb.safety",
    "SafetyViolation": "clawnb.safety",
    "PathValidator": "clawnb.safety",
    "CommandFilter": "clawnb.safety",
    "ProtectedFileCheck": "clawnb.safety",
    "SafeToolWrapper": "clawnb.safety",
    "Hook": "clawnb.hooks",
    "HookEvent": "clawnb.hooks",
    "HookAction": "clawnb.hooks",
    "HookRegistry": "clawnb.hooks",
    "LoggingHook": "clawnb.hooks",
    "BlockingHook": "clawnb.hooks",
    "ShellHook": "clawnb.hooks",
    "hooks_from_config": "clawnb.hooks",
    "GatePipeline": "clawnb.gates",
    "build_gate": "clawnb.gates",
    "PlanAgent": "clawnb.planning",
}

# Mirrors _EXPORTS exactly (tests/engine/test_import.py checks it); ``X as X`` marks each
# name as re-exported for strict type checkers (one import per module: isort left out).
# isort: off
if TYPE_CHECKING:  # what type checkers and IDEs see; at run time __getattr__ imports lazily
    from .agent import (
        SimpleAgent as SimpleAgent,
        StreamingAgent as StreamingAgent,
        single_turn as single_turn,
    )
    from .session.assemble import AgentSession as AgentSession, build_agent as build_agent
    from .config import (
        Config as Config,
        ConfigLoader as ConfigLoader,
        ConfigOverlay as ConfigOverlay,
    )
    from .context import (
        ContextManager as ContextManager,
        ExtractiveSummarizer as ExtractiveSummarizer,
    )
    from .errors import (
        AuthenticationError as AuthenticationError,
        BadRequestError as BadRequestError,
        ClawError as ClawError,
        ConfigError as ConfigError,
        ContextOverflowError as ContextOverflowError,
        ProviderConnectionError as ProviderConnectionError,
        ProviderError as ProviderError,
        ProviderHTTPError as ProviderHTTPError,
        ProviderTimeout as ProviderTimeout,
        RateLimitError as RateLimitError,
        ServerError as ServerError,
        StreamError as StreamError,
    )
    from .events import (
        AgentEvent as AgentEvent,
        Approval as Approval,
        ApprovalRequest as ApprovalRequest,
        StreamEvent as StreamEvent,
    )
    from .executor import Gate as Gate, ToolExecutor as ToolExecutor, tool_summary as tool_summary
    from .gates import GatePipeline as GatePipeline, build_gate as build_gate
    from .hooks import (
        BlockingHook as BlockingHook,
        Hook as Hook,
        HookAction as HookAction,
        HookEvent as HookEvent,
        HookRegistry as HookRegistry,
        LoggingHook as LoggingHook,
        ShellHook as ShellHook,
        hooks_from_config as hooks_from_config,
    )
    from .instructions import InstructionLoader as InstructionLoader
    from .permissions import (
        Permission as Permission,
        PermissionDecision as PermissionDecision,
        PermissionEngine as PermissionEngine,
        PermissionMode as PermissionMode,
        PermissionRule as PermissionRule,
    )
    from .planning import PlanAgent as PlanAgent
    from .prompt import SystemPromptBuilder as SystemPromptBuilder
    from .providers.mock import (
        MockProvider as MockProvider,
        MockStreamProvider as MockStreamProvider,
    )
    from .providers.openai import (
        OpenAICompatProvider as OpenAICompatProvider,
        OpenRouterProvider as OpenRouterProvider,
    )
    from .providers.replay import (
        RecordingProvider as RecordingProvider,
        ScriptedProvider as ScriptedProvider,
    )
    from .providers.sse import (
        ChunkNormaliser as ChunkNormaliser,
        SSEDecoder as SSEDecoder,
        StreamAccumulator as StreamAccumulator,
        parse_sse_line as parse_sse_line,
    )
    from .safety import (
        CommandFilter as CommandFilter,
        PathValidator as PathValidator,
        ProtectedFileCheck as ProtectedFileCheck,
        SafeToolWrapper as SafeToolWrapper,
        SafetyCheck as SafetyCheck,
        SafetyViolation as SafetyViolation,
    )
    from .session.log import SessionLog as SessionLog, SessionStore as SessionStore
    from .tools import default_tools as default_tools
    from .tools.ask import (
        AskTool as AskTool,
        ChannelInputHandler as ChannelInputHandler,
        CliInputHandler as CliInputHandler,
        InputHandler as InputHandler,
        MockInputHandler as MockInputHandler,
        UserInputRequest as UserInputRequest,
    )
    from .tools.base import FileState as FileState, ToolError as ToolError
    from .tools.bash import BashTool as BashTool
    from .tools.edit import EditTool as EditTool
    from .tools.glob import GlobTool as GlobTool
    from .tools.grep import GrepTool as GrepTool
    from .tools.read import ReadTool as ReadTool
    from .tools.results import ResultLimiter as ResultLimiter
    from .tools.subagent import SubagentTool as SubagentTool
    from .tools.tool_search import ToolSearchTool as ToolSearchTool, defer as defer
    from .tools.web_fetch import WebFetchTool as WebFetchTool
    from .tools.write import WriteTool as WriteTool
    from .types import (
        AssistantTurn as AssistantTurn,
        Message as Message,
        Provider as Provider,
        StopReason as StopReason,
        StreamProvider as StreamProvider,
        TokenUsage as TokenUsage,
        Tool as Tool,
        ToolCall as ToolCall,
        ToolDefinition as ToolDefinition,
        ToolSet as ToolSet,
    )
    from .usage import CostTracker as CostTracker
# isort: on

__all__ = [*_EXPORTS, "load_ipython_extension", "unload_ipython_extension"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'clawnb' has no attribute {name!r}")
    from .control.imports import load

    # through the guard: everything the module imports while it loads (pydantic, httpx …)
    # comes from the installed environment, not from the folder the script runs in
    value = getattr(load(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext clawnb``: register the ``%%claw`` magics (imports stay lazy)."""
    from .notebook import load_ipython_extension as _load  # puts the import guard in place

    _load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from .notebook import unload_ipython_extension as _unload

    _unload(ipython)
