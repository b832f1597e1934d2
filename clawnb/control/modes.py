"""The permission modes: one enum for the engine, the config file and every front end.

A leaf module (the standard library only), so the config loader, the permission engine and
the trust rules can all import it without a cycle. :mod:`clawnb.permissions` re-exports it.
"""

from __future__ import annotations

import re
from enum import StrEnum

__all__ = ["PermissionMode"]


class PermissionMode(StrEnum):
    """How much the agent may do without asking (seed 001, Claude Code's modes)."""

    DEFAULT = "default"
    ACCEPT_EDITS = "accept_edits"
    PLAN = "plan"
    BYPASS = "bypass"

    @classmethod
    def parse(cls, value: str | PermissionMode) -> PermissionMode:
        """Accept ``"accept_edits"``, ``"acceptEdits"``, ``"accept-edits"`` and friends."""
        if isinstance(value, PermissionMode):
            return value
        key = re.sub(r"[-\s]", "_", str(value).strip())
        key = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", key).lower()
        aliases = {"bypass_permissions": "bypass", "acceptedits": "accept_edits"}
        key = aliases.get(key, key)
        try:
            return cls(key)
        except ValueError:
            known = ", ".join(m.value for m in cls)
            raise ValueError(f"unknown permission mode {value!r}; use one of: {known}") from None
