"""WebFetchTool against a real HTTP server on 127.0.0.1 (and the SSRF refusals)."""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from clawnb.tools import ToolError, WebFetchTool
from clawnb.tools.web_fetch import _is_public, html_to_text

PAGE = """<!doctype html><html><head><title>T</title>
<style>body { color: red }</style><script>var secret = "js-code";</script></head>
<body><h1>Main Title</h1><p>Hello <b>bold</b> &amp; <a href="/next">a link</a>.</p>
<ul><li>one</li><li>two</li></ul></body></html>"""


class _Handler(BaseHTTPRequestHandler):
    release = threading.Event()
    hits: list[str] = []

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str | None, extra=()) -> None:
        try:
            self.send_response(status)
            if ctype:
                self.send_header("Content-Type", ctype)
            for k, v in extra:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_GET(self) -> None:
        self.hits.append(self.path)
        port = self.server.server_address[1]
        routes = {
            "/html": (200, PAGE.encode(), "text/html; charset=utf-8"),
            "/json": (200, b'{"a": [1, 2]}', "application/json"),
            "/plain": (200, "caf\xe9".encode("latin-1"), "text/plain; charset=latin-1"),
            "/empty": (200, b"", "text/plain"),
            "/missing": (404, b"nope", "text/plain"),
            "/boom": (500, b"err", "text/plain"),
            "/image": (200, b"\x89PNG\r\n\x1a\n....", "image/png"),
            "/big": (200, b"x" * 200_000, "text/plain"),
        }
        if self.path == "/slow":
            self.release.wait(10)
            self._send(200, b"late", "text/plain")
        elif self.path == "/redirect":
            self._send(302, b"", "text/plain", [("Location", "/json")])
        elif self.path == "/to-localhost":
            self._send(302, b"", "text/plain", [("Location", f"http://localhost:{port}/json")])
        elif self.path == "/loop":
            self._send(302, b"", "text/plain", [("Location", "/loop")])
        else:
            status, body, ctype = routes.get(self.path, (404, b"unknown", "text/plain"))
            self._send(status, body, ctype)


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.release = threading.Event()
    _Handler.hits = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        _Handler.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def _tool(**options) -> WebFetchTool:
    return WebFetchTool(allow_private=True, **options)


async def test_html_becomes_readable_text(server):
    out = await _tool().call({"url": f"{server}/html"})
    assert "# Main Title" in out
    assert "Hello **bold** & [a link](" in out
    assert "/next)" in out
    assert "* one" in out and "* two" in out
    assert "js-code" not in out and "color: red" not in out and "<p>" not in out


async def test_json_and_charset(server):
    assert await _tool().call({"url": f"{server}/json"}) == '{"a": [1, 2]}'
    assert await _tool().call({"url": f"{server}/plain"}) == "café"
    assert await _tool().call({"url": f"{server}/empty"}) == "(empty response)"


async def test_non_2xx_is_an_error(server):
    with pytest.raises(
        ToolError, match=r"^HTTP 404 Not Found for http://127\.0\.0\.1:\d+/missing$"
    ):
        await _tool().call({"url": f"{server}/missing"})
    with pytest.raises(ToolError, match="HTTP 500"):
        await _tool().call({"url": f"{server}/boom"})


async def test_non_text_is_an_error(server):
    with pytest.raises(ToolError, match="cannot show image/png"):
        await _tool().call({"url": f"{server}/image"})


async def test_timeout(server):
    with pytest.raises(ToolError, match=r"timed out after 0\.3s"):
        await _tool(timeout=0.3).call({"url": f"{server}/slow"})


async def test_size_caps(server):
    out = await _tool(max_bytes=1000).call({"url": f"{server}/big"})
    assert out.startswith("[response cut at 1000 bytes]\n\n")
    assert out.count("x") == 1000
    out = await _tool().call({"url": f"{server}/big", "max_length": 50})
    assert out == "x" * 50 + "\n\n[... truncated at 50 characters]"


async def test_redirects_are_followed_and_reported(server):
    out = await _tool().call({"url": f"{server}/redirect"})
    assert out == f"(redirected to {server}/json)\n\n" + '{"a": [1, 2]}'
    with pytest.raises(ToolError, match="too many redirects"):
        await _tool().call({"url": f"{server}/loop"})


async def test_loopback_is_refused_without_connecting(server):
    tool = WebFetchTool()
    with pytest.raises(ToolError, match="refusing to fetch .*127.0.0.1.*allow_private is off"):
        await tool.call({"url": f"{server}/json"})
    port = server.rsplit(":", 1)[1]
    with pytest.raises(ToolError, match="localhost resolves to 127.0.0.1"):
        await tool.call({"url": f"http://localhost:{port}/json"})
    assert _Handler.hits == []  # the server never saw a request


async def test_every_redirect_hop_is_checked(server):
    """127.0.0.1 is explicitly allowed, but a redirect to ``localhost`` (also loopback, not
    allowed) is refused before it is followed."""
    tool = WebFetchTool(allowed_hosts=["127.0.0.1"])
    assert await tool.call({"url": f"{server}/json"}) == '{"a": [1, 2]}'
    with pytest.raises(ToolError, match="refusing to fetch http://localhost"):
        await tool.call({"url": f"{server}/to-localhost"})
    assert _Handler.hits == ["/json", "/to-localhost"]


@pytest.mark.parametrize(
    "url",
    [
        "http://10.1.2.3/",
        "http://192.168.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "http://0.0.0.0/",
        "http://[::ffff:127.0.0.1]/",
    ],
)
async def test_private_literals_are_refused(url):
    with pytest.raises(ToolError, match="refusing to fetch"):
        await WebFetchTool(timeout=1).call({"url": url})


async def test_only_http_and_https():
    for url in ("file:///etc/passwd", "ftp://example.com/x", "gopher://x"):
        with pytest.raises(ToolError, match=r"^only http\(s\) URLs are supported$"):
            await WebFetchTool().call({"url": url})
    with pytest.raises(ToolError, match="no host"):
        await WebFetchTool().call({"url": "http:///path"})


def test_public_address_check():
    assert _is_public(ipaddress.ip_address("93.184.216.34"))
    assert _is_public(ipaddress.ip_address("2606:4700::1111"))
    for private in ("127.0.0.1", "10.0.0.1", "172.16.5.4", "fe80::1", "fc00::1", "224.0.0.1"):
        assert not _is_public(ipaddress.ip_address(private))


def test_html_to_text_drops_markup():
    assert html_to_text("<p>a<br>b</p><script>x()</script>") == "a\nb"


def test_metadata():
    tool = WebFetchTool()
    assert tool.read_only is True and tool.concurrency_safe is True
