"""All of a session's MCP servers: started together, each within its own timeout, and shut
down together — however the session ends.

:class:`McpManager` runs every connection on **an event loop of its own, in a daemon
thread**. A front end's loop is a poor home for connections that must outlive a turn: a
``%%claw`` cell is its own task (and without autoawait its own ``asyncio.run``), the chat's
loop only runs while a turn does, and anyio's scopes must be exited in the task that entered
them. So the manager's loop owns one task per connection (:mod:`clawnb.mcp.connection`), and
the manager's ``async`` methods, awaited from any loop, hand their work over as futures.
Cancelling the awaiting task (a kernel interrupt, Ctrl-C, ■ Stop) cancels the work on the
manager's loop, and the SDK tells the server with ``notifications/cancelled``. A front end
whose own loop lives as long as the session may hand it over instead (``loop=``): the owner
tasks then run there (still not in the caller's task), and a call skips the two hand-overs
between threads — measured in ``benchmarks/bench_mcp.py``.

Nothing is left behind:

* :meth:`aclose` (or :meth:`close`, from synchronous code) shuts every server down the spec's
  way — close stdin, wait 2 s, SIGTERM the group, 2 s, SIGKILL;
* if the manager's loop is stopped or its tasks cancelled without that, the connections'
  transports still shut their servers down on the way out;
* an ``atexit`` handler and the manager's finalizer kill every server group still alive, with
  no event loop needed;
* a ``kill -9`` of the process: every stdio server was started with ``PR_SET_PDEATHSIG``
  (Linux) and registered with clawnb's watchdog, which kills the groups; a well-behaved server
  also exits on the EOF of its stdin.

A server that fails is one line — ``"time: failed to start: …; see `%claw mcp log time`"`` —
never a failure of the whole.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import threading
import weakref
from collections.abc import Awaitable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..control.secrets import redact
from .config import McpServer
from .connection import Connection, ServerState, kill_all_servers
from .errors import McpError

if TYPE_CHECKING:
    import mcp_types

    from ..control.sandbox import SandboxPolicy
    from .replay import McpRecorder
    from .tools import McpTool, ValueBinder

__all__ = ["DEFER_SERVERS", "DEFER_TOOLS", "McpManager", "ServerStatus", "default_log_dir"]

_T = TypeVar("_T")

# With more servers (or tools) than this, the tools' schemas are deferred to tool_search.
DEFER_SERVERS = 3
DEFER_TOOLS = 30
# How long close() waits for the servers to shut down before killing what is left.
CLOSE_TIMEOUT_S = 10.0


def default_log_dir() -> Path:
    """``$XDG_STATE_HOME/clawnb/mcp`` (``~/.local/state/clawnb/mcp``): one log per server."""
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return Path(state) / "clawnb" / "mcp"


@dataclass(frozen=True)
class ServerStatus:
    """How one server is, for ``%claw mcp`` / ``/mcp`` and the model's reminder."""

    name: str
    state: ServerState
    transport: str
    error: str | None
    tools: tuple[str, ...]
    server_info: str | None
    pid: int | None
    log_path: Path
    source: str

    def line(self) -> str:
        """``"time: connected, 2 tools (mcp-time 2026.10.19)"`` /
        ``"git: failed to start: …; see `%claw mcp log git`"``."""
        if self.state is ServerState.CONNECTED:
            info = f" ({self.server_info})" if self.server_info else ""
            count = len(self.tools)
            return f"{self.name}: connected, {count} tool{'s' if count != 1 else ''}{info}"
        if self.state is ServerState.FAILED:
            return f"{self.name}: failed to start: {self.error}; see `%claw mcp log {self.name}`"
        return f"{self.name}: {self.state.value}"


class _LoopThread:
    """An asyncio loop running forever in a daemon thread, and the means to hand it work."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()
        self._ready.wait()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._ready.set)
        try:
            self.loop.run_forever()
        finally:
            # Stopped with work still pending (no aclose): cancel it, and let the transports
            # run their shielded shutdowns, bounded; whatever still lives is killed.
            try:
                pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
                for task in pending:
                    task.cancel()
                if pending:
                    gathered = asyncio.gather(*pending, return_exceptions=True)
                    with contextlib.suppress(Exception):
                        self.loop.run_until_complete(asyncio.wait_for(gathered, CLOSE_TIMEOUT_S))
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            finally:
                self.loop.close()

    def submit(self, coro: Coroutine[Any, Any, _T]) -> concurrent.futures.Future[_T]:
        if self.loop.is_closed():
            coro.close()
            raise McpError("the MCP servers were shut down")
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        """Await ``coro`` on this loop from another one; cancelling the awaiting task cancels
        the work here too."""
        if _running_loop() is self.loop:
            return await coro
        return await asyncio.wrap_future(self.submit(coro))

    def run_sync(self, coro: Coroutine[Any, Any, _T], timeout: float | None = None) -> _T:
        if threading.current_thread() is self.thread:
            coro.close()
            raise RuntimeError("run_sync called from the MCP loop itself")
        return self.submit(coro).result(timeout)

    def stop(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        if not self.loop.is_closed():
            with contextlib.suppress(RuntimeError):
                self.loop.call_soon_threadsafe(self.loop.stop)
        if threading.current_thread() is not self.thread:
            self.thread.join(timeout)


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class _AdoptedLoop:
    """The connections on a loop the caller owns and keeps running for the manager's whole
    life (the chat's loop, a kernel's): calls from that loop need no hand-over to another
    thread, which is most of the layer's cost per call on a busy machine."""

    thread: threading.Thread | None = None

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    async def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        if _running_loop() is self.loop:
            return await coro
        if self.loop.is_closed():
            coro.close()
            raise McpError("the loop the MCP servers ran on is closed")
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def run_sync(self, coro: Coroutine[Any, Any, _T], timeout: float | None = None) -> _T:
        if self.loop.is_closed():
            coro.close()
            raise McpError("the loop the MCP servers ran on is closed")
        if not self.loop.is_running():
            return self.loop.run_until_complete(asyncio.wait_for(coro, timeout))
        if asyncio._get_running_loop() is self.loop:
            # blocking here would stop the very loop the shutdown needs; the caller kills
            coro.close()
            raise RuntimeError("close() called from the servers' own loop: await aclose()")
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        """Nothing to stop: the loop is the caller's."""


_Host = _LoopThread | _AdoptedLoop


def _finalize(host: _Host, connections: list[Connection]) -> None:
    # The manager was dropped without aclose(): stop its loop (the transports shut their
    # servers down as their tasks are cancelled), then kill any group still alive.
    host.stop(CLOSE_TIMEOUT_S)
    for connection in connections:
        connection.kill()


class McpManager:
    """Every configured MCP server of a session.

    ``servers`` are the entries (:mod:`clawnb.mcp.config`); ``log_dir`` gets one
    ``NAME.log`` per server (default :func:`default_log_dir`); ``workspace`` is where stdio
    servers run (their ``cwd`` is relative to it); ``sandbox`` is the session's sandbox
    policy, used by servers with ``sandbox = true``; ``environ`` is where ``${VAR}`` and the
    basics come from (default ``os.environ``).

    ``loop``: by default the connections live on the manager's own loop, in a thread of its
    own — right wherever the caller's loop may end before the manager does (a ``%%claw``
    cell run with ``asyncio.run``). A front end whose loop lives as long as the session (the
    chat's, a kernel's with autoawait) can pass it instead: the connections' owner tasks then
    run there, and a call costs what it costs with the SDK alone (no hand-over between
    threads). ``close()`` from synchronous code then works while that loop is not running
    (chat exit); from inside it, ``await aclose()``.

    Typical use (the session does this)::

        manager = McpManager(parsed.servers, workspace=ws, sandbox=policy)
        for line in await manager.start():      # concurrent; failures are lines
            show(line)
        toolset.extend(manager.tools(reserved=toolset.names()))
        ...
        await manager.aclose()
    """

    def __init__(
        self,
        servers: Iterable[McpServer],
        *,
        log_dir: str | os.PathLike[str] | None = None,
        workspace: str | os.PathLike[str] | None = None,
        sandbox: SandboxPolicy | None = None,
        environ: Mapping[str, str] | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        self.log_dir = Path(log_dir) if log_dir is not None else default_log_dir()
        self._adopt = loop
        ws = Path(workspace) if workspace is not None else None
        self.connections: dict[str, Connection] = {}
        for spec in servers:
            self.connections[spec.name] = Connection(
                spec, log_dir=self.log_dir, workspace=ws, sandbox=sandbox, environ=environ
            )
        self._host: _Host | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._closed = False
        # set by the session, read by every wrapped tool (a child session's too): where the
        # calls are recorded (--record) and where big structured results are bound (notebook)
        self.recorder: McpRecorder | None = None
        self.binder: ValueBinder | None = None

    # -- the loop ---------------------------------------------------------------------------

    def _loop(self) -> _Host:
        if self._closed:
            raise McpError("the MCP servers were shut down")
        if self._host is None:
            host: _Host = (
                _AdoptedLoop(self._adopt) if self._adopt is not None else _LoopThread("clawnb-mcp")
            )
            self._host = host
            self._finalizer = weakref.finalize(
                self, _finalize, host, list(self.connections.values())
            )
        return self._host

    async def _run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        try:
            host = self._loop()
        except McpError:
            coro.close()
            raise
        return await host.run(coro)

    def _get(self, name: str) -> Connection:
        connection = self.connections.get(name)
        if connection is None:
            known = ", ".join(self.connections) or "none configured"
            raise McpError(f"no MCP server named {name!r} (servers: {known})")
        return connection

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self, names: Sequence[str] | None = None) -> list[str]:
        """Start every enabled server (or those named) **concurrently**, each within its
        ``startup_timeout``; returns one line per server that failed. Servers already
        connected are left alone."""
        targets = (
            [self._get(n) for n in names] if names is not None else list(self.connections.values())
        )

        async def all_of() -> None:
            await asyncio.gather(*(c.start() for c in targets))

        if targets:
            await self._run(all_of())
        return [self._status(c).line() for c in targets if c.state is ServerState.FAILED]

    def start_blocking(self, timeout: float | None = None) -> list[str]:
        """:meth:`start` from synchronous code (a session being built): on the manager's own
        loop thread, which the connections then live on."""
        if self._adopt is not None:
            raise McpError("start_blocking needs the manager's own loop (no loop= given)")
        return self._loop().run_sync(self.start(), timeout)

    async def restart(self, name: str) -> str:
        """Stop and start one server (``%claw mcp restart NAME``); its status line after."""
        connection = self._get(name)
        await self._run(connection.restart())
        return self._status(connection).line()

    async def stop(self, name: str) -> None:
        await self._run(self._get(name).stop())

    async def aclose(self) -> None:
        """Shut every server down (concurrently) and stop the manager's loop. Idempotent."""
        if self._closed:
            return
        if self._host is not None:
            with contextlib.suppress(McpError):
                await self._host.run(self._all_down())
        self._shutdown_loop()

    async def _all_down(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.connections.values()))

    def close(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        """:meth:`aclose` for synchronous code (kernel shutdown, chat exit, ``atexit``):
        blocks up to ``timeout`` seconds, then kills whatever is still running."""
        if self._closed:
            return
        if self._host is not None:
            with contextlib.suppress(Exception):
                self._host.run_sync(self._all_down(), timeout)
        self._shutdown_loop()

    def _shutdown_loop(self) -> None:
        self._closed = True
        if self._finalizer is not None:
            self._finalizer.detach()
        if self._host is not None:
            self._host.stop()
        for connection in self.connections.values():
            connection.kill()  # a no-op for those shut down; the last resort for the rest

    @staticmethod
    def kill_all() -> None:
        """Kill every MCP server group of this process now, without a loop (the ``atexit``
        backstop, callable by a front end on its own way out)."""
        kill_all_servers()

    # -- state ------------------------------------------------------------------------------

    def _status(self, c: Connection) -> ServerStatus:
        return ServerStatus(
            name=c.name,
            state=c.state,
            transport=c.spec.type,
            error=c.error,
            tools=tuple(t.name for t in c.tools),
            server_info=c.server_info,
            pid=c.pid,
            log_path=c.log_path,
            source=c.spec.source,
        )

    def status(self) -> list[ServerStatus]:
        """Every server's state, in config order."""
        return [self._status(c) for c in self.connections.values()]

    def describe(self, log_lines: int = 3) -> str:
        """What ``%claw mcp`` / ``/mcp`` show: each server, its state, its tools and the last
        lines of its log."""
        if not self.connections:
            return "no MCP servers configured"
        out: list[str] = []
        for status in self.status():
            out.append(status.line())
            if status.tools:
                out.append("  tools: " + ", ".join(status.tools))
            tail = self._get(status.name).log_tail(log_lines)
            for line in tail.splitlines():
                out.append(f"  | {line}")
        return "\n".join(out)

    def reminder(self) -> str | None:
        """A short note for the model, after the history (never in the cached system
        prompt): which servers are connected and which failed. ``None`` without servers."""
        statuses = [s for s in self.status() if s.state is not ServerState.DISABLED]
        if not statuses:
            return None
        lines = ["MCP servers (their tools are named mcp__SERVER__TOOL):"]
        for status in statuses:
            if status.state is ServerState.CONNECTED:
                count = len(status.tools)
                lines.append(f"- {status.name}: connected ({count} tool{'s' * (count != 1)})")
            elif status.state is ServerState.FAILED:
                lines.append(f"- {status.name}: not available ({status.error})")
            else:
                lines.append(f"- {status.name}: {status.state.value}")
        return redact("\n".join(lines))

    def log_tail(self, name: str, lines: int = 40) -> str:
        """The end of one server's log (``%claw mcp log NAME``), redacted."""
        connection = self._get(name)
        return connection.log_tail(lines) or f"(no log yet for {name}: {connection.log_path})"

    # -- tools ------------------------------------------------------------------------------

    def tools(self, reserved: Iterable[str] = (), *, defer: bool | None = None) -> list[McpTool]:
        """Every server's tools (those it listed when it last connected) as clawnb tools named
        ``mcp__SERVER__TOOL``, never
        colliding with ``reserved`` (the built-ins' names) or one another. ``defer=None``
        defers their schemas (tool_search) when there are more than :data:`DEFER_SERVERS`
        servers or :data:`DEFER_TOOLS` tools."""
        from .tools import wrap_tools

        # A server that crashed keeps its tools: the names stay stable, and a call says it is
        # not running and how to restart it (instead of "unknown tool").
        connected = [
            c for c in self.connections.values() if c.tools and c.state is not ServerState.DISABLED
        ]
        if defer is None:
            count = sum(len(c.tools) for c in connected)
            defer = len(connected) > DEFER_SERVERS or count > DEFER_TOOLS
        return wrap_tools(self, connected, reserved=reserved, defer=defer)

    async def call_tool(
        self, server: str, tool: str, arguments: dict[str, Any]
    ) -> mcp_types.CallToolResult:
        """``tools/call`` on the manager's loop (raises :class:`~clawnb.tools.base.ToolError`
        with one readable line on any failure)."""
        connection = self._get(server)
        return await self._run(connection.call_tool(tool, arguments))

    # -- prompts and resources (for the command registry) -----------------------------------

    async def _ask(self, name: str, work: Awaitable[_T]) -> _T:
        from mcp.shared.exceptions import MCPError

        async def guarded() -> _T:
            try:
                return await work
            except MCPError as exc:
                raise McpError(redact(f"{name}: {exc.message}")) from None

        return await self._run(guarded())

    async def list_prompts(self, server: str | None = None) -> list[tuple[str, mcp_types.Prompt]]:
        """``(server, prompt)`` for every connected server's prompts (or one server's)."""
        out: list[tuple[str, mcp_types.Prompt]] = []
        for connection in self._targets(server, "prompts"):
            for prompt in await self._ask(connection.name, connection.list_prompts()):
                out.append((connection.name, prompt))
        return out

    async def get_prompt(
        self, server: str, name: str, arguments: dict[str, str] | None = None
    ) -> mcp_types.GetPromptResult:
        connection = self._get(server)
        return await self._ask(server, connection.get_prompt(name, arguments))

    async def list_resources(
        self, server: str | None = None
    ) -> list[tuple[str, mcp_types.Resource]]:
        """``(server, resource)`` for every connected server's resources (or one server's)."""
        out: list[tuple[str, mcp_types.Resource]] = []
        for connection in self._targets(server, "resources"):
            for resource in await self._ask(connection.name, connection.list_resources()):
                out.append((connection.name, resource))
        return out

    async def read_resource(self, server: str, uri: str) -> mcp_types.ReadResourceResult:
        connection = self._get(server)
        return await self._ask(server, connection.read_resource(uri))

    def _targets(self, server: str | None, what: str) -> list[Connection]:
        if server is not None:
            return [self._get(server)]
        return [c for c in self.connections.values() if c.offers(what)]

    def __repr__(self) -> str:
        return f"McpManager({list(self.connections)!r})"
