"""Shell lines as policy code reads them: one home for every parser the gates share.

The permission engine (:mod:`clawnb.permissions`), the command filter (:mod:`clawnb.safety`)
and hooks all decide things about bash commands and glob patterns; they use these functions,
so a command is split, normalised and matched the same way everywhere:

* :func:`split_shell_commands` — a line → its simple commands (and whether it substitutes);
* :func:`normalize_command` — the spellings of a command a filter looks at (quotes, ``VAR=``
  prefixes, wrappers and directories removed; ``bash -c`` and ``eval`` scripts looked into);
* :func:`writes_to_file` — whether a line redirects output into a file;
* :func:`glob_is_valid` / :func:`glob_match` — the book's glob rules (a malformed pattern
  matches only itself).

Best-effort parsers for policy decisions, not a shell: the real boundary is asking before a
command runs (and the sandbox), never these functions alone.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex

__all__ = [
    "glob_is_valid",
    "glob_match",
    "normalize_command",
    "split_shell_commands",
    "writes_to_file",
]

# ---------------------------------------------------------------------------------------------
# Globs


def glob_is_valid(pattern: str) -> bool:
    """Whether ``pattern`` is a well-formed glob: every ``[`` is closed and no class is empty.

    Python's :mod:`fnmatch` never rejects a pattern (an unclosed ``[`` silently becomes a
    literal); the book's glob crate does, and then compares the pattern for equality. Checking
    here keeps that behaviour explicit.
    """
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1  # a leading ']' is part of the class
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                return False
            if j == i + 1:
                return False
            i = j + 1
            continue
        i += 1
    return True


def glob_match(pattern: str, text: str) -> bool:
    """``fnmatch`` for a well-formed glob; a malformed one only matches itself, literally."""
    if glob_is_valid(pattern):
        return fnmatch.fnmatchcase(text, pattern)
    return text == pattern


# ---------------------------------------------------------------------------------------------
# Splitting a line into simple commands, and redirections


_OPERATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "\n", "(", ")")


def split_shell_commands(command: str) -> tuple[list[str], bool]:
    """Split a shell line into its simple commands (on ``; && || | & ( )`` and newlines, outside
    quotes). Returns ``(commands, substitutes)`` where ``substitutes`` says the line contains a
    command substitution (``$(…)``, backticks, ``<(…)``/``>(…)``) whose inner commands are also
    returned. Best-effort: a parser for policy decisions, not a shell."""
    parts: list[str] = []
    current: list[str] = []
    substitutes = False
    quote: str | None = None
    i, n = 0, len(command)

    def cut() -> None:
        text = "".join(current).strip()
        if text:
            parts.append(text)
        current.clear()

    while i < n:
        c = command[i]
        if quote == "'":
            current.append(c)
            if c == "'":
                quote = None
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            current.append(command[i : i + 2])
            i += 2
            continue
        if c == "`" or (c in "$<>" and command[i + 1 : i + 2] == "("):
            substitutes = True
            cut()
            i += 1 if c == "`" else 2
            continue
        if quote == '"':
            if c == '"':
                quote = None
            current.append(c)
            i += 1
            continue
        if c in "'\"":
            quote = c
            current.append(c)
            i += 1
            continue
        if c == "&" and (command[i - 1 : i] in (">", "<") or command[i + 1 : i + 2] == ">"):
            current.append(c)  # a redirection (``2>&1``, ``&> file``), not "run in background"
            i += 1
            continue
        for op in _OPERATORS:
            if command.startswith(op, i):
                cut()
                i += len(op)
                break
        else:
            current.append(c)
            i += 1
    cut()
    return parts, substitutes


_REDIRECT_TARGET = re.compile(r"\s*(\S+)")


def writes_to_file(command: str) -> bool:
    """Whether a shell line redirects output into a file (``>``, ``>>``, ``&>``, ``>|``, outside
    quotes). Duplicating a descriptor (``2>&1``) and ``/dev/null`` do not count."""
    quote: str | None = None
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = None
            i += 1
            continue
        if c == "\\":
            i += 2
            continue
        if c in "'\"":
            quote = c
            i += 1
            continue
        if c == ">" and command[i + 1 : i + 2] != "(":
            j = i + 1
            if command[j : j + 1] in (">", "|"):
                j += 1
            if command[j : j + 1] == "&":
                rest = command[j + 1 :].lstrip()
                if rest[:1].isdigit() or rest.startswith("-"):
                    i = j + 1
                    continue
                j += 1
            match = _REDIRECT_TARGET.match(command, j)
            target = match.group(1).strip("'\"") if match else ""
            if target != "/dev/null":
                return True
            i = j
            continue
        i += 1
    return False


# ---------------------------------------------------------------------------------------------
# The spellings a command filter compares


_WRAPPERS = {"command", "builtin", "exec", "nohup", "time", "nice", "env", "stdbuf", "xargs"}


def normalize_command(command: str, *, _depth: int = 0) -> list[str]:
    """The spellings of ``command`` a filter looks at: the whole line with runs of whitespace
    collapsed, then each simple command in it, unquoted, with leading ``VAR=value`` words,
    wrappers (``env``, ``command``, ``nohup``…), backslashes and directories
    (``/usr/bin/sudo`` → ``sudo``) removed. The script given to ``sh -c``/``bash -c`` and the
    text given to ``eval`` are looked at the same way. Order is preserved; duplicates are
    dropped."""
    forms: list[str] = []

    def add(text: str) -> None:
        text = text.strip()
        if text and text not in forms:
            forms.append(text)

    add(" ".join(command.split()))
    segments, _ = split_shell_commands(command)
    for segment in segments:
        add(" ".join(segment.split()))
        try:
            words = shlex.split(segment, posix=True)
        except ValueError:
            words = segment.split()
        while words:
            head = words[0]
            if "=" in head and not head.startswith("=") and head.split("=", 1)[0].isidentifier():
                words = words[1:]
                continue
            base = os.path.basename(head.lstrip("\\")) or head
            if base in _WRAPPERS and len(words) > 1:
                words = words[1:]
                # options of the wrapper (``nice -n 5``, ``env -i``) are skipped too
                while words and words[0].startswith("-"):
                    words = words[1:]
                    if words and words[0].isdigit():
                        words = words[1:]
                continue
            words = [base, *words[1:]]
            break
        if not words:
            continue
        add(" ".join(words))
        if _depth < 3:
            inner = _inner_script(words)
            if inner:
                for form in normalize_command(inner, _depth=_depth + 1):
                    add(form)
    return forms


_SHELLS = {"sh", "bash", "dash", "zsh", "ksh"}


def _inner_script(words: list[str]) -> str | None:
    """The script a command runs as shell code: ``bash -c SCRIPT`` or ``eval TEXT``."""
    if words[0] == "eval" and len(words) > 1:
        return " ".join(words[1:])
    if words[0] in _SHELLS:
        for i, word in enumerate(words[1:-1], 1):
            if word == "-c" or (word.startswith("-") and not word.startswith("--") and "c" in word):
                return words[i + 1]
    return None
