"""``python -m clawnb.skills check [DIR]``: validate skills before they ship, e.g. in CI.

``DIR`` (default: the current folder) is a project (its ``.claw/skills``, ``.claude/skills``,
``.agents/skills``, ``.claw/commands`` and ``.claude/commands`` are checked), a folder of skill
folders, or one skill folder. The check reads files and runs nothing. One line per problem:

* the frontmatter is malformed (the same line discovery would log, naming the file and key),
  the file is a link out of the project, not a regular file or too big;
* a model-invocable skill has no description, or one longer than the listing shows;
* a skill does not make it into the listing within the budget (1% of ``--context-window``);
* the frontmatter ``name`` is not the folder's name; a key is unknown (a typo is ignored
  silently otherwise);
* the body is empty, or a ```` ```! ```` block in it never closes;
* a file the body points to (``${CLAUDE_SKILL_DIR}/…``, ``scripts/…``, a relative Markdown
  link) is not in the skill's folder;
* a line of ``examples/*.jsonl`` is not JSON.

With ``--run`` (``run_examples=True``) it also runs each skill's ``examples/*.jsonl`` headless —
a scripted conversation and what it must do (:mod:`clawnb.skills.examples`) — on a temporary
copy of the project; that runs the project's code, so it is never done unasked.

Exit status 1 when there is a problem, 0 otherwise.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .discovery import PROJECT_COMMAND_DIRS, PROJECT_SKILL_DIRS, discover_skills, load_folder
from .invoke import unclosed_context_blocks
from .listing import DESCRIPTION_MAX_CHARS, build_listing, listing_budget
from .model import Skill, SkillError

__all__ = ["CheckReport", "check_skills"]

# What a body points to inside its folder.
_SKILL_DIR_REF = re.compile(r"\$\{(?:CLAUDE|CLAW)_SKILL_DIR\}/([^\s`'\"()<>\]]+)")
_SCRIPT_REF = re.compile(r"(?<![\w/.$}-])((?:scripts|references)/[A-Za-z0-9_./-]*[A-Za-z0-9_])")
_LINK_REF = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


@dataclass(frozen=True)
class CheckReport:
    """What ``check`` found: the skills checked and one line per problem."""

    checked: int
    problems: tuple[str, ...]
    examples_run: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def check_skills(
    directory: str | os.PathLike[str] | None = None,
    *,
    context_window: int | None = None,
    run_examples: bool = False,
) -> CheckReport:
    """Check every skill in ``directory`` (see the module docstring)."""
    base = Path(directory if directory is not None else os.getcwd()).absolute()
    project = any((base / sub).exists() for sub in (*PROJECT_SKILL_DIRS, *PROJECT_COMMAND_DIRS))
    if project and not (base / "SKILL.md").exists():
        # the person asked for these files to be checked: reading them is what they want,
        # and nothing in them runs
        catalog = discover_skills(base, trusted=True, user=False, builtins=False)
        shown_base = base
    else:
        catalog = load_folder(base)
        shown_base = base if not (base / "SKILL.md").exists() else base.parent
    problems = list(catalog.problems)
    listing = build_listing(catalog.skills, context_window=context_window)
    budget = listing_budget(context_window)
    window = f"a window of {context_window} tokens" if context_window else "an unknown window"
    every = [*catalog.skills, *(s.skill for s in catalog.shadowed)]
    for skill in every:
        shown = _shown(skill.path, shown_base)
        for problem in _skill_problems(skill):
            problems.append(f"{shown}: {problem}")
        if skill.model_invocable and skill in catalog.skills and skill.name not in listing.listed:
            problems.append(
                f"{shown}: not in the listing within its budget ({budget} tokens, 1% of "
                f"{window}): shorten the descriptions, or set disable-model-invocation on "
                "skills only a person runs"
            )
    ran = 0
    if run_examples and not problems:
        from .examples import run_examples as run

        ran, failed = run(
            base, [s.path.parent for s in catalog.skills if s.path.name == "SKILL.md"]
        )
        problems += failed
    return CheckReport(len(every), tuple(problems), ran)


def _known_agents() -> frozenset[str]:
    from .runtime import KNOWN_AGENTS

    return KNOWN_AGENTS


def _skill_problems(skill: Skill) -> list[str]:
    problems: list[str] = []
    if skill.model_invocable and not skill.description.strip():
        problems.append(
            "no description, so the model cannot tell when to use it; add `description:` "
            "(what it does and when to use it)"
        )
    elif len(" ".join(skill.description.split())) > DESCRIPTION_MAX_CHARS:
        problems.append(
            f"description is {len(skill.description)} characters; the listing cuts it at "
            f"{DESCRIPTION_MAX_CHARS}"
        )
    if skill.declared_name:
        problems.append(
            f"frontmatter name {skill.declared_name!r} is not the "
            f"{'folder' if skill.kind == 'skill' else 'file'}'s name; it is invoked as "
            f"/{skill.name}"
        )
    for key in skill.unknown_keys:
        problems.append(f"unknown frontmatter key {key!r} (ignored)")
    if skill.agent and skill.agent.strip().lower() not in _known_agents():
        problems.append(
            f"agent {skill.agent!r} is not a kind clawnb runs (Explore, Plan: read-only; "
            "general-purpose): the fork runs as a general child"
        )
    try:
        body = skill.load_body()
    except SkillError as exc:
        return [*problems, str(exc)]
    if not body.strip():
        problems.append("the body is empty: invoking it gives the model nothing")
    for line in unclosed_context_blocks(body):
        problems.append(f"body line {line}: a ```! block is never closed (it is not run)")
    if skill.folder is not None:
        for ref in sorted(_references(body)):
            target = skill.folder / ref
            if not (target.exists() or target.is_symlink()):
                problems.append(f"refers to {ref}, which is not in the skill's folder")
        problems += _example_problems(skill.folder)
    return problems


def _references(body: str) -> set[str]:
    refs = set(_SKILL_DIR_REF.findall(body)) | set(_SCRIPT_REF.findall(body))
    for link in _LINK_REF.findall(body):
        if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", link) or link.startswith(("#", "/", "~")):
            continue  # a URL, an anchor or an absolute path: not a file of the skill
        refs.add(link.split("#", 1)[0])
    return {ref.rstrip(".,;:") for ref in refs if ref and ".." not in Path(ref).parts}


def _example_problems(folder: Path) -> list[str]:
    problems: list[str] = []
    examples = folder / "examples"
    if not examples.is_dir():
        return problems
    for path in sorted(examples.glob("*.jsonl")):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"examples/{path.name}: not readable ({exc})")
            continue
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(f"examples/{path.name} line {n}: not JSON ({exc.msg})")
                break
    return problems


def _shown(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)
