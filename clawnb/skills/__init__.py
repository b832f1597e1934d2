"""Skills and prompt commands: repeatable workflows the model loads only when it needs them.

* :mod:`~clawnb.skills.model` — the :class:`Skill` value and its frontmatter;
* :mod:`~clawnb.skills.discovery` — where skills are found, precedence, trust
  (:func:`discover_skills` → :class:`SkillCatalog`);
* :mod:`~clawnb.skills.listing` — the names and descriptions for the system prompt, within a
  budget (:func:`build_listing`);
* :mod:`~clawnb.skills.invoke` — a body with its arguments filled in and its dynamic-context
  snippets found, never run (:func:`prepare_invocation`);
* :mod:`~clawnb.skills.tool` — the read-only ``skill`` tool (:class:`SkillTool`);
* :mod:`~clawnb.skills.check` — ``python -m clawnb.skills check [DIR]``.

Everything here is cheap to import (the standard library and clawnb's own small modules).
"""

from __future__ import annotations

from .discovery import Shadowed, SkillCatalog, discover_skills, load_folder
from .invoke import (
    ContextCommand,
    PreparedPrompt,
    find_context_commands,
    prepare_invocation,
    reattachment,
    substitute_arguments,
    substitute_context,
)
from .listing import SkillListing, build_listing, listing_budget
from .model import Skill, SkillError, SkillFormatError, allowed_tool_rules
from .tool import SkillTool

__all__ = [
    "ContextCommand",
    "PreparedPrompt",
    "Shadowed",
    "Skill",
    "SkillCatalog",
    "SkillError",
    "SkillFormatError",
    "SkillListing",
    "SkillTool",
    "allowed_tool_rules",
    "build_listing",
    "discover_skills",
    "find_context_commands",
    "listing_budget",
    "load_folder",
    "prepare_invocation",
    "reattachment",
    "substitute_arguments",
    "substitute_context",
]
