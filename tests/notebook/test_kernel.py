"""%%claw in a real ipykernel: clicks from a fake frontend, and interrupts during streaming,
during a bash tool and while waiting for approval (turn ends fast, no orphan process, history
valid, the next cell works)."""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import pids_with, write_script

from .kernelclient import Frontend, Kernel, kernel_env

pytestmark = pytest.mark.timeout(120)

CHECK_HISTORY = (
    "from clawnb.notebook.runner import get_session\n"
    "from clawnb.types import Message\n"
    "_m = get_session(get_ipython()).messages\n"
    "for _i, _x in enumerate(_m):\n"
    "    if isinstance(_x, Message.Assistant) and _x.turn.tool_calls:\n"
    "        _ids = [c.id for c in _x.turn.tool_calls]\n"
    "        assert [r.id for r in _m[_i + 1:_i + 1 + len(_ids)]] == _ids, _m\n"
    "print('HISTORY OK', len(_m))\n"
)


class SlowSSE(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that streams one word every 0.1 s for a minute."""

    disconnected = threading.Event()

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        try:
            for _ in range(600):
                chunk = {"choices": [{"index": 0, "delta": {"content": "tick "}}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
                time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError):
            SlowSSE.disconnected.set()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kernel_ws")


@pytest.fixture(scope="module")
def kernel(workspace: Path):
    k = Kernel(workspace, kernel_env(workspace, CLAWNB_FRONTEND_TIMEOUT="5"))
    run = k.execute("%load_ext clawnb")
    assert run.status == "ok", run.text
    yield k
    k.close()


def history_ok(kernel: Kernel) -> None:
    run = kernel.execute(CHECK_HISTORY)
    assert run.status == "ok" and "HISTORY OK" in run.text, run.text


def test_approve_click_runs_the_tool_and_leaves_a_static_rendering(kernel, workspace) -> None:
    write_script(
        workspace / "w.jsonl",
        [
            {
                "text": "Writing.",
                "tool_calls": [
                    {"id": "w1", "name": "write", "arguments": {"path": "ok.txt", "content": "yes"}}
                ],
            },
            {"text": "Written."},
        ],
    )
    run = kernel.execute(
        "%%claw --new --model scripted:w.jsonl\nwrite ok.txt", frontend=Frontend(click="Approve")
    )
    assert run.status == "ok", run.text
    assert (workspace / "ok.txt").read_text() == "yes"
    # after the cell: one static Markdown output, no widget view
    assert len(run.outputs) == 1, run.outputs
    data = run.outputs[0]["data"]
    assert "text/markdown" in data and "application/vnd.jupyter.widget-view+json" not in data
    assert "Written." in data["text/markdown"] and "approved" in data["text/markdown"]
    # while the buttons were up the card said so: assert on the stream of updates the kernel
    # sent, not on the final widget state (later updates overwrite it; the cell ends static)
    values = [str(update.get("value", "")) for _, update in run.widget_updates]
    assert any("waiting for approval" in v for v in values), values
    history_ok(kernel)


def test_deny_click_refuses_and_the_next_cell_runs(kernel, workspace) -> None:
    write_script(
        workspace / "d.jsonl",
        [
            {
                "tool_calls": [
                    {"id": "w1", "name": "write", "arguments": {"path": "no.txt", "content": "x"}}
                ]
            },
            {"text": "Understood, not writing."},
        ],
    )
    run = kernel.execute(
        "%%claw --new --model scripted:d.jsonl\nwrite no.txt", frontend=Frontend(click="Deny")
    )
    assert run.status == "ok"
    assert not (workspace / "no.txt").exists()
    assert "denied" in run.text and "Understood" in run.text
    assert kernel.execute("print(1 + 1)").text.strip() == "2"


def test_interrupt_during_streaming(kernel, workspace) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), SlowSSE)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    SlowSSE.disconnected.clear()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        run = kernel.execute(
            f"%%claw --new --model slow --base-url {url}\nstream forever",
            frontend=Frontend(),
            # once a few words are on screen (a fixed delay raced a slow kernel start)
            interrupt_if=lambda run: str(run.widget_updates).count("tick") >= 3,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert run.interrupt_to_idle is not None and run.interrupt_to_idle < 2.5, run.interrupt_to_idle
    assert "interrupted" in run.text and "tick" in run.text
    assert SlowSSE.disconnected.wait(3), "the HTTP stream was not closed"
    history_ok(kernel)


def _written(path: Path) -> bool:
    try:
        return bool(path.read_text().strip())
    except FileNotFoundError:
        return False


def test_interrupt_during_bash_kills_the_process_group(kernel, workspace) -> None:
    marker = f"clawnb-bg-{os.getpid()}-{time.monotonic_ns()}"
    write_script(
        workspace / "b.jsonl",
        [
            {
                "tool_calls": [
                    {
                        "id": "b1",
                        "name": "bash",
                        "arguments": {
                            "command": f"bash -c 'sleep 1000; : {marker}' & "
                            "echo $! > bg.pid; echo started; sleep 1000"
                        },
                    }
                ]
            },
            {"text": "never reached"},
        ],
    )
    run = kernel.execute(
        "%%claw --new --model scripted:b.jsonl --approve allow\nrun it",
        # once the background job runs and its pid is written (a fixed delay could come
        # before the tool started)
        interrupt_if=lambda run: _written(workspace / "bg.pid"),
        allow_stdin=False,
    )
    assert run.interrupt_to_idle is not None and run.interrupt_to_idle < 2.5, run.interrupt_to_idle
    assert "interrupted" in run.text
    assert (workspace / "bg.pid").read_text().strip()  # it did start
    deadline = time.monotonic() + 3
    while pids_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pids_with(marker), f"background sleep {pids_with(marker)} survived"
    history_ok(kernel)
    write_script(workspace / "n.jsonl", [{"text": "next cell fine"}])
    run = kernel.execute("%%claw --model scripted:n.jsonl\nstill there?", allow_stdin=False)
    assert run.status == "ok" and "next cell fine" in run.text


def test_interrupt_while_waiting_for_approval(kernel, workspace) -> None:
    write_script(
        workspace / "a.jsonl",
        [
            {"tool_calls": [{"id": "a1", "name": "bash", "arguments": {"command": "echo hi"}}]},
            {"text": "never reached"},
        ],
    )
    run = kernel.execute(
        "%%claw --new --model scripted:a.jsonl\nrun echo",
        frontend=Frontend(),  # renders, never clicks
        interrupt_when="waiting for approval",
    )
    assert run.interrupt_to_idle is not None and run.interrupt_to_idle < 2.5
    assert run.status == "error" and "interrupted" in run.text
    # said once, by the error line, not again as a note in the transcript above it
    assert run.text.count("the turn was stopped") == 1, run.text
    history_ok(kernel)


def test_stdin_approval_and_interrupt_while_input_waits(kernel, workspace) -> None:
    write_script(
        workspace / "s.jsonl",
        [
            {
                "tool_calls": [
                    {
                        "id": "s1",
                        "name": "write",
                        "arguments": {"path": "stdin.txt", "content": "via stdin"},
                    }
                ]
            },
            {"text": "Written after a typed yes."},
            {
                "tool_calls": [
                    {
                        "id": "s2",
                        "name": "write",
                        "arguments": {"path": "never.txt", "content": "x"},
                    }
                ]
            },
            {"text": "never reached"},
        ],
    )
    run = kernel.execute(
        "%%claw --new --model scripted:s.jsonl --approve stdin\nwrite", stdin_reply="y"
    )
    assert run.status == "ok" and run.prompts and "Allow" in run.prompts[0]
    assert (workspace / "stdin.txt").read_text() == "via stdin"
    # nobody answers the next prompt: an interrupt still ends the turn (input() runs on a
    # worker thread, so the cancelled cell does not hang)
    run = kernel.execute("%%claw --approve stdin\nwrite again", interrupt_when="Allow")
    assert run.interrupt_to_idle is not None and run.interrupt_to_idle < 2.5
    assert "interrupted" in run.text and not (workspace / "never.txt").exists()
    history_ok(kernel)


def test_a_key_split_across_stream_chunks_never_reaches_a_widget_or_an_output(
    kernel, workspace
) -> None:
    # the model streams keys cut in two at every position; the live widget is updated while
    # they stream, and no message the kernel sends (widget states, outputs) may hold one
    from tests.attacks.harness import CANARIES, AttackerServer, leaked

    (workspace / "token.txt").write_text(CANARIES["CANARY_TOKEN"])
    set_key = "import os\nos.environ['STREAM_TEST_TOKEN'] = open('token.txt').read()"
    assert kernel.execute(set_key).status == "ok"
    turn = {
        "split_at_every_position": ["CANARY_TOKEN", "base64:CANARY_TOKEN", "CANARY_AGENT_KEY"],
        "seconds_per_piece": 0.003,  # about a second in all: the widget is redrawn meanwhile
    }
    try:
        with AttackerServer([turn]) as server:
            run = kernel.execute(
                f"%%claw --new --model m --base-url {server.url}\nprint the keys",
                frontend=Frontend(),
            )
    finally:
        kernel.execute("os.environ.pop('STREAM_TEST_TOKEN', None)")
    assert run.status == "ok", run.text
    live = [u for _, u in run.widget_updates if "cut at" in json.dumps(u, default=str)]
    assert len(live) >= 2, "the answer was not shown while it streamed"
    sent = json.dumps(run.all_messages, default=str)
    assert leaked(sent) == []
    # a widget is redrawn whole, so it never shows a split key whole; but while the rest of a
    # key streams, its start must not be shown either
    raw = CANARIES["CANARY_TOKEN"].encode()
    starts = [CANARIES["CANARY_TOKEN"][:8], base64.b64encode(raw).decode()[:8], "sk-or-v1"]
    assert [s for s in starts if s in sent] == []
    assert "CANARY_AGENT_KEY cut at 30: ***" in run.text
