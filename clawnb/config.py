"""Layered settings (book ch17): defaults ← project file ← user file ← environment.

Where settings come from, lowest precedence first:

1. :class:`Config` defaults (below);
2. the project file ``<project>/.claw/config.toml`` (commit it with the repository);
3. the user file ``$XDG_CONFIG_HOME/clawnb/config.toml`` (``~/.config/clawnb/config.toml``);
4. the environment: ``CLAWNB_MODEL``, ``CLAWNB_BASE_URL``, ``CLAWNB_MAX_CONTEXT_TOKENS`` only
   (``CLAWNB_MAX_TOKENS``, its old name, still works with a warning).
   Safety settings (protected files, blocked commands, permissions, hooks) are never read from
   the environment: they belong in files someone wrote on purpose.

Each file is parsed into a :class:`ConfigOverlay`, whose fields are all optional. Merging has
two rules. **The safety lists add up** (:data:`ADDITIVE_LISTS`: protected patterns, blocked
commands, allow/ask/deny rules, hooks): every layer's entries apply, in layer order, without
duplicates, and where each came from is kept (:meth:`Config.rule_entries`, ``/rules``); only
the user file may take something away, by name (``blocked_commands_replace``,
``[permissions] override_project_deny``). **Any other field the file sets replaces the value
below it** — also when it is set to the default. "Set" means "present in the file", which
pydantic records in ``model_fields_set``; the value is never compared with the default.

A broken file is an error, not a silent fallback: invalid TOML, an unknown key or a wrong type
raise :class:`~clawnb.errors.ConfigError` naming the file, the key and the problem. A missing
file is simply skipped.

Every key is documented in ``docs/config.md``.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import re
import tomllib
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from .control.modes import PermissionMode
from .control.trust import TrustStore, project_config_path, user_config_dir
from .errors import ConfigError
from .instructions import DEFAULT_INSTRUCTION_FILES
from .safety import RECOMMENDED_BLOCKED_COMMANDS

__all__ = [
    "ADDITIVE_LISTS",
    "DEFAULT_BLOCKED_COMMANDS",
    "DEFAULT_INSTRUCTION_FILES",
    "DEFAULT_PROTECTED_PATTERNS",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "ENV_VARS",
    "GENERATION_FLAGS",
    "Config",
    "ConfigLoader",
    "ConfigOverlay",
    "HooksConfig",
    "GenerationOptions",
    "LimitsConfig",
    "McpServerConfig",
    "ModelPricing",
    "PermissionMode",
    "PermissionsConfig",
    "RuleEntry",
    "RuleOrigin",
    "ShellHookConfig",
    "options_overlay",
    "parse_tool_choice",
    "project_config_path",
    "restrict_untrusted",
    "trust_workspace",
    "untrusted_project",
    "user_config_path",
]

DEFAULT_PROTECTED_PATTERNS = [".env", ".env.*", ".git/**"]
DEFAULT_BLOCKED_COMMANDS = ["rm -rf /", "sudo *", "curl * | bash", "curl * | sh"]

# The one PermissionMode (clawnb.control.modes); a TOML string is accepted for it.
Mode = Annotated[PermissionMode, Field(strict=False)]

DEFAULT_MAX_OUTPUT_TOKENS = 8192
"""The output cap when none is configured: long enough for a whole file in one ``write``,
short enough that a model stuck in a loop stops within minutes on a local machine."""

ServerKind = Literal[
    "auto", "openai", "llama.cpp", "llama-cpp-python", "ollama", "vllm", "lmstudio"
]


class _Strict(BaseModel):
    # strict: a string where a number belongs is an error, not a silent conversion;
    # forbid: a misspelt key is reported instead of being ignored.
    model_config = ConfigDict(strict=True, extra="forbid")


class McpServerConfig(_Strict):
    """An MCP server to start, in the book's ``[[mcp_servers]]`` form. The other keys an entry
    may have (``url``, ``headers``, ``enabled``, timeouts …) are kept as they are and checked,
    with the ``[mcp_servers.NAME]`` tables, by :mod:`clawnb.mcp.config` when a session starts
    its servers (one line per bad entry, naming the file and the key)."""

    model_config = ConfigDict(strict=True, extra="allow")

    name: str
    command: str | None = None  # a stdio server's; an HTTP one has a url instead
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)


def _server_tables(value: Any) -> Any:
    """``[mcp_servers.NAME]`` tables as the book's ``[[mcp_servers]]`` list (the name from the
    key), so both spellings are one list — and a wrong shape is reported at ``mcp_servers.N``."""
    if isinstance(value, dict):
        return [{"name": k, **v} if isinstance(v, dict) else v for k, v in value.items()]
    return value


class ShellHookConfig(_Strict):
    """One hook: a ``[[hooks.EVENT]]`` table (``[[hooks.pre_tool]]``, ``[[hooks.turn_end]]`` …).

    ``action`` (default ``"command"``) says what it does: ``command`` runs a shell command
    (sandboxed like bash), ``prompt`` leaves a reminder for the model, ``http`` POSTs the
    redacted event to ``url`` (a host the user config's ``[hooks] http_hosts`` lists),
    ``agent`` asks a read-only child session ``prompt`` (its first line ``allow`` or
    ``block: reason`` decides a pre_tool call). ``if`` is a condition on ``tool`` and
    ``args.KEY`` (:mod:`clawnb.control.hook_rules`), ``tool_pattern`` the older glob on the
    tool name; ``once`` runs it once a session; ``async`` runs it without waiting (never on
    pre_tool); ``timeout`` (seconds) or ``timeout_ms`` bound a run. See docs/hooks.md."""

    model_config = ConfigDict(strict=True, extra="forbid", populate_by_name=True)

    command: str | None = None
    action: Literal["command", "prompt", "http", "agent"] = "command"
    prompt: str | None = None
    url: str | None = None
    if_: str | None = Field(default=None, alias="if")
    tool_pattern: str | None = None
    once: bool = False
    async_: bool = Field(default=False, alias="async")
    timeout: float | None = Field(default=None, gt=0)
    timeout_ms: int = Field(default=5000, gt=0)

    @model_validator(mode="after")
    def _complete(self) -> ShellHookConfig:
        from .control.hook_rules import parse_condition

        needs = {"command": "command", "prompt": "prompt", "http": "url", "agent": "prompt"}
        key = needs[self.action]
        value = getattr(self, key)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f'action = {self.action!r} needs {key} = "..."')
        if self.action == "http":
            from urllib.parse import urlsplit

            parts = urlsplit(self.url or "")
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError(f"url {self.url!r} is not an http:// or https:// address")
        if self.if_ is not None:
            parse_condition(self.if_)
        return self

    @property
    def timeout_seconds(self) -> float:
        """The run's bound: ``timeout`` when given, else ``timeout_ms``."""
        return self.timeout if self.timeout is not None else self.timeout_ms / 1000


HookConfig = ShellHookConfig


class HooksConfig(_Strict):
    """``[hooks]``: one list per event (:data:`clawnb.control.hook_rules.HOOK_EVENTS`), and
    ``http_hosts``, the hosts the ``http`` action may POST to — read from the user config
    only (a project file cannot add a host)."""

    http_hosts: list[str] = Field(default_factory=list)
    session_start: list[ShellHookConfig] = Field(default_factory=list)
    session_end: list[ShellHookConfig] = Field(default_factory=list)
    turn_start: list[ShellHookConfig] = Field(default_factory=list)
    turn_end: list[ShellHookConfig] = Field(default_factory=list)
    pre_tool: list[ShellHookConfig] = Field(default_factory=list)
    post_tool: list[ShellHookConfig] = Field(default_factory=list)
    pre_send: list[ShellHookConfig] = Field(default_factory=list)
    post_receive: list[ShellHookConfig] = Field(default_factory=list)
    error: list[ShellHookConfig] = Field(default_factory=list)
    compact: list[ShellHookConfig] = Field(default_factory=list)
    permission_request: list[ShellHookConfig] = Field(default_factory=list)
    file_change: list[ShellHookConfig] = Field(default_factory=list)
    command_execute: list[ShellHookConfig] = Field(default_factory=list)
    subagent_start: list[ShellHookConfig] = Field(default_factory=list)
    subagent_stop: list[ShellHookConfig] = Field(default_factory=list)
    pre_cell: list[ShellHookConfig] = Field(default_factory=list)
    post_cell: list[ShellHookConfig] = Field(default_factory=list)
    cell_error: list[ShellHookConfig] = Field(default_factory=list)
    kernel_restart: list[ShellHookConfig] = Field(default_factory=list)

    @model_validator(mode="after")
    def _no_async_pre_tool(self) -> HooksConfig:
        for i, hook in enumerate(self.pre_tool):
            if hook.async_:
                raise ValueError(
                    f"hooks.pre_tool[{i}]: async = true is refused on pre_tool (a pre_tool hook "
                    "decides whether the call runs, so the call must wait for it)"
                )
        return self


_RULE_SHAPE = re.compile(r"^[^()\s]+(\(.*\))?$", re.DOTALL)


def _check_rule(rule: str) -> str:
    # A malformed rule would silently match nothing, and a deny rule that matches nothing
    # is a protection the user believes in but does not have.
    if not _RULE_SHAPE.match(rule.strip()):
        raise ValueError(
            f"not a valid rule {rule!r}: write a tool name or glob, optionally followed by "
            "a pattern in parentheses, e.g. 'bash(git *)' or 'write(src/**)'"
        )
    return rule


Rule = Annotated[str, AfterValidator(_check_rule)]


class PermissionsConfig(_Strict):
    """``[permissions]``: the mode and rule lists. A rule is a tool-name glob, optionally with an
    argument pattern: ``"read"``, ``"mcp__*"``, ``"bash(git *)"``, ``"write(src/**)"``. Deny rules
    win in every mode."""

    mode: Mode = PermissionMode.DEFAULT
    allow: list[Rule] = Field(default_factory=list)
    ask: list[Rule] = Field(default_factory=list)
    deny: list[Rule] = Field(default_factory=list)
    # The user file's way to take back a project's deny rule, by its exact text: the one
    # exception to "a deny at any layer holds" (shown by /rules; refused in a project file).
    override_project_deny: list[Rule] = Field(default_factory=list)


def _host_patterns(value: list[str]) -> list[str]:
    """``[sandbox] allowed_hosts``: each a host name or ``*.`` and one, lower-cased."""
    from .control.proxy import check_host_pattern

    return [check_host_pattern(host) for host in value]


class SandboxConfig(_Strict):
    """``[sandbox]``: the OS sandbox for bash calls and shell hooks (:mod:`clawnb.control.sandbox`).

    ``mode``: ``"auto"`` uses bubblewrap when it works here, ``"required"`` refuses to run
    bash and shell hooks without it, ``"off"`` never sandboxes. ``network``: ``"off"`` (no
    network inside) or ``"on"``. ``auto_allow``: sandboxed bash calls run without asking
    (deny and ask rules still apply). ``max_processes``, ``max_memory_mb`` (private memory per
    process), ``max_file_size_mb`` (any file a command writes): limits on every sandboxed
    command, ``0`` for none (the defaults are :mod:`clawnb.control.sandbox`'s).
    ``allowed_hosts`` (``["pypi.org", "*.github.com"]``): with ``network = "off"``, the hosts
    sandboxed commands reach through a filtering proxy (:mod:`clawnb.control.proxy`), and
    that hooks' ``http`` action may POST to — read from the user config only."""

    mode: Literal["auto", "required", "off"] = "auto"
    network: Literal["off", "on"] = "off"
    auto_allow: bool = False
    max_processes: int = Field(default=1024, ge=0)
    max_memory_mb: int = Field(default=8192, ge=0)
    max_file_size_mb: int = Field(default=4096, ge=0)
    allowed_hosts: Annotated[list[str], AfterValidator(_host_patterns)] = Field(
        default_factory=list
    )


class ModelPricing(_Strict):
    """US dollars per million tokens (``[pricing."model/name"] input = 3.0  output = 15.0``)."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class LimitsConfig(_Strict):
    """``[limits]``: how much one answer of the model's server may hold before clawnb stops
    reading it (:class:`~clawnb.errors.ReplyTooLarge`). ``max_reply_bytes``: one reply's
    text, reasoning and tool-call arguments (a JSON answer's body may be twice that, plus
    64 KiB); ``max_sse_line_bytes``: one line of a streamed answer. The defaults are
    :mod:`clawnb.providers.sse`'s. Only the user's file (or a trusted project's) sets them."""

    max_reply_bytes: int = Field(default=2 * 1024 * 1024, gt=0)
    max_sse_line_bytes: int = Field(default=1024 * 1024, gt=0)


ToolChoice = Literal["auto", "none", "required"] | dict[str, Any]


class GenerationOptions(_Strict):
    """How the model is asked: ``[model]`` in TOML (next to ``name``). Unset means "the
    server's default", except ``max_output_tokens`` (:data:`DEFAULT_MAX_OUTPUT_TOKENS`)."""

    max_output_tokens: int | None = Field(default=None, ge=0)
    temperature: float | None = Field(default=None, ge=0)
    tool_choice: ToolChoice | None = None
    extra_body: dict[str, Any] | None = None
    server: ServerKind | None = None
    # "lean": five tools with short schemas, for a small context window (clawnb.tools.lean)
    tools: Literal["standard", "lean"] | None = None


class ModelSettings(GenerationOptions):
    """``[model]``: generation options plus ``[model.overrides."<name or glob>"]`` tables
    that change them for matching model names (an exact name wins, else the longest glob)."""

    overrides: dict[str, GenerationOptions] = Field(default_factory=dict)


def _model_table(data: Any) -> Any:
    """TOML's ``[model]`` table → ``model`` (its ``name``) and ``generation`` (the rest).

    ``model = "name"`` keeps working; a file may instead write ``[model] name = "…"`` with the
    generation options beside it (TOML allows only one of the two per file).
    """
    if not isinstance(data, dict):
        return data
    if "generation" in data and not isinstance(data["generation"], BaseModel):
        # a file's key (code that rebuilds an overlay passes the parsed table through)
        raise ValueError("unknown key 'generation' (generation options go in [model])")
    table = data.get("model")
    if isinstance(table, dict):
        data = dict(data)
        options = dict(table)
        name = options.pop("name", None)
        if name is None:
            del data["model"]
        else:
            data["model"] = name
        data["generation"] = options
    return data


class Config(_Strict):
    """Every setting, fully resolved. ``Config()`` is the defaults."""

    model: str = "openrouter/free"
    base_url: str = "https://openrouter.ai/api/v1"
    max_context_tokens: int = Field(default=100_000, gt=0)
    preserve_recent: int = Field(default=6, ge=0)
    max_turns: int = Field(default=50, ge=0)
    allowed_directory: str | None = None
    # folders outside the workspace the file tools read and write like the workspace
    # (clawnb.control.dirs); only the user file sets them, and its layers add up
    additional_directories: list[str] = Field(default_factory=list)
    protected_patterns: list[str] = Field(default_factory=lambda: list(DEFAULT_PROTECTED_PATTERNS))
    # the recommended list (clawnb.safety), not the book's four: with no sandbox it is what
    # stops mkfs or a fork bomb; layers add to it, the user file may replace it
    blocked_commands: list[str] = Field(default_factory=lambda: list(RECOMMENDED_BLOCKED_COMMANDS))
    blocked_commands_replace: bool = False
    permissions: PermissionsConfig = Field(default_factory=PermissionsConfig)
    # [mcp_servers.NAME] tables or the book's [[mcp_servers]] array; each entry is checked
    # by clawnb.mcp.config when the session starts its servers (one line per bad entry)
    mcp_servers: Annotated[list[McpServerConfig], BeforeValidator(_server_tables)] = Field(
        default_factory=list
    )
    hooks: HooksConfig = Field(default_factory=HooksConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    instructions: str | None = None
    instruction_files: list[str] = Field(default_factory=lambda: list(DEFAULT_INSTRUCTION_FILES))
    pricing: dict[str, ModelPricing] = Field(default_factory=dict)
    # None: the user's data directory, one folder per workspace
    # (clawnb.session.log.sessions_root); a repository's config cannot set it until trusted
    sessions_dir: str | None = None
    generation: ModelSettings = Field(default_factory=ModelSettings)
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    # auto memory (clawnb.memory, docs/memory.md): "auto" is on for a real model in a trusted
    # workspace, off for scripted/replayed models and untrusted folders
    memory: Literal["auto", "on", "off"] = "auto"

    _model_table = model_validator(mode="before")(_model_table)

    # Set by ConfigLoader.load when an untrusted project file was cut down (not a TOML key).
    _trust_notice: str | None = PrivateAttr(default=None)
    # Where each entry of the lists that add up came from (list → entry key → layers); an
    # entry without a record is built in. And the project deny rules the user file overrode.
    _origins: dict[str, dict[str, tuple[RuleOrigin, ...]]] = PrivateAttr(default_factory=dict)
    _overridden: list[RuleEntry] = PrivateAttr(default_factory=list)

    @property
    def trust_notice(self) -> str | None:
        """One line naming the project keys ignored because the folder is not trusted."""
        return self._trust_notice

    @classmethod
    def from_toml(cls, text: str, source: str = "<string>") -> Config:
        """Parse a whole config from TOML text; missing keys take their defaults."""
        return _validate(cls, _parse_toml(text, source), source)

    def merge(self, overlay: ConfigOverlay) -> Config:
        """A copy with ``overlay``'s layer on top.

        The safety lists **add up** (:data:`ADDITIVE_LISTS`: ``protected_patterns``,
        ``blocked_commands``, ``[permissions]`` ``allow``/``ask``/``deny`` and every
        ``[[hooks.*]]`` list): the layer's entries are appended after those below, in order,
        without duplicates, and where each came from is recorded (:meth:`rule_entries`).
        ``blocked_commands_replace = true`` drops the built-in blocklist first; a user
        layer's ``[permissions] override_project_deny`` removes those project deny rules.
        Everything else the layer sets replaces the value below it; tables merge key by key
        and ``[pricing]`` per model.
        """
        return _merge_layer(self, overlay)

    def rule_entries(self) -> list[RuleEntry]:
        """Every entry of the lists that add up, in effect or overridden, with where it came
        from — what ``/rules`` and ``%claw rules`` show. In list order: deny, ask, allow,
        protected patterns, blocked commands, hooks; overridden deny rules last."""
        entries: list[RuleEntry] = []
        for name in _additive_names(self):
            for entry in _get_path(self, name):
                key = _entry_key(entry)
                origins = self._origins.get(name, {}).get(key, ())
                entries.append(RuleEntry(name, _entry_text(entry), tuple(str(o) for o in origins)))
        return entries + list(self._overridden)

    def pricing_for(self, model: str | None = None) -> ModelPricing | None:
        """Price of ``model`` (default: this config's model): an exact key, else the longest
        glob-style key that matches (``"anthropic/*"``), else ``None`` (unknown)."""
        return _lookup(self.pricing, model if model is not None else self.model)

    def generation_for(self, model: str | None = None) -> GenerationOptions:
        """The generation options for ``model`` (default: this config's model): ``[model]``
        with the fields of its best matching ``[model.overrides."…"]`` table on top."""
        base = GenerationOptions.model_validate(
            self.generation.model_dump(exclude={"overrides"}, exclude_unset=False)
        )
        override = _lookup(self.generation.overrides, model if model is not None else self.model)
        return base if override is None else _merge_model(base, override)


_V = TypeVar("_V")


def _lookup(table: dict[str, _V], name: str) -> _V | None:
    """An exact key of ``table``, else the longest glob key matching ``name``, else None."""
    if name in table:
        return table[name]
    matches = [k for k in table if fnmatch.fnmatchcase(name, k)]
    return table[max(matches, key=len)] if matches else None


_Model = TypeVar("_Model", bound=BaseModel)


def _merge_model(base: _Model, overlay: BaseModel) -> _Model:
    updates: dict[str, Any] = {}
    for name in overlay.model_fields_set:
        value = getattr(overlay, name)
        current = getattr(base, name, None)
        if isinstance(value, BaseModel) and isinstance(current, BaseModel):
            value = _merge_model(current, value)
        elif isinstance(value, dict) and isinstance(current, dict):
            value = {**current, **value}
        updates[name] = value
    return base.model_copy(update=updates, deep=True)


class ConfigOverlay(_Strict):
    """One layer: every field optional; only the fields a file mentions are "set"."""

    model: str | None = None
    base_url: str | None = None
    max_context_tokens: int | None = Field(default=None, gt=0)
    preserve_recent: int | None = Field(default=None, ge=0)
    max_turns: int | None = Field(default=None, ge=0)
    allowed_directory: str | None = None
    additional_directories: list[str] | None = None
    protected_patterns: list[str] | None = None
    blocked_commands: list[str] | None = None
    blocked_commands_replace: bool | None = None
    permissions: PermissionsConfig | None = None
    mcp_servers: Annotated[list[McpServerConfig] | None, BeforeValidator(_server_tables)] = None
    hooks: HooksConfig | None = None
    sandbox: SandboxConfig | None = None
    instructions: str | None = None
    instruction_files: list[str] | None = None
    pricing: dict[str, ModelPricing] | None = None
    sessions_dir: str | None = None
    generation: ModelSettings | None = None
    limits: LimitsConfig | None = None
    memory: Literal["auto", "on", "off"] | None = None

    _model_table = model_validator(mode="before")(_model_table)

    # Which layer this is (project, user, env, options …) and its file: recorded by
    # Config.merge for every entry of the lists that add up.
    _origin: RuleOrigin | None = PrivateAttr(default=None)

    @classmethod
    def from_toml(cls, text: str, source: str = "<string>") -> ConfigOverlay:
        overlay = _validate(cls, _parse_toml(text, source), source)
        overlay._origin = RuleOrigin("file", source)
        return overlay

    def as_layer(self, layer: str, where: str | None = None) -> ConfigOverlay:
        """This overlay, named as ``layer`` (``"project"``, ``"user"``, ``"env"``,
        ``"options"``) from ``where`` (its file, or the front end that made it)."""
        if where is None and self._origin is not None:
            where = self._origin.where
        self._origin = RuleOrigin(layer, where)
        return self


@dataclass(frozen=True)
class RuleOrigin:
    """The layer a rule came from: ``project /repo/.claw/config.toml``, ``user …``, ``env``."""

    layer: str
    where: str | None = None

    def __str__(self) -> str:
        return f"{self.layer} {self.where}" if self.where else self.layer


@dataclass(frozen=True)
class RuleEntry:
    """One entry of a list that adds up, as ``/rules`` shows it: the list
    (``permissions.deny``, ``protected_patterns``, ``blocked_commands``, ``hooks.pre_tool``),
    the entry, the layers that set it (empty: built in) and, for a project deny rule the user
    file took back, the override that did (then it is not in effect)."""

    list: str
    text: str
    origins: tuple[str, ...] = ()
    overridden_by: str | None = None


ADDITIVE_LISTS = (
    "permissions.deny",
    "permissions.ask",
    "permissions.allow",
    "protected_patterns",
    "blocked_commands",
    "hooks",
)
"""The lists every layer adds to (``hooks`` stands for each of its lists)."""


def _additive_names(model: BaseModel) -> list[str]:
    names: list[str] = []
    for name in ADDITIVE_LISTS:
        if name != "hooks":
            names.append(name)
            continue
        hooks = getattr(model, "hooks", None)
        if isinstance(hooks, BaseModel):
            names += [
                f"hooks.{field}"
                for field in type(hooks).model_fields
                if isinstance(getattr(hooks, field), list) and field != "http_hosts"
            ]
    return names


def _get_path(model: Any, name: str) -> Any:
    for part in name.split("."):
        if model is None:
            return None
        model = getattr(model, part, None)
    return model


def _entry_key(entry: Any) -> str:
    return entry.model_dump_json() if isinstance(entry, BaseModel) else str(entry)


def _entry_text(entry: Any) -> str:
    if isinstance(entry, BaseModel):
        data = entry.model_dump(exclude_defaults=True, by_alias=True)
        command = data.pop("command", None)
        rest = " ".join(f"{k}={v!r}" for k, v in data.items())
        return " ".join(str(p) for p in (command, rest) if p)
    return str(entry)


def _merge_layer(base: Config, overlay: ConfigOverlay) -> Config:
    """:meth:`Config.merge`: the plain merge, then the lists that add up (see there)."""
    merged = _merge_model(base, overlay)
    origin = overlay._origin or RuleOrigin("options")
    if origin.layer != "user" and _is_set(overlay, "hooks.http_hosts"):
        # where the http action may POST is the person's own choice: no other layer names it
        merged.hooks.http_hosts = list(base.hooks.http_hosts)
        _announce(
            f"clawnb: [hooks] http_hosts in {origin} is ignored; only the user config lists "
            "the hosts hooks may POST to"
        )
    if origin.layer != "user" and _is_set(overlay, "sandbox.allowed_hosts"):
        # the hosts sandboxed commands may reach: the person's own choice, as http_hosts
        merged.sandbox.allowed_hosts = list(base.sandbox.allowed_hosts)
        _announce(
            f"clawnb: [sandbox] allowed_hosts in {origin} is ignored; only the user config "
            "lists the hosts the sandbox may reach"
        )
    origins = {name: dict(table) for name, table in base._origins.items()}
    overridden = list(base._overridden)
    replace = "blocked_commands_replace" in overlay.model_fields_set and bool(
        overlay.blocked_commands_replace
    )
    for name in _additive_names(merged):
        below = list(_get_path(base, name) or [])
        table = origins.get(name, {})
        if name == "blocked_commands" and replace:
            # the built-in list goes; what a layer listed (a project's additions) stays
            below = [e for e in below if table.get(_entry_key(e))]
        added = _get_path(overlay, name)
        if added is None or not _is_set(overlay, name):
            added = []
        combined = list(below)
        for entry in added:
            if entry not in combined:
                combined.append(entry)
            key = _entry_key(entry)
            if origin not in table.get(key, ()):
                table[key] = (*table.get(key, ()), origin)
        if table:
            origins[name] = table
        _set_path(merged, name, combined)
    permissions = overlay.permissions
    if (
        origin.layer == "user"
        and permissions is not None
        and "override_project_deny" in permissions.model_fields_set
    ):
        deny = list(merged.permissions.deny)
        table = origins.get("permissions.deny", {})
        for rule in permissions.override_project_deny:
            sources = table.get(rule, ())
            if rule in deny and sources and all(o.layer == "project" for o in sources):
                deny.remove(rule)
                del table[rule]
                shown = tuple(str(o) for o in sources)
                overridden.append(RuleEntry("permissions.deny", rule, shown, str(origin)))
            elif not any(e.text == rule for e in overridden):
                # named, but no project rule has that text: shown, so a typo is noticed
                overridden.append(RuleEntry("permissions.deny", rule, (), str(origin)))
        merged.permissions.deny = deny
    if "additional_directories" in overlay.model_fields_set:
        # folders the tools may write outside the workspace: the person's own choice, so
        # only the user file adds them (a repository must not grant itself writes to ~)
        added = list(base.additional_directories)
        if origin.layer == "user":
            added += [d for d in overlay.additional_directories or [] if d not in added]
        else:
            _announce(
                f"clawnb: additional_directories in {origin} is ignored; only the user config "
                "(or /add-dir DIR, %claw add-dir DIR) adds folders outside the workspace"
            )
        merged.additional_directories = added
    merged._origins = origins
    merged._overridden = overridden
    return merged


def _is_set(overlay: BaseModel, name: str) -> bool:
    """Whether ``overlay`` mentions the dotted key ``name`` (every part of it)."""
    model: Any = overlay
    for part in name.split("."):
        if not isinstance(model, BaseModel) or part not in model.model_fields_set:
            return False
        model = getattr(model, part)
    return True


def _set_path(model: Any, name: str, value: Any) -> None:
    *parents, last = name.split(".")
    for part in parents:
        model = getattr(model, part)
    setattr(model, last, value)


# What an untrusted project file may set: only what makes the agent stricter. Everything that
# widens power or routes secrets (an endpoint that would receive the key, hooks that run
# commands, allow rules, permissive modes, MCP servers, other files fed into the prompt, a
# session directory outside the project) needs the user's trust first.
# What an untrusted project file may set: an allow-list, so a key added later (a new way to
# widen power) is ignored until someone decides it only restricts. Everything else — an
# endpoint that would receive the key, hooks that run commands, MCP servers, other files fed
# into the prompt, a session directory elsewhere, a wider directory — needs the user's trust.
_UNTRUSTED_KEPT = frozenset(
    {
        "model",
        "instructions",
        "pricing",
        "preserve_recent",
        "generation",
        "max_turns",
        "max_context_tokens",
        "protected_patterns",
        "blocked_commands",
        "permissions",
        "sandbox",
    }
)
_STRICT_MODES = ("default", "plan")
# The [sandbox] values no looser than the defaults.
_STRICT_SANDBOX = {"mode": ("auto", "required"), "network": ("off",), "auto_allow": (False,)}
# [sandbox] limits: an untrusted project may lower them (never to 0, which means "none").
_SANDBOX_LIMITS = ("max_processes", "max_memory_mb", "max_file_size_mb")


def restrict_untrusted(overlay: ConfigOverlay, base: Config) -> tuple[ConfigOverlay, list[str]]:
    """The part of an untrusted project layer that only restricts, and the keys left out.

    Kept: deny and ask rules, ``mode = "default"|"plan"``, limits not above ``base``'s
    (``max_turns``, ``max_context_tokens``), extra protected patterns and blocked commands
    (added to ``base``'s, never replacing them), a stricter ``[sandbox]`` (``mode =
    "required"``, ``network = "off"``, ``auto_allow = false``), and harmless keys (``model``,
    ``instructions``, ``pricing``, ``[model]`` options, ``preserve_recent``). Ignored: every
    other key — ``base_url``, hooks, MCP servers, ``allowed_directory``, ``instruction_files``,
    ``sessions_dir`` — and allow rules, ``mode = "accept_edits"|"bypass"``, a looser sandbox,
    higher limits and a ``scripted:``/``replay:`` model (a file in the repository speaking as
    the model).
    """
    fields = overlay.model_fields_set
    data: dict[str, Any] = {}
    ignored: list[str] = [
        name
        for name in type(overlay).model_fields
        if name in fields and name not in _UNTRUSTED_KEPT
    ]
    for name in type(overlay).model_fields:
        if name not in fields or name not in _UNTRUSTED_KEPT:
            continue
        value = getattr(overlay, name)
        if (
            name == "model"
            and isinstance(value, str)
            and value.startswith(("scripted:", "replay:"))
        ):
            # a script in the repository would speak as the model the user chose
            ignored.append(f"model = {value!r}")
            continue
        if name in ("max_turns", "max_context_tokens"):
            if value is not None and value > getattr(base, name):
                ignored.append(name)
                continue
        elif name in ("protected_patterns", "blocked_commands"):
            pass  # kept as they are: Config.merge adds them to the lists below
        elif name == "sandbox" and value is not None:
            strict: dict[str, Any] = {}
            for key in value.model_fields_set:
                setting = getattr(value, key)
                if key in _SANDBOX_LIMITS:
                    current = getattr(base.sandbox, key)
                    if 0 < setting and (current == 0 or setting <= current):
                        strict[key] = setting
                    else:
                        ignored.append(f"sandbox.{key} = {setting!r}")
                elif setting in _STRICT_SANDBOX.get(key, ()):
                    strict[key] = setting
                else:
                    ignored.append(f"sandbox.{key} = {setting!r}")
            if not strict:
                continue
            value = type(value).model_validate(strict)
        elif name == "permissions" and value is not None:
            kept: dict[str, Any] = {}
            for key in value.model_fields_set:
                if key == "allow":
                    if value.allow:
                        ignored.append("permissions.allow")
                elif key == "mode":
                    if value.mode in _STRICT_MODES:
                        kept["mode"] = value.mode
                    else:
                        ignored.append(f"permissions.mode = {str(value.mode)!r}")
                else:
                    kept[key] = getattr(value, key)
            if not kept:
                continue
            value = PermissionsConfig.model_validate(kept)
        data[name] = value
    return ConfigOverlay.model_validate(data), ignored


_announced: set[str] = set()


def _announce(notice: str) -> None:
    # One line per process and file content: the front ends load the config for every turn
    # or cell, and a warning repeated each time would be noise nobody reads.
    if notice not in _announced:
        _announced.add(notice)
        logging.getLogger("clawnb.control.trust").warning("%s", notice)


def untrusted_project(
    project_dir: str | os.PathLike[str] | None = None,
    *,
    config_home: str | os.PathLike[str] | None = None,
) -> tuple[Path, list[str]] | None:
    """``(config file, keys that would be ignored)`` when the project's config file widens
    something and its folder is not trusted; ``None`` otherwise (for the chat's question)."""
    project_file = project_config_path(project_dir)
    overlay = _project_overlay(project_file)
    if overlay is None:
        return None
    if TrustStore(config_home=config_home).is_trusted(project_file.parent.parent, project_file):
        return None
    ignored = restrict_untrusted(overlay, Config())[1]
    return (project_file, ignored) if ignored else None


def trust_workspace(
    directory: str | os.PathLike[str] | None = None,
    *,
    revoke: bool = False,
    config_home: str | os.PathLike[str] | None = None,
) -> str:
    """Trust (or stop trusting) the project that ``directory`` belongs to, with its
    ``.claw/config.toml`` as it is now; returns a line saying what was done. Used by
    ``python -m clawnb trust``, ``%claw trust`` and the chat's question."""
    project_file = project_config_path(directory)
    folder = project_file.parent.parent
    store = TrustStore(config_home=config_home)
    if revoke:
        done = store.revoke(folder)
        return f"{'no longer trusted' if done else 'was not trusted'}: {folder}"
    if project_file.is_file():
        _project_overlay(project_file)  # a broken file is reported, not trusted
    fingerprint = store.trust(folder, project_file)
    what = f"{project_file} ({fingerprint[:19]}…)" if project_file.is_file() else "no config yet"
    return (
        f"trusted: {folder} — {what}. Its config may now set base_url, hooks, allow rules and "
        "any mode; a changed file must be trusted again."
    )


def untrusted_notice(config_file: Path, ignored: list[str]) -> str:
    """The one line a front end shows when an untrusted project file was cut down."""
    folder = config_file.parent.parent
    return (
        f"clawnb: {config_file} is not trusted, so it may only restrict; ignored: "
        f"{', '.join(ignored)}. If you trust this folder, run `python -m clawnb trust {folder}` "
        "(or `%claw trust` in a notebook)."
    )


GENERATION_FLAGS = ("server", "max_output_tokens", "temperature", "tool_choice", "extra_body")
"""The generation options a front end's flags carry, by :func:`options_overlay`'s keyword
names (``--base-url`` besides them is the endpoint, not a generation option)."""


def options_overlay(
    *,
    base_url: str | None = None,
    max_output_tokens: int | None = None,
    temperature: float | None = None,
    tool_choice: str | None = None,
    extra_body: str | dict[str, Any] | None = None,
    server: str | None = None,
    source: str = "options",
) -> ConfigOverlay:
    """The layer a front end's flags make (``chat --temperature 0.2``, ``%%claw --server
    vllm``): only what was given is set. ``tool_choice`` is ``auto``, ``none``, ``required``
    or a tool's name; ``extra_body`` a JSON object (text or dict). Bad values are a
    :class:`~clawnb.errors.ConfigError` naming the option."""
    data: dict[str, Any] = {}
    if base_url is not None:
        data["base_url"] = base_url
    generation: dict[str, Any] = {}
    if max_output_tokens is not None:
        generation["max_output_tokens"] = max_output_tokens
    if temperature is not None:
        generation["temperature"] = float(temperature)
    if tool_choice is not None:
        generation["tool_choice"] = parse_tool_choice(tool_choice)
    if extra_body is not None:
        if isinstance(extra_body, str):
            import json

            try:
                extra_body = json.loads(extra_body)
            except ValueError as exc:
                raise ConfigError(f"{source}: --extra-body is not valid JSON ({exc})") from None
        generation["extra_body"] = extra_body
    if server is not None:
        generation["server"] = server
    if generation:
        data["generation"] = generation
    as_file = dict(data)
    if "generation" in as_file:
        as_file["model"] = as_file.pop("generation")  # the TOML shape, for the same checks
    try:
        return _validate(ConfigOverlay, as_file, source).as_layer("options", source)
    except ConfigError as exc:
        # name the option, not a file key: "--max-output-tokens", not "model.max_output_tokens"
        message = re.sub(
            r"key '(?:model\.)?(\w+)[^']*'",
            lambda m: "--" + m.group(1).replace("_", "-"),
            str(exc),
        )
        raise ConfigError(message.replace("expected a table", "expected a JSON object")) from None


def parse_tool_choice(text: str) -> str | dict[str, Any]:
    """``auto`` / ``none`` / ``required``, or a tool name meaning "call this tool"."""
    text = text.strip()
    if text in ("auto", "none", "required"):
        return text
    return {"type": "function", "function": {"name": text}}


def _parse_toml(text: str, source: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML: {exc}") from None


def _validate(cls: type[_Model], data: dict[str, Any], source: str) -> _Model:
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = [str(part) for part in err["loc"]]
            if loc and loc[0] == "generation":
                loc[0] = "model"  # the TOML name of the table
            key = ".".join(loc) or "(top level)"
            message = err["msg"]
            if err["type"] == "extra_forbidden":
                message = "unknown key"
            elif err["type"] == "value_error":
                message = message.removeprefix("Value error, ")
            elif err["type"] in ("model_type", "dict_type"):
                # TOML words, not the names of our Python classes
                message = f"expected a table (got {_short(err.get('input'))})"
            else:
                message = f"{message} (got {_short(err.get('input'))})"
            problems.append(f"key '{key}': {message}")
        raise ConfigError(f"{source}: " + "; ".join(problems)) from None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


ENV_VARS = {
    "CLAWNB_MODEL": "model",
    "CLAWNB_BASE_URL": "base_url",
    "CLAWNB_MAX_CONTEXT_TOKENS": "max_context_tokens",
}
# Old names still read, with a warning: CLAWNB_MAX_TOKENS sounded like the output length.
DEPRECATED_ENV_VARS = {"CLAWNB_MAX_TOKENS": "CLAWNB_MAX_CONTEXT_TOKENS"}


# project_config_path (the project file that governs a folder) lives with the trust store,
# which is keyed by that file and is consulted by the control-file rule without this module;
# it is imported above and stays part of this module's API.


def user_config_path(
    config_home: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> Path:
    """``{config_home}/clawnb/config.toml``; config_home defaults to ``$XDG_CONFIG_HOME`` or
    ``~/.config``."""
    return user_config_dir(config_home, env) / "config.toml"


class ConfigLoader:
    """Builds a :class:`Config` from the layers. All methods are static: it holds no state."""

    @staticmethod
    def load_path(path: str | os.PathLike[str]) -> Config | None:
        """A whole config from one file; ``None`` if the file does not exist."""
        text = _read(Path(path))
        return None if text is None else Config.from_toml(text, str(path))

    @staticmethod
    def load_overlay(path: str | os.PathLike[str]) -> ConfigOverlay | None:
        """One layer from a file; ``None`` if the file does not exist."""
        text = _read(Path(path))
        return None if text is None else ConfigOverlay.from_toml(text, str(path))

    @staticmethod
    def env_overlay(env: Mapping[str, str] | None = None) -> ConfigOverlay:
        """The layer the ``CLAWNB_*`` variables make (empty values count as unset)."""
        env = os.environ if env is None else env
        data: dict[str, Any] = {}
        names = list(ENV_VARS.items())
        for old, new in DEPRECATED_ENV_VARS.items():
            if env.get(old, "").strip():
                ignored = " (ignored: " + new + " is set)" if env.get(new, "").strip() else ""
                warnings.warn(
                    f"{old} is deprecated: it sets the context budget, so it is now called "
                    f"{new}{ignored}",
                    FutureWarning,
                    stacklevel=2,
                )
                if not ignored:
                    names.insert(0, (old, ENV_VARS[new]))
        for var, key in names:
            raw = env.get(var)
            if raw is None or raw.strip() == "":
                continue
            if key == "max_context_tokens":
                try:
                    value: Any = int(raw.strip())
                except ValueError:
                    raise ConfigError(
                        f"environment variable {var}: expected a positive integer, got {raw!r}"
                    ) from None
                if value <= 0:
                    raise ConfigError(
                        f"environment variable {var}: expected a positive integer, got {raw!r}"
                    )
                data[key] = value
            else:
                data[key] = raw.strip()
        return ConfigOverlay.model_validate(data)

    @staticmethod
    def load(
        *,
        project_dir: str | os.PathLike[str] | None = None,
        config_home: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        trusted: bool | None = None,
    ) -> Config:
        """Defaults ← project ``.claw/config.toml`` ← user config ← environment.

        The project file counts whole only when its folder is trusted (``trusted=None`` asks
        the :class:`~clawnb.control.trust.TrustStore`); otherwise it may only restrict
        (:func:`restrict_untrusted`), and :attr:`Config.trust_notice` names what was ignored.

        ``project_dir`` defaults to the current directory; ``config_home`` to
        ``$XDG_CONFIG_HOME`` or ``~/.config``; ``env`` to ``os.environ``. Tests pass all three
        so that they never read the real home directory.
        """
        config = Config()
        notice = None
        project_file = project_config_path(project_dir)
        overlay = _project_overlay(project_file)
        if overlay is not None:
            if trusted is None:
                trusted = TrustStore(config_home=config_home).is_trusted(
                    project_file.parent.parent, project_file
                )
            if not trusted:
                overlay, ignored = restrict_untrusted(overlay, config)
                if ignored:
                    notice = untrusted_notice(project_file, ignored)
                    _announce(notice)
            config = config.merge(overlay.as_layer("project", str(project_file)))
        config = _merge_saved(config, "project", project_file.parent.parent, config_home)
        user_file = user_config_path(config_home, env)
        user = ConfigLoader.load_overlay(user_file)
        if user is not None:
            config = config.merge(user.as_layer("user", str(user_file)))
        config = _merge_saved(config, "user", project_file.parent.parent, config_home)
        config = config.merge(ConfigLoader.env_overlay(env).as_layer("env"))
        config._trust_notice = notice
        return config

    @staticmethod
    def sources(
        *,
        project_dir: str | os.PathLike[str] | None = None,
        config_home: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> list[str]:
        """Which layers exist (for ``/config`` displays): file paths and ``env:VAR`` names."""
        env_map = os.environ if env is None else env
        found = [
            str(p)
            for p in (project_config_path(project_dir), user_config_path(config_home, env_map))
            if p.is_file()
        ]
        known = [*ENV_VARS, *DEPRECATED_ENV_VARS]
        found += [f"env:{v}" for v in known if env_map.get(v, "").strip()]
        return found


# Keys only the user's own file may set: each takes away a protection, and a file that came
# with a repository must not be able to (trusted or not).
_USER_ONLY = {
    "blocked_commands_replace": "replace the built-in command blocklist (a project file may "
    "only add to it with blocked_commands)",
    "permissions.override_project_deny": "take back a project's deny rule",
}


def _merge_saved(
    config: Config, where: str, project: Path, config_home: str | os.PathLike[str] | None
) -> Config:
    """``config`` with the allow rules a person saved from an approval question ``where``
    (``project``: ``.claw/rules.local.toml``; ``user``: ``rules.toml`` in the user config
    directory) as a layer named ``saved`` (:mod:`clawnb.control.saved_rules`)."""
    from .control.saved_rules import SavedRulesError, read_saved

    try:
        path, rules, notice = read_saved(where, project, config_home=config_home)
    except SavedRulesError as exc:
        raise ConfigError(str(exc)) from None
    if notice:
        _announce(notice)
    if not rules:
        return config
    try:
        overlay = ConfigOverlay.model_validate({"permissions": {"allow": rules}})
    except ValidationError:
        raise ConfigError(f"{path}: key 'permissions.allow': not a valid rule") from None
    return config.merge(overlay.as_layer("saved", str(path)))


def _project_overlay(project_file: Path) -> ConfigOverlay | None:
    """The project file's layer; a user-only key there is a :class:`ConfigError`."""
    overlay = ConfigLoader.load_overlay(project_file)
    if overlay is None:
        return None
    for key, what in _USER_ONLY.items():
        if _is_set(overlay, key):
            raise ConfigError(
                f"{project_file}: key '{key}': only your user config "
                f"(~/.config/clawnb/config.toml) may {what}"
            )
    return overlay


def _read(path: Path) -> str | None:
    try:
        # utf-8-sig: a byte-order mark (some Windows editors write one) is not a TOML error
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, expected a TOML file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
