"""The small language of configured hooks: events, ``if`` conditions and context variables.

Pure functions, no I/O, cheap to import (the config module validates with them):

* :data:`HOOK_EVENTS` — the events a ``[[hooks.EVENT]]`` table may name;
* :func:`parse_condition` — ``tool == 'bash' && args.command =~ '^git '``: comparisons of
  ``tool`` or ``args.KEY`` with a quoted value by ``==``, ``!=``, ``=~`` (a regular expression,
  searched) or ``~=`` (a glob: ``*`` and ``?`` stay inside one path segment, ``**`` crosses
  them), joined by ``&&`` or by ``||`` — never both in one condition (split it into two hooks);
  a bad condition is a :class:`ValueError` of one line;
* :func:`expand_command` — ``$TOOL_NAME``, ``$FILE_PATH``, ``$TOOL_ARGS.key``, ``$EVENT``,
  ``$MESSAGE``, ``$ERROR`` replaced by their values quoted for the shell at the place they
  stand (bare, inside ``'…'`` or inside ``"…"``), so a value is always one literal word: a
  file name holding ``;`` or ``$(…)`` never runs. :func:`expand_text` is the same without
  quoting, for the ``prompt`` and ``agent`` actions, whose text goes to a model, not a shell.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "HOOK_EVENTS",
    "TOOL_EVENTS",
    "Condition",
    "expand_command",
    "expand_text",
    "glob_regex",
    "parse_condition",
]

TOOL_EVENTS = ("pre_tool", "post_tool")
HOOK_EVENTS = (
    "session_start",
    "session_end",
    "turn_start",
    "turn_end",
    "pre_tool",
    "post_tool",
    "pre_send",
    "post_receive",
    "error",
    "compact",
    "permission_request",
    "file_change",
    "command_execute",
    "subagent_start",
    "subagent_stop",
    "pre_cell",
    "post_cell",
    "cell_error",
    "kernel_restart",
)
"""Every event a hook can attach to, in the order the docs list them."""


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as a regular expression over the whole text: ``*`` and ``?`` stay inside one
    ``/``-separated segment, ``**`` matches across segments (``src/**/*.py``)."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                i = end + 1
                continue
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


_OPS = ("==", "!=", "=~", "~=")
_TERM = re.compile(
    r"""\s*(?P<subject>tool|args\.[A-Za-z_][\w.-]*)\s*(?P<op>==|!=|=~|~=)\s*"""
    r"""(?P<value>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\s*"""
)


@dataclass(frozen=True)
class _Test:
    subject: str  # "tool" or "args.KEY"
    op: str
    value: str
    match: Callable[[str], bool]

    def holds(self, tool: str | None, args: Any) -> bool:
        if self.subject == "tool":
            actual: Any = tool
        else:
            actual = args.get(self.subject[5:]) if isinstance(args, Mapping) else None
        if actual is None:
            # nothing to compare: only "is not" can be true of it
            return self.op == "!="
        text = actual if isinstance(actual, str) else json.dumps(actual, ensure_ascii=False)
        return self.match(text)


@dataclass(frozen=True)
class Condition:
    """A parsed ``if``: ``all_of`` (``&&``) or any of (``||``) its tests."""

    text: str
    tests: tuple[_Test, ...]
    all_of: bool = True

    def holds(self, tool: str | None, args: Any) -> bool:
        if self.all_of:
            return all(t.holds(tool, args) for t in self.tests)
        return any(t.holds(tool, args) for t in self.tests)


def _unquote(literal: str) -> str:
    body = literal[1:-1]
    return re.sub(r"\\(.)", r"\1", body, flags=re.DOTALL)


def _matcher(op: str, value: str, text: str) -> Callable[[str], bool]:
    if op == "==":
        return lambda actual: actual == value
    if op == "!=":
        return lambda actual: actual != value
    if op == "=~":
        try:
            pattern = re.compile(value)
        except re.error as exc:
            raise ValueError(
                f"if {text!r}: {value!r} is not a regular expression ({exc})"
            ) from None
        return lambda actual: pattern.search(actual) is not None
    compiled = glob_regex(value)
    return lambda actual: compiled.match(actual) is not None


def parse_condition(text: str) -> Condition:
    """Parse an ``if`` (see the module docstring); a :class:`ValueError` of one line says
    what is wrong with it."""
    if not text.strip():
        raise ValueError("if: the condition is empty")
    tests: list[_Test] = []
    joins: set[str] = set()
    pos, n = 0, len(text)
    while True:
        found = _TERM.match(text, pos)
        if found is None:
            raise ValueError(
                f"if {text!r}: expected `tool` or `args.KEY`, then one of {', '.join(_OPS)}, "
                f"then a quoted value, at character {pos + 1}"
            )
        op, value = found["op"], _unquote(found["value"])
        tests.append(_Test(found["subject"], op, value, _matcher(op, value, text)))
        pos = found.end()
        if pos >= n:
            break
        join = text[pos : pos + 2]
        if join not in ("&&", "||"):
            raise ValueError(f"if {text!r}: expected && or || at character {pos + 1}")
        joins.add(join)
        pos += 2
    if len(joins) > 1:
        raise ValueError(
            f"if {text!r}: && and || cannot be mixed in one condition; split it into two hooks"
        )
    return Condition(text, tuple(tests), all_of=joins != {"||"})


_VARIABLE = re.compile(
    r"\$(?:TOOL_ARGS\.([A-Za-z_]\w*)|(TOOL_NAME|FILE_PATH|EVENT|MESSAGE|ERROR))\b"
)


def _value(match: re.Match[str], values: Mapping[str, Any]) -> str:
    if match.group(1) is not None:
        args = values.get("TOOL_ARGS")
        raw = args.get(match.group(1)) if isinstance(args, Mapping) else None
    else:
        raw = values.get(match.group(2))
    if raw is None:
        return ""
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)


def expand_text(template: str, values: Mapping[str, Any]) -> str:
    """The template with each context variable replaced by its value as it is."""
    return _VARIABLE.sub(lambda m: _value(m, values), template)


def expand_command(template: str, values: Mapping[str, Any]) -> str:
    """The shell command with each context variable replaced by its value, quoted for the
    place it stands in: bare (``shlex.quote``), inside single quotes (the quote is closed, the
    value quoted, the quote reopened) or inside double quotes (``\\ $ ` "`` escaped). A value
    is one literal word wherever the variable was written."""
    out: list[str] = []
    quote: str | None = None  # the quote the scan is inside: ', " or None
    i, n = 0, len(template)
    while i < n:
        c = template[i]
        if c == "$":
            found = _VARIABLE.match(template, i)
            if found is not None:
                value = _value(found, values)
                if quote is None:
                    out.append(shlex.quote(value))
                elif quote == "'":
                    out.append(value.replace("'", "'\\''"))
                else:
                    out.append(re.sub(r'([\\$`"])', r"\\\1", value))
                i = found.end()
                continue
        out.append(c)
        if quote is None:
            if c == "\\" and i + 1 < n:
                out.append(template[i + 1])
                i += 2
                continue
            if c in ("'", '"'):
                quote = c
        elif quote == '"':
            if c == "\\" and i + 1 < n:
                out.append(template[i + 1])
                i += 2
                continue
            if c == '"':
                quote = None
        elif c == "'":
            quote = None
        i += 1
    return "".join(out)
