"""The host allowlist of the sandbox: a filtering HTTP(S) proxy on the host, bridged inside.

``[sandbox] allowed_hosts = ["pypi.org", "*.github.com"]`` keeps the sandbox's network
namespace private (``--unshare-net``: only its own loopback) and gives it one way out, the
way Claude Code's sandbox runtime and Codex do it on Linux:

* on the host, **tinyproxy** (Debian's, a well-kept filtering proxy) listens on a loopback
  port; its filter file lists the allowed hosts (``FilterDefaultDeny Yes``: every other host
  is refused with a 403 whose text names the refused address and the key to add it to), and
  ``CONNECT`` is allowed to ports 443 and 80 only;
* **socat** on the host turns a unix socket in a private temp folder (mode 0700) into that
  port — a unix socket is a file, and files cross network namespaces;
* the socket is bound into the sandbox, where a second **socat** listens on the sandbox's own
  loopback (``127.0.0.1:3128``) before the command starts, and the command gets
  ``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY`` (and the lower-case ones) pointing there,
  ``NO_PROXY`` naming the sandbox's own loopback.

A program that ignores the proxy variables reaches nothing: there is no route out of the
namespace. The proxy resolves the names itself, with the host's resolver.

:class:`HostProxy` starts on first use (the first sandboxed command of a session that lists
hosts), stops with the session (:meth:`HostProxy.stop`, called by ``Session.close``), and
cannot outlive the agent: both host processes run with ``PR_SET_PDEATHSIG`` armed from a
thread of their own that lives as long as they do (the signal follows the thread that
started a child, not the process), so a ``kill -9`` of the agent ends them too; an
``atexit`` hook stops them at a normal exit.

Host patterns: a name (``pypi.org``, matched exactly, case-insensitively) or ``*.`` and a
name (``*.github.com``: every name below ``github.com``, not ``github.com`` itself, as in
Claude Code's sandbox runtime). :func:`host_allowed` applies the same rule in Python (for
hooks' ``http`` action).
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence

__all__ = [
    "PROXY_PORT",
    "SOCKET_IN_SANDBOX",
    "HostProxy",
    "ProxyUnavailable",
    "bridge_prefix",
    "check_host_pattern",
    "host_allowed",
    "proxy_env",
    "proxy_programs",
]

# Where the bridge listens inside the sandbox (its network namespace is private: no clash).
PROXY_PORT = 3128
# Where the host's socket is bound inside the sandbox (its /tmp is a private tmpfs).
SOCKET_IN_SANDBOX = "/tmp/.clawnb-proxy.sock"
# CONNECT (HTTPS tunnels) only to the web's ports: no tunnel to an allowed host's ssh or
# database port.
CONNECT_PORTS = (443, 80)
# How long a start may take before it is called a failure.
START_TIMEOUT = 10.0

# tinyproxy's log line for a filtered host (a CONNECT to another port is logged at Info
# level, with every request: not read, its 403 "Access violation" is all a client gets)
_REFUSED = re.compile(r'refused on filtered (?:domain|url) "([^"]+)"')
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?"
_NAME = re.compile(rf"^{_LABEL}(?:\.{_LABEL})*$")


class ProxyUnavailable(OSError):
    """The proxy cannot run here (a program missing, or it did not start): an ``OSError``,
    so whatever starts a sandboxed process reports it as a process that could not start."""


def check_host_pattern(pattern: object) -> str:
    """``pattern`` lower-cased, or a ``ValueError`` saying what is wrong with it: a host name
    or an IPv4 address, optionally ``*.`` first; no scheme, port, path or other wildcard."""
    if not isinstance(pattern, str):
        raise ValueError(f"a host must be a string, got {pattern!r}")
    text = pattern.strip().lower().rstrip(".")
    name = text[2:] if text.startswith("*.") else text
    if not name or not _NAME.match(name) or len(name) > 253:
        raise ValueError(
            f"{pattern!r} is not a host name: write a name such as 'pypi.org' or "
            "'*.github.com' (no scheme, port or path)"
        )
    return text


def host_allowed(host: str, patterns: Iterable[str]) -> bool:
    """Whether ``host`` is one ``patterns`` allows (see the module docstring)."""
    host = host.strip().lower().rstrip(".")
    if not host:
        return False
    for pattern in patterns:
        try:
            pattern = check_host_pattern(pattern)
        except ValueError:
            continue
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]) and len(host) > len(pattern) - 1:
                return True
        elif host == pattern:
            return True
    return False


def _filter_line(pattern: str) -> str:
    """One tinyproxy filter rule (``FilterType ere``, matched against the host alone)."""
    if pattern.startswith("*."):
        return r"^([a-z0-9_-]+\.)+" + re.escape(pattern[2:]).replace(r"\-", "-") + "$"
    return "^" + re.escape(pattern).replace(r"\-", "-") + "$"


def proxy_programs() -> tuple[str | None, str | None]:
    """Where ``tinyproxy`` and ``socat`` are (trusted places only), each ``None`` if not."""
    from .executables import trusted_executable

    return trusted_executable("tinyproxy"), trusted_executable("socat")


def proxy_env() -> list[str]:
    """``--setenv NAME VALUE`` arguments for bubblewrap: every proxy variable points at the
    bridge; the sandbox's own loopback is reached directly."""
    url = f"http://127.0.0.1:{PROXY_PORT}"
    out: list[str] = []
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        out += ["--setenv", name, url, "--setenv", name.lower(), url]
    no_proxy = "localhost,127.0.0.1,::1"
    out += ["--setenv", "NO_PROXY", no_proxy, "--setenv", "no_proxy", no_proxy]
    return out


def bridge_prefix(socat: str) -> list[str]:
    """``sh -c SCRIPT sh`` to put before a sandboxed command: start the in-sandbox bridge
    (loopback port → the bound socket), wait until it listens (``/proc/net/tcp`` of the
    private namespace), then ``exec`` the command. The bridge dies with the namespace when
    the command ends."""
    port_hex = f"{PROXY_PORT:04X}"
    script = (
        f"'{socat}' TCP-LISTEN:{PROXY_PORT},bind=127.0.0.1,fork,reuseaddr "
        f"UNIX-CONNECT:{SOCKET_IN_SANDBOX} </dev/null >/dev/null 2>&1 & "
        "i=0; "
        f'until grep -q ":{port_hex} 00000000:0000 0A" /proc/net/tcp 2>/dev/null; do '
        "i=$((i+1)); [ $i -gt 1000 ] && break; sleep 0.005; done; "
        'exec "$@"'
    )
    return ["/bin/sh", "-c", script, "sh"]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pdeathsig() -> None:
    """In the child before exec: SIGKILL when the thread that started us ends (or the
    agent dies); exit at once if that already happened."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass


_live: list[HostProxy] = []
_live_lock = threading.Lock()


def _stop_all() -> None:
    with _live_lock:
        proxies = list(_live)
    for proxy in proxies:
        proxy.stop()


atexit.register(_stop_all)


class HostProxy:
    """tinyproxy + the host side of the bridge for one session's ``allowed_hosts``."""

    def __init__(
        self,
        hosts: Sequence[str],
        *,
        tinyproxy: str | None = None,
        socat: str | None = None,
    ) -> None:
        self.hosts = tuple(check_host_pattern(h) for h in hosts)
        self._tinyproxy = tinyproxy
        self._socat = socat
        self._lock = threading.Lock()
        self._dir: str | None = None
        self._procs: list[subprocess.Popen[bytes]] = []
        self._stop = threading.Event()
        self._keeper: threading.Thread | None = None
        self.port = 0

    # -- state --------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return bool(self._procs) and all(p.poll() is None for p in self._procs)

    def pids(self) -> list[int]:
        """The host processes' pids (tinyproxy, socat) while they run."""
        return [p.pid for p in self._procs if p.poll() is None]

    @property
    def socket_path(self) -> str | None:
        return os.path.join(self._dir, "proxy.sock") if self._dir else None

    @property
    def folder(self) -> str | None:
        """The private temp folder with the config, the filter and the socket."""
        return self._dir

    # -- what it refused --------------------------------------------------------------
    def log_mark(self) -> int:
        """How much the proxy has logged so far (for :meth:`refused_since`)."""
        if self._dir is None:
            return 0
        try:
            return os.path.getsize(os.path.join(self._dir, "tinyproxy.log"))
        except OSError:
            return 0

    def refused_since(self, mark: int) -> list[str]:
        """The hosts the proxy refused since ``mark``, in order, each once, read from its log
        (``LogLevel Notice`` logs a refused host, not a request)."""
        if self._dir is None:
            return []
        try:
            with open(os.path.join(self._dir, "tinyproxy.log"), "rb") as fh:
                fh.seek(mark)
                text = fh.read(1 << 20).decode("utf-8", "replace")
        except OSError:
            return []
        found: list[str] = []
        for line in text.splitlines():
            match = _REFUSED.search(line)
            if match is not None:
                host = match.group(1)
                if host not in found:
                    found.append(host)
        return found

    # -- start and stop -----------------------------------------------------------------
    def start(self) -> str:
        """Start (once; again if a process died) and return the host socket's path. Raises
        :class:`ProxyUnavailable` with one line when it cannot."""
        with self._lock:
            if self.running and self.socket_path is not None:
                return self.socket_path
            self._stop_locked()
            tinyproxy, socat = self._tinyproxy, self._socat
            if tinyproxy is None or socat is None:
                found = proxy_programs()
                tinyproxy, socat = tinyproxy or found[0], socat or found[1]
            missing = [n for n, p in (("tinyproxy", tinyproxy), ("socat", socat)) if not p]
            if missing or tinyproxy is None or socat is None:
                raise ProxyUnavailable(
                    f"[sandbox] allowed_hosts needs {' and '.join(missing)} on PATH "
                    "(apt-get install tinyproxy socat)"
                )
            self._stop = threading.Event()
            ready = threading.Event()
            failure: list[str] = []
            keeper = threading.Thread(
                target=self._keep,
                args=(tinyproxy, socat, ready, failure, self._stop),
                name="clawnb-sandbox-proxy",
                daemon=True,
            )
            keeper.start()
            ready.wait(START_TIMEOUT + 5)
            if failure or not self.running or self.socket_path is None:
                self._stop_locked()
                raise ProxyUnavailable(
                    "the sandbox's proxy did not start: " + (failure[0] if failure else "timeout")
                )
            self._keeper = keeper
            with _live_lock:
                if self not in _live:
                    _live.append(self)
            return self.socket_path

    def stop(self) -> None:
        """End both processes and remove the private folder (nothing if not running)."""
        with self._lock:
            self._stop_locked()
        with _live_lock:
            if self in _live:
                _live.remove(self)

    def _stop_locked(self) -> None:
        self._stop.set()
        keeper, self._keeper = self._keeper, None
        if keeper is not None and keeper is not threading.current_thread():
            keeper.join(5)
        for proc in self._procs:
            _end(proc)
        self._procs = []
        if self._dir is not None:
            import shutil

            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    # -- the keeper thread --------------------------------------------------------------
    def _keep(
        self,
        tinyproxy: str,
        socat: str,
        ready: threading.Event,
        failure: list[str],
        stop: threading.Event,
    ) -> None:
        """Start the processes from this thread (their ``PR_SET_PDEATHSIG`` is tied to it),
        say so, wait for :meth:`stop`, then end them."""
        procs: list[subprocess.Popen[bytes]] = []
        try:
            procs = self._spawn(tinyproxy, socat)
            self._procs = procs
        except (OSError, ProxyUnavailable) as exc:
            failure.append(str(exc))
            for proc in procs:
                _end(proc)
        finally:
            ready.set()
        if failure:
            return
        stop.wait()
        for proc in procs:
            _end(proc)

    def _spawn(self, tinyproxy: str, socat: str) -> list[subprocess.Popen[bytes]]:
        import tempfile

        _sweep_orphans(tempfile.gettempdir())
        folder = tempfile.mkdtemp(prefix="clawnb-proxy-")  # 0700: ours alone
        self._dir = folder
        with open(os.path.join(folder, "owner"), "w", encoding="ascii") as fh:
            fh.write(f"{os.getpid()}\n")  # for _sweep_orphans, after a kill -9 of this process
        filter_path = os.path.join(folder, "allowed-hosts")
        with open(filter_path, "w", encoding="utf-8") as fh:
            fh.write("# [sandbox] allowed_hosts\n")
            for pattern in self.hosts:
                fh.write(_filter_line(pattern) + "\n")
        refusal = os.path.join(folder, "refused.txt")
        with open(refusal, "w", encoding="utf-8") as fh:
            # {request}: the request line, which names the host (and port) refused
            fh.write(
                "clawnb sandbox: refused {request} ({cause}): the sandbox reaches only the "
                "hosts in [sandbox] allowed_hosts (HTTPS on ports "
                + " and ".join(str(p) for p in CONNECT_PORTS)
                + "); add the host there in the user config (~/.config/clawnb/config.toml)\n"
            )
        sock = os.path.join(folder, "proxy.sock")
        started: list[subprocess.Popen[bytes]] = []
        last = ""
        for _attempt in range(3):  # the free port may be taken between the probe and the bind
            port = _free_port()
            conf = os.path.join(folder, "tinyproxy.conf")
            with open(conf, "w", encoding="utf-8") as fh:
                fh.write(
                    f"Port {port}\nListen 127.0.0.1\nTimeout 600\nMaxClients 256\n"
                    "LogLevel Notice\nDisableViaHeader Yes\n"
                    f'Filter "{filter_path}"\nFilterType ere\nFilterDefaultDeny Yes\n'
                    f'ErrorFile 403 "{refusal}"\n'
                    + "".join(f"ConnectPort {p}\n" for p in CONNECT_PORTS)
                )
            log = os.path.join(folder, "tinyproxy.log")
            with open(log, "wb") as out:
                proc = subprocess.Popen(
                    [tinyproxy, "-d", "-c", conf],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    preexec_fn=_pdeathsig,
                    start_new_session=True,
                )
            if _wait(functools.partial(_listening, port), proc):
                started.append(proc)
                self.port = port
                break
            _end(proc)
            with open(log, encoding="utf-8", errors="replace") as fh:
                last = fh.read().strip()
        if not started:
            raise ProxyUnavailable(f"tinyproxy did not start ({last.splitlines()[-1:] or '?'})")
        bridge = subprocess.Popen(
            [socat, f"UNIX-LISTEN:{sock},fork,mode=600,unlink-early", f"TCP:127.0.0.1:{self.port}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=_pdeathsig,
            start_new_session=True,
        )
        started.append(bridge)
        if not _wait(lambda: os.path.exists(sock), bridge):
            for proc in started:
                _end(proc)
            raise ProxyUnavailable("socat did not open the proxy's socket")
        return started


def _sweep_orphans(temp: str) -> None:
    """Remove the private folders of proxies whose agent died without cleaning up (a
    ``kill -9``: its processes died with it, the folder stayed): ours (same owner), with an
    ``owner`` file naming a process that no longer runs."""
    import shutil

    try:
        entries = [e for e in os.scandir(temp) if e.name.startswith("clawnb-proxy-")]
    except OSError:
        return
    for entry in entries:
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat().st_uid != os.geteuid():
                continue
            with open(os.path.join(entry.path, "owner"), encoding="ascii") as fh:
                pid = int(fh.read().strip())
        except (OSError, ValueError):
            continue
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, 0)
            continue  # its agent still runs
        except ProcessLookupError:
            shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            continue


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def _wait(condition: Callable[[], bool], proc: subprocess.Popen[bytes]) -> bool:
    """Poll ``condition`` until true (``True``), or the process ends or time runs out."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if condition():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.005)
    return False


def _end(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    try:
        proc.terminate()
        proc.wait(2)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(2)
    except OSError:
        pass
