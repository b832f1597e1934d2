"""One MCP server: started, listed, called, restarted and stopped — on the official SDK.

A :class:`Connection` is driven by the manager's own event loop (a thread of its own, see
:mod:`clawnb.mcp.manager`): every coroutine here runs there. Facts that shaped it:

* **One owner task per connection.** The SDK's ``Client`` opens anyio task groups and cancel
  scopes, which must be exited in the task that entered them (python-sdk #79, #922). So one
  long-lived task enters the client, lists the tools, waits until it is told to stop (or the
  server goes away), and exits the client itself. Calls are separate tasks on the same loop;
  cancelling one makes the SDK send ``notifications/cancelled`` for its request.
* **Its own stdio transport**, built on :func:`clawnb.control.process.spawn` rather than the
  SDK's ``stdio_client``, for four things that one cannot give: the server's stderr goes to a
  real log file (inside a Jupyter kernel ``sys.stderr`` has no file descriptor: python-sdk
  #156, #1103); the child arms ``PR_SET_PDEATHSIG`` and registers its process group with
  clawnb's watchdog before it execs (so a ``kill -9`` of clawnb takes the server and its
  children down); ``sandbox = true`` wraps it in bubblewrap; and a stdout message over
  ``max_message_bytes`` is dropped while it streams in (the request it answered fails with a
  clear error) instead of being held in memory. The messages themselves are the SDK's
  (``SessionMessage``, ``jsonrpc_message_adapter``): no JSON-RPC is written by hand.
* **Shutdown** follows the spec: close stdin → 2 s → SIGTERM the group → 2 s → SIGKILL, in a
  shielded scope so a cancelled caller cannot leave a server behind. A server's children can
  outlive it on POSIX; the group kill ends them too.
* **A clean environment**: PATH, HOME, the locale and a few basics, plus exactly what the
  entry's ``env`` names — never clawnb's keys unless ``env`` names them.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import re
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..control.secrets import redact, register_secret
from ..tools.base import ToolError
from .config import McpServer, expand
from .errors import McpError

if TYPE_CHECKING:
    import mcp_types
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp import Client
    from mcp.shared.message import SessionMessage

    from ..control.sandbox import SandboxPolicy

__all__ = [
    "BASE_ENV_VARS",
    "Connection",
    "ServerState",
    "ServerTool",
    "ToolHints",
    "kill_all_servers",
    "live_server_groups",
    "server_env",
]

# What every stdio server gets from clawnb's own environment; everything else must be named
# in the entry's `env`. No key variable is here (clawnb.control.secrets.KEY_ENV_VARS).
BASE_ENV_VARS = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "TMPDIR",
    "TZ",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "SYSTEMROOT",
)

# The spec's shutdown steps: close stdin, wait, then signal the group.
STDIN_CLOSE_GRACE_S = 2.0
TERM_GRACE_S = 2.0
# A log file is rotated (to NAME.log.1) when a start finds it larger than this.
LOG_ROTATE_BYTES = 1024 * 1024
_READ_CHUNK = 1 << 16
_HEAD_KEPT = 4096
_TAIL_KEPT = 512
# The id of a JSON-RPC message that is too large to parse: at the top level, before the first
# nested object (the SDK and most servers write it first) or as the very last member.
_ID_FIRST = re.compile(rb'^\s*\{[^{]*?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')
_ID_LAST = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$')


class ServerState(StrEnum):
    DISABLED = "disabled"  # enabled = false
    STOPPED = "stopped"  # not started yet, or stopped on purpose
    STARTING = "starting"
    CONNECTED = "connected"
    FAILED = "failed"  # did not start, or went away; `error` says why


@dataclass(frozen=True)
class ToolHints:
    """A server's annotations for a tool — hints from an untrusted party, kept for display
    (and for ``trust_annotations = true``), never obeyed on their own."""

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None


@dataclass(frozen=True)
class ServerTool:
    """A tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    hints: ToolHints
    title: str | None = None


def server_env(spec: McpServer, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a stdio server starts with: :data:`BASE_ENV_VARS` from ``environ``
    (default ``os.environ``) plus the entry's ``env`` with ``${VAR}`` expanded. A value whose
    name looks secret is registered with the redactor, so it never shows in a result.
    ``KeyError(name)`` for a ``${VAR}`` that is not set."""
    source = os.environ if environ is None else environ
    env = {name: source[name] for name in BASE_ENV_VARS if name in source}
    for name, value in spec.env.items():
        env[name] = expand(value, source)
        _maybe_register(name, env[name])
    return env


def _maybe_register(name: str, value: str) -> None:
    from ..control.secrets import is_secret_name

    if is_secret_name(name) or name.lower() in ("authorization", "cookie"):
        register_secret(value.removeprefix("Bearer ").strip() or None)
        register_secret(value)


# -- the backstop: every live server group, for atexit --------------------------------------------

_groups_lock = threading.Lock()
_live_groups: set[int] = set()
_atexit_armed = False


def _track(pgid: int) -> None:
    global _atexit_armed
    with _groups_lock:
        _live_groups.add(pgid)
        if not _atexit_armed:
            import atexit

            atexit.register(kill_all_servers)
            _atexit_armed = True


def _untrack(pgid: int) -> None:
    with _groups_lock:
        _live_groups.discard(pgid)


def live_server_groups() -> frozenset[int]:
    """Process groups of stdio servers started and not yet shut down (for tests and
    ``%claw mcp``)."""
    with _groups_lock:
        return frozenset(_live_groups)


def kill_all_servers(grace: float = 0.5) -> None:
    """SIGTERM every live server group, wait up to ``grace`` seconds, SIGKILL what is left.
    Synchronous and loop-free: it runs from ``atexit`` (and the manager's finalizer), when
    the event loop that owned the connections may be gone."""
    from ..control.process import group_alive, signal_group

    with _groups_lock:
        groups = list(_live_groups)
        _live_groups.clear()
    for pgid in groups:
        signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while groups and time.monotonic() < deadline:
        groups = [g for g in groups if group_alive(g)]
        if groups:
            time.sleep(0.02)
    for pgid in groups:
        signal_group(pgid, signal.SIGKILL)


# -- stdout framing ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Oversized:
    size: int
    head: bytes
    tail: bytes


class _Lines:
    """Splits a byte stream into lines without ever holding more than ``limit`` bytes of one:
    a longer line becomes an :class:`_Oversized` with its size, head and tail."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._buf = bytearray()
        self._skipped = 0  # > 0 while inside an oversized line
        self._head = b""
        self._tail = b""

    def feed(self, chunk: bytes) -> list[bytes | _Oversized]:
        out: list[bytes | _Oversized] = []
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            piece = chunk[start:] if nl < 0 else chunk[start:nl]
            if self._skipped:
                self._skipped += len(piece)
                self._tail = (self._tail + piece)[-_TAIL_KEPT:]
            elif len(self._buf) + len(piece) > self.limit:
                self._head = bytes((self._buf + piece)[:_HEAD_KEPT])
                self._tail = bytes((self._buf + piece)[-_TAIL_KEPT:])
                self._skipped = len(self._buf) + len(piece)
                self._buf.clear()
            else:
                self._buf += piece
            if nl < 0:
                return out
            if self._skipped:
                out.append(_Oversized(self._skipped, self._head, self._tail))
                self._skipped = 0
                self._head = self._tail = b""
            else:
                out.append(bytes(self._buf))
                self._buf.clear()
            start = nl + 1


def _oversized_id(item: _Oversized) -> int | str | None:
    import json

    match = _ID_FIRST.match(item.head) or _ID_LAST.search(item.tail.rstrip(b"\r"))
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, int | str) and not isinstance(value, bool) else None


def _size(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"  # pragma: no cover - the loop always returns


# -- the connection ------------------------------------------------------------------------------


class Connection:
    """One configured server. Create it anywhere; call its coroutines on the manager's loop.

    ``state`` and ``error`` (one line, redacted) say how it is; ``tools`` what it offers;
    ``pid`` is the stdio server's pid (= its process group) while it runs; ``log_path`` is
    where its stderr and clawnb's notes about it go.
    """

    def __init__(
        self,
        spec: McpServer,
        *,
        log_dir: Path,
        workspace: Path | None = None,
        sandbox: SandboxPolicy | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.spec = spec
        self.name = spec.name
        self.log_path = log_dir / f"{spec.name}.log"
        self.workspace = workspace
        self.sandbox = sandbox
        self.environ = environ
        self.state = ServerState.STOPPED if spec.enabled else ServerState.DISABLED
        self.error: str | None = None
        self.tools: tuple[ServerTool, ...] = ()
        self.server_info: str | None = None
        self.protocol_version: str | None = None
        self.instructions: str | None = None
        self.pid: int | None = None
        self.exit_code: int | None = None
        self.started_at: float | None = None
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._lost = False
        self._bad_lines = 0
        self._first_bad: bytes | None = None
        self._http_status: str | None = None

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect (stdio: start the server) and list its tools within ``startup_timeout``.
        Never raises: a failure sets ``state = FAILED`` and ``error``."""
        if self.state is ServerState.DISABLED:
            return
        if self._owner is not None and not self._owner.done():
            return
        _load_sdk(self.spec.type)
        self.state = ServerState.STARTING
        self.error = None
        self.exit_code = None
        self._lost = False
        self._bad_lines = 0
        self._first_bad = None
        self._http_status = None
        self._open_log()
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._wake = asyncio.Event()
        self._owner = loop.create_task(self._own(ready), name=f"mcp owner: {self.name}")
        # `ready` is settled by the owner in every case (connected, failed, timed out).
        await asyncio.shield(ready)

    async def stop(self) -> None:
        """Shut the connection down (stdio: the spec's close-stdin → TERM → KILL) and wait
        until it is. ``state`` becomes ``STOPPED`` unless it had failed."""
        owner = self._owner
        if owner is None:
            return
        if self._wake is not None:
            self._wake.set()
        with contextlib.suppress(asyncio.CancelledError):
            # shielded: the caller being cancelled must not leave the shutdown half-done
            await asyncio.shield(owner)
        if self.state in (ServerState.CONNECTED, ServerState.STARTING):
            self.state = ServerState.STOPPED

    async def restart(self) -> None:
        await self.stop()
        if self.state is not ServerState.DISABLED:
            self.state = ServerState.STOPPED
        await self.start()

    def kill(self) -> None:
        """SIGKILL the server's group now (no loop needed): the last resort."""
        pid = self.pid
        if pid is not None:
            from ..control.process import end_group

            end_group(pid)
            _untrack(pid)

    # -- the owner task -------------------------------------------------------------------------

    async def _own(self, ready: asyncio.Future[None]) -> None:
        import anyio

        reason: str | None = None
        try:
            with anyio.CancelScope() as scope:
                # The startup timeout is this scope's deadline (the outermost scope of the
                # task, so the client's own scopes nest inside it); lifted once connected.
                scope.deadline = anyio.current_time() + self.spec.startup_timeout
                async with self._client_for() as client:
                    tools = await self._list_tools(client)
                    scope.deadline = math.inf
                    self._connected(client, tools)
                    ready.set_result(None)
                    assert self._wake is not None
                    await self._wake.wait()
                    self._client = None
            if scope.cancelled_caught and not ready.done():
                # (no exit note: the code would be our own SIGTERM)
                reason = f"no answer to initialize within {self.spec.startup_timeout:g} s"
                reason += self._stdout_note()
        except Exception as exc:  # any failure is this server's, never the session's
            self._client = None
            reason = self._describe_failure(exc)
        except asyncio.CancelledError:
            # the loop that owns us is going away: the transports shut down on the way out
            self._client = None
            if self.state is not ServerState.FAILED:
                self.state = ServerState.STOPPED
            raise
        finally:
            if not ready.done():
                self._fail(reason or "the connection ended before it was ready")
                ready.set_result(None)
            elif reason is not None or self._lost:
                self._fail(reason or f"the server went away{self._exit_note()}")
            self._note("stopped" if self.state is not ServerState.FAILED else f"{self.error}")

    def _connected(self, client: Client, tools: tuple[ServerTool, ...]) -> None:
        self._client = client
        self.tools = tools
        info = client.server_info
        self.server_info = f"{info.name} {info.version}".strip() if info is not None else None
        self.protocol_version = client.protocol_version
        self.instructions = client.instructions
        self.state = ServerState.CONNECTED
        self.started_at = time.time()
        self._note(
            f"connected ({self.server_info or 'unnamed server'}, protocol "
            f"{self.protocol_version}, {len(tools)} tools)"
        )

    def _fail(self, reason: str) -> None:
        self.state = ServerState.FAILED
        self.error = redact(reason)

    def _client_for(self) -> Client:
        from mcp import Client
        from mcp_types import Implementation

        from .. import __version__

        return Client(
            self._transport(),
            mode="auto",
            client_info=Implementation(name="clawnb", version=__version__),
            cache=None,  # clawnb keeps the tool list itself; a cached one would go stale silently
        )

    async def _list_tools(self, client: Client) -> tuple[ServerTool, ...]:
        tools: list[ServerTool] = []
        cursor: str | None = None
        for _ in range(100):  # a paginator that never ends must not hang the start
            page = await client.list_tools(cursor=cursor)
            for tool in page.tools:
                if self.spec.allows_tool(tool.name):
                    tools.append(_server_tool(tool))
            cursor = page.next_cursor
            if cursor is None:
                break
        return tuple(tools)

    # -- transports ------------------------------------------------------------------------

    def _transport(self) -> contextlib.AbstractAsyncContextManager[Any]:
        if self.spec.type == "stdio":
            return self._stdio()
        return self._http()

    @contextlib.asynccontextmanager
    async def _http(self) -> AsyncIterator[Any]:
        import httpx2

        source = os.environ if self.environ is None else self.environ
        url = expand(self.spec.url or "", source)
        headers = {name: expand(value, source) for name, value in self.spec.headers.items()}
        for name, value in headers.items():
            _maybe_register(name, value)
        var = self.spec.bearer_token_env_var
        if var is not None:
            token = source.get(var)
            if not token:
                raise McpError(f"bearer_token_env_var: ${var} is not set")
            register_secret(token)
            headers["Authorization"] = f"Bearer {token}"
        self._note(f"connecting to {redact(url)}")
        if self.spec.type == "sse":
            from mcp.client.sse import sse_client

            async with sse_client(url, headers=headers, timeout=30.0) as streams:
                yield streams
            return
        from mcp.client.streamable_http import streamable_http_client

        timeout = httpx2.Timeout(30.0, read=max(300.0, self.spec.tool_timeout))

        async def on_response(response: httpx2.Response) -> None:
            # the SDK reports a refused request as "Server returned an error response";
            # the status says what to fix (a 401 is the token)
            if response.status_code >= 400:
                self._http_status = f"HTTP {response.status_code} {response.reason_phrase}"

        async with (
            httpx2.AsyncClient(
                headers=headers, timeout=timeout, event_hooks={"response": [on_response]}
            ) as http,
            streamable_http_client(
                url, http_client=http, max_sse_event_size=self.spec.max_message_bytes
            ) as streams,
        ):
            yield streams

    def _stdio_argv(self) -> tuple[list[str], dict[str, str], str | None]:
        environ = os.environ if self.environ is None else self.environ
        # ${CLAWNB_PYTHON}: the interpreter clawnb runs in (a notebook's: the kernel's), for a
        # server written in Python that needs the packages installed beside clawnb
        source = {"CLAWNB_PYTHON": sys.executable, **environ}
        command = expand(self.spec.command or "", source)
        if command.startswith("~"):
            command = os.path.expanduser(command)
        argv = [command, *(expand(a, source) for a in self.spec.args)]
        env = server_env(self.spec, source)
        cwd: str | None = None
        if self.spec.cwd is not None:
            cwd = os.path.expanduser(expand(self.spec.cwd, source))
            if self.workspace is not None and not os.path.isabs(cwd):
                cwd = str(self.workspace / cwd)
        elif self.workspace is not None:
            cwd = str(self.workspace)
        return argv, env, cwd

    @contextlib.asynccontextmanager
    async def _stdio(
        self,
    ) -> AsyncIterator[
        tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[Any]]
    ]:
        import anyio
        from mcp.shared.message import SessionMessage

        from ..control.process import spawn, wait_exit

        argv, env, cwd = self._stdio_argv()
        if self.spec.sandbox and self.sandbox is None:
            raise McpError(
                "sandbox = true, but no sandbox is available here (bubblewrap missing or "
                '[sandbox] mode = "off")'
            )
        log_fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            try:
                proc = await spawn(
                    argv,
                    cwd=cwd,
                    env=env,
                    sandbox=_with_program(self.sandbox, argv) if self.spec.sandbox else None,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=log_fd,
                )
            except FileNotFoundError as exc:
                missing = exc.filename if exc.filename is not None else argv[0]
                raise McpError(f"command not found: {missing!r}") from None
            except PermissionError:
                raise McpError(f"cannot run {argv[0]!r}: permission denied") from None
        finally:
            os.close(log_fd)  # the child has its own copy
        self.pid = proc.pid
        _track(proc.pid)
        self._note(
            f"started {argv[0]} (pid {proc.pid}){' in the sandbox' if self.spec.sandbox else ''}"
        )
        read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
        shutting_down = False

        async def reader() -> None:
            import mcp_types

            assert proc.stdout is not None
            lines = _Lines(self.spec.max_message_bytes)
            delivering = True
            async with read_send:
                while True:
                    chunk = await proc.stdout.read(_READ_CHUNK)
                    if not chunk:
                        break
                    if not delivering:
                        continue  # drained, so a server stuck writing can still see EOF
                    for item in lines.feed(chunk):
                        message = self._parse(item, mcp_types)
                        if message is None:
                            continue
                        try:
                            await read_send.send(SessionMessage(message))
                        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                            delivering = False
                            break
            if not shutting_down:
                # stdout closed by the server itself: it exited (or closed it): the
                # connection is gone; the owner wakes and records why
                self._lost = True
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wait_exit(proc), 1.0)
                self.exit_code = proc.returncode
                if self.state is ServerState.CONNECTED:
                    # said at once: a call made while the owner still shuts down fails fast
                    self._fail(f"the server went away{self._exit_note()}")
                if self._wake is not None:
                    self._wake.set()

        async def writer() -> None:
            assert proc.stdin is not None
            try:
                async with write_recv:
                    async for session_message in write_recv:
                        data = session_message.message.model_dump_json(
                            by_alias=True, exclude_unset=True
                        )
                        proc.stdin.write(data.encode() + b"\n")
                        await proc.stdin.drain()
            except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                # the server closed its stdin or died: end the read side too, so no request
                # waits for an answer that cannot come
                await read_send.aclose()

        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            try:
                yield read_recv, write_send
            finally:
                shutting_down = True
                with anyio.CancelScope(shield=True):
                    read_recv.close()  # the reader drains from now on
                    write_send.close()
                    await self._stop_process(proc)
                tg.cancel_scope.cancel()

    async def _stop_process(self, proc: asyncio.subprocess.Process) -> None:
        from ..control.process import kill_group, wait_exit

        pgid = proc.pid
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wait_exit(proc), STDIN_CLOSE_GRACE_S)
        # the server may have exited and left children in its group: end those too (returns
        # at once when the group is gone; it also stops the watchdog watching the group)
        await kill_group(pgid, TERM_GRACE_S)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wait_exit(proc), 2.0)
        self.exit_code = proc.returncode
        _untrack(pgid)
        self.pid = None
        # a survivor holding the stdout pipe keeps asyncio's transport open (and warning at
        # collection); the SDK's stdio client closes it the same way
        transport = getattr(proc, "_transport", None)
        close = getattr(transport, "close", None)
        if callable(close):
            with contextlib.suppress(PermissionError):
                close()

    def _parse(self, item: bytes | _Oversized, types: Any) -> mcp_types.JSONRPCMessage | None:
        if isinstance(item, _Oversized):
            limit = self.spec.max_message_bytes
            what = f"a stdout message of {_size(item.size)}, over the {_size(limit)} limit"
            self._note(f"dropped {what} (max_message_bytes)")
            rid = _oversized_id(item)
            if rid is None:
                return None
            message = (
                f"the reply was {_size(item.size)}, over this server's {_size(limit)} "
                "limit (max_message_bytes); it was dropped unread"
            )
            error: mcp_types.JSONRPCMessage = types.JSONRPCError(
                jsonrpc="2.0",
                id=rid,
                error=types.ErrorData(code=types.INTERNAL_ERROR, message=message),
            )
            return error
        line = item.strip()
        if not line:
            return None
        try:
            parsed: mcp_types.JSONRPCMessage = types.jsonrpc_message_adapter.validate_json(
                line, by_name=False
            )
        except ValueError:
            self._bad_lines += 1
            if self._first_bad is None:
                self._first_bad = line[:120]
            if self._bad_lines <= 5:
                self._note(f"ignored a stdout line that is not JSON-RPC: {line[:200]!r}")
            return None
        return parsed

    # -- requests ----------------------------------------------------------------------------

    def _require(self) -> Client:
        client = self._client
        if client is None or self.state is not ServerState.CONNECTED:
            raise ToolError(self.unavailable())
        return client

    def unavailable(self) -> str:
        """Why this server cannot answer now, in one line (for a tool error)."""
        if self.state is ServerState.DISABLED:
            return f"MCP server {self.name} is disabled (enabled = false)"
        if self.state is ServerState.FAILED:
            return (
                f"MCP server {self.name} is not running ({self.error}); restart it with "
                f"`%claw mcp restart {self.name}` or `/mcp restart {self.name}`"
            )
        return f"MCP server {self.name} is {self.state.value}"

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], timeout: float | None = None
    ) -> mcp_types.CallToolResult:
        """``tools/call`` with the entry's ``tool_timeout``. Raises :class:`ToolError` with a
        readable line for every failure (timeout, server error, connection gone).

        The call goes through ``ClientSession.send_request`` rather than ``Client.call_tool``:
        the latter raises on an output-schema mismatch and the result is lost, while clawnb
        checks the structured content itself and falls back to the content
        (:func:`clawnb.mcp.results.render_result`)."""
        import mcp_types
        from mcp.shared.exceptions import MCPError
        from pydantic import ValidationError

        client = self._require()
        limit = timeout if timeout is not None else self.spec.tool_timeout
        request = mcp_types.CallToolRequest(
            params=mcp_types.CallToolRequestParams(name=tool, arguments=arguments)
        )
        try:
            return await client.session.send_request(
                request, mcp_types.CallToolResult, request_read_timeout_seconds=limit
            )
        except MCPError as exc:
            raise ToolError(await self._call_failure(tool, exc, limit)) from None
        except ValidationError:
            raise ToolError(
                f"{self.name}: the reply to `{tool}` is not a tool result clawnb can read "
                "(it may ask for input — elicitation or sampling — which clawnb does not give)"
            ) from None

    async def _call_failure(self, tool: str, exc: Exception, limit: float) -> str:
        import mcp_types

        code = getattr(exc, "code", None)
        if code == mcp_types.REQUEST_TIMEOUT:
            return (
                f"{self.name}: `{tool}` did not answer within {limit:g} s (tool_timeout); "
                "the request was cancelled"
            )
        if code == mcp_types.CONNECTION_CLOSED or self._lost:
            # give the owner a moment to see the exit and record its code
            for _ in range(50):
                if self.state is ServerState.FAILED or self.exit_code is not None:
                    break
                await asyncio.sleep(0.02)
            return (
                f"{self.name}: the server went away during `{tool}`{self._exit_note()}; "
                f"see `%claw mcp log {self.name}` and restart it with "
                f"`%claw mcp restart {self.name}`"
            )
        return redact(f"{self.name}: `{tool}` failed: {getattr(exc, 'message', None) or exc}")

    async def list_prompts(self) -> list[mcp_types.Prompt]:
        client = self._require_for("prompts")
        return await _every_page(client.list_prompts, "prompts")

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> mcp_types.GetPromptResult:
        client = self._require_for("prompts")
        return await client.get_prompt(name, arguments)

    async def list_resources(self) -> list[mcp_types.Resource]:
        client = self._require_for("resources")
        return await _every_page(client.list_resources, "resources")

    async def read_resource(self, uri: str) -> mcp_types.ReadResourceResult:
        client = self._require_for("resources")
        return await client.read_resource(uri)

    def offers(self, what: str) -> bool:
        """Is it connected, and did it declare ``what`` (``"prompts"``, ``"resources"``)?"""
        client = self._client
        if client is None or self.state is not ServerState.CONNECTED:
            return False
        return getattr(client.server_capabilities, what, None) is not None

    def _require_for(self, what: str) -> Client:
        try:
            client = self._require()
        except ToolError as exc:
            raise McpError(str(exc)) from None
        capabilities = client.server_capabilities
        if getattr(capabilities, what, None) is None:
            raise McpError(f"MCP server {self.name} offers no {what}")
        return client

    # -- messages and the log ----------------------------------------------------------------

    def _describe_failure(self, exc: BaseException) -> str:
        leaf = _leaf(exc)
        if isinstance(leaf, KeyError):
            return f"${{{leaf.args[0]}}} is not set (used in {self.spec.where})"
        if isinstance(leaf, McpError | ToolError):
            return str(leaf)
        code = getattr(leaf, "code", None)
        import mcp_types

        if code == mcp_types.CONNECTION_CLOSED or self._lost:
            return (
                "the server closed the connection before it finished initialize"
                f"{self._exit_note()}{self._stdout_note()}{self._last_log_line()}"
            )
        if code == mcp_types.REQUEST_TIMEOUT:
            return f"no answer to initialize within {self.spec.startup_timeout:g} s"
        if self._http_status is not None:
            hint = ""
            if self._http_status.startswith(("HTTP 401", "HTTP 403")):
                hint = "; check its bearer_token_env_var or headers"
            return f"the server answered {self._http_status}{hint}"
        name = type(leaf).__name__
        if name in ("ConnectError", "ConnectTimeout"):
            return f"cannot connect to {redact(self.spec.url or '')}: {leaf}"
        if name == "HTTPStatusError":
            return f"the server answered {leaf}"
        message = getattr(leaf, "message", None) or str(leaf) or name
        return message if isinstance(leaf, OSError | RuntimeError) else f"{name}: {message}"

    def _exit_note(self) -> str:
        code = self.exit_code
        if code is None:
            return ""
        if code < 0:
            with contextlib.suppress(ValueError):
                return f" (killed by {signal.Signals(-code).name})"
            return f" (killed by signal {-code})"
        return f" (exit code {code})"

    def _stdout_note(self) -> str:
        if not self._bad_lines:
            return ""
        first = (self._first_bad or b"").decode("utf-8", "replace")
        return (
            f"; its stdout had {self._bad_lines} line(s) that are not JSON-RPC "
            f"(first: {first[:60]!r}) — a server must keep stdout for protocol messages"
        )

    def _last_log_line(self) -> str:
        for line in reversed(self.log_tail(20).splitlines()):
            if line.strip() and not line.startswith("[clawnb "):
                return f"; its last log line: {line.strip()[:160]!r}"
        return ""

    def _open_log(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            if self.log_path.stat().st_size > LOG_ROTATE_BYTES:
                os.replace(self.log_path, self.log_path.with_name(self.log_path.name + ".1"))
        where = self.spec.command if self.spec.type == "stdio" else self.spec.url
        self._note(
            f"starting {self.name} ({self.spec.type}: {where}; from {self.spec.source or '?'})"
        )

    def _note(self, text: str) -> None:
        """One line from clawnb into the server's log (keys redacted)."""
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        line = f"[clawnb {stamp}] {redact(text)}\n".encode()
        with contextlib.suppress(OSError):
            fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
            finally:
                os.close(fd)

    def log_tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines of the server's log, redacted ("" when there is none)."""
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                size = fh.tell()
                fh.seek(max(0, size - 64 * 1024))
                data = fh.read()
        except OSError:
            return ""
        text = data.decode("utf-8", "replace")
        return redact("\n".join(text.splitlines()[-lines:]))


def _load_sdk(transport: str) -> None:
    """Import the SDK before any clock starts: its first import takes seconds on a busy
    machine, which must not count against the first server's ``startup_timeout``."""
    import anyio  # noqa: F401
    import mcp  # noqa: F401
    import mcp_types  # noqa: F401

    if transport != "stdio":
        import httpx2  # noqa: F401
    with contextlib.suppress(ImportError):
        # checks structured results (clawnb.mcp.results); slow to import the first time
        import jsonschema  # type: ignore[import-untyped]  # noqa: F401


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        if not inner:
            return exc.exceptions[0]
        exc = inner[0]
    return exc


def _server_tool(tool: Any) -> ServerTool:
    annotations = tool.annotations
    hints = ToolHints(
        read_only=getattr(annotations, "read_only_hint", None),
        destructive=getattr(annotations, "destructive_hint", None),
        idempotent=getattr(annotations, "idempotent_hint", None),
        open_world=getattr(annotations, "open_world_hint", None),
    )
    title = tool.title or getattr(annotations, "title", None)
    return ServerTool(
        name=tool.name,
        description=tool.description or "",
        input_schema=dict(tool.input_schema or {"type": "object"}),
        output_schema=dict(tool.output_schema) if tool.output_schema else None,
        hints=hints,
        title=title,
    )


def _with_program(policy: SandboxPolicy | None, argv: list[str]) -> SandboxPolicy | None:
    """The session's sandbox, with the server's own program readable in it: the folders of
    the files its command line names (a script, the interpreter) and, for an interpreter in
    a virtualenv, that environment — read-only. The sandbox hides the host's ``/tmp`` and
    everything is read-only anyway; without these a server installed in a venv under ``/tmp``
    (or started from a script there) could not even start."""
    if policy is None:
        return None
    import dataclasses

    folders: list[Path] = []
    for arg in argv:
        if not os.path.isabs(arg) or not os.path.isfile(arg):
            continue
        here = Path(arg).parent
        folders.append(here)
        if (here.parent / "pyvenv.cfg").is_file():  # <venv>/bin/python: the whole venv
            folders.append(here.parent)
    if not folders:
        return policy
    return dataclasses.replace(policy, extra_read_only=(*policy.extra_read_only, *folders))


async def _every_page(list_page: Any, field: str, pages: int = 100) -> list[Any]:
    """Every item of a paginated listing (``prompts``, ``resources``), at most ``pages``
    pages — a server that always sends another cursor cannot keep the client listing."""
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(pages):
        page = await list_page(cursor=cursor)
        items += getattr(page, field)
        cursor = page.next_cursor
        if cursor is None:
            break
    return items
