"""Issue 24 item 6 — a command in a sandbox with ``[sandbox] allowed_hosts`` tries to get out
some other way than to a listed host. Real bubblewrap, tinyproxy and socat; a real listener on
127.0.0.1 that counts the connections it got, so "refused" means no byte arrived, not that a
program printed an error. ``localhost`` is listed; ``127.0.0.1`` (the same listener) is not."""

from __future__ import annotations

import os
import shlex
import socket
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawnb.control.proxy import proxy_programs
from clawnb.control.sandbox import bwrap_path, policy_for
from clawnb.tools import BashTool

# The sandbox has a private, empty /tmp: a Python under /tmp (a CI clone's venv) is not there,
# so sandboxed commands use the system's interpreter when it has one.
SANDBOX_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

_TINYPROXY, _SOCAT = proxy_programs()
_MISSING = [
    name
    for name, path in (("bwrap", bwrap_path()), ("tinyproxy", _TINYPROXY), ("socat", _SOCAT))
    if path is None
]
if _MISSING and os.environ.get("CLAWNB_SANDBOX_TESTS") == "require":
    raise RuntimeError(
        f"CLAWNB_SANDBOX_TESTS=require but {', '.join(_MISSING)} missing: "
        "apt-get install bubblewrap tinyproxy socat"
    )
pytestmark = pytest.mark.skipif(bool(_MISSING), reason=f"{', '.join(_MISSING)} not installed")


class Listener:
    """A TCP listener on 127.0.0.1 that answers any request with a small HTTP page and
    counts the connections that reached it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = int(self.sock.getsockname()[1])
        self.hits = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.hits += 1
            with conn:
                conn.settimeout(5)
                try:
                    conn.recv(65536)
                    conn.sendall(b"HTTP/1.0 200 OK\r\ncontent-length: 3\r\n\r\nyes")
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.close()


@pytest.fixture
def bash(tmp_path: Path) -> Iterator[BashTool]:
    ws = tmp_path / "ws"
    ws.mkdir()
    status = policy_for(ws, allowed_hosts=["localhost"])
    assert status.policy is not None and status.policy.proxied
    yield BashTool(ws, sandbox=status, kill_grace=0.2)
    status.policy.close()


def python(script: str) -> str:
    return f"{SANDBOX_PYTHON} -c {shlex.quote(textwrap.dedent(script))}"


def raw(request: str) -> str:
    """A script that sends ``request`` to the in-sandbox bridge and prints the status line."""
    return python(
        f"""
        import socket
        s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
        s.sendall({request.encode()!r})
        print(s.recv(4096).split(b"\\r\\n")[0].decode())
        """
    )


async def test_the_listed_host_is_reached_and_counted(bash, listener):
    out = await bash.call(
        {"command": raw(f"GET http://localhost:{listener.port}/ HTTP/1.0\r\n\r\n")}
    )
    assert out.strip() == "HTTP/1.0 200 OK" and listener.hits == 1


async def test_an_unlisted_url_with_a_listed_host_header_is_refused(bash, listener):
    request = f"GET http://127.0.0.1:{listener.port}/ HTTP/1.1\r\nHost: localhost\r\n\r\n"
    out = await bash.call({"command": raw(request)})
    assert out.strip().splitlines()[0] == "HTTP/1.1 403 Filtered" and listener.hits == 0


async def test_a_tunnel_to_a_listed_host_on_another_port_is_refused(bash, listener):
    # CONNECT to a listed name, but not to a web port: no tunnel to its ssh or database
    out = await bash.call(
        {"command": raw(f"CONNECT localhost:{listener.port} HTTP/1.1\r\nHost: localhost\r\n\r\n")}
    )
    assert out.strip() == "HTTP/1.1 403 Access violation" and listener.hits == 0


async def test_a_tunnel_to_an_unlisted_host_is_refused(bash, listener):
    out = await bash.call({"command": raw("CONNECT 127.0.0.1:443 HTTP/1.1\r\n\r\n")})
    assert out.strip().splitlines()[0] == "HTTP/1.1 403 Filtered"
    assert "[sandbox: the proxy refused 127.0.0.1: " in out


async def test_no_route_out_without_the_proxy(bash, listener):
    out = await bash.call(
        {
            "command": python(
                f"""
                import socket
                for family, address in ((socket.AF_INET, ("127.0.0.1", {listener.port})),
                                        (socket.AF_INET, ("8.8.8.8", 53)),
                                        (socket.AF_INET6, ("::1", {listener.port}))):
                    try:
                        socket.socket(family).connect(address)
                        print("reached", address)
                    except OSError as exc:
                        print("refused", type(exc).__name__)
                try:
                    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                    u.sendto(b"x", ("8.8.8.8", 53))
                    print("sent udp")
                except OSError:
                    print("refused udp")
                try:
                    socket.getaddrinfo("pypi.org", 443)
                    print("resolved")
                except OSError:
                    print("no dns")
                """
            )
        }
    )
    assert "reached" not in out and "sent udp" not in out and "resolved" not in out, out
    assert out.count("refused") == 4 and "no dns" in out
    assert listener.hits == 0


async def test_the_proxy_folder_is_out_of_reach_and_killing_the_bridge_frees_nothing(
    bash, listener
):
    assert bash.sandbox is not None
    status = bash.sandbox
    policy = getattr(status, "policy", status)
    await bash.call({"command": "true"})
    folder = policy.proxy.folder
    assert folder is not None
    # the host's folder (config, filter, socket) is behind the private /tmp
    out = await bash.call({"command": f"ls {folder} 2>&1; echo rc=$?"})
    assert "rc=0" not in out
    # the bridge is the command's own child: killing it only leaves the command offline
    out = await bash.call(
        {
            "command": "kill $(pgrep -x socat) 2>/dev/null; sleep 0.2; "
            + python(
                f"""
                import socket
                try:
                    socket.create_connection(("127.0.0.1", 3128), timeout=5)
                    print("bridge up")
                except OSError:
                    print("offline")
                try:
                    socket.create_connection(("127.0.0.1", {listener.port}), timeout=5)
                    print("reached")
                except OSError:
                    print("refused")
                """
            )
        }
    )
    assert out.split() == ["offline", "refused"] and listener.hits == 0
    # the next command has its bridge again, through the same host proxy
    out = await bash.call(
        {"command": raw(f"GET http://localhost:{listener.port}/ HTTP/1.0\r\n\r\n")}
    )
    assert out.strip() == "HTTP/1.0 200 OK" and listener.hits == 1
