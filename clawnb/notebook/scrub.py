"""The notebook layer's names for :mod:`clawnb.control.secrets` (the one home of keys and redaction).

Every string the layer writes into a cell output, a widget or a saved notebook goes through
:func:`scrub`, the engine's redactor: known keys in any encoding and key-shaped strings become
``***``, and control or invisible characters (bidi overrides, zero-width) are shown escaped,
so what a card shows is what runs. :func:`mask` shows that a key is set without showing it (``%claw config``).
"""

from __future__ import annotations

from ..control.secrets import KEY_ENV_VARS, mask, redact, register_secret
from ..safety import display_safe

__all__ = ["KEY_ENV_VARS", "mask", "register_secret", "scrub"]


def scrub(text: str) -> str:
    """``text`` as the notebook may show or save it: known keys redacted, and control and
    invisible characters (bidi overrides, zero-width) written as escapes (``\\u202e``)."""
    return display_safe(redact(text))
