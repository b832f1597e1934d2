"""Invoking a skill: its body, the arguments put in, and the dynamic context found in it.

The same steps serve the model's ``skill`` tool and the person's ``/NAME args``:

1. the body is read from disk (:meth:`~clawnb.skills.model.Skill.load_body`, through the safe
   reader, secrets redacted);
2. **dynamic context** is found in it: ``!`cmd``` inline and fenced blocks opened with
   ```` ```! ```` (:func:`find_context_commands`). They are found *before* the arguments are
   put in, so an argument that looks like ``!`cmd``` is text and never becomes a command;
3. **arguments** are substituted (:func:`substitute_arguments`), in the text and in the
   commands (``!`git diff $0``` diffs the file the person named);
4. the result is a :class:`PreparedPrompt`: the text with each snippet still in place, and the
   snippets as :class:`ContextCommand` values with their positions. **Nothing here runs a
   command**: the caller runs them through the session's bash gate and sandbox (the same
   approvals as a ``bash`` call; a project skill's only in a trusted workspace) and gives the
   outputs to :meth:`PreparedPrompt.render`, which puts them in place and redacts the whole.

Arguments, as in Claude Code (a skill in ``.claude/skills`` means the same to both agents):

* ``$ARGUMENTS`` is everything after the name, as typed;
* ``$ARGUMENTS[N]`` and its short form ``$N`` are the N-th argument, **counted from 0**, split
  like a shell splits words (``"two words"`` is one argument, the quotes removed);
* ``$name`` for each name in the frontmatter's ``arguments`` list, by position;
* ``${CLAUDE_SKILL_DIR}`` (or ``${CLAW_SKILL_DIR}``) is the skill's folder,
  ``${CLAUDE_SESSION_ID}`` (or ``${CLAW_SESSION_ID}``) the session's id when one is given;
* a positional or named placeholder with no argument for it is left as written (``$5`` in
  "costs $5" stays), and when the arguments are not empty and the body used none of them,
  they are appended as a last line ``ARGUMENTS: …`` so they are never lost;
* substitution is one pass: an argument that contains ``$1`` is not expanded again.
"""

from __future__ import annotations

import functools
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..control.secrets import redact, redactor
from .model import Skill

__all__ = [
    "ContextCommand",
    "PreparedPrompt",
    "find_context_commands",
    "prepare_invocation",
    "reattachment",
    "split_arguments",
    "substitute_arguments",
    "substitute_context",
    "unclosed_context_blocks",
]

NOT_RUN = "[dynamic context not run: {command}]"

_INLINE = re.compile(r"(?<![\w`!\\])!`([^`\n]+)`")
_FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")
_VARIABLES = ("CLAUDE_SKILL_DIR", "CLAW_SKILL_DIR", "CLAUDE_SESSION_ID", "CLAW_SESSION_ID")


@dataclass(frozen=True)
class ContextCommand:
    """One dynamic-context snippet: its ``command`` (a shell command line, or a script for a
    block), ``kind`` (``inline`` for ``!`…```, ``block`` for a ```` ```! ```` fence), the span
    ``text[start:end]`` it occupies, and the 1-based ``line`` it starts on (for the card)."""

    index: int
    command: str
    kind: Literal["inline", "block"]
    start: int
    end: int
    line: int


def _scan(text: str) -> tuple[list[ContextCommand], list[int]]:
    """The snippets in ``text``, and the lines of ```` ```! ```` blocks that never close.

    ``!`…``` inside an ordinary fenced code block is text (a skill that documents the syntax
    shows it without running it); a block is a fence of three or more backticks followed
    directly by ``!``, closed by a fence at least as long."""
    commands: list[ContextCommand] = []
    unclosed: list[int] = []
    if "!`" not in text and "`!" not in text:
        return commands, unclosed  # no `!`…`` and no ```! fence: most bodies, at no cost
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence is None:
            for m in _INLINE.finditer(line):
                commands.append(
                    ContextCommand(
                        len(commands),
                        m.group(1).strip(),
                        "inline",
                        offsets[i] + m.start(),
                        offsets[i] + m.end(),
                        i + 1,
                    )
                )
            i += 1
            continue
        marker, info = fence.group(1), fence.group(2)
        closing = re.compile(rf"^{re.escape(marker[0])}{{{len(marker)},}}\s*$")
        end = next((j for j in range(i + 1, len(lines)) if closing.match(lines[j])), None)
        is_snippet = marker[0] == "`" and info.startswith("!") and not info[1:].strip()
        if end is None:
            if is_snippet:
                unclosed.append(i + 1)
            i += 1  # an unclosed fence: YAML-like leniency, read on as text
            continue
        if is_snippet:
            script = "\n".join(lines[i + 1 : end])
            commands.append(
                ContextCommand(
                    len(commands),
                    script.strip("\n"),
                    "block",
                    offsets[i],
                    offsets[end] + len(lines[end]),
                    i + 1,
                )
            )
        i = end + 1
    return commands, unclosed


def find_context_commands(text: str) -> list[ContextCommand]:
    """The dynamic-context snippets of ``text``, in order, with their positions."""
    return _scan(text)[0]


def unclosed_context_blocks(text: str) -> list[int]:
    """The lines where a ```` ```! ```` block opens and never closes (it is not run, and
    ``check`` says so)."""
    return _scan(text)[1]


def substitute_context(
    text: str, commands: Sequence[ContextCommand], outputs: Sequence[str]
) -> str:
    """``text`` with each snippet's span replaced by its command's output (an inline one's
    without its trailing newline). ``outputs`` is in the order of ``commands``. The result is
    redacted: command output is the likeliest place for a key to turn up."""
    if len(outputs) != len(commands):
        raise ValueError(f"{len(commands)} snippet(s) but {len(outputs)} output(s)")
    pieces: list[str] = []
    last = 0
    for command, output in sorted(zip(commands, outputs, strict=True), key=lambda p: p[0].start):
        pieces.append(text[last : command.start])
        pieces.append(output.strip() if command.kind == "inline" else output.rstrip("\n"))
        last = command.end
    pieces.append(text[last:])
    return redact("".join(pieces))


_UNQUOTED = re.compile(r"[^'\"\\]*")
_SHELL_SPACE = re.compile(r"[ \t\r\n]+")  # shlex's whitespace (not str.split's Unicode spaces)


def split_arguments(arguments: str) -> list[str]:
    """The words of ``arguments`` as a shell splits them (quotes group and are removed); an
    unbalanced quote falls back to splitting at whitespace."""
    if _UNQUOTED.fullmatch(arguments):  # no quote or escape: shlex's words, 10× sooner
        return [word for word in _SHELL_SPACE.split(arguments) if word]
    try:
        return shlex.split(arguments)
    except ValueError:
        return arguments.split()


@functools.lru_cache(maxsize=256)
def _pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    named = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    parts = [
        r"\$ARGUMENTS\[(?P<index>\d+)\]",
        r"\$ARGUMENTS(?![A-Za-z0-9_\[])",
        r"\$\{(?P<var>" + "|".join(_VARIABLES) + r")\}",
        r"\$(?P<pos>\d+)",
    ]
    if named:
        parts.append(r"\$(?P<name>" + named + r")(?![A-Za-z0-9_])")
    return re.compile("|".join(parts))


@dataclass
class _Substitution:
    arguments: str
    words: list[str] | None  # None: split when a placeholder first needs them
    names: tuple[str, ...]
    variables: dict[str, str]
    used: bool = False

    def _words(self) -> list[str]:
        if self.words is None:
            self.words = split_arguments(self.arguments)
        return self.words

    def __call__(self, m: re.Match[str]) -> str:
        group = m.lastgroup  # one alternative matched: its group, or none for $ARGUMENTS
        if group is None:
            self.used = True  # $ARGUMENTS
            return self.arguments
        if group == "var":
            value = self.variables.get(m.group("var"))
            return value if value is not None else m.group(0)
        words = self._words()
        index = int(m.group(group)) if group != "name" else self.names.index(m.group(group))
        if index < len(words):
            self.used = True
            return words[index]
        return m.group(0)


def _substituter(
    skill: Skill | None, arguments: str, session_id: str | None
) -> tuple[_Substitution, re.Pattern[str]]:
    names = skill.arguments if skill is not None else ()
    variables: dict[str, str] = {}
    if skill is not None:
        folder = skill.folder if skill.folder is not None else skill.path.parent
        variables["CLAUDE_SKILL_DIR"] = variables["CLAW_SKILL_DIR"] = str(folder)
    if session_id:
        variables["CLAUDE_SESSION_ID"] = variables["CLAW_SESSION_ID"] = session_id
    sub = _Substitution(arguments, split_arguments(arguments), names, variables)
    return sub, _pattern(names)


def substitute_arguments(
    text: str, arguments: str, *, skill: Skill | None = None, session_id: str | None = None
) -> str:
    """``text`` with the placeholders filled in (see the module docstring); ``skill`` gives
    the named arguments and the folder. Arguments the text did not use are appended."""
    sub, pattern = _substituter(skill, arguments, session_id)
    out = pattern.sub(sub, text)
    return _append(out, sub)


def _append(text: str, sub: _Substitution) -> str:
    if sub.used or not sub.arguments.strip():
        return text
    return text.rstrip("\n") + f"\n\nARGUMENTS: {sub.arguments.strip()}"


@dataclass(frozen=True)
class PreparedPrompt:
    """A skill ready to send: ``text`` is its body with the arguments filled in and the
    dynamic-context snippets still in place; ``commands`` are those snippets, for the caller
    to run through the session's gate. What the model may see is :meth:`render`'s result.
    ``generation`` is the redactor's generation the body was read under (``None`` for a body
    the caller gave)."""

    skill: Skill
    arguments: str
    text: str
    commands: tuple[ContextCommand, ...]
    generation: object = field(default=None, compare=False, repr=False)
    # a snippet-free prompt's redacted text, made when it was prepared (``None``: at render)
    redacted: str | None = field(default=None, compare=False, repr=False)

    def render(self, outputs: Sequence[str] | None = None) -> str:
        """The prompt with each snippet replaced by its output (``outputs``, in order) — or,
        with ``outputs=None``, by a note that it was not run — secrets redacted.

        A prompt without snippets is rendered as soon as it is prepared (nothing runs in
        between), so it is redacted with the secrets known when its body was read
        (:meth:`~clawnb.control.secrets.Redactor.redact_as_of`); snippets' outputs come later
        and are redacted with the secrets known then."""
        if not self.commands:
            if self.redacted is not None:
                return self.redacted
            if self.generation is None:
                return redact(self.text)
            return redactor.redact_as_of(self.text, self.generation)
        if outputs is None:
            outputs = [
                NOT_RUN.format(command=" ".join(c.command.split()) or "(empty)")
                for c in self.commands
            ]
        return substitute_context(self.text, self.commands, outputs)


Pieces = tuple[tuple[str, ...], tuple[re.Match[str], ...]]
"""A text cut at its placeholders: the ``n + 1`` literal stretches and the ``n`` matches."""


def _pieces(text: str, pattern: re.Pattern[str]) -> Pieces:
    literals: list[str] = []
    matches: list[re.Match[str]] = []
    last = 0
    for m in pattern.finditer(text):
        literals.append(text[last : m.start()])
        matches.append(m)
        last = m.end()
    literals.append(text[last:])
    return tuple(literals), tuple(matches)


def _fill(pieces: Pieces, sub: _Substitution) -> str:
    """``pattern.sub(sub, text)`` from the text's :func:`_pieces` (the same calls of ``sub``
    in the same order, so its note of what was used is the same)."""
    literals, matches = pieces
    if not matches:
        return literals[0]
    out = [literals[0]]
    for m, literal in zip(matches, literals[1:], strict=True):
        out.append(sub(m))
        out.append(literal)
    return "".join(out)


@dataclass(frozen=True, eq=False)
class _Ready:
    """A skill's body taken apart once: its snippets (``found``), the text around them and
    each snippet's command cut at the skill's placeholders (``gaps[i]`` is the text before
    snippet ``i``, the last one the text after them all), and the variables that stay the
    same from one invocation to the next."""

    source: str
    pattern: re.Pattern[str]
    found: tuple[ContextCommand, ...]
    gaps: tuple[Pieces, ...]
    commands: tuple[Pieces, ...]
    variables: dict[str, str]
    # a snippet-free body's prompts by (arguments, session id), each ready to send under the
    # redactor generation it was made with: ``/review`` run again costs two dictionary looks
    prompts: dict[tuple[str, str | None], PreparedPrompt] = field(default_factory=dict)

    def variables_for(self, session_id: str | None) -> dict[str, str]:
        if not session_id:
            return self.variables
        return {**self.variables, "CLAUDE_SESSION_ID": session_id, "CLAW_SESSION_ID": session_id}


_READY: dict[int, tuple[Skill, _Ready]] = {}
"""Each skill's :class:`_Ready`, kept by the very :class:`Skill` value and the very body
string :meth:`Skill.read_body` returns: an edited SKILL.md is another string, so it is taken
apart again on the next ``/NAME``."""


def _ready(skill: Skill, source: str) -> _Ready:
    kept = _READY.get(id(skill))
    if kept is not None and kept[0] is skill and kept[1].source is source:
        return kept[1]
    _sub, pattern = _substituter(skill, "", None)
    found = tuple(find_context_commands(source))
    gaps: list[Pieces] = []
    last = 0
    for command in found:
        gaps.append(_pieces(source[last : command.start], pattern))
        last = command.end
    gaps.append(_pieces(source[last:], pattern))
    ready = _Ready(
        source,
        pattern,
        found,
        tuple(gaps),
        tuple(_pieces(c.command, pattern) for c in found),
        _sub.variables,
    )
    if len(_READY) > 1000:
        _READY.clear()
    _READY[id(skill)] = (skill, ready)
    return ready


def prepare_invocation(
    skill: Skill,
    arguments: str = "",
    *,
    session_id: str | None = None,
    body: str | None = None,
) -> PreparedPrompt:
    """Load ``skill``'s body (or use ``body``, already read and redacted), find its snippets,
    substitute ``arguments`` — in the text and in each snippet's command, never creating a new
    snippet — and return the :class:`PreparedPrompt`. Runs nothing. Raises
    :class:`~clawnb.skills.model.SkillError` when the body cannot be read."""
    generation: object = None
    if body is None:
        source, generation = skill.read_body()
    else:
        source = body
    ready = _ready(skill, source)
    if not ready.found:  # most bodies: no snippet
        key = (arguments, session_id)
        kept = ready.prompts.get(key)
        if kept is not None and generation is not None and kept.generation is generation:
            return kept  # the same text, redacted with the secrets known now
        sub = _Substitution(arguments, None, skill.arguments, ready.variables_for(session_id))
        text = _append(_fill(ready.gaps[0], sub), sub)
        if generation is None:  # a body the caller gave: redacted when it is rendered
            return PreparedPrompt(skill, arguments, text, ())
        prepared = PreparedPrompt(
            skill, arguments, text, (), generation, redactor.redact_as_of(text, generation)
        )
        if len(ready.prompts) >= 32:
            ready.prompts.clear()
        ready.prompts[key] = prepared
        return prepared
    sub = _Substitution(arguments, None, skill.arguments, ready.variables_for(session_id))
    pieces: list[str] = []
    commands: list[ContextCommand] = []
    length = 0
    for command, gap, words in zip(ready.found, ready.gaps, ready.commands, strict=False):
        text = _fill(gap, sub)
        pieces.append(text)
        length += len(text)
        filled = _fill(words, sub)
        span = _respell(command, filled)
        commands.append(
            ContextCommand(
                command.index, filled, command.kind, length, length + len(span), command.line
            )
        )
        pieces.append(span)
        length += len(span)
    pieces.append(_fill(ready.gaps[-1], sub))
    text = _append("".join(pieces), sub)
    return PreparedPrompt(skill, arguments, text, tuple(commands), generation)


def _respell(command: ContextCommand, filled: str) -> str:
    """The snippet as it reads with its arguments filled in (it is replaced by its output
    before anyone reads it; until then it shows what will run)."""
    if command.kind == "inline":
        return f"!`{filled}`"
    return f"```!\n{filled}\n```"


REATTACH_PER_SKILL_TOKENS = 5000
REATTACH_TOTAL_TOKENS = 25000
_CUT = "\n[… cut to fit after the compaction]"


def reattachment(
    skills: Sequence[Skill],
    *,
    per_skill_tokens: int = REATTACH_PER_SKILL_TOKENS,
    total_tokens: int = REATTACH_TOTAL_TOKENS,
) -> str:
    """The skills in use, to attach again after a compaction summarised them away: the most
    recently loaded first (``skills`` is in the order they were loaded), each body cut to
    ``per_skill_tokens`` and all of them to ``total_tokens`` (the same limits as Claude
    Code). A skill that can no longer be read is named with the reason. Redacted; ``""``
    when there is nothing to attach."""
    from .listing import estimate_text_tokens
    from .model import SkillError

    parts: list[str] = []
    used = 0
    seen: set[str] = set()
    for skill in reversed(skills):
        if skill.name in seen:
            continue
        seen.add(skill.name)
        try:
            body = skill.load_body().rstrip("\n")
        except SkillError as exc:
            body = f"(not attached: {exc})"
        head, tail = f'<skill name="{skill.name}" source="{skill.source}">\n', "\n</skill>"
        # what is left for the body once the tags are counted (~4 characters a token)
        room = min(per_skill_tokens, total_tokens - used) * 4 - len(head) - len(tail) - 16
        if room <= len(_CUT):
            break
        if len(body) > room:
            body = body[: room - len(_CUT)]
            body = (body.rsplit("\n", 1)[0] if "\n" in body else body) + _CUT
        block = head + body + tail
        used += estimate_text_tokens(block)
        parts.append(block)
    if not parts:
        return ""
    return redact("Skills in use before the conversation was compacted:\n" + "\n".join(parts))
