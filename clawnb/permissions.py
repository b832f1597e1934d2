"""Who may act: the permission engine (book ch13, with seed 001's modes and argument rules).

The book's engine answers one question per tool call — :class:`Permission` ``Allow``, ``Deny``
or ``Ask`` — in this order:

1. tools the user allowed "for this session" → ``Allow``;
2. the **first** :class:`PermissionRule` whose pattern matches → its permission;
3. the engine's default.

Two extensions make it usable on a real machine:

* **Argument rules.** ``bash(git *)`` or ``write(src/**)`` match the call's *subject* too — the
  ``command`` of a bash call, the ``path`` of a file tool (see :func:`call_subject`). For bash an
  *allow* rule must match every command of a compound line (``git status && rm -rf x`` is not
  allowed by ``bash(git *)``), the line must not substitute commands (``$(…)``, backticks)
  nor redirect output into a file; a *deny* rule matches when any one of the commands matches,
  in any spelling :func:`clawnb.control.shell.normalize_command` produces.
* **Modes** (:class:`PermissionMode`): ``default`` (read-only tools run, everything else asks),
  ``accept_edits`` (file edits run too, bash still asks), ``plan`` (only read-only tools; the rest
  is denied) and ``bypass`` (everything runs). With a mode set, a matching **deny rule wins in
  every mode**, also over session allows and ``bypass``. Whether a tool is read-only comes from
  its ``read_only`` attribute; a tool without one is treated as not read-only (fail closed).
  A read-only tool that **reaches the network** (``open_world``: ``web_fetch``) is not "just a
  read" — a URL can carry anything the model has read — so it asks in every mode but
  ``bypass`` (plan mode included), unless a rule or the person's "always allow" says yes.

An engine built without a mode (``PermissionEngine(rules, default)``) behaves exactly like the
book's. A pattern that is not a valid glob is compared for equality, as in the book.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum

from .control.modes import PermissionMode
from .control.secrets import is_secret_file
from .control.shell import glob_match, normalize_command, split_shell_commands, writes_to_file
from .control.trust import CONTROL_FILE_REASON, command_mentions_control_file, is_control_file
from .types import JSON, Tool, traits_of

__all__ = [
    "CONTROL_FILE_REASON",
    "EDIT_TOOLS",
    "EXACT_PREFIX",
    "Permission",
    "PermissionDecision",
    "PermissionEngine",
    "PermissionMode",
    "PermissionRule",
    "always_offers",
    "call_subject",
    "touches_control_file",
]

# Tools that change files but nothing else; ``accept_edits`` lets them run without asking.
EDIT_TOOLS: frozenset[str] = frozenset({"write", "edit", "multi_edit", "notebook_edit"})

# A session answer for one exact call: ``exact:bash(git status && git diff)``.
EXACT_PREFIX = "exact:"

# Tools whose second word names what they do (``git status``, ``npm test``): an "always"
# for them covers that subcommand. Any other command gets its first word.
TWO_WORD_TOOLS: frozenset[str] = frozenset(
    {
        "git", "npm", "npx", "pnpm", "yarn", "pip", "pip3", "uv", "poetry", "pipenv", "conda",
        "cargo", "go", "docker", "podman", "kubectl", "helm", "gh", "make", "dotnet", "mvn",
        "gradle", "brew", "apt", "apt-get", "terraform", "rustup", "bundle", "gem", "jupyter",
    }
)  # fmt: skip
# Commands that run whatever follows them: a prefix of one is every command, so only "this
# exact command" is offered for them.
RUNS_ANYTHING: frozenset[str] = frozenset(
    {
        "sh", "bash", "zsh", "dash", "fish", "ksh", "python", "python3", "node", "deno", "bun",
        "perl", "ruby", "php", "lua", "env", "sudo", "doas", "su", "xargs", "eval", "exec",
        "source", ".", "command", "builtin", "timeout", "nohup", "nice", "time", "watch",
        "ssh", "find", "awk", "sed", "parallel", "script", "busybox", "uvx", "pipx", "npx",
    }
)  # fmt: skip

# Argument keys that name what a call acts on, in priority order.
_SUBJECT_KEYS = ("command", "path", "file_path", "notebook_path", "url", "pattern")
_PATH_KEYS = frozenset({"path", "file_path", "notebook_path"})


class Permission(StrEnum):
    """The engine's answer. The book spells the members ``Allow``/``Deny``/``Ask``; the
    upper-case spellings are aliases."""

    Allow = "allow"
    Deny = "deny"
    Ask = "ask"
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


def call_subject(tool: str, args: JSON) -> str | None:
    """What a call acts on: ``command`` for bash, else the first string among ``path``,
    ``file_path``, ``notebook_path``, ``url``, ``pattern``. ``None`` if there is none."""
    return _subject(tool, args)[1]


def _subject(tool: str, args: JSON) -> tuple[str | None, str | None]:
    if not isinstance(args, dict):
        return None, None
    keys = ("command",) if tool == "bash" else _SUBJECT_KEYS[1:]
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return key, value
    return None, None


class PermissionRule:
    """``PermissionRule("bash", Permission.Ask)``; ``"mcp__*"`` globs the tool name;
    ``"bash(git *)"`` / ``"write(src/**)"`` also glob the call's subject (see module doc)."""

    _ARG_RULE = re.compile(r"^([^()]+)\((.*)\)$", re.DOTALL)

    def __init__(self, pattern: str, permission: Permission | str) -> None:
        self.pattern = pattern
        self.permission = Permission(permission) if isinstance(permission, str) else permission
        match = self._ARG_RULE.match(pattern.strip())
        if match:
            self.tool_pattern = match.group(1).strip()
            self.arg_pattern: str | None = match.group(2).strip()
        else:
            self.tool_pattern = pattern
            self.arg_pattern = None

    def matches(self, tool: str, args: JSON = None, *, workspace: str | None = None) -> bool:
        """Does this rule cover a call of ``tool`` with ``args``?"""
        if not glob_match(self.tool_pattern, tool):
            return False
        if self.arg_pattern is None:
            return True
        key, subject = _subject(tool, args)
        if subject is None:
            return False
        if key == "command":
            return self._matches_command(subject)
        if key not in _PATH_KEYS:
            return glob_match(self.arg_pattern, subject)
        forms = _path_forms(subject, workspace)
        if self.permission is Permission.Deny:  # any spelling of the path is enough to deny
            return any(glob_match(self.arg_pattern, f) for f in [subject, *forms])
        # Allow/Ask must hold for where the path really goes, not just how it is spelled.
        return all(glob_match(self.arg_pattern, f) for f in forms)

    def _matches_command(self, command: str) -> bool:
        assert self.arg_pattern is not None
        commands, substitutes = split_shell_commands(command)
        commands = [" ".join(c.split()) for c in commands]
        if self.permission is Permission.Deny:
            # any spelling the command filter would look at: ``env rm x``, ``bash -c 'rm x'``
            forms = [*commands, *normalize_command(command)]
            return any(glob_match(self.arg_pattern, c) for c in forms)
        # Allow/Ask must cover the whole line: every command, no hidden substitutions, no
        # output redirected into a file (``git log > ~/.bashrc`` is not "just git log").
        if substitutes or not commands or writes_to_file(command):
            return False
        return all(glob_match(self.arg_pattern, c) for c in commands)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, PermissionRule)
            and self.pattern == other.pattern
            and self.permission == other.permission
        )

    def __hash__(self) -> int:
        return hash((self.pattern, self.permission))

    def __repr__(self) -> str:
        return f"PermissionRule({self.pattern!r}, Permission.{self.permission.name})"


def _path_forms(path: str, workspace: str | None) -> list[str]:
    """Canonical spellings of a path for rules: lexically normalised, and — with a workspace —
    relative to it when inside, plus where symlinks really lead (so ``src/**`` covers
    ``/ws/src/a.py`` and ``./src/a.py`` but not ``src/../secret.txt``)."""
    if not workspace:
        return [os.path.normpath(path)] if path else [path]
    ws = os.path.normpath(os.path.abspath(workspace))
    real_ws = os.path.realpath(ws)
    full = os.path.normpath(os.path.join(ws, path))
    forms = [_relative_if_inside(full, ws)]
    real = _relative_if_inside(os.path.realpath(full), real_ws)
    if real not in forms:
        forms.append(real)
    return forms


def _relative_if_inside(path: str, directory: str) -> str:
    if path == directory:
        return "."
    if path.startswith(directory.rstrip("/") + "/"):
        return os.path.relpath(path, directory)
    return path


@dataclass(frozen=True)
class PermissionDecision:
    """A permission with the reason a person (or the model) can read."""

    permission: Permission
    reason: str
    rule: PermissionRule | None = None
    # Only a person's explicit answer to this very call may allow it: no session allow, no
    # allow rule, no mode and no automatic policy (a call that changes the agent's own rules).
    explicit: bool = False


class PermissionEngine:
    """Evaluates tool calls against rules, session allows and (optionally) a mode."""

    def __init__(
        self,
        rules: Iterable[PermissionRule] = (),
        default: Permission = Permission.Ask,
        *,
        mode: PermissionMode | str | None = None,
        workspace: str | os.PathLike[str] | None = None,
        edit_tools: Collection[str] = EDIT_TOOLS,
    ) -> None:
        self.rules: list[PermissionRule] = list(rules)
        self.default = default
        self.mode = PermissionMode.parse(mode) if mode is not None else None
        self.workspace = os.fspath(workspace) if workspace is not None else None
        self.edit_tools = frozenset(edit_tools)
        self._session_allows: set[str] = set()
        # scoped "always" answers: rules (``bash(git status*)``) and exact calls
        self._session_rules: list[PermissionRule] = []
        self._session_exact: set[tuple[str, str]] = set()

    # -- constructors (the book's) -----------------------------------------------------------
    @classmethod
    def ask_by_default(cls, rules: Iterable[PermissionRule] = ()) -> PermissionEngine:
        return cls(rules, Permission.Ask)

    @classmethod
    def allow_all(cls) -> PermissionEngine:
        return cls([], Permission.Allow)

    @classmethod
    def for_mode(
        cls,
        mode: PermissionMode | str = PermissionMode.DEFAULT,
        *,
        rules: Iterable[PermissionRule] = (),
        allow: Iterable[str] = (),
        ask: Iterable[str] = (),
        deny: Iterable[str] = (),
        workspace: str | os.PathLike[str] | None = None,
    ) -> PermissionEngine:
        """An engine in ``mode`` with rules given as objects or as ``allow``/``ask``/``deny``
        pattern lists (config style: ``allow = ["bash(git status)"]``)."""
        all_rules = list(rules)
        all_rules += [PermissionRule(p, Permission.Deny) for p in deny]
        all_rules += [PermissionRule(p, Permission.Ask) for p in ask]
        all_rules += [PermissionRule(p, Permission.Allow) for p in allow]
        return cls(all_rules, Permission.Ask, mode=mode, workspace=workspace)

    # -- the book's API ----------------------------------------------------------------------
    def evaluate(self, tool: str | Tool, args: JSON = None) -> Permission:
        """``Allow``, ``Deny`` or ``Ask`` for a call of ``tool`` (a name, or a tool object whose
        ``read_only`` attribute the modes consult) with ``args``."""
        return self.decide(tool, args).permission

    def record_session_allow(self, tool: str) -> None:
        """The user allowed ``tool`` for the rest of this session: a tool name (every call),
        an allow rule (``bash(git status*)``, ``mcp__github__*``: the calls it matches) or
        ``exact:NAME(SUBJECT)`` (that one command or path, as written)."""
        if tool.startswith(EXACT_PREFIX):
            match = PermissionRule._ARG_RULE.match(tool[len(EXACT_PREFIX) :])
            if match:
                self._session_exact.add((match.group(1), match.group(2)))
            return
        if "(" in tool or any(c in tool for c in "*?["):
            rule = PermissionRule(tool, Permission.Allow)
            if rule not in self._session_rules:
                self._session_rules.append(rule)
            return
        self._session_allows.add(tool)

    def forget(self, pattern: str, *, session_only: bool = False) -> bool:
        """Stop allowing ``pattern`` (a session answer or, unless ``session_only``, an allow
        rule, by its exact text); whether anything was removed. Deny and ask rules are never
        removed here."""
        before = (len(self._session_allows), len(self._session_rules), len(self.rules))
        self._session_allows.discard(pattern)
        self._session_rules = [r for r in self._session_rules if r.pattern != pattern]
        if pattern.startswith(EXACT_PREFIX):
            match = PermissionRule._ARG_RULE.match(pattern[len(EXACT_PREFIX) :])
            if match:
                self._session_exact.discard((match.group(1), match.group(2)))
                return True
        if not session_only:
            self.rules = [
                r
                for r in self.rules
                if not (r.permission is Permission.Allow and r.pattern == pattern)
            ]
        return before != (len(self._session_allows), len(self._session_rules), len(self.rules))

    def is_allowed(self, tool: str | Tool, args: JSON = None) -> bool:
        return self.evaluate(tool, args) is Permission.Allow

    def needs_approval(self, tool: str | Tool, args: JSON = None) -> bool:
        return self.evaluate(tool, args) is Permission.Ask

    # -- extensions ----------------------------------------------------------------------------
    @property
    def session_allows(self) -> frozenset[str]:
        """What the person allowed for this session: tool names, rules and exact calls, in
        the form :meth:`record_session_allow` takes."""
        return frozenset(
            {
                *self._session_allows,
                *(r.pattern for r in self._session_rules),
                *(f"{EXACT_PREFIX}{n}({s})" for n, s in self._session_exact),
            }
        )

    def clear_session(self) -> None:
        self._session_allows.clear()
        self._session_rules.clear()
        self._session_exact.clear()

    def _session_allowed(self, name: str, args: JSON) -> str | None:
        """Why a session answer allows this call, or ``None``."""
        if name in self._session_allows:
            return f"`{name}` was allowed for this session"
        key, subject = _subject(name, args)
        if subject is not None and (name, subject) in self._session_exact:
            return f"this exact `{name}` call was allowed for this session"
        for rule in self._session_rules:
            if rule.matches(name, args, workspace=self.workspace):
                return f"`{rule.pattern}` was allowed for this session"
        return None

    def set_mode(self, mode: PermissionMode | str | None) -> None:
        self.mode = PermissionMode.parse(mode) if mode is not None else None

    def decide(self, tool: str | Tool, args: JSON = None) -> PermissionDecision:
        """Like :meth:`evaluate`, with the reason and the rule that decided."""
        name, read_only = _describe(tool)
        if self.mode is None:
            return self._decide_book(name, args)
        open_world = not isinstance(tool, str) and traits_of(tool).open_world
        return self._decide_mode(name, args, read_only, self.mode, open_world=open_world)

    def _first_rule(
        self, name: str, args: JSON, *, skip_deny: bool = False
    ) -> PermissionRule | None:
        for rule in self.rules:
            if skip_deny and rule.permission is Permission.Deny:
                continue
            if rule.matches(name, args, workspace=self.workspace):
                return rule
        return None

    def _decide_book(self, name: str, args: JSON) -> PermissionDecision:
        allowed = self._session_allowed(name, args)
        if allowed is not None:
            return PermissionDecision(Permission.Allow, allowed)
        rule = self._first_rule(name, args)
        if rule is not None:
            return PermissionDecision(rule.permission, _rule_reason(rule), rule)
        return PermissionDecision(self.default, f"default permission for `{name}`")

    def _decide_mode(
        self,
        name: str,
        args: JSON,
        read_only: bool,
        mode: PermissionMode,
        *,
        open_world: bool = False,
    ) -> PermissionDecision:
        for rule in self.rules:
            if rule.permission is Permission.Deny and rule.matches(
                name, args, workspace=self.workspace
            ):
                return PermissionDecision(Permission.Deny, _rule_reason(rule), rule)
        if mode is PermissionMode.PLAN and not read_only:
            return PermissionDecision(
                Permission.Deny, f"`{name}` is not read-only and plan mode allows only reads"
            )
        if not read_only and touches_control_file(name, args, self.workspace):
            return PermissionDecision(
                Permission.Ask,
                f"`{name}` {CONTROL_FILE_REASON}: it is asked every time, in every mode",
                explicit=True,
            )
        if read_only and _names_secret_file(args, self.workspace):
            return PermissionDecision(
                Permission.Ask,
                f"`{name}` opens a secret file (keys, credentials): it is asked every time",
                explicit=True,
            )
        if mode is PermissionMode.BYPASS:
            return PermissionDecision(Permission.Allow, "bypass mode allows every tool")
        allowed = self._session_allowed(name, args)
        if allowed is not None:
            return PermissionDecision(Permission.Allow, allowed)
        matched = self._first_rule(name, args, skip_deny=True)
        if matched is not None:
            return PermissionDecision(matched.permission, _rule_reason(matched), matched)
        if read_only and open_world:
            # what it sends out is the question, not what it changes: asked also while planning
            return PermissionDecision(
                Permission.Ask,
                f"`{name}` reaches the network (a request can carry what the model has read), "
                f"so {mode.value} mode asks first",
            )
        if read_only:
            return PermissionDecision(Permission.Allow, f"`{name}` is read-only")
        if mode is PermissionMode.ACCEPT_EDITS and name in self.edit_tools:
            return PermissionDecision(Permission.Allow, "accept_edits mode allows file edits")
        return PermissionDecision(
            Permission.Ask, f"`{name}` can change things, so {mode.value} mode asks first"
        )

    def __repr__(self) -> str:
        mode = f", mode={self.mode.value!r}" if self.mode is not None else ""
        return f"PermissionEngine(rules={self.rules!r}, default={self.default.name}{mode})"


# Arguments that name a file a tool writes, and those that hold code or a command line.
_PATH_ARGS = ("path", "file_path", "notebook_path", "target", "destination")
_CODE_ARGS = ("command", "code", "script")


def touches_control_file(name: str, args: JSON, workspace: str | None = None) -> bool:
    """Does a (not read-only) call write a control file (:mod:`clawnb.control.trust`): a path argument
    that is one, or a command/code argument that names one?"""
    if not isinstance(args, dict):
        return False
    for key in _PATH_ARGS:
        value = args.get(key)
        if isinstance(value, str) and value and is_control_file(value, workspace):
            return True
    for key in _CODE_ARGS:
        value = args.get(key)
        if isinstance(value, str) and command_mentions_control_file(value, workspace=workspace):
            return True
    return False


def _names_secret_file(args: JSON, workspace: str | None) -> bool:
    """Does a call name a secret file, as written or where a symlink leads?"""
    if not isinstance(args, dict):
        return False
    for key in _PATH_ARGS:
        value = args.get(key)
        if not isinstance(value, str) or not value or "\x00" in value:
            continue
        if is_secret_file(value):
            return True
        joined = os.path.join(workspace or os.getcwd(), value)
        if os.path.islink(joined) and is_secret_file(os.path.realpath(joined)):
            return True
    return False


def always_offers(name: str, args: JSON, workspace: str | None = None) -> list[dict[str, object]]:
    """The scoped "always" answers a question about this call may offer, narrowest first:
    ``{"rule": PATTERN, "label": TEXT, "saveable": bool}``. ``rule`` is what
    :meth:`PermissionEngine.record_session_allow` takes (and, when ``saveable``, what is
    saved as an allow rule).

    * bash: the command's prefix — two words for :data:`TWO_WORD_TOOLS` (``git status -s`` →
      ``bash(git status*)``), one otherwise (``pytest -q`` → ``bash(pytest*)``); a line with
      more than one command, a substitution, a redirection into a file, a glob character in
      its prefix or a command in :data:`RUNS_ANYTHING` gets "this exact command", for this
      session only;
    * write/edit/multi_edit/notebook_edit: the top folder under the workspace
      (``src/a/b.py`` → ``edit(src/**)``), or the file itself at the top;
    * MCP tools (``mcp__server__tool``): the tool, or every tool of that server;
    * any other tool: the tool.

    Whether a question offers them at all is the gate's decision (never for control files,
    secret files, reads outside the workspace or tools that always ask)."""
    if name == "bash":
        command = args.get("command") if isinstance(args, dict) else None
        if not isinstance(command, str) or not command.strip():
            return []
        return [_bash_offer(command)]
    if name in EDIT_TOOLS:
        key, path = _subject(name, args)
        if path is None or key not in _PATH_KEYS:
            return []
        forms = _path_forms(path, workspace)
        top = forms[0]
        if os.path.isabs(top) or top in (".", "..") or top.startswith("../"):
            return []
        parts = top.split("/")
        pattern = f"{parts[0]}/**" if len(parts) > 1 else parts[0]
        if any(c in pattern.removesuffix("/**") for c in "*?[]()"):
            return []
        return [{"rule": f"{name}({pattern})", "label": f"{name} {pattern}", "saveable": True}]
    if name.startswith("mcp__") and name.count("__") >= 2:
        server = name.split("__")[1]
        return [
            {"rule": name, "label": name, "saveable": True},
            {"rule": f"mcp__{server}__*", "label": f"every {server} tool", "saveable": True},
        ]
    return [{"rule": name, "label": f"every {name} call", "saveable": True}]


def _bash_offer(command: str) -> dict[str, object]:
    line = " ".join(command.split())
    exact = {
        "rule": f"{EXACT_PREFIX}bash({command})",
        "label": "this exact command",
        "saveable": False,
    }
    commands, substitutes = split_shell_commands(command)
    if substitutes or len(commands) != 1 or writes_to_file(command) or "\n" in command.strip():
        return exact
    try:
        import shlex

        words = shlex.split(line)
    except ValueError:
        return exact
    if not words or words[0] in RUNS_ANYTHING or "=" in words[0] or "/" in words[0]:
        return exact  # a prefix of a command that runs anything is every command
    prefix = words[:1]
    if words[0] in TWO_WORD_TOOLS and len(words) > 1 and not words[1].startswith("-"):
        prefix = words[:2]
    text = " ".join(prefix)
    if any(c in text for c in "*?[]()'\"$`\\") or not line.startswith(text):
        return exact
    return {"rule": f"bash({text}*)", "label": f"{text}*", "saveable": True}


def _rule_reason(rule: PermissionRule) -> str:
    return f"rule `{rule.pattern}` says {rule.permission.value}"


def _describe(tool: str | Tool) -> tuple[str, bool]:
    """(name, read_only) of a tool name or tool object; unknown means not read-only."""
    if isinstance(tool, str):
        return tool, False
    definition = getattr(tool, "definition", None)
    name = getattr(definition, "name", None)
    if not isinstance(name, str):
        raise TypeError(f"expected a tool name or a tool with a definition, got {tool!r}")
    return name, traits_of(tool).read_only
