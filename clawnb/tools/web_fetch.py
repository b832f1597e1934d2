"""WebFetchTool (seed 002): fetch a URL and give the model readable text.

* ``http``/``https`` only; redirects are followed by hand (at most 5) so that every hop is
  checked again;
* **SSRF guard**: the host is resolved and *every* address it resolves to must be public —
  loopback, private, link-local (cloud metadata at 169.254.169.254), multicast, reserved and
  unspecified addresses are refused unless ``allow_private=True`` (or the host is listed in
  ``allowed_hosts``). This stops a prompt-injected page from steering the agent at the
  notebook server or the LAN. (A DNS answer that changes between the check and the connect
  can still slip through; the check is a guard, not a sandbox.)
* timeout (default 30 s), a cap on bytes read (default 5 MB) and on characters returned
  (``max_length``, default 50,000);
* HTML is turned into Markdown-ish text by ``html2text`` (scripts and styles dropped, links
  kept); JSON, XML and other text types are returned as text; anything else (images, PDFs,
  archives) is a clear error, as are non-2xx statuses and timeouts.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Iterable
from typing import Any
from urllib.parse import urljoin, urlsplit

from ..types import JSON, ToolDefinition, ToolTraits
from .base import BaseTool, ToolError, optional_int, require_str

__all__ = ["WebFetchTool", "html_to_text"]

_TEXT_TYPES = (
    "application/json",
    "application/ld+json",
    "application/xml",
    "application/xhtml+xml",
    "application/javascript",
    "application/x-javascript",
    "application/rss+xml",
    "application/atom+xml",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
    "application/x-sh",
)
_REDIRECTS = (301, 302, 303, 307, 308)
MAX_REDIRECTS = 5


def html_to_text(html: str, base_url: str = "") -> str:
    """Readable text from HTML: headings, lists and links survive, markup does not."""
    # imported on first use (keeps `import clawnb` cheap), through the guard: never a
    # html2text.py of the workspace (clawnb.control.imports)
    from ..control.imports import load

    html2text = load("html2text")

    converter = html2text.HTML2Text(baseurl=base_url)
    converter.body_width = 0  # no hard wrapping
    converter.ignore_images = True
    converter.ignore_emphasis = False
    converter.unicode_snob = True
    text = converter.handle(html)
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:  # collapse runs of blank lines
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


def _is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return not (
        address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or (isinstance(address, ipaddress.IPv6Address) and address.is_site_local)
    )


class WebFetchTool(BaseTool):
    """``web_fetch``: GET a URL, return its text (HTML converted to readable text)."""

    traits = ToolTraits(read_only=True, open_world=True)

    def __init__(
        self,
        *,
        timeout: float = 30.0,
        max_bytes: int = 5_000_000,
        max_length: int = 50_000,
        allow_private: bool = False,
        allowed_hosts: Iterable[str] = (),
        user_agent: str = "clawnb/0.1 (+https://github.com/clawnb)",
    ) -> None:
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_length = max_length
        self.allow_private = allow_private
        self.allowed_hosts = {h.lower() for h in allowed_hosts}
        self.user_agent = user_agent
        self.definition = (
            ToolDefinition(
                "web_fetch",
                "Fetch a web page or other text resource over http(s) and return it as "
                "readable text (HTML is converted).",
            )
            .param("url", "string", "The http:// or https:// URL to fetch", required=True)
            .param("max_length", "integer", f"Maximum characters to return (default: {max_length})")
        )

    async def check_url(self, url: str) -> None:
        """Raise :class:`ToolError` unless ``url`` is http(s) and its host is allowed."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise ToolError("only http(s) URLs are supported")
        host = parts.hostname
        if not host:
            raise ToolError(f"no host in URL {url!r}")
        if self.allow_private or host.lower() in self.allowed_hosts:
            return
        try:
            addresses = [ipaddress.ip_address(host)]
        except ValueError:
            try:
                infos = await asyncio.get_running_loop().getaddrinfo(
                    host,
                    parts.port or (443 if parts.scheme == "https" else 80),
                    type=socket.SOCK_STREAM,
                )
            except socket.gaierror as exc:
                raise ToolError(f"cannot resolve host {host!r}: {exc.strerror}") from None
            # IPv6 entries may carry a scope (``fe80::1%eth0``); the address is what matters
            addresses = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
        for address in addresses:
            if not _is_public(address):
                raise ToolError(
                    f"refusing to fetch {url}: {host} resolves to {address}, a private, "
                    "loopback or link-local address (allow_private is off)"
                )

    async def call(self, args: JSON) -> str:
        url = require_str(args, "url")
        max_length = optional_int(args, "max_length", minimum=1) or self.max_length
        from ..control.imports import load

        load("httpx")  # on first use, through the guard (see html_to_text)
        import httpx

        try:
            async with httpx.AsyncClient(
                timeout=self.timeout,
                follow_redirects=False,
                headers={
                    "User-Agent": self.user_agent,
                    "Accept": "text/html, text/*;q=0.9, */*;q=0.5",
                },
            ) as client:
                async with asyncio.timeout(self.timeout):
                    return await self._fetch(client, url, max_length)
        except TimeoutError:
            raise ToolError(f"timed out after {self.timeout:g}s fetching {url}") from None
        except httpx.TimeoutException:
            raise ToolError(f"timed out after {self.timeout:g}s fetching {url}") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"error fetching {url}: {exc}") from None

    async def _fetch(self, client: Any, url: str, max_length: int) -> str:
        current = url
        for _ in range(MAX_REDIRECTS + 1):
            await self.check_url(current)
            async with client.stream("GET", current) as response:
                if response.status_code in _REDIRECTS and "location" in response.headers:
                    current = urljoin(current, response.headers["location"])
                    continue
                if not 200 <= response.status_code < 300:
                    reason = response.reason_phrase or ""
                    raise ToolError(
                        f"HTTP {response.status_code} {reason}".rstrip() + f" for {current}"
                    )
                content_type = response.headers.get("content-type", "")
                mime = content_type.split(";", 1)[0].strip().lower()
                if mime and not (
                    mime.startswith("text/")
                    or mime in _TEXT_TYPES
                    or mime.endswith("+json")
                    or mime.endswith("+xml")
                ):
                    raise ToolError(
                        f"cannot show {mime} content from {current}; only text is supported"
                    )
                body, cut = await self._read(response)
                text = body.decode(response.encoding or "utf-8", errors="replace")
            break
        else:
            raise ToolError(f"too many redirects (more than {MAX_REDIRECTS}) from {url}")
        if mime in ("text/html", "application/xhtml+xml") or (
            not mime and "<html" in text[:1000].lower()
        ):
            text = html_to_text(text, current)
        if not text.strip():
            return "(empty response)"
        notes = []
        if current != url:
            notes.append(f"(redirected to {current})")
        if cut:
            notes.append(f"[response cut at {self.max_bytes} bytes]")
        if len(text) > max_length:
            text = text[:max_length] + f"\n\n[... truncated at {max_length} characters]"
        return ("\n".join(notes) + "\n\n" if notes else "") + text

    async def _read(self, response: Any) -> tuple[bytes, bool]:
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= self.max_bytes:
                return b"".join(chunks)[: self.max_bytes], True
        return b"".join(chunks), False
