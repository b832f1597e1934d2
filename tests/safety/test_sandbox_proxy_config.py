"""``[sandbox] allowed_hosts`` as a setting: which layer may set it, what a bad entry says,
the hooks' ``http`` action accepting the same hosts, and the session stopping the proxy."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from clawnb.config import Config, ConfigLoader, ConfigOverlay
from clawnb.control.proxy import check_host_pattern, host_allowed, proxy_programs
from clawnb.control.sandbox import bwrap_path, status_from_config
from clawnb.errors import ConfigError
from clawnb.session.assemble import build_agent
from tests.conftest import call_turn, running, scripted_model, wait_until

HOSTS = '[sandbox]\nallowed_hosts = ["PyPI.org", "*.github.com"]\n'


def test_allowed_hosts_come_only_from_the_user_layer(caplog):
    user = ConfigOverlay.from_toml(HOSTS).as_layer("user", "~/.config/clawnb/config.toml")
    project = ConfigOverlay.from_toml('[sandbox]\nallowed_hosts = ["evil.example"]\n').as_layer(
        "project", "/repo/.claw/config.toml"
    )
    with caplog.at_level(logging.WARNING):
        assert Config().merge(project).sandbox.allowed_hosts == []
    assert (
        "[sandbox] allowed_hosts in project /repo/.claw/config.toml is ignored; only the user "
        "config lists the hosts the sandbox may reach" in caplog.text
    )
    assert Config().merge(user).sandbox.allowed_hosts == ["pypi.org", "*.github.com"]
    assert Config().merge(user).merge(project).sandbox.allowed_hosts == ["pypi.org", "*.github.com"]
    assert Config().merge(project).merge(user).sandbox.allowed_hosts == ["pypi.org", "*.github.com"]
    env = ConfigOverlay.from_toml('[sandbox]\nallowed_hosts = ["x.example"]\n').as_layer("env")
    assert Config().merge(user).merge(env).sandbox.allowed_hosts == ["pypi.org", "*.github.com"]


def test_an_untrusted_project_file_cannot_open_the_network(tmp_path):
    project = tmp_path / "repo"
    (project / ".claw").mkdir(parents=True)
    (project / ".claw" / "config.toml").write_text('[sandbox]\nallowed_hosts = ["evil.example"]\n')
    home = tmp_path / "home"
    (home / "clawnb").mkdir(parents=True)
    (home / "clawnb" / "config.toml").write_text(HOSTS)
    config = ConfigLoader.load(project_dir=project, config_home=home, env={})
    assert config.sandbox.allowed_hosts == ["pypi.org", "*.github.com"]
    (home / "clawnb" / "config.toml").write_text("")
    assert (
        ConfigLoader.load(project_dir=project, config_home=home, env={}).sandbox.allowed_hosts == []
    )


@pytest.mark.parametrize(
    "entry", ["https://pypi.org", "pypi.org:443", "pypi.org/simple", "*", "a*.github.com", ""]
)
def test_a_host_that_is_not_a_name_is_one_line_naming_the_key(entry):
    with pytest.raises(ConfigError) as info:
        Config.from_toml(f'[sandbox]\nallowed_hosts = ["{entry}"]\n', source="config.toml")
    message = str(info.value)
    assert "allowed_hosts" in message and "is not a host name" in message
    assert "Traceback" not in message


def test_a_star_pattern_is_the_names_below_not_the_name_itself():
    assert check_host_pattern("*.GitHub.com.") == "*.github.com"
    assert host_allowed("api.github.com", ["*.github.com"])
    assert host_allowed("a.b.github.com", ["*.github.com"])
    assert not host_allowed("github.com", ["*.github.com"])
    assert not host_allowed("evilgithub.com", ["*.github.com"])
    assert host_allowed("PYPI.org", ["pypi.org"]) and not host_allowed(
        "pypi.org.evil", ["pypi.org"]
    )


class _Collector(BaseHTTPRequestHandler):
    bodies: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        length = int(self.headers.get("content-length", "0"))
        type(self).bodies.append(json.loads(self.rfile.read(length)))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[tuple[ThreadingHTTPServer, type[_Collector]]]:
    class Handler(_Collector):
        bodies: list[dict[str, Any]] = []

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, Handler
    finally:
        server.shutdown()
        server.server_close()


async def test_an_http_hook_may_post_to_a_host_in_allowed_hosts(tmp_path, collector):
    server, handler = collector
    url = f"http://127.0.0.1:{server.server_port}/hook"
    config = Config.from_toml(
        '[permissions]\nmode = "bypass"\n[sandbox]\nmode = "off"\nallowed_hosts = ["127.0.0.1"]\n'
        f'[[hooks.post_tool]]\naction = "http"\nurl = "{url}"\n'
    )
    model = scripted_model(
        tmp_path / "s.jsonl",
        [call_turn("w1", "write", path="a.txt", content="x"), {"text": "ok"}],
    )
    session = build_agent(config, workspace=tmp_path, model=model)
    await session.send("write")
    (body,) = handler.bodies
    assert body["tool_name"] == "write"
    # a host in neither list is refused, and /hooks names both keys
    other = Config.from_toml(
        '[permissions]\nmode = "bypass"\n[sandbox]\nmode = "off"\nallowed_hosts = ["pypi.org"]\n'
        f'[[hooks.post_tool]]\naction = "http"\nurl = "{url}"\n'
    )
    model = scripted_model(
        tmp_path / "t.jsonl", [call_turn("w2", "write", path="b.txt", content="b"), {"text": "ok"}]
    )
    session = build_agent(other, workspace=tmp_path, model=model)
    await session.send("write")
    assert len(handler.bodies) == 1
    shown = await session.command("/hooks")
    assert (
        "refused: 127.0.0.1 is not in the user config's [hooks] http_hosts "
        "(or [sandbox] allowed_hosts)" in shown
    )


@pytest.mark.skipif(
    bwrap_path() is None or None in proxy_programs(), reason="needs bwrap, tinyproxy and socat"
)
def test_the_session_stops_the_proxy_when_it_closes(tmp_path):
    config = Config.from_toml('[sandbox]\nallowed_hosts = ["localhost"]\n')
    assert status_from_config(config, tmp_path).policy is not None
    model = scripted_model(tmp_path / "s.jsonl", [{"text": "ok"}])
    session = build_agent(config, workspace=tmp_path, model=model)
    assert session.sandbox is not None
    policy = session.sandbox.policy
    assert policy is not None and policy.proxy is not None and policy.proxied
    assert "network only to localhost (through a proxy)" in session.sandbox_description()
    policy.wrap(["true"])  # the first sandboxed command starts it
    pids = policy.proxy.pids()
    assert len(pids) == 2
    session.close()
    assert wait_until(lambda: not any(running(p) for p in pids))
    assert policy.proxy.pids() == []


def test_a_config_without_allowed_hosts_has_no_proxy(tmp_path: Path):
    # a config with no allowed_hosts starts no proxy at all
    status = status_from_config(Config(), tmp_path)
    if status.policy is not None:
        assert status.policy.proxy is None and not status.policy.proxied
