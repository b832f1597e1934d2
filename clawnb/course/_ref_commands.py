"""The course's answer to chapter 22: a command registry declared once (``Command``,
``CommandRegistry``) and two-stage skills (``SkillIndex``, ``SkillTool``, ``substitute``,
``add_skill_commands``). The notebook's solution, kept short; production's counterparts are
:mod:`clawnb.session.commands` and :mod:`clawnb.skills`."""

from __future__ import annotations

import difflib
import inspect
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..types import ToolDefinition

__all__ = [
    "Command",
    "CommandRegistry",
    "Skill",
    "SkillIndex",
    "SkillTool",
    "add_skill_commands",
    "parse_frontmatter",
    "substitute",
]


@dataclass(frozen=True)
class Command:
    name: str
    description: str
    handler: Callable[[str], Any]  # handler(arguments) -> text (or a coroutine of it)
    usage: str = ""
    aliases: tuple[str, ...] = ()


class CommandRegistry:
    """Every command, declared once: dispatch by name or alias, help and suggestions from it."""

    def __init__(self) -> None:
        self._commands: dict[str, Command] = {}  # the primary names
        self._lookup: dict[str, Command] = {}  # names and aliases
        self.add(Command("help", "List the commands", lambda args: self.help_text(), "", ("?",)))

    def add(self, command: Command) -> Command:
        for name in (command.name, *command.aliases):
            if name in self._lookup:
                raise ValueError(f"/{name} is taken (by /{self._lookup[name].name})")
        self._commands[command.name] = command
        for name in (command.name, *command.aliases):
            self._lookup[name] = command
        return command

    def command(
        self, name: str, description: str, usage: str = "", aliases: tuple[str, ...] = ()
    ) -> Callable[[Callable[[str], Any]], Callable[[str], Any]]:
        """The same as :meth:`add`, as a decorator on the handler."""

        def register(handler: Callable[[str], Any]) -> Callable[[str], Any]:
            self.add(Command(name, description, handler, usage, tuple(aliases)))
            return handler

        return register

    def find(self, name: str) -> Command | None:
        return self._lookup.get(name)

    def names(self) -> list[str]:
        return sorted(self._commands)

    def suggest(self, name: str) -> str | None:
        close = difflib.get_close_matches(name, list(self._lookup), n=1, cutoff=0.5)
        return self._lookup[close[0]].name if close else None

    def help_text(self) -> str:
        lines = []
        for name in self.names():
            command = self._commands[name]
            head = f"/{name} {command.usage}".rstrip()
            also = f" (also /{', /'.join(command.aliases)})" if command.aliases else ""
            lines.append(f"{head} — {command.description}{also}")
        return "\n".join(lines)

    async def dispatch(self, line: str) -> str:
        name, _, arguments = line.strip().removeprefix("/").partition(" ")
        command = self.find(name)
        if command is None:
            close = self.suggest(name)
            hint = f" Did you mean /{close}?" if close else ""
            return f"unknown command /{name}.{hint} /help lists them all."
        result = command.handler(arguments.strip())
        if inspect.isawaitable(result):
            result = await result
        return "" if result is None else str(result)


def parse_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """``---`` lines of ``key: value`` ``---``, then the body. Raises ValueError naming the line."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise ValueError("line 1: the file must start with a --- line (the frontmatter)")
    fields: dict[str, str] = {}
    for number, line in enumerate(lines[1:], start=2):
        if line.strip() == "---":
            return fields, "\n".join(lines[number:]).strip("\n") + "\n"
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, colon, value = line.partition(":")
        if not colon or not key.strip():
            raise ValueError(f"line {number}: expected 'key: value', found {line!r}")
        fields[key.strip()] = value.strip().strip("'\"")
    raise ValueError("the frontmatter has no closing --- line")


@dataclass(frozen=True)
class Skill:
    """What stage one knows of a skill: its name, its description, where its file is."""

    name: str
    description: str
    path: Path

    def body(self) -> str:
        """Stage two: the instructions, read from the file only now."""
        return parse_frontmatter(self.path.read_text(encoding="utf-8"))[1]


class SkillIndex:
    """Every ``ROOT/NAME/SKILL.md``: the name and description of each, bodies left on disk."""

    HEADER = "# Skills\nCall the `skill` tool with a skill's name before a task it fits."

    def __init__(self, root: str | Path) -> None:
        self.skills: dict[str, Skill] = {}
        self.problems: list[str] = []  # one line per skill that could not be read
        for path in sorted(Path(root).glob("*/SKILL.md")):
            try:
                fields, _ = parse_frontmatter(path.read_text(encoding="utf-8"))
                name = fields.get("name") or path.parent.name
                if not fields.get("description"):
                    raise ValueError("no 'description' (the model chooses skills by it)")
            except (OSError, ValueError) as exc:
                self.problems.append(f"{path}: {exc}")
                continue
            self.skills[name] = Skill(name, fields["description"], path)

    def listing(self, budget: int = 2000) -> str:
        """Stage one, for the system prompt, in at most ``budget`` characters: every skill
        named first (the last dropped while even the names do not fit), then, in order, each
        name given its description while everything still fits."""
        named = list(self.skills.values())
        full: list[Skill] = []

        def text(full: list[Skill], named: list[Skill]) -> str:
            lines = "".join(f"\n- {s.name}: {s.description}" for s in full)
            also = "\nAlso: " + ", ".join(s.name for s in named) if named else ""
            return self.HEADER + lines + also

        while named and len(text(full, named)) > budget:
            named.pop()
        while named and len(text([*full, named[0]], named[1:])) <= budget:
            full.append(named.pop(0))
        return text(full, named) if full or named else ""

    def load(self, name: str, arguments: str = "") -> str:
        skill = self.skills.get(name)
        if skill is None:
            close = difflib.get_close_matches(name, list(self.skills), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise KeyError(f"no skill named {name!r}.{hint}")
        return substitute(skill.body(), arguments)


_PLACEHOLDER = re.compile(r"\$ARGUMENTS\b|\$(\d+)")


def substitute(body: str, arguments: str) -> str:
    """``$ARGUMENTS`` is everything typed after the name, ``$0``, ``$1`` … each word of it
    (counted from 0, quotes keep words together). One pass; an unknown ``$N`` stays; arguments
    the body never used are added at the end, so none is lost."""
    words = shlex.split(arguments) if arguments.strip() else []
    used = False

    def one(match: re.Match[str]) -> str:
        nonlocal used
        if match.group(1) is None:
            used = True
            return arguments
        index = int(match.group(1))
        if index >= len(words):
            return match.group(0)
        used = True
        return words[index]

    text = _PLACEHOLDER.sub(one, body)
    if arguments.strip() and not used:
        text = text.rstrip("\n") + f"\n\nARGUMENTS: {arguments.strip()}\n"
    return text


class SkillTool:
    """Stage two for the model: ``skill(name, arguments)`` returns the skill's instructions."""

    def __init__(self, index: SkillIndex) -> None:
        self.index = index
        self.definition = (
            ToolDefinition("skill", "Load a skill's instructions by name (see # Skills).")
            .param("name", "string", "The skill's name", True)
            .param("arguments", "string", "What the skill should work on", False)
        )

    async def call(self, args: Any) -> str:
        name = args.get("name") if isinstance(args, dict) else None
        if not isinstance(name, str):
            raise ValueError("missing required parameter: name")
        try:
            return self.index.load(name, str(args.get("arguments") or ""))
        except KeyError as exc:
            raise ValueError(exc.args[0]) from None


def add_skill_commands(registry: CommandRegistry, index: SkillIndex) -> None:
    """Stage two for the person: ``/NAME arguments`` for each skill whose name is free."""

    def runs(name: str) -> Callable[[str], str]:
        return lambda arguments: index.load(name, arguments)

    for skill in index.skills.values():
        if registry.find(skill.name) is None:
            registry.add(Command(skill.name, skill.description, runs(skill.name), "[arguments]"))
