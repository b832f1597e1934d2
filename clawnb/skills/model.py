"""What a skill is: the :class:`Skill` value and the frontmatter it is read from.

A skill is a folder ``NAME/SKILL.md`` (plus any reference files and a ``scripts/`` folder); a
prompt command is a single file ``NAME.md``. Both start with an optional frontmatter block
between two ``---`` lines, then the body: the instructions the model gets when the skill is
invoked. Only the name and the description are read up front (they go in the listing); the
body is read again from disk when it is needed (:meth:`Skill.load_body`), so an edited skill
is picked up without a restart and an unused one costs nothing.

**Why not a YAML library.** The format is YAML in name, but what skills actually use is a flat
``key: value`` list with a few list-valued keys, and the examples people copy are not always
valid YAML: ``argument-hint: [issue-number] [priority]`` (straight from Claude Code's docs) is a
syntax error to a YAML parser, ``description: Use this when: the tests fail`` is another, and
YAML 1.1 reads ``user-invocable: no`` or ``model: 4o`` as things nobody meant. PyYAML is in the
environment only because Jupyter pulls it in; clawnb's core does not depend on it. So
:func:`parse_frontmatter` is a small strict reader of exactly what the format needs, driven by
each key's type: plain, single- and double-quoted scalars, ``|``/``>`` block scalars, multi-line
plain scalars, ``[a, b]`` and ``- item`` lists, comments. Keys clawnb does not use (``license``,
``metadata``, ``hooks`` … from other agents' formats) may hold anything, nested mappings
included: they are skipped, not parsed. Anchors, aliases and tags on a key clawnb uses are an
error, as are tabs used for indentation and a key given twice.

A bad frontmatter raises :class:`SkillFormatError`, whose message is one line naming the file and
the key; discovery records the line and skips the skill.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..control.secrets import redactor
from ..control.watch import Mark, watch
from ..errors import ClawError, UnsafeFileError

__all__ = [
    "FOREIGN_KEYS",
    "KNOWN_KEYS",
    "MAX_SKILL_BYTES",
    "Frontmatter",
    "Skill",
    "SkillContext",
    "SkillError",
    "SkillFormatError",
    "SkillKind",
    "SkillSource",
    "allowed_tool_rules",
    "build_skill",
    "is_skill_name",
    "parse_frontmatter",
    "read_skill_file",
    "split_frontmatter",
]

SkillSource = Literal["project", "user", "builtin"]
SkillKind = Literal["skill", "command"]
SkillContext = Literal["inline", "fork"]

MAX_SKILL_BYTES = 256 * 1024
"""A SKILL.md or command file larger than this is not read (the same cap as instruction files:
a skill that long belongs in reference files the model reads when it needs them)."""

# The keys clawnb reads, with their spellings.
KNOWN_KEYS = frozenset(
    {
        "name",
        "description",
        "when_to_use",
        "when-to-use",
        "argument-hint",
        "arguments",
        "model",
        "context",
        "agent",
        "allowed-tools",
        "disable-model-invocation",
        "user-invocable",
    }
)
# Keys other agents' skill formats define (Claude Code, the Agent Skills spec) that clawnb does
# not use: skipped without a word, so a skill shared with another agent does not fail `check`.
FOREIGN_KEYS = frozenset(
    {
        "license",
        "compatibility",
        "metadata",
        "version",
        "hooks",
        "paths",
        "effort",
        "shell",
        "user-invokable",
        "author",
        "tags",
    }
)

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_ARG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_KEY_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*?))?[ \t]*")
_BLOCK_HEADER = re.compile(r"[|>](?:[1-9][+-]?|[+-][1-9]?)?")
_TOOL_ENTRY = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*(?:\((.*)\))?", re.DOTALL)
_YAML_ONLY = "&*!%@`"

# Claude Code's tool names, as skills written for it spell them in allowed-tools.
_TOOL_ALIASES = {
    "Read": "read",
    "Write": "write",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Bash": "bash",
    "Glob": "glob",
    "Grep": "grep",
    "WebFetch": "web_fetch",
    "NotebookEdit": "notebook_edit",
    "NotebookRead": "notebook_read",
    "AskUserQuestion": "ask_user",
    "Task": "subagent",
    "Skill": "skill",
}


class SkillError(ClawError):
    """A skill could not be used: its file is unreadable, or it is not one that may be
    invoked this way. The message is one line for a person."""


class SkillFormatError(SkillError):
    """A skill file's frontmatter is malformed. ``key`` is the key at fault (``None`` when the
    block itself is broken); the message names the file and the key."""

    def __init__(self, path: str, key: str | None, problem: str) -> None:
        self.path = path
        self.key = key
        self.problem = problem
        where = f"frontmatter key '{key}'" if key else "frontmatter"
        super().__init__(f"{path}: {where}: {problem}")


# ---------------------------------------------------------------------------------------------
# Reading a skill file
# ---------------------------------------------------------------------------------------------


def read_skill_file(path: Path, *, root: Path, max_bytes: int = MAX_SKILL_BYTES) -> str:
    """The text of a skill file, read through the workspace's safe reader
    (:func:`clawnb.control.files.read_workspace_text`): the file, links resolved, must stay in
    ``root``, be a regular file (no FIFO, device, ``/proc`` view) and hold at most
    ``max_bytes``. Raises :class:`~clawnb.errors.UnsafeFileError` or :class:`OSError`."""
    from ..control.files import read_workspace_text

    return read_workspace_text(path, root=root, max_bytes=max_bytes)


# Each SKILL.md as last read: ``(root, identity, text, generation, body, mark)``. A body is read
# again at every invocation (an edited skill is used as it is now), but when the path is still
# the same regular file — not a link, same device, inode, size, mtime and ctime (a rename, a
# swap for a link or a write changes one of them) — the text the safe reader returned before is
# that file's text; and while the redactor's known secrets are the same (its generation), the
# body redacted before is that text's body. Where the kernel reports changes (``mark``, see
# clawnb.control.watch), no event on the file or the folders on its way stands for the stat
# itself: one look at the event queue and one at the redactor's sources then stand for the
# safe reader's checks, the split and the redaction (bench_skills.py).
_KEPT: dict[Path, tuple[Path, tuple[int, ...], str, object, str, Mark | None]] = {}


def _identity(path: Path) -> tuple[int, ...] | None:
    try:
        st = os.stat(path, follow_symlinks=False)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None  # a link (or anything else) is read through the safe reader every time
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """``(frontmatter, body)``: the text between a first line ``---`` and the next line
    ``---`` (``None`` when the file does not start with one), and what follows. A block that is
    opened and never closed raises ``ValueError``."""
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r").rstrip() != "---":
        return None, text
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r").rstrip() == "---":
            front = "\n".join(line.rstrip("\r") for line in lines[1:i])
            body = "\n".join(lines[i + 1 :])
            return front, body.lstrip("\r\n")
    raise ValueError("opened with '---' on the first line but never closed by another '---'")


# ---------------------------------------------------------------------------------------------
# The frontmatter reader
# ---------------------------------------------------------------------------------------------

Style = Literal["plain", "quoted", "block"]


@dataclass(frozen=True)
class Scalar:
    text: str
    style: Style


@dataclass(frozen=True)
class ListValue:
    items: tuple[Scalar, ...]


@dataclass(frozen=True)
class Nested:
    """A value clawnb does not read (a mapping, a nested list): kept as its source text."""

    source: str


Value = Scalar | ListValue | Nested | None


@dataclass(frozen=True)
class Entry:
    key: str
    value: Value
    raw: str  # the text after ``key:`` on its line
    line: int


@dataclass(frozen=True)
class Frontmatter:
    """The entries of one frontmatter block, by key, in file order."""

    entries: Mapping[str, Entry]

    def __contains__(self, key: object) -> bool:
        return key in self.entries

    def get(self, key: str) -> Entry | None:
        return self.entries.get(key)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self.entries)


class _Bad(Exception):
    """One problem, with the key it belongs to (``None`` for the block)."""

    def __init__(self, key: str | None, problem: str) -> None:
        super().__init__(problem)
        self.key = key
        self.problem = problem


def parse_frontmatter(text: str, *, path: str = "SKILL.md") -> Frontmatter:
    """Read a frontmatter block (without its ``---`` lines) into entries.

    Only the layout is checked here: each top-level line is ``key: value`` and each value is
    well formed. What a value must be (a boolean, one of two words) is checked by
    :func:`build_skill`, per key. Raises :class:`SkillFormatError`.
    """
    try:
        return _parse(text)
    except _Bad as bad:
        raise SkillFormatError(path, bad.key, bad.problem) from None


def _parse(text: str) -> Frontmatter:
    lines = text.split("\n")
    entries: dict[str, Entry] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        if line[0] == "\t":
            raise _Bad(None, f"line {i + 2}: indented with a tab; indent with spaces")
        if line[0] == " ":
            raise _Bad(None, f"line {i + 2}: indented, but not under a key")
        match = _KEY_LINE.fullmatch(line)
        if match is None:
            raise _Bad(None, f"line {i + 2}: expected 'key: value', got {_quote(stripped)}")
        key, raw = match.group(1), match.group(2) or ""
        if key in entries:
            raise _Bad(key, f"given twice (lines {entries[key].line} and {i + 2})")
        block: list[str] = []
        j = i + 1
        while j < len(lines) and (
            not lines[j].strip()
            or lines[j][0] in " \t"
            # YAML lets a list start at the key's own indentation
            or (not raw and (lines[j].startswith("- ") or lines[j].rstrip() == "-"))
        ):
            block.append(lines[j])
            j += 1
        while block and not block[-1].strip():
            block.pop()
        used = key in KNOWN_KEYS
        try:
            value = _hint(raw) if key in _TEXT_KEYS else _value(raw, block)
        except _Bad as bad:
            if used:
                raise _Bad(key, bad.problem) from None
            value = Nested(raw + "\n" + "\n".join(block))  # not ours to judge
        entries[key] = Entry(key, value, raw, i + 2)
        i = j
    return Frontmatter(entries)


def _value(raw: str, block: list[str]) -> Value:
    if any("\t" in line[: len(line) - len(line.lstrip())] for line in block):
        raise _Bad(None, "indented with a tab; indent with spaces")
    if _BLOCK_HEADER.fullmatch(raw):
        return Scalar(_block_scalar(raw, block), "block")
    if not raw:
        if not block:
            return None
        body = _dedent(block)
        if all(not ln.strip() or ln.startswith("- ") or ln.strip() == "-" for ln in body):
            return _block_sequence(body)
        return Nested("\n".join(block))
    first = raw[0]
    if first in _YAML_ONLY:
        raise _Bad(
            None,
            f"{_quote(raw)} uses a YAML feature clawnb does not read (anchors, aliases, "
            "tags); write the value itself, quoted if needed",
        )
    if first == "[":
        return _flow_sequence(" ".join([raw, *(ln.strip() for ln in block)]))
    if first == "{":
        return Nested(raw + "\n" + "\n".join(block))
    if first in "\"'":
        joined = raw if not block else _fold([raw, *(ln.strip() for ln in block)])
        text, rest = _quoted(joined)
        if rest.strip() and not rest.strip().startswith("#"):
            raise _Bad(None, f"unexpected text after the closing quote: {_quote(rest.strip())}")
        return Scalar(text, "quoted")
    return Scalar(_fold([_strip_comment(raw), *(_strip_comment(ln) for ln in block)]), "plain")


# Keys whose value is shown as written: `argument-hint: [issue] [priority]` is text, not a list
# (and not the YAML syntax error it would be).
_TEXT_KEYS = frozenset({"argument-hint"})


def _hint(raw: str) -> Scalar:
    if raw[:1] in "\"'":
        text, rest = _quoted(raw)
        if rest.strip() and not rest.strip().startswith("#"):
            raise _Bad(None, f"unexpected text after the closing quote: {_quote(rest.strip())}")
        return Scalar(text, "quoted")
    return Scalar(_strip_comment(raw), "plain")


def _strip_comment(text: str) -> str:
    # In a plain value, `#` starts a comment only after whitespace (YAML's rule): `C#` stays.
    match = re.search(r"(?:^|\s)#", text)
    return (text[: match.start()] if match else text).strip()


def _fold(lines: list[str]) -> str:
    """Lines of a multi-line plain or quoted value: joined by spaces, a blank line kept as a
    line break (YAML's folding)."""
    out: list[str] = []
    pending_break = False
    for line in lines:
        line = line.strip()
        if not line:
            pending_break = True
            continue
        if out:
            out.append("\n" if pending_break else " ")
        out.append(line)
        pending_break = False
    return "".join(out)


def _dedent(block: list[str]) -> list[str]:
    indents = [len(ln) - len(ln.lstrip(" ")) for ln in block if ln.strip()]
    cut = min(indents) if indents else 0
    return [ln[cut:] if ln.strip() else "" for ln in block]


def _block_scalar(header: str, block: list[str]) -> str:
    body = _dedent(block)
    chomp = "-" if "-" in header else "+" if "+" in header else ""
    if header[0] == "|":
        text = "\n".join(body)
    else:
        # folded: the lines of a paragraph joined by spaces (more-indented lines keep their
        # line breaks), paragraphs separated by a line break
        paragraphs: list[list[str]] = [[]]
        for line in body:
            if line:
                paragraphs[-1].append(line)
            elif paragraphs[-1]:
                paragraphs.append([])
        text = "\n".join(
            ("\n" if any(ln.startswith(" ") for ln in lines) else " ").join(lines)
            for lines in paragraphs
            if lines
        )
    if chomp == "-":
        return text.rstrip("\n")
    if chomp == "+":
        return text + "\n"
    return text.rstrip("\n") + "\n" if text else ""


def _block_sequence(body: list[str]) -> ListValue:
    items: list[list[str]] = []
    for line in body:
        if line.startswith("- ") or line.strip() == "-":
            items.append([line[2:]])
        elif items:
            items[-1].append(line)
    out: list[Scalar] = []
    for parts in items:
        head = parts[0].strip()
        if head[:1] in "[{" or re.match(r"[A-Za-z_][A-Za-z0-9_-]*:(\s|$)", head):
            raise _Bad(None, f"list item {_quote(head)} is not a plain value")
        out.append(_item(_fold(parts) if head[:1] not in "\"'" else head))
    return ListValue(tuple(out))


def _item(text: str) -> Scalar:
    text = text.strip()
    if text[:1] in "\"'":
        value, rest = _quoted(text)
        if rest.strip() and not rest.strip().startswith("#"):
            raise _Bad(None, f"unexpected text after the closing quote: {_quote(rest.strip())}")
        return Scalar(value, "quoted")
    if text[:1] and text[0] in _YAML_ONLY:
        raise _Bad(None, f"{_quote(text)} uses a YAML feature clawnb does not read")
    return Scalar(_strip_comment(text), "plain")


def _flow_sequence(text: str) -> ListValue:
    items: list[str] = []
    current: list[str] = []
    quote: str | None = None
    i = 1
    while i < len(text):
        ch = text[i]
        if quote:
            current.append(ch)
            if ch == "\\" and quote == '"' and i + 1 < len(text):
                current.append(text[i + 1])
                i += 1
            elif ch == quote:
                if quote == "'" and text[i + 1 : i + 2] == "'":
                    current.append("'")
                    i += 1
                else:
                    quote = None
        elif ch in "\"'" and not "".join(current).strip():
            quote = ch
            current.append(ch)
        elif ch in "[{":
            raise _Bad(None, "a list inside a list is not a value clawnb reads")
        elif ch == ",":
            items.append("".join(current))
            current = []
        elif ch == "]":
            rest = text[i + 1 :].strip()
            if rest and not rest.startswith("#"):
                raise _Bad(None, f"unexpected text after ']': {_quote(rest)}")
            items.append("".join(current))
            if items and not items[-1].strip():
                items.pop()  # a trailing comma, or an empty list
            return ListValue(tuple(_item(it) for it in items))
        else:
            current.append(ch)
        i += 1
    raise _Bad(None, "a list opened with '[' is never closed")


_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "0": "\0",
    '"': '"',
    "\\": "\\",
    "/": "/",
    " ": " ",
}


def _quoted(text: str) -> tuple[str, str]:
    """The value of the quoted string ``text`` starts with, and the text after it."""
    quote = text[0]
    out: list[str] = []
    i = 1
    while i < len(text):
        ch = text[i]
        if quote == "'":
            if ch == "'":
                if text[i + 1 : i + 2] == "'":
                    out.append("'")
                    i += 2
                    continue
                return "".join(out), text[i + 1 :]
            out.append(ch)
        elif ch == "\\":
            nxt = text[i + 1 : i + 2]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
                i += 2
                continue
            if nxt in ("x", "u", "U"):
                width = {"x": 2, "u": 4, "U": 8}[nxt]
                digits = text[i + 2 : i + 2 + width]
                if len(digits) == width and all(c in "0123456789abcdefABCDEF" for c in digits):
                    out.append(chr(int(digits, 16)))
                    i += 2 + width
                    continue
            raise _Bad(None, f"unknown escape '\\{nxt}' in a double-quoted value")
        elif ch == '"':
            return "".join(out), text[i + 1 :]
        else:
            out.append(ch)
        i += 1
    raise _Bad(None, f"a value opened with {quote} is never closed")


def _quote(text: str, limit: int = 60) -> str:
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return repr(text)


# ---------------------------------------------------------------------------------------------
# The skill
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Skill:
    """One skill or prompt command, as discovery found it. The body is not kept: it is read
    again by :meth:`load_body` when the skill is invoked.

    ``path`` is the SKILL.md (or ``NAME.md``) file; ``folder`` the skill's folder (``None`` for
    a command); ``root`` the directory its files must stay in when read (the workspace for a
    project skill, the skill's own folder for a user one, the built-in folder for built-ins).
    """

    name: str
    description: str
    source: SkillSource
    kind: SkillKind
    path: Path
    root: Path
    folder: Path | None = None
    argument_hint: str | None = None
    arguments: tuple[str, ...] = ()
    model: str | None = None
    context: SkillContext = "inline"
    agent: str | None = None
    allowed_tools: tuple[str, ...] = ()
    disable_model_invocation: bool = False
    user_invocable: bool = True
    # the frontmatter `name`, when it is not the folder's name (clawnb uses the folder's)
    declared_name: str | None = None
    unknown_keys: tuple[str, ...] = ()
    description_from_body: bool = False

    @property
    def model_invocable(self) -> bool:
        """May the model load this skill with the ``skill`` tool? Not a prompt command (only
        the person runs those) and not one marked ``disable-model-invocation``."""
        return self.kind == "skill" and not self.disable_model_invocation

    @property
    def label(self) -> str:
        """``/review (built-in skill)`` — how a person is told which one this is."""
        what = {"builtin": "built-in", "user": "user", "project": "project"}[self.source]
        return f"/{self.name} ({what} {self.kind})"

    def load_body(self) -> str:
        """The skill's instructions, read from disk now through the safe reader, with every
        known secret replaced by ``***``. Raises :class:`SkillError` with one line when the
        file is gone, unreadable or no longer well formed."""
        return self.read_body()[0]

    def read_body(self) -> tuple[str, object]:
        """:meth:`load_body`'s text, and the redactor's generation it was redacted under
        (:meth:`clawnb.control.secrets.Redactor.generation`): what a caller that builds a
        prompt from the body at once redacts that prompt with
        (:meth:`~clawnb.control.secrets.Redactor.redact_as_of`), without checking the
        secrets' sources a second time."""
        path, root = self.path, self.root
        kept = _KEPT.get(path)
        if kept is not None and not (kept[0] is root or kept[0] == root):
            kept = None
        identity: tuple[int, ...] | None
        if kept is not None and watch.unchanged(kept[5]):
            identity, mark = kept[1], kept[5]  # no event on it or the folders on its way
        else:
            mark = watch.mark(path)  # before the look whose answer is kept
            identity = _identity(path)
        if identity is not None and kept is not None and kept[1] == identity:
            generation = redactor.generation()
            if kept[3] is generation:
                if kept[5] is not mark:
                    _KEPT[path] = (*kept[:5], mark)
                return kept[4], generation
            text = kept[2]
        else:
            try:
                text = read_skill_file(path, root=root)
            except UnsafeFileError as exc:
                raise SkillError(f"skill '{self.name}' not read: {exc}") from None
            except OSError as exc:
                reason = exc.strerror or type(exc).__name__
                raise SkillError(f"skill '{self.name}' not read: {path}: {reason}") from None
            if identity is not None and _identity(path) != identity:
                identity = None  # it changed while it was read: used once, not kept
            generation = redactor.generation()
        try:
            _front, body = split_frontmatter(text)
        except ValueError as exc:
            raise SkillError(f"skill '{self.name}': {path}: {exc}") from None
        body = redactor(body)
        if identity is not None:
            if len(_KEPT) > 1000:
                _KEPT.clear()
            _KEPT[path] = (root, identity, text, generation, body, mark)
        return body, generation

    def files(self, limit: int = 100) -> list[Path]:
        """The files in the skill's folder besides SKILL.md (references, scripts, examples),
        at most ``limit``, sorted; nothing for a command. Links are not followed, and a file
        that is a link leading out of the skill's root is left out."""
        if self.folder is None:
            return []
        root = os.path.realpath(self.root)
        found: list[Path] = []
        for directory, dirs, names in os.walk(self.folder, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            for name in sorted(names):
                path = Path(directory) / name
                if path == self.path or name.startswith("."):
                    continue
                real = os.path.realpath(path)
                if not (real == root or real.startswith(root.rstrip(os.sep) + os.sep)):
                    continue
                found.append(path)
                if len(found) >= limit:
                    return found
        return found


def is_skill_name(name: str) -> bool:
    """Letters, digits, ``-`` and ``_``, starting with a letter or digit, at most 64."""
    return _NAME.fullmatch(name) is not None


def _scalar(entry: Entry, path: str) -> str:
    value = entry.value
    if isinstance(value, Scalar):
        return value.text.strip()
    if value is None:
        return ""
    raise SkillFormatError(path, entry.key, "must be a single value, not a list or a mapping")


def _boolean(entry: Entry, path: str) -> bool:
    value = entry.value
    text = value.text.strip().lower() if isinstance(value, Scalar) else None
    if text == "true":
        return True
    if text == "false":
        return False
    shown = repr(value.text.strip()) if isinstance(value, Scalar) else "a list"
    raise SkillFormatError(path, entry.key, f"must be true or false, not {shown}")


def _words(entry: Entry, path: str) -> tuple[str, ...]:
    value = entry.value
    if value is None:
        return ()
    if isinstance(value, ListValue):
        return tuple(item.text.strip() for item in value.items if item.text.strip())
    if isinstance(value, Scalar):
        words = _split_words(value.text)
        if words is None:
            raise SkillFormatError(path, entry.key, "has a '(' without its ')'")
        return words
    raise SkillFormatError(path, entry.key, "must be a list or a single line of names")


def _split_words(text: str) -> tuple[str, ...] | None:
    """One line of entries separated by commas or spaces, a ``(…)`` kept whole
    (``Read Bash(git diff *), Grep``); ``None`` when the parentheses do not balance."""
    words: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                return None
        if depth == 0 and (ch.isspace() or ch == ","):
            if current:
                words.append("".join(current))
            current = []
        else:
            current.append(ch)
    if depth:
        return None
    if current:
        words.append("".join(current))
    return tuple(words)


def build_skill(
    text: str,
    *,
    name: str,
    path: Path,
    root: Path,
    source: SkillSource,
    kind: SkillKind,
    folder: Path | None = None,
    shown: str | None = None,
) -> Skill:
    """A :class:`Skill` from the text of its file. ``name`` comes from the folder (or the
    command file's name); ``shown`` is how the file is named in error lines. Raises
    :class:`SkillFormatError` with one line naming the file and the key."""
    where = shown or str(path)
    try:
        front_text, body = split_frontmatter(text)
    except ValueError as exc:
        raise SkillFormatError(where, None, str(exc)) from None
    front = parse_frontmatter(front_text or "", path=where)

    def get(key: str, *spellings: str) -> Entry | None:
        for k in (key, *spellings):
            entry = front.get(k)
            if entry is not None:
                return entry
        return None

    declared = None
    if (entry := get("name")) is not None:
        declared = _scalar(entry, where)
        if declared and not is_skill_name(declared):
            raise SkillFormatError(
                where, "name", f"{declared!r} is not a skill name (letters, digits, - and _)"
            )
    description = _scalar(entry, where) if (entry := get("description")) else ""
    when = _scalar(entry, where) if (entry := get("when_to_use", "when-to-use")) else ""
    from_body = False
    if not description:
        description = _first_paragraph(body)
        from_body = bool(description)
    if when:
        description = f"{description} {when}".strip()

    hint = None
    if (entry := get("argument-hint")) is not None:
        hint = _scalar(entry, where) or None

    arguments: tuple[str, ...] = ()
    if (entry := get("arguments")) is not None:
        arguments = _words(entry, where)
        for arg in arguments:
            if not _ARG_NAME.fullmatch(arg) or arg == "ARGUMENTS":
                raise SkillFormatError(
                    where, "arguments", f"{arg!r} is not an argument name (letters, digits, _ -)"
                )
        if len(set(arguments)) != len(arguments):
            raise SkillFormatError(where, "arguments", "names an argument twice")

    context: SkillContext = "inline"
    if (entry := get("context")) is not None:
        word = _scalar(entry, where)
        if word not in ("inline", "fork"):
            raise SkillFormatError(where, "context", f"must be inline or fork, not {word!r}")
        context = "fork" if word == "fork" else "inline"

    tools: tuple[str, ...] = ()
    if (entry := get("allowed-tools")) is not None:
        tools = _words(entry, where)
        for tool in tools:
            if not _TOOL_ENTRY.fullmatch(tool):
                raise SkillFormatError(
                    where, "allowed-tools", f"{tool!r} is not a tool name or tool(pattern)"
                )

    model = (_scalar(entry, where) or None) if (entry := get("model")) else None
    if model == "inherit":
        model = None
    agent = (_scalar(entry, where) or None) if (entry := get("agent")) else None
    disable = _boolean(entry, where) if (entry := get("disable-model-invocation")) else False
    invocable = _boolean(entry, where) if (entry := get("user-invocable")) else True
    unknown = tuple(k for k in front.keys if k not in KNOWN_KEYS and k not in FOREIGN_KEYS)
    return Skill(
        name=name,
        description=description,
        source=source,
        kind=kind,
        path=path,
        root=root,
        folder=folder,
        argument_hint=hint,
        arguments=arguments,
        model=model,
        context=context,
        agent=agent,
        allowed_tools=tools,
        disable_model_invocation=disable,
        user_invocable=invocable,
        declared_name=declared if declared and declared != name else None,
        unknown_keys=unknown,
        description_from_body=from_body,
    )


def _first_paragraph(body: str) -> str:
    """The body's first paragraph of text (headings skipped; the first heading when there is
    nothing else): the description of a skill or command that gives none, as in Claude
    Code."""
    lines: list[str] = []
    heading = ""
    for line in body.splitlines():
        text = line.strip()
        if text.startswith("```"):
            break
        if text.startswith("#"):
            heading = heading or text.lstrip("#").strip()
            if lines:
                break
            continue
        if not text:
            if lines:
                break
            continue
        lines.append(text)
    return " ".join(lines) or heading


def allowed_tool_rules(skill: Skill) -> tuple[str, ...]:
    """``allowed-tools`` as clawnb permission rules: Claude Code's tool names mapped to
    clawnb's (``Read`` → ``read``, ``Bash(git diff:*)`` → ``bash(git diff*)``). These are what
    the person's rules may pre-approve while the skill runs, never more: the session applies
    them only where its own rules would allow the call anyway."""
    rules: list[str] = []
    for entry in skill.allowed_tools:
        match = _TOOL_ENTRY.fullmatch(entry)
        if match is None:
            continue
        tool = entry.split("(", 1)[0]
        tool = _TOOL_ALIASES.get(tool, tool)
        pattern = match.group(1)
        if pattern is None:
            rules.append(tool)
            continue
        pattern = pattern.strip()
        if pattern.endswith(":*"):  # Claude Code's prefix form: `git diff:*` is `git diff*`
            pattern = pattern[:-2] + "*"
        rules.append(f"{tool}({pattern})")
    return tuple(dict.fromkeys(rules))
