"""What the sandbox's host allowlist costs ``pip download`` (issue 24: goal ≤ 1.2×).

A local package index (``python -m http.server`` over a folder with one small wheel and a
PEP 503 ``simple/`` page) on 127.0.0.1, and the same ``pip download --no-deps`` of it run two
ways under the real bubblewrap sandbox:

* **network on**: ``[sandbox] network = "on"`` — the host's network, the index straight;
* **allowlist**: ``[sandbox] allowed_hosts = ["localhost"]`` — the private network namespace,
  the in-sandbox socat bridge, the host's socat and tinyproxy (:mod:`clawnb.control.proxy`).

The two alternate, each run in a fresh sandbox (as every ``bash`` call is); the proxy is
started once before timing (its start, printed too, is paid once per session). The best and
the median of each are printed, and last the ratio of the best runs (on a shared machine the
median moves with the load; the best run is what the path itself costs).

    python benchmarks/bench_sandbox_proxy.py [--runs 9]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from clawnb.control.sandbox import policy_for

# The sandbox has a private, empty /tmp: a Python under /tmp (a CI clone's venv) is not there,
# so sandboxed commands use the system's interpreter when it has one.
SANDBOX_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable

NAME, VERSION = "clawnb_bench_tiny", "1.0"


def make_wheel(folder: Path) -> Path:
    """A valid pure-Python wheel of about 40 KiB (a module with some text in it)."""
    dist = f"{NAME}-{VERSION}.dist-info"
    files = {
        f"{NAME}/__init__.py": "DATA = " + repr("x" * 40_000) + "\n",
        f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n",
        f"{dist}/WHEEL": "Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = "\n".join(record) + "\n"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, text in files.items():
            zf.writestr(path, text)
    wheel = folder / f"{NAME}-{VERSION}-py3-none-any.whl"
    wheel.write_bytes(buffer.getvalue())
    return wheel


def make_index(root: Path) -> None:
    (root / "files").mkdir(parents=True)
    wheel = make_wheel(root / "files")
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    page = root / "simple" / NAME.replace("_", "-")
    page.mkdir(parents=True)
    (page / "index.html").write_text(
        f'<!DOCTYPE html><html><body><a href="../../files/{wheel.name}#sha256={sha}">'
        f"{wheel.name}</a></body></html>\n"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(port: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.02)
    raise SystemExit(f"the index server did not start on port {port}")


def pip_download(host: str, port: int) -> list[str]:
    # NO_PROXY lists the sandbox's own loopback; the allowlist run needs 'localhost' to go to
    # the proxy (which resolves it on the host), so the name is taken out of it
    return [
        "env",
        "-u",
        "NO_PROXY",
        "-u",
        "no_proxy",
        SANDBOX_PYTHON,
        "-m",
        "pip",
        "download",
        "--isolated",  # no pip config or PIP_* variables (find-links elsewhere); proxies stay
        "-q",
        "--no-deps",
        "--no-cache-dir",
        "--disable-pip-version-check",
        "--index-url",
        f"http://{host}:{port}/simple",
        "-d",
        "/tmp/dl",
        NAME,
    ]


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"pip download failed:\n{done.stdout}{done.stderr}")
    return seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-proxy-") as tmp:
        root, ws = Path(tmp) / "index", Path(tmp) / "ws"
        ws.mkdir()
        make_index(root)
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_listening(port)
            on = policy_for(ws, network="on").policy
            listed = policy_for(ws, allowed_hosts=["localhost"]).policy
            if on is None or listed is None or not listed.proxied or listed.proxy is None:
                raise SystemExit("needs bubblewrap, tinyproxy and socat")
            start = time.perf_counter()
            listed.proxy.start()
            print(f"proxy start (once per session): {(time.perf_counter() - start) * 1000:.0f} ms")
            direct_argv = on.wrap(pip_download("127.0.0.1", port), cwd=ws)
            proxied_argv = listed.wrap(pip_download("localhost", port), cwd=ws)
            timed(direct_argv), timed(proxied_argv)  # warm the page cache
            direct, proxied = [], []
            for _ in range(args.runs):
                direct.append(timed(direct_argv))
                proxied.append(timed(proxied_argv))
            listed.close()
        finally:
            server.terminate()
            server.wait(5)
    for label, runs in (("network on", direct), ("allowlist through the proxy", proxied)):
        print(
            f"sandboxed pip download, {label}: best {min(runs) * 1000:.0f} ms, "
            f"median {statistics.median(runs) * 1000:.0f} ms ({args.runs} runs)"
        )
    print(f"median ratio: {statistics.median(proxied) / statistics.median(direct):.2f}x")
    print(f"allowlist / network on: {min(proxied) / min(direct):.2f}x (goal ≤ 1.2x)")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
