"""The course's answer to chapter 23: hooks with conditions and actions — an ``if`` parser
(``parse_condition``), context variables put into a shell command quoted for the place they
stand (``expand_command``) or into a prompt as they are (``expand_text``), and a small engine
that runs ``[[hooks.EVENT]]`` tables (``HookRunner``). The notebook's solution, kept short;
production's counterparts are :mod:`clawnb.control.hook_rules` and :class:`clawnb.hooks.HookEngine`."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "EVENTS",
    "Condition",
    "HookRunner",
    "expand_command",
    "expand_text",
    "glob_to_regex",
    "parse_condition",
]

# ---------------------------------------------------------------------------- conditions


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """A glob over the whole value: ``*`` and ``?`` stay inside one folder, ``**`` crosses."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            c = pattern[i]
            out.append("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c))
            i += 1
    return re.compile("".join(out) + r"\Z")


TERM = re.compile(r"""\s*(tool|args\.\w+)\s*(==|!=|=~|~=)\s*('[^']*'|"[^"]*")\s*""")
JOIN = re.compile(r"&&|\|\||\Z")


@dataclass
class Condition:
    text: str
    tests: list[tuple[str, str, Callable[[str], bool]]]  # (subject, operator, matcher)
    all_of: bool = True  # && (all) or || (any)

    def holds(self, tool: str | None, args: Any) -> bool:
        results = []
        for subject, op, matches in self.tests:
            if subject == "tool":
                value: Any = tool
            else:
                value = args.get(subject[5:]) if isinstance(args, Mapping) else None
            if value is None:
                results.append(op == "!=")  # nothing there: only "is not" is true of it
                continue
            text = value if isinstance(value, str) else json.dumps(value)
            results.append(matches(text))
        return all(results) if self.all_of else any(results)


def _matcher(op: str, value: str, text: str) -> Callable[[str], bool]:
    """What one test asks of the text it is given."""
    if op in ("==", "!="):
        wanted = op == "=="  # "is" or "is not"
        return lambda actual: (actual == value) is wanted
    if op == "~=":
        glob = glob_to_regex(value)
        return lambda actual: glob.match(actual) is not None
    try:
        pattern = re.compile(value)
    except re.error as exc:
        raise ValueError(f"if {text!r}: {value!r} is not a regular expression ({exc})") from None
    return lambda actual: pattern.search(actual) is not None


WANTED = "tool or args.KEY, an operator (==, !=, =~, ~=) and a quoted value"


def parse_condition(text: str) -> Condition:
    tests, joins, pos = [], set(), 0
    while True:
        found = TERM.match(text, pos)
        if found is None:
            raise ValueError(f"if {text!r}: expected {WANTED} at character {pos + 1}")
        subject, op, quoted = found.groups()
        tests.append((subject, op, _matcher(op, quoted[1:-1], text)))
        after = JOIN.match(text, found.end())  # && or ||, or the end of the text
        if after is None:
            raise ValueError(f"if {text!r}: expected && or || at character {found.end() + 1}")
        if not after.group():
            break
        joins.add(after.group())
        pos = after.end()
    if len(joins) > 1:
        raise ValueError(f"if {text!r}: && and || cannot be mixed; split it into two hooks")
    return Condition(text, tests, all_of=joins != {"||"})


# ---------------------------------------------------------------------------- variables

VARIABLE = re.compile(r"\$(?:TOOL_ARGS\.(\w+)|(TOOL_NAME|FILE_PATH|EVENT|MESSAGE))\b")


def _value(match: re.Match[str], values: Mapping[str, Any]) -> str:
    if match.group(1) is not None:
        raw = (values.get("TOOL_ARGS") or {}).get(match.group(1))
    else:
        raw = values.get(match.group(2))
    if raw is None:
        return ""
    return raw if isinstance(raw, str) else json.dumps(raw)


def expand_text(template: str, values: Mapping[str, Any]) -> str:
    """For a prompt: each variable replaced by its value as it is (a model reads it)."""
    return VARIABLE.sub(lambda m: _value(m, values), template)


# how a value is quoted where it stands: bare, inside '…' or inside "…"
QUOTE_FOR: dict[str | None, Callable[[str], str]] = {
    None: shlex.quote,
    "'": lambda value: value.replace("'", "'\\''"),  # close, an escaped quote, reopen
    '"': lambda value: re.sub(r'([\\$`"])', r"\\\1", value),
}


def expand_command(template: str, values: Mapping[str, Any]) -> str:
    """For a shell: each value quoted for the place it stands, so it is one literal word."""
    out = []
    quote = None  # the quote we are inside: "'", '"' or None
    i = 0
    while i < len(template):
        c = template[i]
        found = VARIABLE.match(template, i) if c == "$" else None
        if found is not None:
            out.append(QUOTE_FOR[quote](_value(found, values)))
            i = found.end()
            continue
        out.append(c)
        if quote is None and c in "'\"":
            quote = c
        elif c == quote:
            quote = None
        i += 1
    return "".join(out)


# ---------------------------------------------------------------------------- the engine

EVENTS = ("session_start", "turn_start", "pre_tool", "post_tool", "turn_end")
ACTIONS = ("command", "prompt")


def _file_path(args: Any) -> str | None:
    if isinstance(args, Mapping):
        for key in ("path", "file_path"):
            if isinstance(args.get(key), str):
                return str(args[key])
    return None


class HookRunner:
    """The hooks of a config's ``hooks`` table, ``{"pre_tool": [{"if": …, "command": …}]}``."""

    def __init__(self, table: Mapping[str, Any], cwd: str | None = None) -> None:
        self.cwd = cwd
        self.hooks: list[dict[str, Any]] = []
        self.reminders: list[str] = []
        self.runs: list[tuple[str, str]] = []  # (event, how it ended), for a /hooks view
        for event, entries in table.items():
            if event not in EVENTS:
                raise ValueError(f"hooks.{event}: unknown event (one of {', '.join(EVENTS)})")
            for i, entry in enumerate(entries):
                where = f"hooks.{event}[{i}]"
                action = entry.get("action", "command")
                if action not in ACTIONS:
                    raise ValueError(f"{where}: unknown action {action!r}")
                if not entry.get(action):
                    raise ValueError(f"{where}: action {action!r} needs {action} = '…'")
                try:
                    condition = parse_condition(entry["if"]) if "if" in entry else None
                except ValueError as exc:
                    raise ValueError(f"{where}: {exc}") from None
                self.hooks.append(
                    {
                        "event": event,
                        "action": action,
                        "text": entry[action],
                        "if": condition,
                        "once": bool(entry.get("once", False)),
                        "timeout": float(entry.get("timeout", 5.0)),
                        "fired": False,
                    }
                )

    async def fire(
        self, event: str, *, tool: str | None = None, args: Any = None, message: str | None = None
    ) -> str | None:
        """Run ``event``'s matching hooks in order. On pre_tool the first block wins: its
        reason is returned and the rest do not run. Every other event returns None."""
        values = {
            "EVENT": event,
            "TOOL_NAME": tool,
            "TOOL_ARGS": args if isinstance(args, Mapping) else {},
            "FILE_PATH": _file_path(args),
            "MESSAGE": message,
        }
        payload = {"event": event, "tool_name": tool, "args": args, "message": message}
        for hook in self.hooks:
            if hook["event"] != event:
                continue
            if hook["if"] is not None and not hook["if"].holds(tool, args):
                continue
            if hook["once"] and hook["fired"]:
                continue
            hook["fired"] = True
            if hook["action"] == "prompt":
                self.reminders.append(expand_text(hook["text"], values))
                self.runs.append((event, "reminder"))
                continue
            command = expand_command(hook["text"], values)
            reason = await self._run(command, payload, hook["timeout"])
            self.runs.append((event, reason or "exit 0"))
            if reason is not None and event == "pre_tool":
                return reason
        return None

    async def _run(self, command: str, payload: dict[str, Any], timeout: float) -> str | None:
        """None when the command exits 0, else why not (its last stderr line)."""
        process = await asyncio.create_subprocess_shell(
            command,
            cwd=self.cwd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,  # its own process group, so a timeout ends all of it
        )
        try:
            _, err = await asyncio.wait_for(
                process.communicate(json.dumps(payload).encode()), timeout
            )
        except TimeoutError:
            os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
            return f"timed out after {timeout:g} s"
        if process.returncode == 0:
            return None
        lines = err.decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else f"exit {process.returncode}"
