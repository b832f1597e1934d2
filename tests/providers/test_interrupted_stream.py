"""Stopping a turn while its reply streams keeps the words already shown (issue 27, item 6).

A server on 127.0.0.1 streams the first words of a reply and then stalls. The turn is
cancelled there — through the Python API (the task's ``cancel()``) and through the terminal
chat in a pseudo-terminal (Ctrl-C) — and the history must then hold those words as the
assistant's unfinished reply, as a ``kill -9`` recovery already keeps them: the next request
goes user, assistant, user (a strict template refuses two user messages in a row) and the
model can see what it had said.
"""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from provider_helpers import KEY

from clawnb.agent import INTERRUPTED_REPLY_NOTE
from clawnb.config import Config
from clawnb.events import AgentEvent
from clawnb.providers.openai import OpenAICompatProvider
from clawnb.session.assemble import build_agent
from clawnb.session.log import SessionLog
from clawnb.types import Message

SHOWN = "The capital of France is"


class StallingServer:
    """``/v1/chat/completions`` that streams ``SHOWN`` word by word, then sends nothing more
    until the client hangs up (or 30 s pass); every later request is answered ``Noted.``.
    ``requests`` keeps each request body; ``hung_up`` is set when the client closed the
    stalled stream."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.hung_up = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                data = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data.encode())

            def _event(self, delta: dict[str, Any], finish: str | None = None) -> None:
                chunk = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    if len(outer.requests) > 1:
                        self._event({"role": "assistant", "content": "Noted."})
                        self._event({}, "stop")
                        self.wfile.write(b"data: [DONE]\n\n")
                        return
                    for word in SHOWN.split(" "):
                        self._event({"content": word + " "})
                    # the stall: a client that hangs up makes the socket readable (EOF)
                    self.connection.settimeout(30)
                    if not self.connection.recv(1):
                        outer.hung_up.set()
                except OSError:
                    outer.hung_up.set()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> StallingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def roles(request: dict[str, Any]) -> list[str]:
    return [m["role"] for m in request["messages"]]


async def test_cancelling_a_turn_through_the_api_keeps_the_streamed_text(tmp_path: Path):
    log = SessionLog(tmp_path / "session.jsonl")
    with StallingServer() as server:
        provider = OpenAICompatProvider("m", KEY, server.url, retry_backoff=0.01)
        session = build_agent(
            Config(),
            workspace=tmp_path,
            provider=provider,
            session=log,
            subagents=False,
            skills=False,
        )
        seen = asyncio.Event()
        shown: list[str] = []

        def on_event(event: Any) -> None:
            if isinstance(event, AgentEvent.TextDelta):
                shown.append(event.text)
                if "".join(shown).strip() == SHOWN:
                    seen.set()

        task = asyncio.create_task(session.send("What is the capital of France?", on_event))
        await asyncio.wait_for(seen.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await asyncio.to_thread(server.hung_up.wait, 5)  # the stream was closed

        last = session.history[-1]
        assert isinstance(last, Message.Assistant)
        assert last.turn.text == f"{SHOWN}\n\n{INTERRUPTED_REPLY_NOTE}"
        assert isinstance(session.history[-2], Message.User)
        # on disk as an ordinary message: a resume gets it once (the write-ahead records of
        # the streamed words were replaced by it, not added to it)
        assert SessionLog.read(log.path) == list(session.history)

        assert await session.send("And of Italy?") == "Noted."
    second = server.requests[1]
    assert roles(second) == ["system", "user", "assistant", "user"]
    assert second["messages"][2]["content"].startswith(SHOWN)


def test_ctrl_c_in_the_chat_while_a_reply_streams_keeps_what_was_shown(tmp_path: Path):
    pexpect = pytest.importorskip("pexpect")
    from tests.conftest import chat_with_server, end_chat

    with StallingServer() as server:
        child = chat_with_server(tmp_path, server.url, "--server", "openai")
        child.sendline("What is the capital of France?")
        child.expect("France is")
        child.sendintr()  # Ctrl-C, as the terminal sends it
        child.expect(r"\(interrupted")
        child.expect("you> ")
        assert server.hung_up.wait(5)
        child.sendline("/history")
        child.expect("you> ")
        listing = child.before
        child.sendline("And of Italy?")
        child.expect("Noted.")
        child.expect("you> ")
        end_chat(child)
    assert child.exitstatus == 0 and pexpect is not None
    assert "France is" in listing.split("What is the capital of France?", 1)[-1]
    second = server.requests[1]
    assert roles(second) == ["system", "user", "assistant", "user"]
    assert second["messages"][2]["content"] == f"{SHOWN}\n\n{INTERRUPTED_REPLY_NOTE}"
    assert second["messages"][3]["content"] == "And of Italy?"
