"""Markdown renders while it streams, and looks the same once the cell ends: a slow
OpenAI-compatible server on 127.0.0.1 streams a heading, bold text and a list into a
``%%claw`` cell in a real JupyterLab + Chromium."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytestmark = pytest.mark.e2e

PIECES = ["## Stock", " report\n\n", "The **apples**", " are counted.\n\n", "- one\n", "- two\n"]
PIECES += [f"- more {i}\n" for i in range(12)]
DELAY_S = 0.25
_HEADING_SIZE = """c => {
    const h = c.querySelector('h2');
    return h ? getComputedStyle(h).fontSize : '';
}"""


class _Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        base = {"id": "md", "object": "chat.completion.chunk", "model": "md"}
        for piece in PIECES:
            chunk = {**base, "choices": [{"index": 0, "delta": {"content": piece}}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
            time.sleep(DELAY_S)
        done = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        self.wfile.write(f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode())

    def log_message(self, format: str, *args: object) -> None:
        del format, args


def test_markdown_is_rendered_while_it_streams_and_matches_the_end(lab) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        workdir = lab.server.root / "mdstream"
        workdir.mkdir()
        cells = ["%load_ext clawnb", f"%%claw --model md --base-url {url}\nreport"]
        lab.open(lab.server.write_notebook("md.ipynb", cells, directory=workdir))
        lab.run_all()
        cell = lab.cell(1)
        # while the cell still runs, the heading and the bold word are already rendered
        cell.locator(".clawnb-text h2", has_text="Stock report").wait_for()
        cell.locator(".clawnb-text strong", has_text="apples").wait_for()
        assert lab.prompt(1) == "[*]:"
        assert "##" not in lab.output_text(1) and "**" not in lab.output_text(1)
        lab.shot("rendered-while-streaming")
        # the live output is re-rendered on every update, so a located <h2> may be detached
        # (and report no style) by the time it is evaluated: query and measure in one JS call
        live = cell.evaluate(_HEADING_SIZE)
        assert live, "the streamed heading has no computed font size"
        lab.wait_prompt_done(1, timeout_ms=30_000)
        cell.locator("h2", has_text="Stock report").wait_for()
        assert cell.evaluate(_HEADING_SIZE) == live
        assert cell.locator("li").count() == 14
        lab.shot("final")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
