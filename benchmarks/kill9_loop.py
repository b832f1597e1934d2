"""kill -9 of the chat at random points: does resume lose anything that was shown?

Each run starts ``python -m clawnb chat`` in a pseudo-terminal (pexpect) against a slow
OpenAI-compatible server on 127.0.0.1 (a real HTTP/SSE stream), sends one prompt and
``kill -9``-s the chat at a random moment of one of three phases:

* ``stream`` — while the answer is streaming (after a random number of words were shown);
* ``tool`` — while a bash call runs (it touched its marker file; a marked ``sleep 1000`` is
  running inside it);
* ``approval`` — while the chat waits for the person to approve a bash call.

Then it judges the session file as ``chat --resume`` would load it: every word that was on
screen is in the history (``lost``), every tool call has a result (``unanswered``), and no
process of the run is still alive (``orphans``). It prints one line per run and, last, the
totals — the figure docs/sessions.md quotes.

    python benchmarks/kill9_loop.py [--runs 24] [--seed 1] [--front-ends chat,kernel]

The kernel runs do the same to a Jupyter kernel running a ``%%claw`` cell (jupyter_client;
words are "shown" once they are in an output message the kernel sent).

``tests/engine/test_kill9.py`` runs a small parametrised handful of the same runs in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Finding and killing a run's processes: the tests' helpers (one copy, tests/conftest.py).
sys.path.insert(0, str(ROOT))
from tests.conftest import kill_escaped, pids_with, session_files  # noqa: E402

WORDS = [f"w{i}" for i in range(1, 401)]
PHASES = ("stream", "tool", "approval")


class _Model(BaseHTTPRequestHandler):
    """An OpenAI-compatible /chat/completions that streams slowly. The reply depends on the
    prompt: ``stream`` → 400 words, one every 15 ms; ``tool``/``approval`` → a short text and
    one bash call; after a tool result → ``done.``"""

    word_delay = 0.015

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - /models probes
        self._json({"object": "list", "data": [{"id": "kill9-model", "object": "model"}]})

    def _json(self, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _chunk(self, delta: dict, finish: str | None = None) -> None:
        body = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        self.wfile.write(f"data: {json.dumps(body)}\n\n".encode())
        self.wfile.flush()

    def do_POST(self) -> None:  # noqa: N802
        request = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        messages = request.get("messages", [])
        last = messages[-1] if messages else {}
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        try:
            if last.get("role") == "tool":
                self._chunk({"content": "done."})
                self._chunk({}, "stop")
            else:
                prompt = str(last.get("content", ""))
                marker = re.search(r"MARK=(\S+)", prompt)
                if prompt.startswith("stream"):
                    for word in WORDS:
                        self._chunk({"content": word + " "})
                        time.sleep(self.word_delay)
                    self._chunk({}, "stop")
                else:
                    mark = marker.group(1) if marker else "none"
                    command = f"touch ran-{mark}; bash -c 'sleep 1000; : {mark}'"
                    self._chunk({"content": "Running the job now."})
                    call = {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": command})},
                    }
                    self._chunk({"tool_calls": [call]})
                    self._chunk({}, "tool_calls")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


def start_server() -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


@dataclass
class Outcome:
    phase: str
    shown_words: int  # streamed words that were on screen when the chat died
    lost: int  # shown words (or the shown tool call) missing from the resumed history
    unanswered: int  # tool calls without a result after resume
    orphans: int  # processes of the run still alive
    detail: str = ""
    screen: str = ""  # what the person saw
    front: str = "chat"

    def line(self) -> str:
        return (
            f"{self.phase:<9} shown={self.shown_words:<4} lost={self.lost} "
            f"unanswered={self.unanswered} orphans={self.orphans} {self.detail}"
        )


def one_run(phase: str, rng: random.Random, base_url: str, tmp: Path) -> Outcome:
    """Start the chat, kill -9 it at a random moment of ``phase``, judge what resume gets."""
    import pexpect

    ws = tmp / "ws"
    ws.mkdir(parents=True)
    mark = f"clawnb-kill9-{os.getpid()}-{time.monotonic_ns()}"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp / "home"),
        "XDG_CONFIG_HOME": str(tmp / "xdg"),
        "XDG_DATA_HOME": str(tmp / "data"),
        "PYTHONPATH": str(ROOT),
        "TERM": "dumb",
    }
    approve = "ask" if phase == "approval" else "allow"
    child = pexpect.spawn(
        sys.executable,
        ["-m", "clawnb", "chat", "--model", "kill9-model", "--base-url", base_url]
        + ["--server", "openai", "--workspace", str(ws), "--no-color", "--approve", approve],
        env=env,
        encoding="utf-8",
        timeout=20,
        dimensions=(40, 200),
    )
    screen = ""
    try:
        child.expect("you> ")
        screen += child.before + child.after
        if phase == "stream":
            child.sendline("stream please")
            want = rng.randint(3, 120)
            # read until `want` words are on screen, then die at once
            while True:
                child.expect(r"w(\d+) ")
                screen += child.before + child.after
                if int(child.match.group(1)) >= want:
                    break
        elif phase == "tool":
            child.sendline(f"run the job MARK={mark}")
            deadline = time.monotonic() + 20
            while not (ws / f"ran-{mark}").exists():
                if time.monotonic() > deadline:
                    raise TimeoutError("the bash call never started")
                time.sleep(0.01)
            time.sleep(rng.uniform(0, 0.3))
        else:
            child.sendline(f"run the job MARK={mark}")
            child.expect(r"\[y\]es / \[n\]o / \[a\]lways: ")
            screen += child.before + child.after
            time.sleep(rng.uniform(0, 0.3))
        # whatever arrived meanwhile was shown too
        try:
            screen += child.read_nonblocking(100_000, timeout=0)
        except (pexpect.TIMEOUT, pexpect.EOF):
            pass
        os.kill(child.pid, signal.SIGKILL)
        child.expect(pexpect.EOF)
        screen += child.before or ""
    finally:
        if child.isalive():
            child.kill(signal.SIGKILL)
        child.close()

    return judge(phase, ws, mark, screen)


def judge(phase: str, ws: Path, mark: str, screen: str) -> Outcome:
    """What resuming the session gets, against what was shown (``screen``)."""
    from clawnb.session.log import SessionLog
    from clawnb.types import Message

    sessions = session_files(ws, {"XDG_DATA_HOME": str(ws.parent / "data")})
    if len(sessions) != 1:
        return Outcome(phase, 0, 1, 0, 0, f"expected one session file, found {len(sessions)}")
    history = SessionLog.resume(sessions[0], durable=False)
    text = " ".join(m.turn.text or "" for m in history if isinstance(m, Message.Assistant))
    shown = [int(n) for n in re.findall(r"\bw(\d+) ", screen)]
    shown_words = max(shown, default=0)
    kept = {int(n) for n in re.findall(r"\bw(\d+)\b", text)}
    lost = sum(1 for n in range(1, shown_words + 1) if n not in kept)
    calls = [c for m in history if isinstance(m, Message.Assistant) for c in m.turn.tool_calls]
    answered = {m.id for m in history if isinstance(m, Message.ToolResult)}
    unanswered = sum(1 for c in calls if c.id not in answered)
    if phase != "stream":
        if "Running the job now." in screen and "Running the job now." not in text:
            lost += 1
        if not calls:
            lost += 1  # the call was on screen (the approval question, or the job ran)
    if phase == "approval" and (ws / f"ran-{mark}").exists():
        return Outcome(phase, shown_words, lost, unanswered, 0, "ran without approval!")
    deadline = time.monotonic() + 5
    while pids_with(mark) and time.monotonic() < deadline:
        time.sleep(0.02)
    orphans = pids_with(mark)
    for pid in orphans:  # never leave them behind, whatever the verdict
        try:
            kill_escaped(pid)
        except OSError:
            pass
    return Outcome(phase, shown_words, lost, unanswered, len(orphans), screen=screen)


def one_kernel_run(phase: str, rng: random.Random, base_url: str, tmp: Path) -> Outcome:
    """The same, for a Jupyter kernel running a ``%%claw`` cell: ``kill -9`` of the kernel."""
    import queue

    from jupyter_client import KernelManager

    ws = tmp / "ws"
    ws.mkdir(parents=True)
    mark = f"clawnb-kill9k-{os.getpid()}-{time.monotonic_ns()}"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("CLAWNB_") and not k.endswith("_API_KEY")
    }
    env.update(XDG_CONFIG_HOME=str(tmp / "xdg"), XDG_DATA_HOME=str(tmp / "data"))
    env.update(PYTHONPATH=str(ROOT), PYTHONWARNINGS="ignore")
    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(ws), env=env, stderr=subprocess.DEVNULL)
    kc = km.client()
    kc.start_channels()
    screen = ""
    try:
        kc.wait_for_ready(timeout=60)
        kc.execute_interactive("%load_ext clawnb", timeout=60)
        approve = "stdin" if phase == "approval" else "allow"
        prompt = "stream please" if phase == "stream" else f"run the job MARK={mark}"
        kc.execute(
            f"%%claw --model kill9-model --base-url {base_url} --server openai "
            f"--approve {approve}\n{prompt}",
            allow_stdin=phase == "approval",
        )
        want = rng.randint(3, 120)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if phase == "tool" and (ws / f"ran-{mark}").exists():
                break
            if phase == "approval":
                try:
                    request = kc.get_stdin_msg(timeout=0)
                except queue.Empty:
                    request = None
                if request is not None and request["msg_type"] == "input_request":
                    screen += request["content"].get("prompt", "")
                    break
            try:
                msg = kc.get_iopub_msg(timeout=0.02)
            except queue.Empty:
                continue
            screen += json.dumps(msg["content"])  # text, widget values: all of it was shown
            if phase == "stream":
                shown = [int(n) for n in re.findall(r"\bw(\d+) ", screen)]
                if max(shown, default=0) >= want:
                    break
        else:
            raise TimeoutError(f"{phase}: the kernel never got there")
        if phase != "stream":
            time.sleep(rng.uniform(0, 0.3))
        while True:  # whatever arrived meanwhile was shown too
            try:
                screen += json.dumps(kc.get_iopub_msg(timeout=0)["content"])
            except queue.Empty:
                break
        os.kill(km.provisioner.process.pid, signal.SIGKILL)  # type: ignore[union-attr]
    finally:
        kc.stop_channels()
        try:
            km.shutdown_kernel(now=True)
        except Exception:  # already dead: nothing to shut down
            pass
    # widget and stream JSON escape newlines: make the words stand apart for the count
    screen = screen.replace("\\n", " ").replace("\\u00a0", " ")
    return judge(phase, ws, mark, screen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=24)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--front-ends", default="chat,kernel", help="which to kill: chat, kernel or both"
    )
    args = parser.parse_args()
    front_ends = args.front_ends.split(",")
    rng = random.Random(args.seed)
    server, base_url = start_server()
    outcomes = []
    try:
        for n in range(args.runs):
            phase = PHASES[n % len(PHASES)]
            front = front_ends[(n // len(PHASES)) % len(front_ends)]
            run = one_run if front == "chat" else one_kernel_run
            with tempfile.TemporaryDirectory(prefix="clawnb-kill9-") as tmp:
                outcome = run(phase, rng, base_url, Path(tmp))
            outcome.front = front
            outcomes.append(outcome)
            print(f"run {n + 1:>3}: {front:<6} {outcome.line()}", flush=True)
    finally:
        server.shutdown()
        server.server_close()
    lost = sum(o.lost for o in outcomes)
    unanswered = sum(o.unanswered for o in outcomes)
    orphans = sum(o.orphans for o in outcomes)
    by_phase = {
        f"{f} {p}": sum(1 for o in outcomes if o.phase == p and o.front == f)
        for f in front_ends
        for p in PHASES
    }
    print(f"\nruns: {len(outcomes)} ({', '.join(f'{p} {k}' for p, k in by_phase.items())})")
    print(
        f"lost messages: {lost}, calls without a result: {unanswered}, orphan processes: {orphans}"
    )


if __name__ == "__main__":
    main()
