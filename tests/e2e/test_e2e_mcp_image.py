"""An MCP tool's image on its card, in a real JupyterLab + Chromium: a trusted project's
server (tests/mcp/servers/faults.py) returns a 640×480 PNG; the finished card, opened, shows
it — decoded by the browser at its real size, never wider than the cell — in light and dark."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from clawnb.control.trust import TrustStore

pytestmark = pytest.mark.e2e

SERVERS = Path(__file__).resolve().parents[1] / "mcp" / "servers"


def test_an_mcp_tools_image_shows_on_its_card_in_both_themes(lab) -> None:
    workdir = lab.server.root / "mcpimage"
    (workdir / ".claw").mkdir(parents=True)
    config = workdir / ".claw" / "config.toml"
    config.write_text(
        "[mcp_servers.faults]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(SERVERS / 'faults.py'))}]\n"
        "startup_timeout = 120\n"
        f"env = {{ FAULTS_DIR = {json.dumps(str(workdir))} }}\n"
    )
    # the person trusted this folder (its server is a program): in the lab's private config
    TrustStore(config_home=lab.server.root.parent / "home" / ".config").trust(workdir, config)
    turns = [
        {"tool_calls": [{"id": "i1", "name": "mcp__faults__image", "arguments": {}}]},
        {"text": "A picture came back."},
    ]
    (workdir / "script.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    cells = ["%load_ext clawnb", "%%claw --model scripted:script.jsonl --approve allow\nshow me"]
    lab.open(lab.server.write_notebook("image.ipynb", cells, directory=workdir))
    lab.run_all()
    lab.wait_output(1, r"A picture came back\.")
    lab.wait_prompt_done(1)
    claw = lab.cell(1)
    claw.locator("summary").filter(has_text="mcp__faults__image").first.click()
    image = claw.locator("img.clawnb-image")
    image.wait_for()
    size = image.evaluate("i => [i.naturalWidth, i.naturalHeight, i.clientWidth]")
    cell_width = claw.evaluate("c => c.clientWidth")
    assert size[:2] == [640, 480]  # the browser decoded the data URI
    assert 0 < size[2] <= cell_width
    for dark in (False, True):
        lab.set_theme(dark)
        lab.shot("mcp-image-dark" if dark else "mcp-image-light")
    lab.set_theme(False)
