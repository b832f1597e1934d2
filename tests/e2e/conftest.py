"""Fixtures for the real-browser end-to-end tests.

A real JupyterLab server runs on 127.0.0.1 in a throw-away root directory, and Debian's
Chromium (``/usr/bin/chromium``) is driven by Playwright. Nothing is mocked: these tests
exist because widget buttons, live streaming and "Run All" only prove themselves in a
browser talking to a real kernel (ARCHITECTURE.md §4).

The tests are skipped only when the browser or Playwright is missing (a developer machine
without the ``e2e`` extra); set ``CLAWNB_E2E=require`` (CI does) to turn that skip into a
failure so a broken install cannot hide behind a green run. Playwright's own browser
downloads (``playwright install``) are never used: there is no network for them.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("CLAWNB_E2E_CHROMIUM", "/usr/bin/chromium"))

# Flags measured on this workplace's machines: without the background-networking ones
# Chromium tries to reach Google hosts and the closed network refuses the connections.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
# Deque's axe-core, installed from the npm registry by .ci/e2e-setup.sh.
AXE_JS = Path(
    os.environ.get("CLAWNB_AXE_JS", REPO_ROOT / ".ci" / "node_modules" / "axe-core" / "axe.min.js")
)
ARTIFACTS = Path(os.environ.get("CLAWNB_E2E_ARTIFACTS", REPO_ROOT / "test-artifacts" / "e2e"))

SERVER_START_TIMEOUT = 60.0
# Default time Playwright waits for a selector or condition, in milliseconds.
DEFAULT_WAIT_MS = 20_000
# A first kernel start on a loaded 2-core CI machine (cold imports, .pyc writing) is slower.
KERNEL_START_MS = 40_000
# Outputs travel on another channel than the execute reply, and Markdown renders
# asynchronously: how long to keep looking after the last cell has finished.
STOPPED_GRACE_S = 3.0
# The notebook on screen (Lumino hides the panels of background tabs with lm-mod-hidden).
NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"


def _missing_requirements() -> str | None:
    """Say why the e2e tests cannot run here, or None when they can."""
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is not installed (run .ci/e2e-setup.sh: apt-get install chromium)"
    if not AXE_JS.exists():
        return f"{AXE_JS} is missing (run .ci/e2e-setup.sh: npm install axe-core)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[e2e]')"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test under tests/e2e as ``e2e`` and skip them when the browser is absent."""
    here = Path(__file__).parent
    e2e_items = [item for item in items if here in Path(str(item.path)).parents]
    if not e2e_items:
        return
    reason = _missing_requirements()
    for item in e2e_items:
        item.add_marker(pytest.mark.e2e)
        if reason is not None and os.environ.get("CLAWNB_E2E") != "require":
            item.add_marker(pytest.mark.skip(reason=f"e2e: {reason}"))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LabServer:
    """A running JupyterLab server plus helpers to put notebooks in its root."""

    def __init__(self, root: Path, port: int, token: str, runtime_dir: Path, log: Path) -> None:
        self.root = root
        self.port = port
        self.token = token
        self.runtime_dir = runtime_dir
        self.log = log
        self.base_url = f"http://127.0.0.1:{port}"

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base_url}{path}{sep}token={self.token}"

    def api(self, path: str, method: str = "GET", timeout: float = 5.0) -> Any:
        """Call the server's REST API with the token; returns decoded JSON (or None)."""
        req = urllib.request.Request(
            f"{self.base_url}{path}",
            method=method,
            headers={"Authorization": f"token {self.token}"},
            data=b"" if method == "POST" else None,
        )
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def write_notebook(self, name: str, cells: list[str], directory: Path | None = None) -> Path:
        """Write a code-cell notebook (python3 kernel) under the server root; returns its path."""
        import nbformat

        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
        }
        nb.metadata["language_info"] = {"name": "python"}
        nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
        target = (directory or self.root) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(target))
        return target

    def kernel_pids(self) -> list[int]:
        """PIDs of kernels this server started (found by our private runtime directory)."""
        marker = str(self.runtime_dir)
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if marker in cmdline and "ipykernel" in cmdline:
                pids.append(int(entry.name))
        return pids


def _write_isolated_jupyter_env(home: Path) -> dict[str, str]:
    """Private Jupyter config/data/runtime dirs, and a python3 kernelspec for *this* interpreter."""
    dirs = {
        "JUPYTER_CONFIG_DIR": home / "config",
        "JUPYTER_DATA_DIR": home / "data",
        "JUPYTER_RUNTIME_DIR": home / "runtime",
        "JUPYTERLAB_SETTINGS_DIR": home / "lab-settings",
        "JUPYTERLAB_WORKSPACES_DIR": home / "lab-workspaces",
        "IPYTHONDIR": home / "ipython",
    }
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    # JUPYTER_PATH is searched first, so this kernelspec wins over any python3 spec installed
    # elsewhere: the kernel runs the same interpreter (and so the same clawnb) as the tests.
    kernel_dir = home / "path" / "kernels" / "python3"
    kernel_dir.mkdir(parents=True, exist_ok=True)
    (kernel_dir / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (ipykernel)",
                "language": "python",
                "metadata": {"debugger": False},
            }
        )
    )
    # No news feed, no update checks, no extension-manager lookups: the network is closed.
    (dirs["JUPYTER_CONFIG_DIR"] / "jupyter_server_config.json").write_text(
        json.dumps(
            {
                "LabApp": {
                    "news_url": None,
                    "check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
                    "extension_manager": "readonly",
                },
            }
        )
    )
    # The frontend asks "get notified about Jupyter news?" unless told not to fetch news.
    notification = dirs["JUPYTERLAB_SETTINGS_DIR"] / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True, exist_ok=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    env = {key: str(path) for key, path in dirs.items()}
    env["JUPYTER_PATH"] = str(home / "path")
    return env


def _stop_server(proc: subprocess.Popen[bytes], server: LabServer) -> list[int]:
    """Shut the server down gracefully (kernels first), then by force; returns orphans killed."""
    if proc.poll() is None:
        try:
            server.api("/api/shutdown", method="POST")
        except (OSError, urllib.error.URLError):
            pass
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
    orphans = server.kernel_pids()
    for pid in orphans:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return orphans


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Where screenshots and the server log go (``test-artifacts/e2e``, git-ignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def start_lab(base: Path, log: Path, *extra_args: str) -> tuple[subprocess.Popen[bytes], LabServer]:
    """Start JupyterLab on a free 127.0.0.1 port with everything private under ``base`` (its
    root, Jupyter's directories, ``HOME``), its output in ``log``; ``extra_args`` add options.
    Returns once it answers; if it does not, it is stopped and the error quotes the log."""
    root = base / "root"
    root.mkdir()
    env = dict(os.environ)
    env.update(_write_isolated_jupyter_env(base / "jupyter"))
    # Whatever a kernel does, it must not reach a real model, leak a real key, or have
    # approvals answered by a policy from the developer's environment (CLAWNB_APPROVAL=allow
    # would make the Approve/Deny buttons never appear). A private HOME keeps user config out.
    for key in list(env):
        if key.startswith("CLAWNB_") or key.endswith("_API_KEY"):
            del env[key]
    home = base / "home"
    home.mkdir()
    env["HOME"] = str(home)
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    # Local model servers live on 127.0.0.1: never send them via a proxy.
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    port = _free_port()
    token = secrets.token_hex(16)
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--expose-app-in-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.open_browser=False",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={token}",
        "--ServerApp.terminals_enabled=False",
        *extra_args,
    ]
    server = LabServer(root, port, token, Path(env["JUPYTER_RUNTIME_DIR"]), log)
    with log.open("wb") as log_file:
        proc = subprocess.Popen(
            cmd,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"JupyterLab exited with {proc.returncode}:\n{log.read_text()[-3000:]}"
                )
            try:
                server.api("/api/status", timeout=2)
                return proc, server
            except (OSError, urllib.error.URLError):
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"JupyterLab did not answer within {SERVER_START_TIMEOUT}s:\n"
                        f"{log.read_text()[-3000:]}"
                    ) from None
                time.sleep(0.2)
    except BaseException:
        _stop_server(proc, server)
        raise


@pytest.fixture(scope="session")
def lab_server(
    tmp_path_factory: pytest.TempPathFactory, artifacts_dir: Path
) -> Iterator[LabServer]:
    """A JupyterLab server on a free 127.0.0.1 port; always shut down, kernels included."""
    proc, server = start_lab(tmp_path_factory.mktemp("e2e"), artifacts_dir / "jupyter-server.log")
    try:
        yield server
    finally:
        orphans = _stop_server(proc, server)
        assert not orphans, f"kernels outlived the JupyterLab server: {orphans}"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium under Playwright (a fresh profile per launch)."""
    reason = _missing_requirements()
    if reason is not None:  # only reached with CLAWNB_E2E=require (otherwise skipped)
        pytest.fail(f"CLAWNB_E2E=require but {reason}", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        # Playwright gives every launch() its own new, empty user-data-dir.
        chromium = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


class LabPage:
    """A Playwright page showing one notebook in JupyterLab, with the few actions tests need."""

    def __init__(self, page: Any, server: LabServer, artifacts: Path, prefix: str) -> None:
        self.page = page
        self.server = server
        self.artifacts = artifacts
        self.prefix = prefix
        self._shots = 0

    def open(self, notebook: Path) -> None:
        """Open a notebook and wait until its kernel is idle."""
        rel = notebook.relative_to(self.server.root).as_posix()
        # A workspace of its own, reset: JupyterLab would otherwise reopen earlier tests' tabs.
        self.page.goto(self.server.url(f"/lab/workspaces/{self.prefix}/tree/{rel}?reset"))
        self.page.wait_for_function("() => window.jupyterapp !== undefined")
        self.page.locator(f"{NOTEBOOK} .jp-Cell").first.wait_for()
        self.page.wait_for_function(
            """() => {
                const w = window.jupyterapp.shell.currentWidget;
                const k = w && w.sessionContext && w.sessionContext.session
                    && w.sessionContext.session.kernel;
                return !!k && k.status === 'idle';
            }""",
            timeout=KERNEL_START_MS,
        )

    def run_all(self) -> None:
        """Start "Run All Cells" without waiting for it (the command's promise ends late)."""
        started = self.page.evaluate(
            """() => {
                window.jupyterapp.commands.execute('notebook:run-all-cells');
                return true;
            }"""
        )
        assert started is True
        # Wait until execution has visibly begun, so "nothing running" means "finished".
        deadline = time.monotonic() + DEFAULT_WAIT_MS / 1000
        prompts = self.page.locator(f"{NOTEBOOK} .jp-Cell .jp-InputPrompt")
        while all(p in ("", "[ ]:") for p in map(str.strip, prompts.all_inner_texts())):
            if time.monotonic() > deadline:
                raise AssertionError("Run All did not start any cell")
            self.page.wait_for_timeout(20)

    def cell(self, index: int) -> Any:
        return self.page.locator(f"{NOTEBOOK} .jp-Cell").nth(index)

    def prompt(self, index: int) -> str:
        """The execution prompt of a cell: ``[*]:`` while it runs, ``[n]:`` when done."""
        return self.cell(index).locator(".jp-InputPrompt").inner_text().strip()

    def output_text(self, index: int) -> str:
        area = self.cell(index).locator(".jp-Cell-outputArea")
        return area.inner_text() if area.count() else ""

    def running(self) -> bool:
        """True while any cell is running or queued (its prompt shows ``[*]``)."""
        prompts = self.page.locator(f"{NOTEBOOK} .jp-Cell .jp-InputPrompt").all_inner_texts()
        return any("*" in prompt for prompt in prompts)

    def describe(self) -> str:
        """Every cell's prompt and output, for failure messages."""
        cells = self.page.locator(f"{NOTEBOOK} .jp-Cell")
        parts = []
        for i in range(cells.count()):
            out = self.output_text(i).strip() or "(no output)"
            parts.append(f"--- cell {i} {self.prompt(i)}\n{out}")
        return "\n".join(parts)

    def wait_output(self, index: int, pattern: str, timeout_ms: int = DEFAULT_WAIT_MS) -> str:
        """Wait until a cell's output matches a regular expression; returns the output text.

        Fails soon (after a short grace for late outputs and asynchronous rendering) when
        nothing is running any more, e.g. an earlier cell raised and "Run All" stopped, instead
        of waiting for the whole timeout.
        """
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout_ms / 1000
        stopped_at: float | None = None
        while True:
            text = self.output_text(index)
            if regex.search(text):
                return text
            now = time.monotonic()
            if self.running():
                stopped_at = None
            elif stopped_at is None:
                stopped_at = now
            stopped = stopped_at is not None and now - stopped_at > STOPPED_GRACE_S
            if stopped or now > deadline:
                break
            self.page.wait_for_timeout(50)
        self.shot(f"fail-cell{index}")
        why = "execution stopped" if stopped else f"timed out after {timeout_ms} ms"
        raise AssertionError(
            f"cell {index} output never matched {pattern!r} ({why}); notebook:\n{self.describe()}"
        )

    def wait_prompt_done(self, index: int, timeout_ms: int = DEFAULT_WAIT_MS) -> str:
        """Wait until a cell has finished (its prompt shows an execution count)."""
        deadline = time.monotonic() + timeout_ms / 1000
        prompt = ""
        while time.monotonic() < deadline:
            prompt = self.prompt(index)
            if re.fullmatch(r"\[\d+\]:", prompt):
                return prompt
            self.page.wait_for_timeout(50)
        self.shot(f"timeout-prompt{index}")
        raise AssertionError(f"cell {index} never finished; prompt is {prompt!r}")

    def set_theme(self, dark: bool) -> None:
        """Switch JupyterLab's theme and wait until its stylesheet is in force."""
        name = "JupyterLab Dark" if dark else "JupyterLab Light"
        self.page.evaluate(
            """(name) => { window.jupyterapp.commands.execute('apputils:change-theme',
                                                              {theme: name}); return true; }""",
            name,
        )
        self.page.wait_for_function(
            """(dark) => document.body.dataset.jpThemeLight === (dark ? 'false' : 'true')
                && getComputedStyle(document.body).getPropertyValue('--jp-layout-color0')
                       .trim() === (dark ? '#111' : 'white')""",
            arg=dark,
        )
        # a theme change shows JupyterLab's splash screen, which fades out over the page
        self.page.wait_for_selector("#jupyterlab-splash", state="detached")
        self.page.wait_for_timeout(200)  # the theme's CSS applies to the outputs

    def contrast(self, scope: str) -> dict[str, Any]:
        """Run axe-core's colour-contrast rule on the elements matching ``scope``; returns
        ``{"violations": [...], "passes": N, "incomplete": [...]}``."""
        if not AXE_JS.exists():
            pytest.fail(f"{AXE_JS} is missing: run .ci/e2e-setup.sh (npm install axe-core)")
        if not self.page.evaluate("() => typeof window.axe !== 'undefined'"):
            self.page.add_script_tag(path=str(AXE_JS))
        return self.page.evaluate(
            """async (scope) => {
                // JupyterLab lays out with absolute positions and a 0-height body; axe judges
                // such elements hidden unless html and body get a real height (ARCHITECTURE §4)
                const html = document.documentElement, body = document.body;
                const saved = [html.style.height, body.style.height];
                html.style.height = body.style.height = window.innerHeight + 'px';
                try {
                    const r = await window.axe.run({include: [[scope]]},
                        {runOnly: {type: 'rule', values: ['color-contrast']},
                         resultTypes: ['violations', 'passes', 'incomplete']});
                    const nodes = (items) => items.flatMap((i) => i.nodes.map((n) => ({
                        target: n.target.join(' '), html: n.html.slice(0, 160),
                        summary: n.failureSummary || '',
                        data: JSON.stringify((n.any[0] || {}).data || {}).slice(0, 200)})));
                    return {violations: nodes(r.violations),
                            passes: nodes(r.passes).length,
                            incomplete: nodes(r.incomplete)};
                } finally {
                    [html.style.height, body.style.height] = saved;
                }
            }""",
            scope,
        )

    def shot(self, step: str) -> Path:
        """Save a numbered full-page screenshot under test-artifacts/e2e/."""
        self._shots += 1
        path = self.artifacts / f"{self.prefix}-{self._shots:02d}-{step}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


@pytest.fixture
def lab(
    browser: Any, lab_server: LabServer, artifacts_dir: Path, request: pytest.FixtureRequest
) -> Iterator[LabPage]:
    """A fresh browser context and page on the lab server, named after the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(DEFAULT_WAIT_MS)
    page = context.new_page()
    prefix = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)
    for old in artifacts_dir.glob(f"{prefix}-*.png"):
        old.unlink()
    lab_page = LabPage(page, lab_server, artifacts_dir, prefix)
    try:
        yield lab_page
    finally:
        try:
            # Stop this notebook's kernel so the next test starts clean and none is left over.
            for session in lab_server.api("/api/sessions"):
                lab_server.api(f"/api/sessions/{session['id']}", method="DELETE")
        finally:
            context.close()
