"""The package's own exceptions, one small tree::

    ClawError
    ├── ProviderError            a model could not give a turn (provider errors propagate)
    │   ├── ProviderConfigError  e.g. no API key configured (never includes the key)
    │   └── ScriptError          a scripted/replay file is malformed or exhausted
    ├── ConfigError              a config file or value is invalid (names file and key)
    └── AgentError               the loop itself stopped
        └── MaxTurnsExceeded

Tool failures are *not* exceptions to the loop's caller: they become ``error: …`` tool
results the model reads. HTTP-specific provider errors are added beside ``ProviderError`` by
:mod:`clawnb.providers.openai`.
"""

from __future__ import annotations

__all__ = [
    "AgentError",
    "ClawError",
    "ConfigError",
    "MaxTurnsExceeded",
    "ProviderConfigError",
    "ProviderError",
    "ScriptError",
]


class ClawError(Exception):
    """Base class of every clawnb exception."""


class ProviderError(ClawError):
    """A provider failed to produce a turn."""


class ProviderConfigError(ProviderError):
    """A provider is misconfigured (missing key, bad URL)."""


class ScriptError(ProviderError):
    """A scripted or recorded model file is malformed, or has no more turns."""


class ConfigError(ClawError):
    """A configuration file or value is invalid."""


class AgentError(ClawError):
    """The agent loop could not continue."""


class MaxTurnsExceeded(AgentError):
    def __init__(self, max_turns: int):
        super().__init__(f"exceeded max turns ({max_turns})")
        self.max_turns = max_turns
