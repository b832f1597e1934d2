"""The skills listing: what the model learns about skills before it loads any.

Two-stage loading keeps the prompt small: the dynamic part of the system prompt names each
model-invocable skill with its description (stage one); the body is sent only when the model
calls the ``skill`` tool or the person types ``/NAME`` (stage two). The body of a skill is
never in the listing.

The listing has a budget: about 1% of the model's context window (:func:`listing_budget`),
counted with the project's token estimate (:func:`clawnb.context.estimate_tokens`). Each
description is first cut at :data:`DESCRIPTION_MAX_CHARS`; then skills are listed with their
description in precedence order (project, user, built-in; by name) as long as the listing
stays within the budget *with every other skill still named*: the model should at least know
that each skill exists, so the ones whose description does not fit are named without one, and
only when even the names do not fit are the last ones left out. :class:`SkillListing` says
which was which, for ``%claw skills``.

The text is a pure function of the catalog and the budget: the same skills give the same
bytes, so the prompt-cache prefix does not move between sessions.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .model import Skill

__all__ = [
    "BUDGET_SHARE",
    "DEFAULT_BUDGET_TOKENS",
    "DESCRIPTION_MAX_CHARS",
    "LISTING_HEADER",
    "SkillListing",
    "build_listing",
    "clean_description",
    "estimate_text_tokens",
    "listing_budget",
]

BUDGET_SHARE = 0.01
"""The listing may take this share of the context window."""

DEFAULT_BUDGET_TOKENS = 2000
"""The budget when the context window is not known (about 8,000 characters, Claude Code's
fallback too)."""

DESCRIPTION_MAX_CHARS = 250
"""A description is cut here in the listing. Enough for what a skill does and when to use it
in two sentences; at 1% of a 128k-token window (about 5,000 characters) some twenty skills fit
at full length, and more with shorter descriptions."""

LISTING_HEADER = (
    "# Skills\n"
    "Skills are instructions for particular tasks, loaded only when needed. When a request "
    "matches a skill below, call the `skill` tool with its name (and `arguments`, if it takes "
    "any) before you start, then follow the instructions it returns."
)
_NAMES_ONLY = "Also available (call `skill` with the name to see what it does): "


def estimate_text_tokens(text: str) -> int:
    """Tokens in ``text`` as the project estimates them (one system message's worth)."""
    from ..context import estimate_tokens
    from ..types import Message

    return estimate_tokens([Message.system(text)])


def listing_budget(context_window: int | None) -> int:
    """The listing's budget in tokens: :data:`BUDGET_SHARE` of ``context_window``, or
    :data:`DEFAULT_BUDGET_TOKENS` when the window is not known."""
    if not context_window or context_window <= 0:
        return DEFAULT_BUDGET_TOKENS
    return max(1, int(context_window * BUDGET_SHARE))


@dataclass(frozen=True)
class SkillListing:
    """The listing text (``""`` when nothing fits or nothing is listed) and what the budget
    did: ``listed`` with a description, ``names_only`` without one, ``omitted`` not at all;
    ``cut`` are the skills whose description was cut at :data:`DESCRIPTION_MAX_CHARS`."""

    text: str
    listed: tuple[str, ...]
    names_only: tuple[str, ...]
    omitted: tuple[str, ...]
    cut: tuple[str, ...]
    tokens: int
    budget: int

    def report_lines(self) -> list[str]:
        """What the budget cut, one line each, for ``%claw skills`` (empty: nothing cut)."""
        lines = []
        if self.cut:
            lines.append(
                f"description cut at {DESCRIPTION_MAX_CHARS} characters: " + ", ".join(self.cut)
            )
        if self.names_only:
            lines.append(
                f"listed without a description (budget {self.budget} tokens): "
                + ", ".join(self.names_only)
            )
        if self.omitted:
            lines.append(
                f"not listed (budget {self.budget} tokens); the model does not know them: "
                + ", ".join(self.omitted)
            )
        return lines


def clean_description(text: str) -> tuple[str, bool]:
    """A description as the listing shows it: one line (its own line breaks cannot start a
    new section of the prompt), secrets redacted, cut at :data:`DESCRIPTION_MAX_CHARS`.
    Returns ``(text, was_cut)``."""
    from ..control.secrets import redact

    one_line = redact(" ".join(text.split()))
    if len(one_line) <= DESCRIPTION_MAX_CHARS:
        return one_line, False
    return one_line[: DESCRIPTION_MAX_CHARS - 1].rstrip() + "…", True


def _line(skill: Skill) -> tuple[str, bool]:
    description, was_cut = clean_description(skill.description)
    text = f"- {skill.name}: {description}" if description else f"- {skill.name}"
    if skill.argument_hint:
        hint, _ = clean_description(skill.argument_hint)
        text += f" (arguments: {hint})"
    return text, was_cut


def _compose(lines: list[str], names: list[str]) -> str:
    parts = [LISTING_HEADER, *lines]
    if names:
        parts.append(_NAMES_ONLY + ", ".join(names) + ".")
    return "\n".join(parts)


def build_listing(
    skills: Iterable[Skill],
    *,
    context_window: int | None = None,
    budget_tokens: int | None = None,
) -> SkillListing:
    """The listing of the model-invocable ones among ``skills`` (a
    :class:`~clawnb.skills.discovery.SkillCatalog` or any skills, in the order given) within
    ``budget_tokens`` (default: :func:`listing_budget` of ``context_window``)."""
    budget = budget_tokens if budget_tokens is not None else listing_budget(context_window)
    candidates = [skill for skill in skills if skill.model_invocable]
    lines = {skill.name: _line(skill) for skill in candidates}

    def fits(full: list[Skill], named: list[Skill]) -> bool:
        listed_lines = [lines[s.name][0] for s in full]
        return estimate_text_tokens(_compose(listed_lines, [s.name for s in named])) <= budget

    # First every skill is named (the model should at least know each one exists), dropping
    # the last in precedence order while even the names do not fit; then, in precedence
    # order, each gets its description as long as everything still fits.
    named = list(candidates)
    omitted: list[str] = []
    while named and not fits([], named):
        omitted.insert(0, named.pop().name)
    full: list[Skill] = []
    for skill in list(named):
        rest = [s for s in named if s is not skill]
        if fits([*full, skill], rest):
            full.append(skill)
            named = rest
    listed = [s.name for s in full]
    cut = [s.name for s in full if lines[s.name][1]]
    names = [s.name for s in named]
    lines_shown = [lines[s.name][0] for s in full]
    text = _compose(lines_shown, names) if full or names else ""
    return SkillListing(
        text=text,
        listed=tuple(listed),
        names_only=tuple(names),
        omitted=tuple(omitted),
        cut=tuple(cut),
        tokens=estimate_text_tokens(text) if text else 0,
        budget=budget,
    )
