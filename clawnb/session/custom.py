"""Run someone else's agent behind clawnb's front ends: ``%%claw --agent my_agent`` and
``python -m clawnb chat --agent my_agent``.

``--agent MODULE[:FACTORY]`` imports ``MODULE`` from the current folder (the notebook's folder
in a kernel) and calls ``FACTORY`` (default ``make_session``) as
``FACTORY(provider=..., workspace=..., history=...)``. What it returns must follow
:class:`clawnb.session.protocol.Session` (``history``, ``mode``, ``send``, ``handlers``,
``configure``); the front end then drives it exactly as it drives clawnb's own session. This is
how the course's capstone runs the learner's agent.

The module is imported afresh each time a session is built, so a re-exported package is
picked up without restarting the kernel.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import TYPE_CHECKING

from ..errors import ClawError
from .protocol import Session

if TYPE_CHECKING:
    from ..types import AnyProvider, Message

__all__ = ["load_session"]

_REQUIRED = ("history", "mode", "send", "handlers", "configure")


def load_session(
    spec: str, *, provider: AnyProvider, workspace: str, history: list[Message]
) -> Session:
    """Build the session that ``spec`` (``module`` or ``module:factory``) names."""
    module_name, _, factory_name = spec.partition(":")
    factory_name = factory_name or "make_session"
    if not module_name.replace(".", "").replace("_", "").isalnum():
        raise ClawError(f"--agent {spec}: expected MODULE or MODULE:FACTORY")
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    root = module_name.split(".")[0]
    for name in [n for n in sys.modules if n == root or n.startswith(root + ".")]:
        del sys.modules[name]  # a fresh import: pick up what was exported since
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ClawError(
            f"--agent {spec}: cannot import {module_name!r} from {here} ({exc})"
        ) from exc
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        raise ClawError(f"--agent {spec}: {module_name} has no function {factory_name}()")
    session = factory(provider=provider, workspace=workspace, history=history)
    missing = [name for name in _REQUIRED if not hasattr(session, name)]
    if missing or not isinstance(session, Session):
        raise ClawError(
            f"--agent {spec}: {type(session).__name__} is not a session; it lacks "
            f"{', '.join(missing) or 'the Session methods'} (see clawnb.session.protocol.Session)"
        )
    return session
