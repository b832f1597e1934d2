"""``[sandbox] allowed_hosts``: real bubblewrap, real tinyproxy and socat, a real HTTP server on
127.0.0.1. The server has two names on this machine: ``localhost`` (listed) and ``127.0.0.1``
(not listed) — the proxy resolves the name with the host's resolver, so the same server is
reached by one name and refused by the other, which is what a host allowlist promises."""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from clawnb.control.proxy import HostProxy, proxy_programs
from clawnb.control.sandbox import bwrap_path, policy_for
from clawnb.tools import BashTool, ToolError
from tests.conftest import running, wait_until

# The sandbox has a private, empty /tmp: a Python under /tmp (a CI clone's venv) is not there,
# so sandboxed commands use the system's interpreter when it has one.
SANDBOX_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

_TINYPROXY, _SOCAT = proxy_programs()
_MISSING = [
    name
    for name, path in (("bwrap", bwrap_path()), ("tinyproxy", _TINYPROXY), ("socat", _SOCAT))
    if path is None
]
if _MISSING and os.environ.get("CLAWNB_SANDBOX_TESTS") == "require":
    raise RuntimeError(
        f"CLAWNB_SANDBOX_TESTS=require but {', '.join(_MISSING)} missing: "
        "apt-get install bubblewrap tinyproxy socat"
    )
pytestmark = pytest.mark.skipif(
    bool(_MISSING), reason=f"{', '.join(_MISSING)} not installed (apt-get install ...)"
)

PAGE = b"hello from the allowed host\n"


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        self.send_response(200)
        self.send_header("content-length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[int]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(httpd.server_port)
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def bash(ws: Path) -> Iterator[BashTool]:
    status = policy_for(ws, allowed_hosts=["localhost"])
    assert status.policy is not None and status.policy.proxied, status.describe()
    yield BashTool(ws, sandbox=status, kill_grace=0.2)
    status.policy.close()


# What a program inside runs: urllib follows the proxy variables, as pip, git and curl do.
# NO_PROXY names the sandbox's own loopback, so for 'localhost' the test lifts it: the name
# then goes to the proxy, which resolves it on the host.
FETCH = textwrap.dedent(
    """
    import os, sys, urllib.error, urllib.request
    os.environ.pop("NO_PROXY", None); os.environ.pop("no_proxy", None)
    try:
        print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode(), end="")
    except urllib.error.HTTPError as exc:
        print("HTTP", exc.code, exc.read().decode().strip())
    except OSError as exc:
        print("ERROR", exc)
    """
)


def fetch(url: str) -> str:
    return f"{SANDBOX_PYTHON} -c '{FETCH}' {url}"


async def test_a_sandboxed_command_reaches_a_listed_host_and_is_refused_another(bash, server):
    assert await bash.call({"command": fetch(f"http://localhost:{server}/")}) == PAGE.decode()
    refused = await bash.call({"command": fetch(f"http://127.0.0.1:{server}/")})
    assert refused.startswith(f"HTTP 403 clawnb sandbox: refused GET http://127.0.0.1:{server}/ ")
    assert "(Filtered): the sandbox reaches only the hosts in [sandbox] allowed_hosts" in refused
    assert "add the host there in the user config (~/.config/clawnb/config.toml)" in refused
    body, *_, note = refused.strip().splitlines()
    assert body.startswith("HTTP 403 clawnb sandbox: refused") and body.endswith("config.toml)")
    assert note.startswith("stderr: [sandbox: the proxy refused 127.0.0.1: only [sandbox] allowed")


async def test_https_to_an_unlisted_host_is_refused_and_the_result_names_it(bash, server):
    # an HTTPS client shows only "403 Filtered": the result adds which host and which key
    out = await bash.call({"command": fetch("https://example.invalid/")})
    assert out.startswith("ERROR") and "403" in out
    assert out.strip().splitlines()[-1] == (
        "stderr: [sandbox: the proxy refused example.invalid: only [sandbox] allowed_hosts (localhost) "
        "are reached, HTTPS on ports 443 and 80; add a host there in the user config "
        "(~/.config/clawnb/config.toml)]"
    )
    # the next call's result names only its own refusals: none for a listed host
    assert await bash.call({"command": fetch(f"http://localhost:{server}/")}) == PAGE.decode()


async def test_no_direct_connection_without_the_proxy(bash, server):
    # the allowed host's address, straight, and the allowed name with the proxy ignored
    script = textwrap.dedent(
        f"""
        import socket, urllib.request
        for host in ("127.0.0.1", "localhost"):
            try:
                socket.create_connection((host, {server}), timeout=5).close()
                print(host, "reached")
            except OSError as exc:
                print(host, "refused", type(exc).__name__)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({{}}))
        try:
            opener.open("http://localhost:{server}/", timeout=5)
            print("no proxy: reached")
        except OSError:
            print("no proxy: refused")
        """
    )
    out = await bash.call({"command": f"{SANDBOX_PYTHON} -c '{script}'"})
    assert "reached" not in out, out
    assert out.count("refused") == 3


async def test_the_proxy_variables_point_at_the_bridge_on_the_private_loopback(bash):
    out = await bash.call(
        {"command": "echo $HTTP_PROXY $https_proxy $ALL_PROXY; echo $NO_PROXY; cat /etc/hostname"}
    )
    first, second = out.splitlines()[:2]
    assert first == " ".join(["http://127.0.0.1:3128"] * 3)
    assert second == "localhost,127.0.0.1,::1"


async def test_the_proxy_starts_at_the_first_command_and_stops_with_close(ws, server):
    status = policy_for(ws, allowed_hosts=["localhost"])
    policy = status.policy
    assert policy is not None and policy.proxy is not None
    assert policy.proxy.pids() == []  # nothing runs before a command needs it
    bash = BashTool(ws, sandbox=status, kill_grace=0.2)
    assert await bash.call({"command": fetch(f"http://localhost:{server}/")}) == PAGE.decode()
    pids, folder = policy.proxy.pids(), policy.proxy.folder
    assert len(pids) == 2 and folder is not None
    assert oct(os.stat(folder).st_mode & 0o777) == "0o700"
    assert sorted(os.listdir(folder)) == [
        "allowed-hosts",
        "owner",
        "proxy.sock",
        "refused.txt",
        "tinyproxy.conf",
        "tinyproxy.log",
    ]
    # the same proxy serves the next command (and a masked copy of the policy)
    await bash.call({"command": "true"})
    assert policy.masked().proxy is policy.proxy and policy.proxy.pids() == pids
    policy.close()
    assert wait_until(lambda: not any(running(p) for p in pids))
    assert not os.path.exists(folder)


async def test_the_status_names_the_hosts_and_plan_mode_has_no_network(ws):
    status = policy_for(ws, allowed_hosts=["pypi.org", "*.github.com"])
    assert status.describe() == (
        "sandboxed: workspace-write, network only to pypi.org, *.github.com (through a proxy)"
    )
    assert status.policy is not None
    plan = status.policy.read_only()
    assert not plan.proxied and plan.describe() == "sandboxed: read-only, no network"
    # network = "on" is the whole network: the list adds nothing
    on = policy_for(ws, network="on", allowed_hosts=["pypi.org"])
    assert on.policy is not None and not on.policy.proxied
    assert on.describe() == "sandboxed: workspace-write, network"


def test_without_tinyproxy_and_socat_the_sandbox_has_no_network_and_says_why(
    ws, tmp_path, monkeypatch
):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("bwrap", "true"):
        found = shutil.which(program)
        assert found is not None
        (bin_dir / program).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    status = policy_for(ws, allowed_hosts=["pypi.org"])
    assert status.policy is not None and not status.policy.proxied
    assert status.describe() == (
        "sandboxed: workspace-write, no network (allowed_hosts needs tinyproxy and socat: "
        "apt-get install tinyproxy socat)"
    )
    assert "--unshare-net" in status.policy.wrap(["true"])


def test_the_benchmark_prints_the_ratio_last():
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "bench_sandbox_proxy.py"), "--runs", "1"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=root,
        check=True,
    )
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("allowlist / network on: ") and last.endswith("x (goal ≤ 1.2x)")
    assert float(last.split(": ")[1].split("x")[0]) < 5  # loose: one run on a loaded machine


async def test_a_proxy_that_cannot_start_refuses_the_command_in_one_line(ws, tmp_path):
    status = policy_for(ws, allowed_hosts=["localhost"])
    assert status.policy is not None
    broken = HostProxy(["localhost"], tinyproxy=str(tmp_path / "no-tinyproxy"), socat="socat")
    policy = dataclasses.replace(status.policy, proxy=broken)
    bash = BashTool(ws, sandbox=policy, kill_grace=0.2)
    with pytest.raises(ToolError) as info:
        await bash.call({"command": "echo never"})
    message = str(info.value)
    assert message.startswith("failed to run bash command: the sandbox's proxy did not start")
    assert "\n" not in message and "Traceback" not in message


def test_the_proxy_keeps_running_after_the_thread_that_started_it_ends():
    # PR_SET_PDEATHSIG follows the thread that started a child: a proxy started from a
    # worker thread must not die with it
    proxy = HostProxy(["localhost"])
    worker = threading.Thread(target=proxy.start)
    worker.start()
    worker.join()
    try:
        pids = proxy.pids()
        assert len(pids) == 2
        assert not wait_until(lambda: not all(running(p) for p in pids), timeout=0.5)
    finally:
        proxy.stop()


def test_no_proxy_process_outlives_a_kill_9_of_the_agent(tmp_path):
    script = textwrap.dedent(
        """
        import sys, time
        from clawnb.control.proxy import HostProxy
        proxy = HostProxy(["localhost"])
        proxy.start()
        print(*proxy.pids(), proxy.folder, flush=True)
        time.sleep(600)
        """
    )
    agent = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    try:
        assert agent.stdout is not None
        *numbers, folder = agent.stdout.readline().split()
        pids = [int(n) for n in numbers]
        assert len(pids) == 2 and all(running(p) for p in pids)
        os.kill(agent.pid, signal.SIGKILL)
        agent.wait(10)
        assert wait_until(lambda: not any(running(p) for p in pids))
        # its folder stays behind, until the next proxy of this user starts
        assert os.path.isdir(folder)
        proxy = HostProxy(["localhost"])
        proxy.start()
        proxy.stop()
        assert not os.path.exists(folder)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        if agent.stdout is not None:
            agent.stdout.close()
