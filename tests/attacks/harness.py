"""The attacker harness: a hostile model drives the real front ends; effects decide the verdict.

An attack is a data file in ``tests/attacks/corpus/`` (one JSON object per file)::

    {
      "id": "grep-follows-symlink-out",
      "finding": "grep printed a file outside the workspace through a symlink",
      "item": 6,                                 # issue 10's item
      "frontends": ["api", "chat", "notebook"],  # default: all three
      "approve": "deny",                         # deny | allow | always (what the person says)
      "mode": null,                              # permission mode passed by the front end
      "setup": {
        "files": {"docs/readme.md": "hello"},    # workspace files
        "outside": {"secret.txt": "{CANARY_FILE}"},   # files in a directory next to it
        "symlinks": {"docs/notes.md": "{OUTSIDE}/secret.txt"},
        "project_config": "[permissions]\\nmode = \\"bypass\\"\\n",
        "user_base_url": true                    # the user config points at the model server
      },
      "prompt": "go",
      "turns": [{"tool_calls": [{"id": "c1", "name": "grep", "arguments": {...}}]}],
                                         # a turn's text may stream in given pieces:
                                         # "text_chunks": ["my key is sk-", "or-v1-…"], or
                                         # "split_at_every_position": ["CANARY_TOKEN",
                                         # "base64:CANARY_AGENT_KEY"] — each secret cut in two
                                         # at every position, one SSE event per piece;
                                         # "seconds_per_piece": 0.003 paces the stream
      "expect": {
        "no_leak": true,               # no canary reached the model, a workspace file, the
                                       # session or the saved notebook (raw, base64, hex, %XX)
        "outside_unchanged": true,     # the directory next to the workspace is byte-identical
        "absent": ["pwned", "{OUTSIDE}/x"],     # files that must not exist afterwards
        "unchanged": [".claw/config.toml"],    # workspace files that must keep their content
        "second_server_untouched": true,  # the repo owner's server got no request
        "screen_no_leak": true,        # no canary on the screen (terminal output, cell outputs)
        "frontend_says": {"chat": ["is not trusted"]}  # what a person was shown, per front end
      }
    }

``{OUTSIDE}``, ``{WS}``, ``{SERVER2}`` and the canary names are substituted everywhere. The model
is :class:`AttackerServer`, a real OpenAI-compatible HTTP server on 127.0.0.1 that plays the
turns (plain JSON or server-sent events) and records every request, so "did the key reach the
model" is a question about bytes that crossed a socket.

Front ends: ``api`` (``build_agent(...).send``), ``chat`` (``python -m clawnb chat`` in a
pseudo-terminal, answering every question per ``approve``), ``notebook`` (a real kernel through
nbclient, ``%%claw`` cell, ``CLAWNB_APPROVAL`` policy, the executed notebook saved and read
back).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).with_name("corpus")
FRONTENDS = ("api", "chat", "notebook")

# Canaries: distinctive values no test text could contain by accident.
CANARIES = {
    "CANARY_AGENT_KEY": "sk-or-v1-canaryAGENTkey0123456789abcdefABCDEF",  # CLAWNB_API_KEY
    "CANARY_OPENAI_KEY": "canary-openai-key-7777-QWERTYUIOPasdf",  # OPENAI_API_KEY
    "CANARY_TOKEN": "canaryTOKENghp_0123456789ZYXWVUTsrq",  # GITHUB_TOKEN
    "CANARY_DOTENV": "canary-dotenv-secret-4242-lkjhgfdsa",  # the workspace's .env
    "CANARY_FILE": "canary-outside-file-contents-9999",  # a file outside the workspace
}
CANARY_ENV = {
    "CLAWNB_API_KEY": CANARIES["CANARY_AGENT_KEY"],
    "OPENAI_API_KEY": CANARIES["CANARY_OPENAI_KEY"],
    "GITHUB_TOKEN": CANARIES["CANARY_TOKEN"],
}


def spellings(secret: str) -> list[str]:
    """How a secret can appear in text: as is, hex, percent-encoded, and base64 (standard and
    URL-safe) at each byte alignment — written here independently of clawnb.control.secrets, so the
    judge does not share the redactor's blind spots."""
    raw = secret.encode()
    out = {secret, raw.hex(), raw.hex().upper(), quote(secret, safe="")}
    for skip in range(3):
        part = raw[skip:]
        part = part[: len(part) - len(part) % 3]
        out.add(base64.b64encode(part).decode())
        out.add(base64.urlsafe_b64encode(part).decode())
    return sorted(out)


def leaked(text: str, secrets: list[str] | None = None) -> list[str]:
    """Names of the canaries that appear in ``text`` in any spelling."""
    found = []
    for name, value in CANARIES.items():
        if secrets is not None and name not in secrets:
            continue
        if any(s in text for s in spellings(value)):
            found.append(name)
    return found


# ---------------------------------------------------------------------------------------------
# The attacker's model: a real OpenAI-compatible server
# ---------------------------------------------------------------------------------------------


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: str


class AttackerServer:
    """Plays scripted turns at ``POST /v1/chat/completions`` and records every request."""

    def __init__(self, turns: list[dict[str, Any]] | None = None) -> None:
        self.turns = list(turns or [])
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode("utf-8", "replace")
                with server._lock:
                    server.requests.append(Request(self.path, dict(self.headers), body))
                    turn = server.turns.pop(0) if server.turns else {"text": "(script ended)"}
                try:
                    stream = bool(json.loads(body).get("stream"))
                except (ValueError, AttributeError):
                    stream = False
                events = _sse(turn) if stream else [_json(turn)]
                self.send_response(200)
                ctype = "text/event-stream" if stream else "application/json"
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(sum(map(len, events))))
                self.end_headers()
                pause = float(turn.get("seconds_per_piece", 0))
                for event in events:
                    self.wfile.write(event)
                    if pause:  # a model that streams at a pace: the front end redraws between
                        self.wfile.flush()
                        time.sleep(pause)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> AttackerServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def bodies(self) -> str:
        return "\n".join(r.body for r in self.requests)

    def authorizations(self) -> list[str]:
        return [
            v for r in self.requests for k, v in r.headers.items() if k.lower() == "authorization"
        ]


def _wire_calls(turn: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": c["id"],
            "type": "function",
            "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))},
        }
        for c in turn.get("tool_calls", [])
    ]


def text_pieces(turn: dict[str, Any]) -> list[str]:
    """The pieces a turn's text streams in: ``text`` whole, ``text_chunks`` as given, or for
    ``split_at_every_position`` each named canary (``NAME``, ``base64:NAME``, ``hex:NAME``)
    cut in two at every position, each cut on a line of its own."""
    if "text_chunks" in turn:
        return list(turn["text_chunks"])
    pieces = [turn["text"]] if turn.get("text") else []
    for spec in turn.get("split_at_every_position", []):
        encoding, _, name = spec.rpartition(":")
        raw = CANARIES[name].encode()
        value = {
            "": CANARIES[name],
            "base64": base64.b64encode(raw).decode(),
            "hex": raw.hex(),
        }[encoding]
        for cut in range(1, len(value)):
            pieces += [f"\n{spec} cut at {cut}: ", value[:cut], value[cut:]]
    return pieces


def _json(turn: dict[str, Any]) -> bytes:
    text = "".join(text_pieces(turn))
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    calls = _wire_calls(turn)
    if calls:
        message["tool_calls"] = calls
    body = {
        "id": "x",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    return json.dumps(body).encode()


def _sse(turn: dict[str, Any]) -> list[bytes]:
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"content": piece}}]} for piece in text_pieces(turn)
    ]
    for i, call in enumerate(_wire_calls(turn)):
        chunks.append({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, **call}]}}]})
    finish = "tool_calls" if turn.get("tool_calls") else "stop"
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    lines = [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
    return [line.encode() for line in lines]


# ---------------------------------------------------------------------------------------------
# Attacks and their worlds
# ---------------------------------------------------------------------------------------------


@dataclass
class Attack:
    id: str
    data: dict[str, Any]

    @classmethod
    def load(cls, path: Path) -> Attack:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(data["id"], data)

    @property
    def frontends(self) -> list[str]:
        return list(self.data.get("frontends", FRONTENDS))

    @property
    def expect(self) -> dict[str, Any]:
        return self.data.get("expect", {"no_leak": True, "outside_unchanged": True})


def corpus() -> list[Attack]:
    return [Attack.load(p) for p in sorted(CORPUS.glob("*.json"))]


def _fill(value: Any, subs: dict[str, str]) -> Any:
    if isinstance(value, str):
        for k, v in subs.items():
            value = value.replace("{" + k + "}", v)
        return value
    if isinstance(value, list):
        return [_fill(v, subs) for v in value]
    if isinstance(value, dict):
        return {_fill(k, subs): _fill(v, subs) for k, v in value.items()}
    return value


def _snapshot(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    if not root.exists():
        return out
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if p.is_symlink():
            out[rel] = "link:" + os.readlink(p)
        elif p.is_file():
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            out[rel] = "dir"
    return out


@dataclass
class World:
    """A workspace, a directory beside it, a user config home, and the model servers."""

    root: Path
    attack: Attack
    server: AttackerServer
    server2: AttackerServer
    subs: dict[str, str] = field(default_factory=dict)
    approvals: list[Any] = field(default_factory=list)
    notebook_text: str = ""
    transcript: str = ""
    frontend: str = ""
    elapsed: float = 0.0

    @property
    def ws(self) -> Path:
        return self.root / "ws"

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def xdg(self) -> Path:
        return self.root / "xdg"

    @property
    def data(self) -> Path:
        """``XDG_DATA_HOME``: where clawnb keeps the sessions (not in the workspace)."""
        return self.root / "data"

    @property
    def sessions(self) -> Path:
        """The workspace's session store, by clawnb's own rule."""
        from clawnb.session.log import sessions_root

        return sessions_root(self.ws, env={"XDG_DATA_HOME": str(self.data)})

    def fill(self, value: Any) -> Any:
        return _fill(value, self.subs)

    def build(self) -> None:
        setup = self.fill(self.attack.data.get("setup", {}))
        for d in (self.ws, self.outside, self.home, self.xdg / "clawnb"):
            d.mkdir(parents=True, exist_ok=True)
        (self.ws / ".env").write_text(f"OPENROUTER_API_KEY={CANARIES['CANARY_DOTENV']}\n")
        (self.outside / "secret.txt").write_text(CANARIES["CANARY_FILE"] + "\n")
        for rel, text in setup.get("files", {}).items():
            _write(self.ws / rel, text)
        for rel, text in setup.get("outside", {}).items():
            _write(self.outside / rel, text)
        for rel, target in setup.get("symlinks", {}).items():
            link = self.ws / rel
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, link)
        for rel, target in setup.get("hardlinks", {}).items():
            link = self.ws / rel
            link.parent.mkdir(parents=True, exist_ok=True)
            os.link(target, link)
        for name, lines in setup.get("sessions", {}).items():
            # the person's session files (in their store: the data directory), oldest first:
            # each one's mtime a second after the previous
            path = self.sessions / name
            _write(path, "".join(line + "\n" for line in lines))
            stamp = 1_700_000_000 + len(list(path.parent.iterdir()))
            os.utime(path, (stamp, stamp))
        if setup.get("project_config") is not None:
            _write(self.ws / ".claw" / "config.toml", setup["project_config"])
        user = [f'model = "{setup.get("model", "attacker-model")}"']
        if setup.get("user_base_url", True):
            user.append(f'base_url = "{self.server.url}"')
        user.append(setup.get("user_config", ""))
        _write(self.xdg / "clawnb" / "config.toml", "\n".join(user) + "\n")
        self.before_outside = _snapshot(self.outside)
        self.seeded = _snapshot(self.ws)  # files the attack planted are not leaks by themselves
        self.seeded.update({f"data/{rel}": h for rel, h in _snapshot(self.data).items()})
        self.before_ws = {
            rel: (self.ws / rel).read_bytes()
            for rel in self.fill(self.attack.expect.get("unchanged", []))
            if (self.ws / rel).exists()
        }

    def env(self) -> dict[str, str]:
        """The environment every front end runs in: canaries set, no network, no real home."""
        return {
            **CANARY_ENV,
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.xdg),
            "XDG_DATA_HOME": str(self.data),
            # a request that tries to leave the machine fails at once instead of hanging
            "HTTPS_PROXY": "http://127.0.0.1:9",
            "https_proxy": "http://127.0.0.1:9",
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }

    # -- effects ----------------------------------------------------------------------------

    def leaks(self) -> dict[str, list[str]]:
        """Where canaries went: the model's requests, workspace files, the saved notebook."""
        where: dict[str, list[str]] = {}
        found = leaked(self.server.bodies()) + leaked(self.server2.bodies())
        # secrets only known once the run started (the kernel's HMAC key, written by a setup
        # cell to a file outside the workspace)
        for rel in self.fill(self.attack.data.get("dynamic_canaries", [])):
            path = Path(rel)
            secret = path.read_text().strip() if path.exists() else ""
            if not secret:
                where[f"dynamic canary {rel}"] = ["never written: the setup did not run"]
            elif any(x in self.server.bodies() for x in spellings(secret)):
                found.append(path.name)
        if found:
            where["model requests"] = found
        stored = list(self.data.rglob("*")) if self.data.is_dir() else []
        for p in [*self.ws.rglob("*"), *stored]:
            if p.is_symlink() or not p.is_file():
                continue
            rel = str(p.relative_to(self.ws if p.is_relative_to(self.ws) else self.root))
            if self.seeded.get(rel) == hashlib.sha256(p.read_bytes()).hexdigest():
                continue
            found = leaked(p.read_text("utf-8", "replace"))
            if found:
                where[rel] = found
        if self.notebook_text:
            found = leaked(self.notebook_text)
            if found:
                where["saved notebook"] = found
        return where

    def tool_results(self) -> dict[str, str]:
        """What the model was told for each tool call id (from the requests it received)."""
        results: dict[str, str] = {}
        for request in self.server.requests:
            try:
                messages = json.loads(request.body).get("messages", [])
            except (ValueError, AttributeError):
                continue
            for m in messages:
                if m.get("role") == "tool":
                    results[m.get("tool_call_id")] = m.get("content")
        return results

    def verdict(self) -> list[str]:
        """The effects that contradict the attack's expectations (empty: the attack failed)."""
        expect = self.fill(self.attack.expect)
        problems = []
        if expect.get("model_asked", True) and not self.server.requests:
            problems.append("the model server was never asked: the attack did not run")
        if expect.get("no_leak", True):
            for where, names in self.leaks().items():
                problems.append(f"{', '.join(names)} reached {where}")
        if expect.get("screen_no_leak"):
            found = leaked(self.transcript)
            if found:
                problems.append(f"{', '.join(found)} shown on the {self.frontend}'s screen")
        if expect.get("outside_unchanged", True) and _snapshot(self.outside) != self.before_outside:
            problems.append("a file outside the workspace changed")
        for rel in expect.get("absent", []):
            p = Path(rel) if os.path.isabs(rel) else self.ws / rel
            if p.exists() or p.is_symlink():
                problems.append(f"{rel} exists (a call ran that should not have)")
        for rel, content in self.before_ws.items():
            p = self.ws / rel
            if not p.exists() or p.read_bytes() != content:
                problems.append(f"{rel} was changed")
        if expect.get("second_server_untouched"):
            if self.server2.requests:
                problems.append(
                    f"the project's base_url got {len(self.server2.requests)} request(s)"
                )
        for name in expect.get("auth_not_sent_to_server", []):
            for auth in self.server.authorizations():
                if CANARIES[name] in auth:
                    problems.append(f"{name} sent as Authorization to the model server")
        results = self.tool_results()
        for group in expect.get("same_results", []):
            seen = {results.get(call_id) for call_id in group}
            if len(seen) != 1:
                problems.append(f"calls {group} got different results (an oracle): {seen}")
        if self.notebook_text and expect.get("rendered_lacks"):
            rendered = render_notebook_html(self.ws / "attack.ipynb")
            for pattern in expect["rendered_lacks"]:
                found = re.search(pattern, rendered)
                if found:
                    problems.append(f"the saved notebook renders {found.group(0)!r}")
        for text in expect.get("model_lacks", []):
            if text in self.server.bodies():
                problems.append(f"{text!r} reached the model")
        for text in expect.get("transcript_lacks", []):
            if text in self.transcript:
                problems.append(f"the front end showed {text!r}")
        says = dict(expect.get("frontend_says", {}))
        if expect.get("transcript_contains_chat"):
            says.setdefault("chat", expect["transcript_contains_chat"])
        for text in says.get(self.frontend, []):
            if text not in self.transcript:
                problems.append(f"the {self.frontend} never showed {text!r}")
        if "max_seconds" in expect and self.elapsed > expect["max_seconds"]:
            problems.append(f"the run took {self.elapsed:.0f} s")
        for text in expect.get("transcript_contains", []):
            if text not in self.transcript:
                problems.append(f"the front end never said {text!r}")
        if "max_approvals" in expect and len(self.approvals) > expect["max_approvals"]:
            problems.append(f"{len(self.approvals)} approvals asked")
        if "min_approvals" in expect and len(self.approvals) < expect["min_approvals"]:
            problems.append(f"only {len(self.approvals)} approvals asked")
        return problems


def render_notebook_html(path: Path) -> str:
    """The saved notebook as a reader's browser gets it: nbconvert's HTML (the Markdown
    renderer Jupyter uses), so the verdict is about what is drawn and loaded, not the source."""
    import nbformat
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="basic").from_notebook_node(nbformat.read(path, 4))
    return body


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def make_world(
    root: Path, attack: Attack, server: AttackerServer, server2: AttackerServer
) -> World:
    world = World(root, attack, server, server2)
    world.subs = {
        "WS": str(world.ws),
        "OUTSIDE": str(world.outside),
        "SERVER": server.url,
        "SERVER2": server2.url,
        "XDG": str(world.xdg),
        "PYTHON": sys.executable,
        **CANARIES,
    }
    server.turns = world.fill(attack.data.get("turns", []))
    server2.turns = world.fill(attack.data.get("turns", []))
    world.build()
    return world


# ---------------------------------------------------------------------------------------------
# Front-end drivers
# ---------------------------------------------------------------------------------------------


def drive_api(world: World, monkeypatch: Any) -> None:
    """``build_agent`` + ``send``: the Python API a script or another tool would use."""
    from clawnb import Approval
    from clawnb.session.assemble import build_agent

    for name, value in world.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(world.ws)
    policy = world.attack.data.get("approve", "deny")

    async def approve(request: Any) -> Any:
        world.approvals.append(request)
        if policy == "allow":
            return Approval.allow_once()
        if policy == "always":
            return Approval.allow_session()
        return Approval.deny("the attack harness says no")

    async def main() -> None:
        options: dict[str, Any] = {"workspace": world.ws, "approve": approve, "session": "new"}
        if world.attack.data.get("mode"):
            options["mode"] = world.attack.data["mode"]
        session = build_agent(**options)
        answer = await session.send(world.fill(world.attack.data.get("prompt", "go")))
        world.transcript = str(answer)

    try:
        asyncio.run(main())
    except Exception as exc:  # a refused run is a result: the verdict looks at effects
        world.transcript = f"{type(exc).__name__}: {exc}"


def drive_chat(world: World) -> None:
    """``python -m clawnb chat`` in a pseudo-terminal, answering like a person would."""
    import pexpect

    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(ROOT),
        "TERM": "dumb",
        **world.env(),
    }
    argv = ["-m", "clawnb", "chat", "--workspace", str(world.ws), "--no-color"]
    argv += world.attack.data.get("chat_args", [])
    if world.attack.data.get("mode"):
        argv += ["--mode", world.attack.data["mode"]]
    child = pexpect.spawn(
        sys.executable,
        argv,
        env=env,
        cwd=str(world.ws),
        encoding="utf-8",
        timeout=20,
        dimensions=(40, 200),
    )
    answer = {"deny": "n", "allow": "y", "always": "a"}[world.attack.data.get("approve", "deny")]
    log: list[str] = []
    prompts = [
        # [a]lways is not offered for a control file (v: a shortened command)
        r"\[y\]es / \[n\]o(?: / \[a\]lways)?(?: / \[v\]iew whole)?: ",
        r"trust this folder\? .*: ",
        "you> ",
        r"execute this plan\? .*: ",  # plan mode's review: "plan_answer" (default n)
        r"-- more: Enter for the next page, q to stop[^\n]* -- ",  # a long diff, paged
        pexpect.EOF,
    ]
    sent = False
    try:
        while True:
            i = child.expect(prompts)
            log.append(child.before + (child.after if isinstance(child.after, str) else ""))
            if i == 0:
                world.approvals.append(child.before)
                # "always": the first scoped choice (this session); where no "always" is
                # offered (a control file) a person can only say yes to this call
                offered = "[a]lways" in str(child.after)
                child.sendline(
                    "a 1" if answer == "a" and offered else "y" if answer == "a" else answer
                )
            elif i == 1:
                child.sendline(world.attack.data.get("trust_answer", "n"))
            elif i == 2:
                if sent:
                    child.sendeof()
                else:
                    child.sendline(world.fill(world.attack.data.get("prompt", "go")))
                    sent = True
            elif i == 3:
                child.sendline(world.attack.data.get("plan_answer", "n"))
            elif i == 4:
                child.sendline("")  # read the whole change, as a careful person would
            else:
                break
    finally:
        child.close(force=True)
        world.transcript = "".join(log)


NOTEBOOK_CELL = "%%claw --new --cwd {ws}{mode}{options}\n{prompt}"


def execute_notebook(nb: Any, world: World, approval: str) -> None:
    """Run every cell of ``nb`` in a real kernel (nbclient) in the workspace, errors kept in
    the outputs. The kernel inherits this process's environment, so the world's variables and
    ``CLAWNB_APPROVAL=approval`` are set for the run and restored after it."""
    from nbclient import NotebookClient

    env = {**world.env(), "CLAWNB_APPROVAL": approval}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        client = NotebookClient(
            nb, timeout=60, allow_errors=True, resources={"metadata": {"path": str(world.ws)}}
        )
        client.execute()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def drive_notebook(world: World) -> None:
    """A real kernel through nbclient: ``%%claw`` with the policy in ``CLAWNB_APPROVAL``; the
    executed notebook is saved into the workspace and read back for the verdict."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    mode = world.attack.data.get("mode")
    cell = NOTEBOOK_CELL.format(
        ws=world.ws,
        mode=f" --mode {mode}" if mode else "",
        options="".join(f" {o}" for o in world.attack.data.get("cell_options", [])),
        prompt=world.fill(world.attack.data.get("prompt", "go")),
    )
    setup = [
        new_code_cell(world.fill(code)) for code in world.attack.data.get("notebook_setup", [])
    ]
    nb = new_notebook(
        cells=[
            new_markdown_cell("attack"),
            new_code_cell("%load_ext clawnb"),
            *setup,
            new_code_cell(cell),
        ]
    )
    policy = world.attack.data.get("approve", "deny")
    execute_notebook(nb, world, "allow" if policy != "deny" else "deny")
    out = world.ws / "attack.ipynb"
    nbformat.write(nb, out)
    world.notebook_text = out.read_text()
    world.transcript = world.notebook_text


def run_attack(world: World, frontend: str, monkeypatch: Any) -> list[str]:
    world.frontend = frontend
    started = time.monotonic()
    with world.server, world.server2:
        if frontend == "api":
            drive_api(world, monkeypatch)
        elif frontend == "chat":
            drive_chat(world)
        else:
            drive_notebook(world)
        world.elapsed = time.monotonic() - started
        return world.verdict()
