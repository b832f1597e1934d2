"""A tiny scripted HTTP/1.1 server on 127.0.0.1 for provider tests (ch5b and the fault suite).

Each accepted connection reads one request and plays the next scripted reply: raw bytes,
pauses, waits for the test to say "go on", or a connection reset. Replies are written
byte-for-byte, so tests see exactly what a real server's socket would deliver::

    async with LoopbackServer(http_response(sse_body(lines))) as server:
        provider = OpenRouterProvider(api_key="k", model="m").base_url(server.url)

Only the standard library is used; nothing here touches the network beyond the loopback.
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "RESET",
    "LoopbackServer",
    "Pause",
    "Recorded",
    "WaitFor",
    "chunk",
    "chunked_head",
    "http_response",
    "sse_body",
]


class _Reset:
    def __repr__(self) -> str:
        return "RESET"


RESET = _Reset()
"""Script step: abort the connection with a TCP reset (no more bytes)."""


@dataclass(frozen=True)
class Pause:
    """Script step: sleep ``seconds`` before the next step (a stall between chunks)."""

    seconds: float


@dataclass(frozen=True)
class WaitFor:
    """Script step: wait until the test sets ``event`` (fails the reply after ``timeout``)."""

    event: asyncio.Event
    timeout: float = 5.0


@dataclass
class Recorded:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


Step = bytes | Pause | WaitFor | _Reset
Reply = bytes | list[Step] | Callable[[Recorded], "bytes | list[Step]"]


def sse_body(lines: Iterable[str], *, newline: str = "\n") -> str:
    """The book's way of building a body: lines joined with newlines (blank strings are the
    blank lines between events)."""
    return newline.join(lines)


def http_response(
    body: bytes | str = b"",
    status: int = 200,
    content_type: str = "text/event-stream",
    headers: dict[str, str] | None = None,
) -> bytes:
    """A complete ``Connection: close`` response with ``Content-Length``."""
    data = body.encode() if isinstance(body, str) else body
    reason = {
        200: "OK",
        400: "Bad Request",
        401: "Unauthorized",
        429: "Too Many Requests",
        500: "Internal Server Error",
        502: "Bad Gateway",
        503: "Service Unavailable",
    }
    lines = [
        f"HTTP/1.1 {status} {reason.get(status, 'Status')}",
        f"Content-Type: {content_type}",
        f"Content-Length: {len(data)}",
        "Connection: close",
    ]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


def chunked_head(status: int = 200, content_type: str = "text/event-stream") -> bytes:
    """Headers of a ``Transfer-Encoding: chunked`` response; follow with :func:`chunk` s."""
    return (
        f"HTTP/1.1 {status} OK\r\nContent-Type: {content_type}\r\n"
        "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    ).encode()


def chunk(data: bytes | str) -> bytes:
    """One HTTP chunk; ``chunk(b"")`` is the terminating zero-length chunk."""
    raw = data.encode() if isinstance(data, str) else data
    return f"{len(raw):x}\r\n".encode() + raw + b"\r\n"


class LoopbackServer:
    """``async with LoopbackServer(reply1, reply2, ...)``: connection *n* gets reply *n*
    (the last reply repeats). ``requests`` records what arrived; ``url`` is the base URL;
    ``client_gone`` is set when the client hung up before the reply was complete."""

    def __init__(self, *replies: Reply) -> None:
        if not replies:
            raise ValueError("LoopbackServer needs at least one reply")
        self.replies: tuple[Reply, ...] = replies
        self.requests: list[Recorded] = []
        self.connections = 0
        self.closed_early = 0
        self.client_gone = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}"

    async def __aenter__(self) -> LoopbackServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._serve(reader, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            self.closed_early += 1
            self.client_gone.set()
        finally:
            self._tasks.discard(task)
            writer.close()
            try:
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        index = min(self.connections, len(self.replies) - 1)
        self.connections += 1
        request = await _read_request(reader)
        self.requests.append(request)
        reply = self.replies[index]
        if callable(reply):
            reply = reply(request)
        steps = [reply] if isinstance(reply, bytes) else list(reply)
        for step in steps:
            if isinstance(step, bytes):
                if writer.is_closing():
                    raise ConnectionResetError("client went away")
                writer.write(step)
                await writer.drain()
            elif isinstance(step, Pause):
                # While pausing, notice a client that hung up (cancellation closes the stream).
                try:
                    data = await asyncio.wait_for(reader.read(1), step.seconds)
                except TimeoutError:
                    continue
                if not data:
                    raise ConnectionResetError("client closed the connection")
            elif isinstance(step, WaitFor):
                await asyncio.wait_for(step.event.wait(), step.timeout)
            elif step is RESET:
                sock = writer.get_extra_info("socket")
                if sock is not None:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
                return


async def _read_request(reader: asyncio.StreamReader) -> Recorded:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = (lines[0].split(" ", 2) + ["", ""])[:3]
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    body = await reader.readexactly(length) if length else b""
    return Recorded(method, path, headers, body)
