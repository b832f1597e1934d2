"""The terminal chat against a real HTTP server on 127.0.0.1: streaming, tools, usage and
cost, a recording, and the same session replayed offline from that recording."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from clawnb.prompt import DYNAMIC_BOUNDARY
from tests.conftest import session_files, spawn_chat

pexpect = pytest.importorskip("pexpect")

KEY = "sk-test-SECRET-chat-0123456789"


def _sse(*chunks: dict) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + (
        b"data: [DONE]\n\n"
    )


def _delta(delta: dict, finish: str | None = None) -> dict:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _usage(i: int, o: int) -> dict:
    return {"choices": [], "usage": {"prompt_tokens": i, "completion_tokens": o}}


REPLIES = [
    _sse(
        _delta({"role": "assistant", "content": "I'll write "}),
        _delta({"content": "the file."}),
        _delta(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "write", "arguments": ""},
                    }
                ]
            }
        ),
        _delta(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "function": {
                            "arguments": json.dumps(
                                {"path": "out.txt", "content": "from the model"}
                            )
                        },
                    }
                ]
            }
        ),
        _delta({}, "tool_calls"),
        _usage(150, 12),
    ),
    _sse(_delta({"content": "All done, out.txt is written."}), _delta({}, "stop"), _usage(50, 8)),
]


STALL = b"STALL"  # a reply that sends one delta and then hangs until the test ends


class Server:
    def __init__(self, replies: list[bytes] | None = None) -> None:
        self.requests: list[tuple[dict, str]] = []
        self.stop = threading.Event()
        replies = list(REPLIES if replies is None else replies)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((body, self.headers.get("Authorization", "")))
                data = replies.pop(0) if replies else b""
                if data == STALL:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    first = _delta({"content": "Thinking very slowly"})
                    self.wfile.write(b"data: " + json.dumps(first).encode() + b"\n\n")
                    self.wfile.flush()
                    outer.stop.wait(15)
                    return
                self.send_response(200 if data else 500)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def _chat(tmp_path: Path, ws: Path, *args: str, env: dict | None = None):
    child = spawn_chat(tmp_path, "--workspace", str(ws), "--no-color", *args, env=env, timeout=20)
    child.expect("you> ")
    return child


def _conversation(child) -> str:
    child.sendline("please write out.txt")
    child.expect("wrote out.txt")
    child.expect("All done, out.txt is written.")
    child.expect("you> ")
    transcript = child.before
    child.sendline("/cost")
    child.expect("you> ")
    cost = child.before
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    return transcript + cost


def test_live_server_then_offline_replay(tmp_path):
    live_ws, replay_ws = tmp_path / "live", tmp_path / "replay"
    recording = tmp_path / "rec.jsonl"
    with Server() as server:
        child = _chat(
            tmp_path,
            live_ws,
            "--model",
            "test-model",
            "--mode",
            "accept_edits",
            "--record",
            str(recording),
            env={"CLAWNB_BASE_URL": server.url, "CLAWNB_API_KEY": KEY},
        )
        output = _conversation(child)
    assert (live_ws / "out.txt").read_text() == "from the model"
    # one cost rule in every front end: a model without a price is "not priced"
    assert "tokens: 200 in + 20 out | cost: not priced" in output

    (first, auth), (second, _) = server.requests
    assert auth == f"Bearer {KEY}"
    assert first["model"] == "test-model" and first["stream"] is True
    system = first["messages"][0]
    assert system["role"] == "system" and "You are clawnb" in system["content"]
    assert DYNAMIC_BOUNDARY not in system["content"]
    assert {t["function"]["name"] for t in first["tools"]} >= {"read", "write", "subagent"}
    assert second["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "wrote out.txt",
    }

    # the key is nowhere the chat wrote
    assert KEY not in output
    assert KEY not in recording.read_text()
    for saved in session_files(live_ws):
        assert KEY not in saved.read_text()

    # the recording replays the same conversation offline
    child = _chat(tmp_path, replay_ws, "--model", f"replay:{recording}", "--mode", "accept_edits")
    replayed = _conversation(child)
    assert (replay_ws / "out.txt").read_text() == "from the model"
    assert "tokens: 200 in + 20 out | cost: not priced" in replayed  # a replay costs nothing


def test_ctrl_c_during_a_live_stream(tmp_path):
    final = _sse(_delta({"content": "Fresh answer."}), _delta({}, "stop"))
    with Server([STALL, final]) as server:
        child = _chat(
            tmp_path,
            tmp_path / "ws",
            "--model",
            "test-model",
            env={"CLAWNB_BASE_URL": server.url, "CLAWNB_API_KEY": KEY},
        )
        child.sendline("take your time")
        # the stream is live (an end that may still start a key would wait for the next
        # piece: TerminalRenderer's stream redaction), so look for what is surely shown
        child.expect("Thinking very")
        child.sendintr()
        child.expect("interrupted")
        child.expect("you> ")
        child.sendline("again")
        child.expect("Fresh answer.")
        child.expect("you> ")
        child.sendeof()
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0
    assert len(server.requests) == 2
    # the interrupted turn keeps what was streamed as the assistant's reply, marked
    # interrupted, so the next request alternates user / assistant / user
    sent = server.requests[1][0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[1]["content"] == "take your time" and sent[3]["content"] == "again"
    assert "interrupted" in sent[2]["content"]
