"""Keep API keys out of everything the notebook layer shows or saves.

A key may reach an output by many roads: an exception message that quotes a header, a tool
result that prints the environment, a model that echoes what it saw. So the layer does not
trust any road: every string it writes into a cell output or a widget goes through
:func:`scrub`, which replaces

* the exact values of the key environment variables (``CLAWNB_API_KEY``, ``OPENROUTER_API_KEY``,
  ``OPENAI_API_KEY``, plus any value registered with :func:`register_secret`), and
* strings shaped like provider keys (``sk-…``, ``sk-or-v1-…``, ``Bearer <token>``)

by ``***``. :func:`mask` shows that a key is set without showing it (``%claw config``).
"""

from __future__ import annotations

import os
import re

__all__ = ["KEY_ENV_VARS", "mask", "register_secret", "scrub"]

KEY_ENV_VARS = ("CLAWNB_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY")

_REPLACEMENT = "***"
_KEY_SHAPES = re.compile(
    r"""
    \bsk-(?:or-v1-|proj-|ant-[a-z0-9]+-)?[A-Za-z0-9_\-]{16,}   # OpenAI / OpenRouter / Anthropic
    | \b(?:Bearer|bearer)\s+[A-Za-z0-9_\-\.=:/+]{12,}           # an Authorization header value
    | \bAIza[0-9A-Za-z_\-]{30,}                                 # Google API keys
    | \bgh[pousr]_[A-Za-z0-9]{30,}                              # GitHub tokens
    """,
    re.VERBOSE,
)
_registered: set[str] = set()


def register_secret(value: str | None) -> None:
    """Remember one more secret value to scrub (values shorter than 8 characters are ignored:
    scrubbing them would mangle ordinary words)."""
    if value and len(value) >= 8:
        _registered.add(value)


def _known_values() -> list[str]:
    values = set(_registered)
    for name in KEY_ENV_VARS:
        value = os.environ.get(name)
        if value and len(value) >= 8:
            values.add(value)
    # longest first, so a key that contains another is replaced whole
    return sorted(values, key=len, reverse=True)


def scrub(text: str) -> str:
    """``text`` with every known secret and key-shaped string replaced by ``***``."""
    if not text:
        return text
    for value in _known_values():
        if value in text:
            text = text.replace(value, _REPLACEMENT)
    return _KEY_SHAPES.sub(
        lambda m: (
            m.group(0).split()[0] + " " + _REPLACEMENT
            if m.group(0).lower().startswith("bearer")
            else _REPLACEMENT
        ),
        text,
    )


def mask(value: str | None) -> str:
    """``"sk-…abcd (set)"``-style display of a secret: never more than its last 4 characters,
    and nothing at all for short values."""
    if not value:
        return "(not set)"
    if len(value) < 16:
        return "*** (set)"
    return f"***{value[-4:]} (set, {len(value)} characters)"
