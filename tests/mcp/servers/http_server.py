"""A streamable-HTTP MCP server written with the SDK's ``MCPServer``, on 127.0.0.1.

Run: ``python http_server.py [TOKEN]``. It binds a free port, prints ``PORT <n>`` on stdout
once it listens, and serves ``/mcp``. With ``TOKEN``, every request must carry
``Authorization: Bearer TOKEN`` (else 401). Tools: ``add(a, b)``, ``headers`` (the request's
``X-Team`` header, to show configured headers arrive), ``echo_token`` (echoes the bearer
token back: a result carrying a secret).
"""

import socket
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

TOKEN = sys.argv[1] if len(sys.argv) > 1 else None
server = MCPServer("http-test", version="1.0")
seen: dict[str, str] = {}


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
def headers() -> str:
    """The X-Team header of the request."""
    return seen.get("x-team", "(none)")


@server.tool()
def echo_token() -> str:
    """Echo the bearer token."""
    return seen.get("authorization", "(none)")


app = server.streamable_http_app()


async def guarded(scope, receive, send):
    if scope["type"] == "http":
        got = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        seen.update({k: got[k] for k in ("x-team", "authorization") if k in got})
        if TOKEN is not None and got.get("authorization") != f"Bearer {TOKEN}":
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
    await app(scope, receive, send)


sock = socket.socket()
sock.bind(("127.0.0.1", 0))
port = sock.getsockname()[1]
sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
config = uvicorn.Config(guarded, log_level="warning", lifespan="on")
uvicorn_server = uvicorn.Server(config)


async def main():
    print(f"PORT {port}", flush=True)
    await uvicorn_server.serve(sockets=[sock])


if __name__ == "__main__":
    import anyio

    anyio.run(main)
