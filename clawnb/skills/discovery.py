"""Finding skills and prompt commands: the project, the user, the built-ins.

Where they are looked for, highest precedence first:

1. **the project** (only in a trusted workspace): skills in ``.claw/skills/NAME/SKILL.md``,
   then the other agents' conventions in the same repository, ``.claude/skills/`` and
   ``.agents/skills/``; then prompt commands ``.claw/commands/NAME.md`` and
   ``.claude/commands/NAME.md`` (a skill beats a command of the same name, as in Claude Code);
2. **the user**: ``skills/NAME/SKILL.md`` and ``commands/NAME.md`` in clawnb's user config
   directory (:func:`clawnb.control.trust.user_config_dir`, ``~/.config/clawnb``);
3. **the built-ins** shipped in this package (``clawnb/skills/builtin/NAME/SKILL.md``).

The first one found under a name is used; the others are remembered as :class:`Shadowed`, so
``%claw skills`` can say which file is overridden by which.

**Trust.** A project's skills are instructions from the repository: a cloned repository must
not be able to tell the agent what to do, nor have its ``!`` snippets run, before the person
has trusted the folder. In an untrusted workspace no project skill file is opened at all;
:attr:`SkillCatalog.ignored_untrusted` counts the skills and commands that were there.

**Reading.** Every file is read through :func:`clawnb.skills.model.read_skill_file` (the
workspace's safe reader): a project skill's files must stay inside the workspace (a
``SKILL.md`` that is a link to ``~/.ssh/id_rsa`` is not read), a user skill's inside its own
folder (which may itself be a link, e.g. into a dotfiles repository), a built-in's inside the
package. A file that is refused or malformed becomes one line in
:attr:`SkillCatalog.problems` and the skill is skipped; discovery never raises for a bad skill.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import UnsafeFileError
from .model import (
    Skill,
    SkillFormatError,
    SkillKind,
    SkillSource,
    build_skill,
    is_skill_name,
    read_skill_file,
)

__all__ = [
    "BUILTIN_DIR",
    "MAX_ENTRIES",
    "PROJECT_COMMAND_DIRS",
    "PROJECT_SKILL_DIRS",
    "Shadowed",
    "SkillCatalog",
    "discover_skills",
    "load_folder",
]

PROJECT_SKILL_DIRS = (".claw/skills", ".claude/skills", ".agents/skills")
PROJECT_COMMAND_DIRS = (".claw/commands", ".claude/commands")
BUILTIN_DIR = Path(__file__).resolve().with_name("builtin")
_PACKAGE_PARENT = BUILTIN_DIR.parents[2]  # problem lines name clawnb/skills/builtin/…
MAX_ENTRIES = 500
"""At most this many entries of one skills or commands folder are looked at: a repository
with a million folders under ``.claude/skills`` must not stall the session's start."""


@dataclass(frozen=True)
class Shadowed:
    """``skill`` is not used because ``by``, of higher precedence, has the same name."""

    skill: Skill
    by: Skill

    def line(self, workspace: Path | None = None) -> str:
        """``/review: .claw/skills/review/SKILL.md overrides built-in skill review``."""
        return (
            f"/{self.skill.name}: {_where(self.by, workspace)} overrides "
            f"{_where(self.skill, workspace)}"
        )


@dataclass(frozen=True)
class SkillCatalog:
    """What discovery found: the skills in use (project first, then user, then built-in; by
    name within each), the overridden ones, one line per skipped file, and how many project
    skills an untrusted workspace kept out."""

    skills: tuple[Skill, ...] = ()
    shadowed: tuple[Shadowed, ...] = ()
    problems: tuple[str, ...] = ()
    ignored_untrusted: int = 0
    workspace: Path | None = None

    def __post_init__(self) -> None:
        by_name: dict[str, Skill] = {}
        for skill in self.skills:
            by_name.setdefault(skill.name, skill)  # the first one under a name, as before
        object.__setattr__(self, "_by_name", by_name)

    def get(self, name: str) -> Skill | None:
        by_name: dict[str, Skill] = self._by_name  # type: ignore[attr-defined]
        return by_name.get(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[Skill]:
        return iter(self.skills)

    def __len__(self) -> int:
        return len(self.skills)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(skill.name for skill in self.skills)

    def model_invocable(self) -> tuple[Skill, ...]:
        """The skills the model may load (and that the listing names)."""
        return tuple(skill for skill in self.skills if skill.model_invocable)

    def user_invocable(self) -> tuple[Skill, ...]:
        """What a person can run as ``/NAME`` (and what completion offers)."""
        return tuple(skill for skill in self.skills if skill.user_invocable)

    def overridden(self, name: str) -> tuple[Skill, ...]:
        """The skills of lower precedence that ``name`` hides."""
        return tuple(s.skill for s in self.shadowed if s.skill.name == name)

    def shadowed_lines(self) -> list[str]:
        """One line per overridden skill, for ``%claw skills``."""
        return [s.line(self.workspace) for s in self.shadowed]

    def untrusted_note(self) -> str | None:
        """One line when an untrusted workspace's skills were ignored, with how to trust it."""
        if not self.ignored_untrusted:
            return None
        n = self.ignored_untrusted
        folder = str(self.workspace) if self.workspace is not None else "."
        return (
            f"{n} project skill{'s' if n != 1 else ''}/command{'s' if n != 1 else ''} "
            f"ignored: {folder} is not trusted. If you trust this folder, run "
            f"`python -m clawnb trust {folder}` (or `%claw trust` in a notebook)."
        )


def discover_skills(
    workspace: str | os.PathLike[str] | None,
    *,
    trusted: bool,
    user_dir: str | os.PathLike[str] | None = None,
    user: bool = True,
    builtins: bool = True,
) -> SkillCatalog:
    """Every skill and prompt command available in ``workspace`` (``None``: no project).

    ``trusted`` says whether the workspace is trusted (:class:`clawnb.control.trust.TrustStore`
    decides; the session passes its answer); an untrusted one's skills are counted, not read.
    ``user_dir`` is clawnb's user config directory (default
    :func:`clawnb.control.trust.user_config_dir`); ``user=False`` and ``builtins=False``
    leave the user's and the shipped skills out.
    """
    from ..control.trust import user_config_dir

    found: list[Skill] = []
    problems: list[str] = []
    ignored = 0
    ws = Path(workspace).absolute() if workspace is not None else None
    if ws is not None:
        if trusted:
            for sub in PROJECT_SKILL_DIRS:
                found += _folder_skills(ws / sub, ws, "project", ws, problems)
            for sub in PROJECT_COMMAND_DIRS:
                found += _command_files(ws / sub, ws, "project", ws, problems)
        else:
            ignored = _count_untrusted(ws)
    if user:
        home = Path(user_dir) if user_dir is not None else user_config_dir()
        found += _folder_skills(home / "skills", None, "user", None, problems)
        found += _command_files(home / "commands", home / "commands", "user", None, problems)
    if builtins:
        found += _folder_skills(BUILTIN_DIR, BUILTIN_DIR, "builtin", _PACKAGE_PARENT, problems)
    return _resolve(found, problems, ignored, ws)


def load_folder(folder: str | os.PathLike[str], *, source: SkillSource = "project") -> SkillCatalog:
    """The skills in one folder of skill folders (``folder/NAME/SKILL.md``) or the single
    skill ``folder`` is (it holds a SKILL.md), read as ``source`` with ``folder`` as the root
    their files must stay in. For ``check`` and tests; no precedence, no trust question."""
    base = Path(folder).absolute()
    problems: list[str] = []
    if (base / "SKILL.md").exists() or (base / "SKILL.md").is_symlink():
        skills = _folder_skills(base.parent, base, source, base.parent, problems, only=base.name)
    else:
        skills = _folder_skills(base, base, source, base, problems)
    return _resolve(skills, problems, 0, None)


def _resolve(
    found: list[Skill], problems: list[str], ignored: int, workspace: Path | None
) -> SkillCatalog:
    by_name: dict[str, Skill] = {}
    shadowed: list[Shadowed] = []
    for skill in found:  # in precedence order
        winner = by_name.get(skill.name)
        if winner is None:
            by_name[skill.name] = skill
        else:
            shadowed.append(Shadowed(skill, winner))
    rank = {"project": 0, "user": 1, "builtin": 2}
    ordered = sorted(by_name.values(), key=lambda s: (rank[s.source], s.name))
    return SkillCatalog(tuple(ordered), tuple(shadowed), tuple(problems), ignored, workspace)


def _entries(base: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(base) as scan:
            entries = []
            for entry in scan:
                if not entry.name.startswith("."):
                    entries.append(entry)
                if len(entries) >= MAX_ENTRIES:
                    break
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError:
        return []
    return sorted(entries, key=lambda e: e.name)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows a link: a linked skill folder is a skill folder
    except OSError:
        return False


def _folder_skills(
    base: Path,
    root: Path | None,
    source: SkillSource,
    shown_from: Path | None,
    problems: list[str],
    *,
    only: str | None = None,
) -> list[Skill]:
    """The skills ``base/NAME/SKILL.md``. ``root`` is where their files must stay (``None``:
    each skill's own folder, links resolved — a user's skill folder may be a link)."""
    skills: list[Skill] = []
    for entry in _entries(base):
        if only is not None and entry.name != only:
            continue
        if not _is_dir(entry):
            continue
        folder = base / entry.name
        path = folder / "SKILL.md"
        shown = _shown(path, shown_from)
        if not (path.exists() or path.is_symlink()):
            problems.append(f"{shown}: no SKILL.md in this skill folder; skipped")
            continue
        if not is_skill_name(entry.name):
            problems.append(
                f"{shown}: {entry.name!r} is not a skill name (letters, digits, - and _, "
                "at most 64); skipped"
            )
            continue
        own_root = root if root is not None else Path(os.path.realpath(folder))
        skill = _load(path, entry.name, own_root, source, "skill", folder, shown, problems)
        if skill is not None:
            skills.append(skill)
    return skills


def _command_files(
    base: Path,
    root: Path | None,
    source: SkillSource,
    shown_from: Path | None,
    problems: list[str],
) -> list[Skill]:
    """The prompt commands ``base/NAME.md`` (sub-folders are not read)."""
    commands: list[Skill] = []
    own_root = root if root is not None else base
    for entry in _entries(base):
        if not entry.name.endswith(".md") or _is_dir(entry):
            continue
        name = entry.name[: -len(".md")]
        path = base / entry.name
        shown = _shown(path, shown_from)
        if not is_skill_name(name):
            problems.append(f"{shown}: {name!r} is not a command name; skipped")
            continue
        command = _load(path, name, own_root, source, "command", None, shown, problems)
        if command is not None:
            commands.append(command)
    return commands


def _load(
    path: Path,
    name: str,
    root: Path,
    source: SkillSource,
    kind: SkillKind,
    folder: Path | None,
    shown: str,
    problems: list[str],
) -> Skill | None:
    try:
        text = read_skill_file(path, root=root)
    except UnsafeFileError as exc:
        problems.append(f"{shown}: not read: {_reason(exc, path)}; skipped")
        return None
    except OSError as exc:
        problems.append(f"{shown}: not read: {exc.strerror or type(exc).__name__}; skipped")
        return None
    try:
        return build_skill(
            text,
            name=name,
            path=path,
            root=root,
            source=source,
            kind=kind,
            folder=folder,
            shown=shown,
        )
    except SkillFormatError as exc:
        problems.append(f"{exc}; skipped")
        return None


def _reason(exc: UnsafeFileError, path: Path) -> str:
    # The reader's message starts with the path it was given; the line already names it.
    message = str(exc)
    prefix = os.fspath(path)
    return message[len(prefix) :].strip() if message.startswith(prefix) else message


def _count_untrusted(ws: Path) -> int:
    """How many project skills and commands there are, without opening any of them."""
    count = 0
    for sub in PROJECT_SKILL_DIRS:
        for entry in _entries(ws / sub):
            skill_md = ws / sub / entry.name / "SKILL.md"
            if _is_dir(entry) and (skill_md.exists() or skill_md.is_symlink()):
                count += 1
    for sub in PROJECT_COMMAND_DIRS:
        count += sum(1 for e in _entries(ws / sub) if e.name.endswith(".md") and not _is_dir(e))
    return count


def _shown(path: Path, base: Path | None) -> str:
    """A path as a person reads it in a problem line: relative to the workspace for a
    project skill, with ``~`` for one under the home directory."""
    if base is not None:
        try:
            return str(path.relative_to(base))
        except ValueError:
            pass
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except (ValueError, RuntimeError):
        return str(path)


def _where(skill: Skill, workspace: Path | None) -> str:
    if skill.source == "builtin":
        return f"built-in {skill.kind} {skill.name}"
    base = workspace if skill.source == "project" else None
    return f"{skill.source} {skill.kind} {_shown(skill.path, base)}"
