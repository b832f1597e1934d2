"""clawnb — a Claude-Code-style coding agent that lives inside Jupyter.

``import clawnb`` is cheap: public names load on first use, and nothing here imports httpx,
IPython or ipywidgets. In a notebook, ``%load_ext clawnb`` registers the ``%%claw`` magic.
"""

from __future__ import annotations

import importlib
from typing import Any

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
    "SessionLog": "clawnb.session",
    "SessionStore": "clawnb.session",
    "SubagentTool": "clawnb.tools.subagent",
    "build_agent": "clawnb.assemble",
    "AgentSession": "clawnb.assemble",
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


__all__ = [*_EXPORTS, "load_ipython_extension", "unload_ipython_extension"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'clawnb' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext clawnb``: register the ``%%claw`` magics (imports stay lazy)."""
    from .notebook import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from .notebook import unload_ipython_extension as _unload

    _unload(ipython)
