"""An independent re-run of issue 10's attacks and the variants an attacker tries next.

Each ``redteam/*.json`` file is one attack in the corpus format (see ``harness.py``), driven
through the real front ends by the same scripted attacker server. Two effects are judged here
on top of the harness's verdict:

* ``{LISTENER}`` is a second HTTP server on 127.0.0.1 that records every request (any method):
  ``"expect": {"listener_untouched": true}`` fails if anything reached it, and no canary may be
  in what it received either way (a beacon or an exfiltration is a socket, not a message);
* what a person saw (the chat's terminal, the notebook's saved file) must not hold a canary.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from .harness import Attack, AttackerServer, leaked, make_world, run_attack

pytestmark = pytest.mark.timeout(90)

REDTEAM = Path(__file__).with_name("redteam")


class Listener:
    """A 127.0.0.1 server that answers every request with 200 and records it."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        listener = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _record(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
                listener.requests.append(f"{self.command} {self.path}\n{self.headers}\n{body}")
                payload = b"hello from the listener"
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PUT = do_HEAD = _record

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _load(path: Path, listener: Listener) -> Attack:
    text = path.read_text(encoding="utf-8")
    text = text.replace("{LISTENER_PORT}", str(listener.port))
    text = text.replace("{LISTENER}", f"http://127.0.0.1:{listener.port}")
    data = json.loads(text)
    return Attack(data["id"], data)


def _cases() -> list[Any]:
    cases = []
    for path in sorted(REDTEAM.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for frontend in data.get("frontends", ["api", "chat", "notebook"]):
            cases.append(pytest.param(path, frontend, id=f"{data['id']}[{frontend}]"))
    return cases


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


@pytest.mark.parametrize(("path", "frontend"), _cases())
def test_redteam_attack_has_no_effect(path, frontend, listener, tmp_path, monkeypatch):
    if frontend == "chat":
        pytest.importorskip("pexpect")
    attack = _load(path, listener)
    world = make_world(tmp_path, attack, AttackerServer(), AttackerServer())
    for step in attack.data.get("pre_trust", []):
        _trust(world, step)
    problems = run_attack(world, frontend, monkeypatch)
    expect = attack.expect
    received = "\n".join(listener.requests)
    if expect.get("listener_untouched") and listener.requests:
        problems.append(f"the listener got {len(listener.requests)} request(s): {received[:300]}")
    if leaked(received):
        problems.append(f"{', '.join(leaked(received))} reached the 127.0.0.1 listener")
    if expect.get("no_leak", True) and leaked(world.transcript):
        problems.append(f"{', '.join(leaked(world.transcript))} shown by the {frontend}")
    assert not problems, f"{attack.data.get('finding')}: " + "; ".join(problems)


def _trust(world: Any, step: dict[str, Any]) -> None:
    """Trust the workspace the way ``python -m clawnb trust`` does, then (optionally) change
    its config afterwards: what was trusted is a file's hash, not a folder forever."""
    from clawnb.control.trust import TrustStore

    folder = world.fill(step.get("folder", "{WS}"))
    config = Path(folder) / ".claw" / "config.toml"
    if "config_before" in step:
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(world.fill(step["config_before"]))
    TrustStore(config_home=world.xdg).trust(folder, config)
    if "config_after" in step:
        config.write_text(world.fill(step["config_after"]))
