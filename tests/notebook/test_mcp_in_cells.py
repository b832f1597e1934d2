"""MCP in a real kernel (nbclient): a ``%%claw`` cell's model calls a configured server's tool
through the same gate; ``%claw mcp`` shows the server; a big structured result becomes a
kernel variable the next cell can use (the model reads its shape and name, not the payload);
the cell recorded with ``--record`` re-runs from ``replay:`` with no server configured,
giving the same results; and an interrupt cancels the server's in-flight request."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from clawnb.notebook.headless import run_notebook
from tests.conftest import call_turn, write_script
from tests.mcp.helpers import SERVERS

pytestmark = pytest.mark.timeout(240)
ROWS = 3000  # {"id": i, "name": "row i"} each: about 90,000 characters of JSON


def _outputs(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", ""))
        parts.extend(str(v) for v in out.get("data", {}).values())
        parts.append(out.get("evalue", ""))
    return "\n".join(parts)


def _notebook(path: Path, cells: list[str]) -> None:
    nb = new_notebook(
        cells=[new_code_cell(c) for c in cells],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    nbformat.write(nb, path)


@pytest.fixture
def configured(tmp_path, monkeypatch):
    config = tmp_path / ".config" / "clawnb"
    config.mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    for name in ("CLAWNB_API_KEY", "OPENROUTER_API_KEY", "CLAWNB_MODEL"):
        monkeypatch.delenv(name, raising=False)
    (config / "config.toml").write_text(
        "[mcp_servers.faults]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(SERVERS / 'faults.py'))}]\n"
        "startup_timeout = 120\n"
        f"env = {{ FAULTS_DIR = {json.dumps(str(tmp_path))} }}\n"
    )
    return config / "config.toml"


def test_a_cells_model_uses_a_server_and_a_big_result_becomes_a_kernel_variable(
    tmp_path, configured
):
    write_script(
        tmp_path / "script.jsonl",
        [
            call_turn("e1", "mcp__faults__echo", text="hello from the cell"),
            call_turn("r1", "mcp__faults__rows", n=ROWS),
            {"text": "The table is in the kernel."},
        ],
    )
    path = tmp_path / "mcp.ipynb"
    _notebook(
        path,
        [
            "%load_ext clawnb",
            "%%claw --model scripted:script.jsonl --record rec.jsonl\nfetch the table",
            "print('rows in the kernel:', len(mcp_faults_rows['rows']))",
            "%claw mcp",
        ],
    )
    saved = run_notebook(path, approval="allow")
    cell = _outputs(saved.cells[1])
    assert "The table is in the kernel." in cell
    assert "rows in the kernel: 3000" in _outputs(saved.cells[2])
    assert "faults" in _outputs(saved.cells[3]) and "connected" in _outputs(saved.cells[3])
    # what the model read: the echo, then the shape and the name — not 90,000 characters
    lines = [json.loads(line) for line in (tmp_path / "rec.jsonl").read_text().splitlines()]
    calls = [entry["mcp"] for entry in lines if "mcp" in entry]
    assert [c["tool"] for c in calls] == ["mcp__faults__echo", "mcp__faults__rows"]
    assert calls[0]["result"] == "hello from the cell"
    bound = calls[1]["result"]
    assert "bound to the kernel variable `mcp_faults_rows`" in bound
    assert "a dict of 1 key ('rows')" in bound and len(bound) < 600
    assert "row 2999" not in json.dumps(lines)

    # the same cell from the recording, no server configured: the same results, offline
    configured.write_text("")
    replayed = tmp_path / "replayed.ipynb"
    _notebook(replayed, ["%load_ext clawnb", "%%claw --model replay:rec.jsonl\nfetch the table"])
    again = _outputs(run_notebook(replayed, approval="allow").cells[1])
    assert "The table is in the kernel." in again
    assert "replaying the recorded calls of mcp__faults__" in again


def test_a_kernel_interrupt_cancels_the_in_flight_mcp_request_on_the_server(tmp_path, configured):
    """■ Stop / Kernel → Interrupt during a slow MCP call: the turn ends at once, the SDK's
    notifications/cancelled reaches the server (its handler is interrupted), and the server
    still answers the next cell."""
    from tests.notebook.kernelclient import Kernel, kernel_env

    write_script(
        tmp_path / "slow.jsonl",
        [call_turn("s1", "mcp__faults__slow", seconds=60), {"text": "never reached"}],
    )
    write_script(
        tmp_path / "next.jsonl",
        [call_turn("e1", "mcp__faults__echo", text="still here"), {"text": "next cell fine"}],
    )
    kernel = Kernel(tmp_path, kernel_env(tmp_path, CLAWNB_FRONTEND_TIMEOUT="5"))
    try:
        assert kernel.execute("%load_ext clawnb").status == "ok"
        run = kernel.execute(
            "%%claw --model scripted:slow.jsonl --approve allow\nwait for it",
            interrupt_if=lambda run: (tmp_path / "slow.started").exists(),
            allow_stdin=False,
            timeout=120,
        )
        assert run.interrupt_to_idle is not None and run.interrupt_to_idle < 5, run
        assert "interrupted" in run.text
        deadline = time.monotonic() + 10
        while not (tmp_path / "slow.cancelled").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (tmp_path / "slow.cancelled").exists()  # the server's handler was cancelled
        run = kernel.execute(
            "%%claw --model scripted:next.jsonl --approve allow\nagain", allow_stdin=False
        )
        assert run.status == "ok" and "next cell fine" in run.text, run.text
    finally:
        kernel.close()


def test_an_image_an_mcp_tool_returns_is_shown_on_its_card(tmp_path, configured):
    """The server's 640×480 PNG reaches the card as an <img> data URI (nothing fetched) —
    live and in what the notebook keeps — while the model reads its label."""
    from tests.notebook.kernelclient import Frontend, Kernel, kernel_env

    write_script(
        tmp_path / "img.jsonl",
        [call_turn("i1", "mcp__faults__image"), {"text": "A picture came back."}],
    )
    kernel = Kernel(tmp_path, kernel_env(tmp_path, CLAWNB_FRONTEND_TIMEOUT="5"))
    try:
        assert kernel.execute("%load_ext clawnb").status == "ok"
        run = kernel.execute(
            "%%claw --model scripted:img.jsonl --approve allow --ui widget\nshow me",
            frontend=Frontend(render=True),
            timeout=120,
        )
        assert run.status == "ok", run.text
        kept = json.dumps(run.outputs, default=str, ensure_ascii=False)
        assert "<img class='clawnb-image' alt='[image/png 640×480]'" in kept, kept[-2000:]
        assert "src='data:image/png;base64,iVBOR" in kept
        assert "A picture came back." in run.text
    finally:
        kernel.close()


def test_only_clean_raster_images_become_img_tags():
    from types import SimpleNamespace

    from clawnb.notebook.html import MAX_IMAGES, images_html

    png = SimpleNamespace(mime_type="image/png", data="iVBORw0KGgo=", label="[image/png 1×1]")
    svg = SimpleNamespace(mime_type="image/svg+xml", data="PHN2Zz4=", label="[image/svg+xml]")
    forged = SimpleNamespace(
        mime_type="image/png", data="AAAA' onerror='alert(1)", label="[image/png, 1 KB]"
    )
    out = images_html([png, svg, forged])
    assert out.count("<img ") == 1 and "src='data:image/png;base64,iVBORw0KGgo='" in out
    assert "[image/svg+xml]" in out and "onerror" not in out
    many = images_html([png] * (MAX_IMAGES + 2))
    assert many.count("<img ") == MAX_IMAGES and "(2 more images)" in many
