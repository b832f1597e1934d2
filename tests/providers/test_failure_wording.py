"""One wording per failure, whoever shows it (issue 26): the first failures a new user meets —
no key, nothing listening at the base URL, a refused key, an unknown model, a rate limit —
give the same one line through the Python API, the terminal chat (in a pty) and a ``%%claw``
cell in a real kernel. The servers are real HTTP servers on 127.0.0.1; "no key" is judged by
its effect too: with every proxy pointed at a recording server, nothing leaves the process."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from clawnb.errors import ClawError
from clawnb.session.assemble import build_agent
from tests.conftest import spawn_chat

pytestmark = pytest.mark.timeout(120)

KEY = "sk-test-failure-wording-0123456789"  # what the key-refused case sends; never printed


class StatusServer:
    """Answers every request with one status and JSON body; records each request line
    (``CONNECT`` included, so a proxied HTTPS request counts)."""

    def __init__(self, status: int = 200, body: Any = None, headers: dict[str, str] | None = None):
        self.requests: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                outer.requests.append(f"{self.command} {self.path}")
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_CONNECT = _answer  # noqa: N815 - http.server's naming

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> StatusServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Case:
    name: str
    env: dict[str, str]  # CLAWNB_BASE_URL, CLAWNB_API_KEY, proxies
    model: str
    line: str  # the one line every front end shows
    server: StatusServer | None = None  # must see no request ("no key")


def _error(message: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, **({"code": code} if code else {})}}


CASES = ("no key", "closed port", "401", "unknown model", "429")


@pytest.fixture(params=CASES)
def case(request: pytest.FixtureRequest) -> Iterator[Case]:
    name = request.param
    if name == "no key":
        with StatusServer(200, {}) as proxy:
            yield Case(
                name,
                {"HTTPS_PROXY": proxy.url, "HTTP_PROXY": proxy.url, "ALL_PROXY": proxy.url},
                "some/model",
                "no API key found for openrouter.ai: set CLAWNB_API_KEY or OPENROUTER_API_KEY "
                "(environment or .env); or run offline with --model scripted:FILE",
                server=proxy,
            )
            assert proxy.requests == []  # refused before anything was sent
        return
    if name == "closed port":
        url = f"http://127.0.0.1:{_closed_port()}/v1"
        yield Case(
            name,
            {"CLAWNB_BASE_URL": url},
            "m",
            f"could not reach {url} — is the server running? check --base-url / CLAWNB_BASE_URL",
        )
        return
    status, body, headers, model = {
        "401": (401, _error("Invalid API key"), {}, "m"),
        "unknown model": (
            404,
            _error("The model `nope` does not exist.", "model_not_found"),
            {},
            "nope",
        ),
        "429": (429, _error("Rate limit exceeded"), {"Retry-After": "0"}, "m"),
    }[name]
    with StatusServer(status, body, headers) as server:
        line = {
            "401": "HTTP 401: Invalid API key — the server refused the API key: check "
            "CLAWNB_API_KEY or OPENAI_API_KEY",
            "unknown model": "HTTP 404: The model `nope` does not exist. (code model_not_found) "
            f"[POST {server.url}/chat/completions] — is the model name 'nope' right? check "
            "--model / CLAWNB_MODEL and --base-url / CLAWNB_BASE_URL",
            "429": "HTTP 429: Rate limit exceeded — rate limited: wait a little and send again",
        }[name]
        yield Case(name, {"CLAWNB_BASE_URL": server.url, "CLAWNB_API_KEY": KEY}, model, line)
        assert server.requests  # these were sent, and answered


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("CLAWNB_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY", "CLAWNB_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("CLAWNB_BASE_URL", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


async def test_the_python_api_says_the_line(
    case: Case, clean_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in case.env.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "ws").mkdir()
    session = build_agent(workspace=tmp_path / "ws", model=case.model)
    with pytest.raises(ClawError) as caught:
        await session.send("hello")
    assert str(caught.value) == case.line
    assert KEY not in str(caught.value)


def test_the_chat_says_the_line(case: Case, tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    ws = tmp_path / "ws"
    ws.mkdir()
    child = spawn_chat(
        tmp_path,
        "--workspace",
        str(ws),
        "--no-save",
        "--no-color",
        "--model",
        case.model,
        env=case.env,
        timeout=30,
    )
    child.expect("you> ")
    banner = str(child.before)
    child.sendline("hello")
    child.expect_exact(f"error: {case.line}")
    child.expect("you> ")
    shown = banner + str(child.before)
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert KEY not in shown
    if case.name == "no key":  # said once at the start too, in the same words
        assert f"warning: {case.line}" in banner


def test_a_claw_cell_says_the_line(case: Case, tmp_path: Path) -> None:
    pytest.importorskip("jupyter_client")
    from tests.notebook.kernelclient import Kernel, kernel_env

    ws = tmp_path / "ws"
    ws.mkdir()
    env = kernel_env(tmp_path, HOME=str(tmp_path / "home"), **case.env)
    kernel = Kernel(ws, env)
    try:
        assert kernel.execute("%load_ext clawnb").status == "ok"
        run = kernel.execute(f"%%claw --model {case.model}\nhello", timeout=60)
    finally:
        kernel.close()
    assert run.status == "error"  # the cell fails, so Run All stops there
    assert case.line in run.text, run.text
    saved = "".join(o.get("data", {}).get("text/markdown", "") for o in run.outputs)
    # the line is the cell's red error (ClawFailed), shown once: not also in the transcript
    errors = [o for o in run.outputs if o["output_type"] == "error"]
    assert [e["ename"] for e in errors] == ["ClawFailed"] and case.line in errors[0]["evalue"]
    assert case.line not in saved and "0 turns" not in saved
    assert KEY not in run.text


@pytest.mark.parametrize(
    ("status", "key", "given", "hint"),
    [
        (401, None, False, "no API key is set for 127.0.0.1: set CLAWNB_API_KEY or OPENAI_API_KEY"),
        (
            403,
            KEY,
            False,
            "the key is not allowed to do this (check CLAWNB_API_KEY or "
            "OPENAI_API_KEY and the model)",
        ),
        (401, KEY, True, "the server refused the key given as api_key="),
    ],
)
async def test_the_other_key_refusals_say_what_to_check(
    status: int,
    key: str | None,
    given: bool,
    hint: str,
    clean_env: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from clawnb.providers.openai import OpenAICompatProvider
    from clawnb.types import Message

    with StatusServer(status, _error("Forbidden")) as server:
        if key is not None and not given:
            monkeypatch.setenv("CLAWNB_API_KEY", key)
        provider = OpenAICompatProvider(
            "m", api_key=key if given else None, base_url=server.url, max_retries=0
        )
        with pytest.raises(ClawError) as caught:
            await provider.stream_chat([Message.User("x")], [])
    assert str(caught.value) == f"HTTP {status}: Forbidden — {hint}"
    assert KEY not in str(caught.value)


def test_a_hint_survives_pickling() -> None:
    import pickle

    from clawnb.errors import AuthenticationError, ContextOverflowError

    for error in (
        AuthenticationError(401, "no", hint="check CLAWNB_API_KEY"),
        ContextOverflowError(400, "too long", hint="compact", context_window=8),
    ):
        clone = pickle.loads(pickle.dumps(error))
        assert str(clone) == str(error) and clone.hint == error.hint
