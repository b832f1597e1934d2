"""A failed ``%%claw`` cell's red error line is the useful one — the provider's own line
("could not reach http://127.0.0.1:PORT/v1 — is the server running? …"), not a generic
"stopped on the error shown above" — and it is shown once: not also in the transcript above
it. A real kernel, a real closed port."""

from __future__ import annotations

import socket

import pytest

from tests.conftest import write_script

from .kernelclient import Kernel, kernel_env

pytestmark = pytest.mark.timeout(120)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _shown(run) -> tuple[list[dict], str]:
    errors = [o for o in run.outputs if o["output_type"] == "error"]
    rest = "".join(
        o.get("text", "") + "".join(str(v) for v in o.get("data", {}).values())
        for o in run.outputs
        if o["output_type"] != "error"
    )
    return errors, rest


def test_a_cell_that_cannot_reach_the_server_fails_with_that_line_once(tmp_path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    line = f"could not reach {url} — is the server running? check --base-url / CLAWNB_BASE_URL"
    kernel = Kernel(ws, kernel_env(tmp_path, CLAWNB_BASE_URL=url, CLAWNB_API_KEY="badkey"))
    try:
        assert kernel.execute("%load_ext clawnb").status == "ok"
        run = kernel.execute("%%claw --model m\nhello", timeout=60)
    finally:
        kernel.close()
    assert run.status == "error"  # Run All and headless runs still stop here
    errors, rest = _shown(run)
    assert [e["ename"] for e in errors] == ["ClawFailed"]
    assert errors[0]["evalue"] == f"{line} (the history is kept)"
    assert "could not reach" not in rest  # not a second time above the red line
    assert "stopped on the error shown above" not in run.text


def test_a_scripted_model_out_of_turns_says_so_in_the_red_line(tmp_path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_script(ws / "s.jsonl", [{"text": "the only answer"}])
    kernel = Kernel(ws, kernel_env(tmp_path))
    try:
        assert kernel.execute("%load_ext clawnb").status == "ok"
        assert kernel.execute("%%claw --model scripted:s.jsonl\nfirst").status == "ok"
        run = kernel.execute("%%claw\nsecond", timeout=60)
        after = kernel.execute("%%claw --new --model scripted:s.jsonl\nthird", timeout=60)
    finally:
        kernel.close()
    errors, rest = _shown(run)
    assert [e["ename"] for e in errors] == ["ClawFailed"]
    assert "no more turns" in errors[0]["evalue"]
    assert "no more turns" not in rest
    assert after.status == "ok" and "the only answer" in after.text  # the next cell works
