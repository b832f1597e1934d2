"""MCP server entries from config: ``[mcp_servers.NAME]`` tables, the book's ``[[mcp_servers]]``
array, and a project's ``.mcp.json`` (``mcpServers``, as Claude Code reads it).

Nothing here starts a process or imports the SDK: it turns raw TOML/JSON dicts into
:class:`McpServer` entries, with **one readable line per bad entry** naming the file and the
key (a broken entry is skipped; the others still start)::

    parsed = servers_from_toml(tomllib.loads(text), source="~/.config/clawnb/config.toml")
    parsed.servers   # (McpServer(name='time', …), …)
    parsed.problems  # ("….toml: mcp_servers.git.startup_timeout: must be greater than 0 …",)

A stdio entry has ``command``, ``args``, ``env``, ``cwd`` (and ``sandbox = true`` to run it in
the bubblewrap sandbox); an HTTP entry has ``url``, ``headers`` and ``bearer_token_env_var``
(``type = "sse"`` for the older SSE transport). Strings may use ``${VAR}`` and
``${VAR:-default}``; they are expanded when the server starts (:func:`expand`), so a key in the
environment never sits in a config object, and a missing variable is that server's start
failure, not a broken config.

Trust: a project's servers (``.claw/config.toml``, ``.mcp.json``) run commands, so
:func:`merge_servers` keeps them only for a trusted workspace. The flags that make clawnb
believe a server — ``read_only`` and ``trust_annotations`` — are honoured only from the user's
own config; in a project file they are dropped with a note.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "DEFAULT_BIND_OVER_CHARS",
    "DEFAULT_MAX_RESULT_CHARS",
    "DEFAULT_STARTUP_TIMEOUT",
    "DEFAULT_TOOL_TIMEOUT",
    "McpServer",
    "ParsedServers",
    "expand",
    "load_mcp_json",
    "merge_servers",
    "servers_from_mcp_json",
    "servers_from_toml",
]

DEFAULT_STARTUP_TIMEOUT = 10.0
DEFAULT_TOOL_TIMEOUT = 60.0
# ~25k tokens at ~4 characters a token: more than that crowds the conversation out.
DEFAULT_MAX_RESULT_CHARS = 100_000
# A structured result over this many characters of JSON is bound to a kernel variable where
# a front end has a kernel (the notebook): the model reads a summary and the variable's name.
DEFAULT_BIND_OVER_CHARS = 20_000
# One JSON-RPC message from a stdio server. Far above anything a model can read (the result is
# cut to max_result_chars anyway), low enough that a runaway server cannot fill memory.
DEFAULT_MAX_MESSAGE_BYTES = 16_000_000

Transport = Literal["stdio", "http", "sse"]
Scope = Literal["user", "project"]

# A server's name is the middle of every tool name (mcp__NAME__TOOL) and of permission rules
# (mcp__git__*): letters, digits, '-' and '_', and never '__', which would make the split
# ambiguous.
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_TRUST_KEYS = ("read_only", "trust_annotations")
_STDIO_KEYS = ("command", "args", "env", "cwd", "sandbox")
_HTTP_KEYS = ("url", "headers", "bearer_token_env_var")
# Not TOML keys: the parser fills them in.
_INTERNAL_KEYS = ("source", "scope")


class McpServer(BaseModel):
    """One configured MCP server (see the module docstring for the keys).

    ``read_only`` marks tools the *user* says only read (``true`` for all, or a list of tool
    names/globs): those are offered in plan mode and run without asking where reads do.
    ``trust_annotations = true`` lets the server's own ``readOnlyHint`` do the same; without
    it the hints are shown, never obeyed. ``source`` and ``scope`` say where the entry came
    from (set by the parsers, not TOML keys).
    """

    # strict: a string where a number belongs is an error; forbid: a misspelt key is reported
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    name: str
    type: Transport = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    sandbox: bool = False
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    bearer_token_env_var: str | None = None
    enabled: bool = True
    enabled_tools: tuple[str, ...] | None = None
    disabled_tools: tuple[str, ...] = ()
    startup_timeout: float = Field(default=DEFAULT_STARTUP_TIMEOUT, gt=0, le=600)
    tool_timeout: float = Field(default=DEFAULT_TOOL_TIMEOUT, gt=0, le=86_400)
    max_result_chars: int = Field(default=DEFAULT_MAX_RESULT_CHARS, ge=1000)
    # in a notebook, structured results longer than this become a kernel variable (0: never)
    bind_over_chars: int = Field(default=DEFAULT_BIND_OVER_CHARS, ge=0)
    max_message_bytes: int = Field(default=DEFAULT_MAX_MESSAGE_BYTES, ge=64 * 1024)
    read_only: bool | tuple[str, ...] = False
    trust_annotations: bool = False
    source: str = ""
    scope: Scope = "user"

    @model_validator(mode="after")
    def _check(self) -> McpServer:
        if not _NAME.match(self.name) or "__" in self.name:
            raise ValueError(
                f"name {self.name!r}: use letters, digits, '-' and '_' (no '__'), "
                "at most 48 characters"
            )
        if self.type == "stdio":
            if not self.command:
                raise ValueError("a stdio server needs 'command' (or 'url' for an HTTP server)")
            wrong = [k for k in _HTTP_KEYS if getattr(self, k) not in (None, {})]
            if wrong:
                raise ValueError(f"'{wrong[0]}' is for HTTP servers; this one has 'command'")
        else:
            if not self.url:
                raise ValueError(f"a {self.type} server needs 'url'")
            if not self.url.startswith(("http://", "https://", "${")):
                raise ValueError(f"'url' must start with http:// or https:// (got {self.url!r})")
            wrong = [k for k in _STDIO_KEYS if getattr(self, k) not in (None, (), {}, False)]
            if wrong:
                raise ValueError(f"'{wrong[0]}' is for stdio servers; this one has 'url'")
        for text in self._strings():
            _check_placeholders(text)
        return self

    def _strings(self) -> list[str]:
        values = [self.command, self.cwd, self.url, *self.args]
        values += list(self.env.values()) + list(self.headers.values())
        return [v for v in values if v]

    def allows_tool(self, tool: str) -> bool:
        """Is ``tool`` (the server's own name for it) kept by ``enabled_tools`` /
        ``disabled_tools`` (exact names or globs)?"""
        from fnmatch import fnmatchcase

        if self.enabled_tools is not None and not any(
            fnmatchcase(tool, p) for p in self.enabled_tools
        ):
            return False
        return not any(fnmatchcase(tool, p) for p in self.disabled_tools)

    def marks_read_only(self, tool: str) -> bool:
        """Does the user's config say ``tool`` only reads?"""
        from fnmatch import fnmatchcase

        if isinstance(self.read_only, bool):
            return self.read_only
        return any(fnmatchcase(tool, p) for p in self.read_only)

    @property
    def where(self) -> str:
        """``"mcp_servers.time in ~/.config/clawnb/config.toml"`` — for messages."""
        table = "mcpServers" if self.source.endswith(".json") else "mcp_servers"
        return f"{table}.{self.name} in {self.source}" if self.source else self.name


@dataclass(frozen=True)
class ParsedServers:
    """The entries a file (or several) gave, and one line per problem found."""

    servers: tuple[McpServer, ...] = ()
    problems: tuple[str, ...] = field(default=())

    def __add__(self, other: ParsedServers) -> ParsedServers:
        return ParsedServers(self.servers + other.servers, self.problems + other.problems)

    def names(self) -> list[str]:
        return [s.name for s in self.servers]


# -- ${VAR} -----------------------------------------------------------------------------------


def _check_placeholders(text: str) -> None:
    rest = _VAR.sub("", text)
    if "${" in rest:
        bad = rest[rest.index("${") :][:40]
        raise ValueError(f"{bad!r} is not a valid ${{VAR}} or ${{VAR:-default}} placeholder")


def expand(text: str, environ: Mapping[str, str]) -> str:
    """``text`` with ``${VAR}`` / ``${VAR:-default}`` replaced from ``environ``; a ``KeyError``
    naming the variable when it is unset and has no default."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = environ.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise KeyError(name)
            return default
        return value

    return _VAR.sub(one, text)


# -- parsing ----------------------------------------------------------------------------------


def _error_lines(exc: ValidationError, prefix: str) -> list[str]:
    lines = []
    for err in exc.errors():
        loc = [str(part) for part in err["loc"] if not isinstance(part, int)]
        key = ".".join([prefix, *loc])
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown key"
        elif err["type"] == "value_error":
            message = message.removeprefix("Value error, ")
        else:
            got = repr(err.get("input"))
            message = f"{message} (got {got if len(got) <= 60 else got[:57] + '...'})"
        lines.append(f"{key}: {message}")
    return lines


def _entry(
    name: str, raw: Any, *, source: str, table: str, scope: Scope
) -> tuple[McpServer | None, list[str]]:
    """One entry: ``(server, notes)`` or ``(None, [the error line])``."""
    prefix = f"{table}.{name}"
    if not isinstance(raw, Mapping):
        return None, [f"{source}: {prefix}: expected a table (got {type(raw).__name__})"]
    data = dict(raw)
    notes: list[str] = []
    for key in _INTERNAL_KEYS:
        if key in data:
            return None, [f"{source}: {prefix}.{key}: unknown key"]
    if "name" in data and data["name"] != name:
        return None, [f"{source}: {prefix}.name: the table is named {name!r}, not {data['name']!r}"]
    data["name"] = name
    kind = data.get("type")
    if kind is None:
        data["type"] = "stdio" if "url" not in data else "http"
    elif kind == "streamable-http":
        data["type"] = "http"
    if scope == "project":
        for key in _TRUST_KEYS:
            if key in data:
                del data[key]
                notes.append(
                    f"{source}: {prefix}.{key} ignored: only your own config "
                    "(~/.config/clawnb/config.toml) can make clawnb trust a server"
                )
    data["source"] = source
    data["scope"] = scope
    for key in ("args", "enabled_tools", "disabled_tools", "read_only"):
        if isinstance(data.get(key), list):
            data[key] = tuple(data[key])  # TOML/JSON arrays; the model keeps tuples (frozen)
    try:
        return McpServer.model_validate(data), notes
    except ValidationError as exc:
        return None, [f"{source}: " + "; ".join(_error_lines(exc, prefix))]


def _parse(
    entries: Iterable[tuple[str, Any]], *, source: str, table: str, scope: Scope
) -> ParsedServers:
    servers: dict[str, McpServer] = {}
    problems: list[str] = []
    for name, raw in entries:
        if name in servers:
            problems.append(f"{source}: {table}.{name}: defined twice; the later one is used")
        server, notes = _entry(name, raw, source=source, table=table, scope=scope)
        problems += notes
        if server is not None:
            servers[name] = server
    return ParsedServers(tuple(servers.values()), tuple(problems))


def servers_from_toml(
    document: Mapping[str, Any], *, source: str, scope: Scope = "user"
) -> ParsedServers:
    """The servers of a parsed clawnb config file: ``[mcp_servers.NAME]`` tables or the
    ``[[mcp_servers]]`` array (each with a ``name``). No ``mcp_servers`` key: none."""
    value = document.get("mcp_servers")
    if value is None:
        return ParsedServers()
    if isinstance(value, Mapping):
        return _parse(value.items(), source=source, table="mcp_servers", scope=scope)
    if isinstance(value, list):
        entries: list[tuple[str, Any]] = []
        problems: list[str] = []
        for i, raw in enumerate(value):
            name = raw.get("name") if isinstance(raw, Mapping) else None
            if not isinstance(name, str) or not name:
                problems.append(f"{source}: mcp_servers[{i}]: needs a 'name' (a string)")
                continue
            entries.append((name, raw))
        parsed = _parse(entries, source=source, table="mcp_servers", scope=scope)
        return ParsedServers(parsed.servers, tuple(problems) + parsed.problems)
    return ParsedServers(
        problems=(f"{source}: mcp_servers: expected tables (got {type(value).__name__})",)
    )


def servers_from_mcp_json(document: Any, *, source: str) -> ParsedServers:
    """The servers of a parsed ``.mcp.json`` (``{"mcpServers": {NAME: {...}}}``); always
    project scope."""
    if not isinstance(document, Mapping):
        return ParsedServers(problems=(f"{source}: expected a JSON object",))
    value = document.get("mcpServers")
    if value is None:
        return ParsedServers()
    if not isinstance(value, Mapping):
        return ParsedServers(
            problems=(f"{source}: mcpServers: expected an object (got {type(value).__name__})",)
        )
    return _parse(value.items(), source=source, table="mcpServers", scope="project")


def load_mcp_json(path: str | Path) -> ParsedServers:
    """:func:`servers_from_mcp_json` of a file; a missing file is no servers, an unreadable or
    invalid one is one problem line."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ParsedServers()
    except (OSError, UnicodeDecodeError) as exc:
        return ParsedServers(problems=(f"{p}: cannot read: {exc}",))
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        return ParsedServers(problems=(f"{p}: invalid JSON: {exc}",))
    return servers_from_mcp_json(document, source=str(p))


def merge_servers(user: ParsedServers, *project: ParsedServers, trusted: bool) -> ParsedServers:
    """The servers to start: the user's, then each project layer's — only in a trusted
    workspace, since they run commands. A later entry with the same name replaces an
    earlier one (said in a note); disabled entries are kept (``enabled = false`` is shown as
    such, not started)."""
    servers: dict[str, McpServer] = {s.name: s for s in user.servers}
    problems = list(user.problems)
    for layer in project:
        problems += layer.problems
        if not layer.servers:
            continue
        if not trusted:
            names = ", ".join(layer.names())
            source = layer.servers[0].source
            problems.append(
                f"{source}: MCP servers not started ({names}): this workspace is not trusted "
                "and they run commands; trust it with `python -m clawnb trust`"
            )
            continue
        for server in layer.servers:
            if server.name in servers:
                problems.append(
                    f"{server.source}: {server.name} replaces the server of the same name "
                    f"in {servers[server.name].source}"
                )
            servers[server.name] = server
    return ParsedServers(tuple(servers.values()), tuple(problems))
