"""One command registry for every front end.

A :class:`Command` is declared once — name, aliases, a one-line summary, an argument hint,
whether it is hidden, which front ends offer it — with a handler that receives one
:class:`CommandContext` (the session, the front end's :class:`CommandHost`, the arguments).
The terminal chat (``/cost``), the notebook (``%claw cost`` and a ``%%claw`` cell whose body
is ``/cost``), the claw kernel and the Python API (:meth:`CommandRegistry.dispatch`) all
dispatch through :data:`COMMANDS`; ``/help`` and ``%claw help`` are generated from it, and an
unknown name gets the nearest known one as a suggestion. Skills and prompt commands add
entries to the same registry.

A handler returns the text to show (or ``None``) and may be a coroutine function (``/compact``
talks to the model). A usage mistake is a :class:`~clawnb.errors.CommandError`: one line the
front end shows as it shows errors. Handlers use the session's public API only — the same
methods every front end may call — so a command behaves the same wherever it is typed.
"""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..errors import ClawError, CommandError
from . import reports

if TYPE_CHECKING:
    from .assemble import AgentSession

__all__ = [
    "COMMANDS",
    "ApiHost",
    "Command",
    "CommandContext",
    "CommandHost",
    "CommandRegistry",
    "NOTEBOOK",
    "split_command",
]

Handler = Callable[["CommandContext"], "str | None | Awaitable[str | None]"]


class CommandHost(Protocol):
    """What a front end offers the commands typed into it."""

    frontend: str  # "chat" | "notebook" | "kernel" | "api"
    prefix: str  # how a command is typed there: "/" or "%claw "

    def quit(self) -> None:
        """End the front end (the chat's ``/exit``); front ends that cannot end say so."""
        ...

    async def run_turn(self, prompt: str, *, plan: bool = False) -> str | None:
        """Send ``prompt`` to the session as a turn, rendered and approved the front end's
        way (``/plan`` plans first and asks for a review); returns what is left to show (a
        front end that rendered the turn live returns ``None``)."""
        ...

    def status_lines(self) -> list[str]:
        """What ``status`` adds for this front end (the notebook: its approval policy)."""
        ...

    def config_lines(self) -> list[str]:
        """What ``config`` adds for this front end."""
        ...


@dataclass(frozen=True)
class Command:
    """One command, as every front end offers it."""

    name: str
    summary: str
    handler: Handler
    usage: str = ""  # the argument hint: "[ID]", "MODE", "<task>"
    aliases: tuple[str, ...] = ()
    hidden: bool = False
    frontends: frozenset[str] | None = None  # None: every front end
    engine_only: bool = True  # needs clawnb's own session, not any Session (``--agent``)
    needs_session: bool = True  # acts on a session (the notebook builds one for it first)

    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    def offered_in(self, frontend: str) -> bool:
        return self.frontends is None or frontend in self.frontends


@dataclass
class CommandContext:
    """What a handler gets: the session, the front end, the words after the name."""

    session: Any  # AgentSession, or a learner's Session for commands with engine_only=False
    host: CommandHost
    args: str
    registry: CommandRegistry

    @property
    def argv(self) -> list[str]:
        try:
            return shlex.split(self.args)
        except ValueError:  # an unbalanced quote: the plain words
            return self.args.split()

    @property
    def engine(self) -> AgentSession:
        """The session as clawnb's own (checked by :meth:`CommandRegistry.dispatch`)."""
        return self.session  # type: ignore[no-any-return]


class ApiHost:
    """The Python API as a host (:meth:`AgentSession.command`): nothing to quit, turns go to
    ``on_event``, a plan is returned for the caller to review."""

    frontend = "api"
    prefix = "/"

    def __init__(self, session: AgentSession, on_event: Any = None) -> None:
        self.session = session
        self.on_event = on_event

    def quit(self) -> None:
        return None

    async def run_turn(self, prompt: str, *, plan: bool = False) -> str | None:
        if plan:
            return await self.session.run_plan(prompt, self.on_event, None)
        return await self.session.send(prompt, self.on_event)

    def status_lines(self) -> list[str]:
        return []

    def config_lines(self) -> list[str]:
        return []


def split_command(line: str) -> tuple[str, str]:
    """``"/resume abc"`` → ``("resume", "abc")``; the leading ``/`` is optional."""
    text = line.strip()
    if text.startswith("/"):
        text = text[1:]
    name, _, rest = text.partition(" ")
    return name.strip(), rest.strip()


class CommandRegistry:
    """Commands by name and alias; adding a name that is taken is an error unless
    ``replace`` says so (a project skill may not silently shadow ``/undo``)."""

    def __init__(self, commands: Iterable[Command] = ()) -> None:
        self._commands: dict[str, Command] = {}
        self._by_name: dict[str, Command] = {}
        for command in commands:
            self.add(command)

    def add(self, command: Command, *, replace: bool = False) -> Command:
        taken = [n for n in command.names() if n in self._by_name]
        if taken and not replace:
            raise ValueError(f"command name already registered: {', '.join(taken)}")
        for name in taken:
            self.remove(self._by_name[name].name)
        self._commands[command.name] = command
        for name in command.names():
            self._by_name[name] = command
        return command

    def remove(self, name: str) -> Command | None:
        command = self._commands.pop(name, None)
        if command is not None:
            for alias in command.names():
                self._by_name.pop(alias, None)
        return command

    def command(self, name: str, summary: str, **options: Any) -> Callable[[Handler], Handler]:
        """Decorator form of :meth:`add`: ``@registry.command("cost", "tokens and cost")``."""

        def register(handler: Handler) -> Handler:
            self.add(Command(name, summary, handler, **options))
            return handler

        return register

    def find(self, name: str) -> Command | None:
        return self._by_name.get(name)

    def visible(self, frontend: str) -> list[Command]:
        """The commands a front end lists, in the order they were declared."""
        return [c for c in self._commands.values() if c.offered_in(frontend) and not c.hidden]

    def complete(self, prefix: str, frontend: str) -> list[str]:
        """Names (aliases included) that start with ``prefix``, for tab completion."""
        return sorted(
            name
            for command in self._commands.values()
            if command.offered_in(frontend)
            for name in command.names()
            if name.startswith(prefix)
        )

    def suggest(self, name: str, frontend: str) -> str | None:
        names = [n for c in self._commands.values() if c.offered_in(frontend) for n in c.names()]
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        if close:
            return close[0]
        starts = [n for n in names if n.startswith(name[:2])] if len(name) >= 2 else []
        return starts[0] if len(starts) == 1 else None

    def help_text(self, frontend: str, prefix: str) -> str:
        rows = []
        for command in self.visible(frontend):
            head = f"{prefix}{command.name}" + (f" {command.usage}" if command.usage else "")
            also = (
                f" (also {', '.join(prefix + a for a in command.aliases)})"
                if command.aliases
                else ""
            )
            rows.append((head, command.summary + also))
        width = max((len(head) for head, _ in rows), default=0)
        return "commands:\n" + "\n".join(f"  {head.ljust(width)}  {text}" for head, text in rows)

    async def dispatch(self, line: str, *, session: Any, host: CommandHost) -> str | None:
        """Run the command ``line`` names (``"/cost"``, ``"cost"``, ``"resume abc"``) and
        return what it says; a :class:`CommandError` for an unknown name or a wrong use."""
        name, args = split_command(line)
        command = self.find(name)
        if command is None and name:
            command = skill_command(session, name)  # a built-in name always wins
        if command is None and name.startswith("mcp__"):
            command = mcp_prompt_command(session, name)
        if command is None or not command.offered_in(host.frontend):
            guess = self.suggest(name, host.frontend) if name else None
            hint = f" — did you mean {host.prefix}{guess}?" if guess else ""
            raise CommandError(
                f"unknown command {host.prefix}{name}{hint} ({host.prefix}help lists them)"
            )
        if command.engine_only and not _is_engine(session):
            raise CommandError(
                f"{host.prefix}{command.name} needs clawnb's own agent; "
                "your --agent session does not offer it"
            )
        context = CommandContext(session, host, args, self)
        result = command.handler(context)
        if result is not None and not isinstance(result, str):
            result = await result  # an async handler (a plain one returns its text or None)
        hooks = getattr(session, "hook_engine", None) if _is_engine(session) else None
        if hooks is not None and hooks.wants("command_execute"):
            await hooks.fire("command_execute", message=line.strip())
        return result

    def __iter__(self) -> Any:
        return iter(list(self._commands.values()))

    def __len__(self) -> int:
        return len(self._commands)


@runtime_checkable
class _Engine(Protocol):
    """What the engine's commands use beyond the Session protocol (clawnb's AgentSession has
    it; a learner's session, driven by the same front ends, usually does not)."""

    def undo(self) -> str: ...
    def list_sessions(self) -> Any: ...
    def new_session(self) -> None: ...
    def sandbox_description(self) -> str: ...
    def allowed_for_session(self) -> list[str]: ...


_ENGINE_TYPES: dict[type, bool] = {}


def _is_engine(session: Any) -> bool:
    # a protocol, not an isinstance of AgentSession: the session module imports this one. A
    # runtime protocol check looks up every member (~25 µs); the answer is one per class.
    kind = type(session)
    known = _ENGINE_TYPES.get(kind)
    if known is None:
        known = _ENGINE_TYPES[kind] = isinstance(session, _Engine)
    return known


# -- the built-in commands --------------------------------------------------------------------

COMMANDS = CommandRegistry()
"""The registry every front end dispatches through (skills add their entries here)."""

NOTEBOOK = frozenset({"notebook", "kernel"})
"""The front ends of a kernel (``%claw``/``%%claw`` and the claw kernel): for commands about
cells and the kernel, which mean nothing in the chat."""


@COMMANDS.command(
    "help",
    "this list; help NAME says how to use one command",
    usage="[NAME]",
    aliases=("?",),
    engine_only=False,
    needs_session=False,
)
def _help(ctx: CommandContext) -> str:
    if ctx.argv:
        name = ctx.argv[0].lstrip("/")
        command = ctx.registry.find(name) or skill_command(ctx.session, name)
        if command is None or not command.offered_in(ctx.host.frontend):
            raise CommandError(f"no command {ctx.host.prefix}{ctx.argv[0].lstrip('/')}")
        hint = f" {command.usage}" if command.usage else ""
        return f"{ctx.host.prefix}{command.name}{hint} — {command.summary}"
    return ctx.registry.help_text(ctx.host.frontend, ctx.host.prefix) + skills_help(
        ctx.session, ctx.host.prefix
    )


# -- skills: /NAME runs a user-invocable skill of the session (clawnb.skills.runtime) ----------


def _session_skills(session: Any) -> list[Any]:
    skills = session.skills if _is_engine(session) else None
    return list(skills.user_invocable()) if skills is not None else []


def skill_command(session: Any, name: str) -> Command | None:
    """The session's user-invocable skill ``name`` as a command, or ``None``."""
    skills = session.skills if _is_engine(session) else None
    skill = skills.get(name) if skills is not None else None
    if skill is None or not skill.user_invocable:
        return None
    kept = _SKILL_COMMANDS.get(id(skill))
    if kept is not None and kept[0] is skill:
        return kept[1]
    from ..skills.runtime import invoke

    async def run(ctx: CommandContext) -> str | None:
        host = ctx.host
        on_event = host.on_event if isinstance(host, ApiHost) else None
        return await invoke(ctx.session, skill, ctx.args, send=host.run_turn, on_event=on_event)

    command = Command(skill.name, skill.description, run, usage=skill.argument_hint or "")
    if len(_SKILL_COMMANDS) > 1000:
        _SKILL_COMMANDS.clear()
    _SKILL_COMMANDS[id(skill)] = (skill, command)
    return command


_SKILL_COMMANDS: dict[int, tuple[Any, Command]] = {}
"""Each skill's command, made once: it depends on the skill alone (the session and the front
end come with each call's context). Kept by the very :class:`~clawnb.skills.model.Skill`
value (a rediscovered skill is another value, so another command)."""


def skills_help(session: Any, prefix: str) -> str:
    """The ``skills:`` part of ``/help``: each skill a person can run, with its hint."""
    rows = [
        (f"{prefix}{s.name}" + (f" {s.argument_hint}" if s.argument_hint else ""), s.description)
        for s in _session_skills(session)
    ]
    if not rows:
        return ""
    width = max(len(head) for head, _ in rows)
    cut = [text if len(text) <= 70 else text[:69] + "…" for _, text in rows]
    lines = (f"  {head.ljust(width)}  {text}" for (head, _), text in zip(rows, cut, strict=True))
    return "\nskills:\n" + "\n".join(lines)


@COMMANDS.command("status", "model, mode, workspace, conversation, session and sandbox")
def _status(ctx: CommandContext) -> str:
    return reports.status_text(ctx.engine, ctx.host.status_lines())


@COMMANDS.command(
    "plan", "plan read-only first, then execute, revise or drop", usage="<task>", engine_only=False
)
async def _plan(ctx: CommandContext) -> str | None:
    if ctx.args:  # any session that takes plan mode (clawnb.session.custom.plan_turn)
        return await ctx.host.run_turn(ctx.args, plan=True)
    raise CommandError(f"usage: {ctx.host.prefix}plan <what to do>")


@COMMANDS.command("cost", "tokens and cost so far, and the context size", engine_only=False)
def _cost(ctx: CommandContext) -> str:
    if not _is_engine(ctx.session):  # a session of the person's own: its TurnEnd events
        from .custom import usage_of

        tracker = usage_of(ctx.session)
        return (
            f"tokens: {tracker.tokens_label()} | cost: {tracker.cost_label()} "
            f"(your agent's TurnEnd events: {tracker.turn_count:,} replies)"
        )
    return reports.cost_text(ctx.engine)


@COMMANDS.command("compact", "summarise older messages now", usage="[FOCUS]")
async def _compact(ctx: CommandContext) -> str:
    session = ctx.engine
    before = len(session.history)
    if await session.compact(ctx.args or None):
        return f"compacted: {before} → {len(session.history)} messages"
    return "nothing to compact yet"


@COMMANDS.command(
    "history", "the conversation so far, one line per prompt, answer and call", engine_only=False
)
def _history(ctx: CommandContext) -> str:
    # the notebook knows which cell (In [n]) sent each prompt
    return reports.history_text(ctx.session, cell_of=getattr(ctx.host, "cell_of", None))


@COMMANDS.command("config", "the settings in effect and where keys come from")
def _config(ctx: CommandContext) -> str:
    return reports.config_text(ctx.engine, ctx.host.config_lines())


@COMMANDS.command(
    "rules",
    "the permission rules, blocklist and hooks in effect, and their layers; forget a saved one",
    usage="[forget PATTERN]",
)
def _rules(ctx: CommandContext) -> str:
    word, _, rest = ctx.args.strip().partition(" ")
    prefix = ctx.host.prefix
    if word == "forget":
        return reports.forget_rule_text(ctx.engine, rest, prefix)
    if word:
        raise CommandError(f"usage: {prefix}rules, or {prefix}rules forget PATTERN")
    return reports.rules_text(
        ctx.engine.config,
        ctx.engine.allowed_for_session(),
        workspace=ctx.engine.workspace,
        prefix=prefix,
    )


@COMMANDS.command("hooks", "the hooks in effect, the layer each came from, and their last runs")
def _hooks(ctx: CommandContext) -> str:
    engine = ctx.engine.hook_engine
    if engine is None:
        return "no hooks: this session's gate has none"
    return "hooks:\n" + "\n".join(f"  {line}" for line in engine.report())


@COMMANDS.command(
    "add-dir",
    "let the file tools read and write a folder outside the workspace, for this session",
    usage="[DIR]",
)
def _add_dir(ctx: CommandContext) -> str:
    # the person typed it: the model cannot run a command (clawnb.control.dirs)
    from ..control.dirs import DirectoryRefused

    directories = getattr(ctx.engine.gate, "directories", None)
    add = getattr(ctx.engine.gate, "add_directory", None)
    if directories is None or not callable(add):
        raise CommandError(f"{ctx.host.prefix}add-dir: this session has no gate to add it to")
    if not ctx.argv:
        shown = "\n".join(f"  {d}" for d in directories) or "  (none)"
        return f"folders added outside the workspace:\n{shown}"
    if len(ctx.argv) != 1:
        raise CommandError(f"usage: {ctx.host.prefix}add-dir DIR (one folder)")
    try:
        real = add(ctx.argv[0])
    except DirectoryRefused as exc:
        raise CommandError(f"{ctx.host.prefix}add-dir: {exc}") from None
    return (
        f"added for this session: {real} — read without asking and written like the "
        "workspace; secret and control files there stay protected"
    )


@COMMANDS.command("skills", "the skills: what each does, what overrides what, what the listing cut")
def _skills(ctx: CommandContext) -> str:
    skills = ctx.engine.skills
    if skills is None:
        return "skills are off in this session"
    return (
        "\n".join(skills.report_lines())
        or "no skills found (docs/skills.md says where to put them)"
    )


@COMMANDS.command(
    "mode", "the permission mode for the turns to come", usage="MODE|project", engine_only=False
)
def _mode(ctx: CommandContext) -> str:
    from ..permissions import PermissionMode

    modes = [m.value for m in PermissionMode]
    if len(ctx.argv) != 1 or ctx.argv[0] not in (*modes, "project"):
        raise CommandError(f"usage: {ctx.host.prefix}mode {{{'|'.join(modes)}|project}}")
    choice = ctx.argv[0]
    if not _is_engine(ctx.session):  # a session of the person's own: the protocol's configure
        from .custom import set_mode

        if choice == "project":
            raise CommandError(f"{ctx.host.prefix}mode project needs clawnb's own agent")
        try:
            set_mode(ctx.session, choice)
        except ClawError as exc:
            raise CommandError(str(exc)) from None
        return f"mode: {ctx.session.mode}"
    session = ctx.engine
    session.configure(mode=session.config.permissions.mode if choice == "project" else choice)
    origin = " (from the project's configuration)" if choice == "project" else ""
    return f"mode: {session.mode}{origin}"


@COMMANDS.command(
    "model", "switch the model for the turns to come", usage="NAME", engine_only=False
)
def _model(ctx: CommandContext) -> str:
    if len(ctx.argv) != 1:
        raise CommandError(f"usage: {ctx.host.prefix}model NAME (or scripted:FILE)")
    ctx.session.configure(model=ctx.argv[0])
    return f"model: {getattr(ctx.session, 'model', None) or ctx.argv[0]}"


@COMMANDS.command("undo", "put back the files the last turn changed (subagents' too)")
def _undo(ctx: CommandContext) -> str:
    return ctx.engine.undo()


@COMMANDS.command("sessions", "the saved conversations of this workspace")
def _sessions(ctx: CommandContext) -> str:
    return reports.sessions_text(ctx.engine, ctx.host.prefix)


@COMMANDS.command(
    "resume", "continue a saved conversation (default: the latest other one)", usage="[ID]"
)
def _resume(ctx: CommandContext) -> str:
    if len(ctx.argv) > 1:
        raise CommandError(f"usage: {ctx.host.prefix}resume [ID] (an id or id prefix)")
    return reports.resume_text(ctx.engine, ctx.argv[0] if ctx.argv else "latest")


@COMMANDS.command(
    "memory",
    "what auto memory keeps: list, show, forget, edit",
    usage="[show NAME|forget NAME|edit NAME]",
)
def _memory(ctx: CommandContext) -> str:
    from ..memory.report import memory_text

    return memory_text(ctx.engine, ctx.argv, ctx.host.prefix)


@COMMANDS.command(
    "clear", "start a new, empty conversation (the old one stays saved)", aliases=("reset",)
)
def _clear(ctx: CommandContext) -> str:
    ctx.engine.new_session()
    return "new conversation (the previous one is saved: resume continues it)"


@COMMANDS.command(
    "trust", "trust this workspace's config, or take the trust back", usage="[--revoke]"
)
def _trust(ctx: CommandContext) -> str:
    # the person typed it: the model cannot run a command, and the store is a control file
    from ..config import trust_workspace

    if ctx.argv not in ([], ["--revoke"]):
        raise CommandError(f"usage: {ctx.host.prefix}trust [--revoke]")
    return trust_workspace(ctx.engine.workspace, revoke=ctx.argv == ["--revoke"])


@COMMANDS.command(
    "mcp",
    "the MCP servers: state, tools, last log lines; log NAME, restart NAME, prompts, resources",
    usage="[log NAME | restart NAME | prompts | resources]",
)
async def _mcp(ctx: CommandContext) -> str:
    from ..mcp.errors import McpError

    manager = ctx.engine.mcp
    if manager is None:
        return "no MCP servers configured ([mcp_servers.NAME] in your config; see docs/mcp.md)"
    try:
        match ctx.argv:
            case []:
                return manager.describe()
            case ["log", name]:
                return manager.log_tail(name)
            case ["restart", name]:
                return await manager.restart(name)
            case ["prompts"]:
                return await reports.mcp_prompts_text(manager, ctx.host.prefix)
            case ["resources"]:
                return await reports.mcp_resources_text(manager)
    except McpError as exc:
        raise CommandError(str(exc)) from None
    raise CommandError(
        f"usage: {ctx.host.prefix}mcp [log NAME | restart NAME | prompts | resources]"
    )


def mcp_prompt_command(session: Any, name: str) -> Command | None:
    """``/mcp__SERVER__PROMPT args``: a connected server's prompt as the next turn (the
    server is asked for its prompts when the command runs, so a restarted server's new
    prompts are there); ``None`` without MCP servers."""
    manager = getattr(session, "mcp", None)
    if manager is None:
        return None

    async def run(ctx: CommandContext) -> str | None:
        from ..mcp.errors import McpError
        from ..mcp.prompts import find_prompt, prompt_text

        try:
            prompt = await find_prompt(manager, name)
            if prompt is None:
                raise CommandError(
                    f"unknown command {ctx.host.prefix}{name} "
                    f"({ctx.host.prefix}mcp prompts lists the servers' prompts)"
                )
            text = await prompt_text(manager, prompt, ctx.args)
        except McpError as exc:
            raise CommandError(str(exc)) from None
        return await ctx.host.run_turn(text)

    return Command(name, "a prompt of an MCP server", run, usage="[key=value …]")


@COMMANDS.command(
    "exit",
    "quit (Ctrl-D works too)",
    aliases=("quit", "q"),
    frontends=frozenset({"chat"}),
    engine_only=False,
    needs_session=False,
)
def _exit(ctx: CommandContext) -> None:
    ctx.host.quit()
    return None
