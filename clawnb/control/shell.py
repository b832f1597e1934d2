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


# Commands that run the rest of their words as a command, each with its options that take a
# value (``timeout -s KILL``, ``env -C DIR``) and how many plain words come before that
# command (``timeout 5``). ``env -S STRING`` splits STRING into the command.
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "nohup": (frozenset(), 0),
    "time": (frozenset({"-f", "--format", "-o", "--output"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "env": (frozenset({"-C", "--chdir", "-u", "--unset", "-S", "--split-string"}), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "xargs": (
        frozenset(
            {"-I", "-n", "-P", "-d", "-E", "-L", "-s", "-a", "--max-args", "--max-procs"}
            | {"--delimiter", "--arg-file", "--max-lines", "--max-chars", "--replace"}
        ),
        0,
    ),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
    "setsid": (frozenset(), 0),
    "ionice": (frozenset({"-c", "--class", "-n", "--classdata", "-t"}), 0),
    "sudo": (
        frozenset({"-u", "--user", "-g", "--group", "-C", "-D", "--chdir", "-h", "-p", "-r"})
        | frozenset({"-t", "-U", "--close-from", "--host", "--prompt", "--role", "--type"}),
        0,
    ),
    "doas": (frozenset({"-u", "-C"}), 0),
    "busybox": (frozenset(), 0),
}

# Shell words that may stand before a command in one segment (``if true; then rm x; fi``
# splits into ``if true``, ``then rm x``, ``fi``): dropped to find the command itself.
_RESERVED = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}"})
_CLOSERS = frozenset({"fi", "done", "esac", "}", "then", "else", "do"})


def _unwrap(words: list[str]) -> list[str]:
    """The words after a wrapper's name, options and leading plain words (see _WRAPPERS)."""
    takes_value, plain = _WRAPPERS[os.path.basename(words[0].lstrip("\\"))]
    rest = words[1:]
    while rest and rest[0].startswith("-") and rest[0] != "-":
        word = rest.pop(0)
        if word == "--":
            break
        if word in ("-S", "--split-string") and rest:
            # env -S 'rm x': the string is the command line
            rest = _split_words(rest[0]) + rest[1:]
            break
        if word.startswith("--split-string="):
            rest = _split_words(word.split("=", 1)[1]) + rest
            break
        if word in takes_value and rest:
            rest.pop(0)
    for _ in range(plain):
        if len(rest) > 1:
            rest.pop(0)
    return rest


def _split_words(text: str) -> list[str]:
    try:
        return shlex.split(text, posix=True)
    except ValueError:
        return text.split()


_ANSI_C_ESCAPES = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_C = re.compile(
    r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)", re.DOTALL
)


def _ansi_c(body: str) -> str:
    """The text of a ``$'…'`` quote: its escapes (``\\x72``, ``\\162``, ``\\n``) decoded."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "xuU" and len(code) > 1:
            return chr(int(code[1:], 16))
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        if code[0] == "c" and len(code) == 2:
            return chr(ord(code[1]) & 0x1F)
        return _ANSI_C_ESCAPES.get(code, "\\" + code)

    return _ANSI_C.sub(one, body)


# What :func:`_expand_cheap` reads a line as, in the order a shell tells the pieces apart: text
# it takes as it is (single quotes, a backslash and what it escapes, double quotes — a ``$'``
# or ``$IFS`` inside them is plain text), a ``$'…'`` quote (a backslash in it escapes even a
# quote), the dollar of a ``$"…"`` string, and the field separator. Quotes left open run to
# the end of the line.
_CHEAP = re.compile(
    r"""
      '[^']*'?
    | \\.
    | "(?:\\.|[^"\\])*"?
    | \$'(?P<ansi_c>(?:\\.?|[^'\\])*)'?
    | \$(?=")
    | \$\{IFS[^}]*\}
    | \$IFS(?![A-Za-z0-9_])
    """,
    re.VERBOSE | re.DOTALL,
)


def _expand_cheap(command: str) -> str:
    """``command`` with the expansions that need no state done, as a shell would: ``$'…'``
    quotes decoded into plain single quotes, ``$"…"`` as ``"…"``, and an unquoted ``$IFS`` /
    ``${IFS}`` (a space, unless someone changed it) as a space."""

    def one(match: re.Match[str]) -> str:
        piece = match.group(0)
        if match.group("ansi_c") is not None:
            return "'" + _ansi_c(match.group("ansi_c")).replace("'", "'\\''") + "'"
        if piece == "$":
            return ""  # a translated string: the quotes stay, the dollar goes
        if piece.startswith("$"):
            return " "  # $IFS
        return piece

    return _CHEAP.sub(one, command)


def normalize_command(command: str, *, _depth: int = 0) -> list[str]:
    """The spellings of ``command`` a filter looks at: the whole line with runs of whitespace
    collapsed, then each simple command in it, unquoted, with leading ``VAR=value`` words,
    wrappers (``env``, ``command``, ``timeout 5``, ``nice``, ``sudo``… and their options),
    shell words (``if``, ``then``, ``do``, ``{``…), backslashes and directories
    (``/usr/bin/sudo`` → ``sudo``) removed. ``$'…'`` quotes are decoded and ``${IFS}`` read
    as a space first. The script given to ``sh -c``/``bash -c`` and the text given to ``eval``
    are looked at the same way. Order is preserved; duplicates are dropped."""
    forms: list[str] = []

    def add(text: str) -> None:
        text = text.strip()
        if text and text not in forms:
            forms.append(text)

    add(" ".join(command.split()))
    expanded = _expand_cheap(command)
    segments, _ = split_shell_commands(expanded)
    for segment in segments:
        add(" ".join(segment.split()))
        words = _split_words(segment)
        while words:
            head = words[0]
            if "=" in head and not head.startswith("=") and head.split("=", 1)[0].isidentifier():
                words = words[1:]
                continue
            if head in _RESERVED and len(words) > 1:
                words = words[1:]
                continue
            base = os.path.basename(head.lstrip("\\")) or head
            if base in _WRAPPERS and len(words) > 1:
                add(" ".join([base, *words[1:]]))  # ``sudo ls`` is a form of its own
                words = _unwrap(words)
                continue
            words = [base, *words[1:]]
            break
        if not words or (len(words) == 1 and words[0] in _CLOSERS):
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
