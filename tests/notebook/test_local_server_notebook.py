"""%%claw in a real kernel (nbclient) against a fake local server on 127.0.0.1: generation
options reach the request body, a conversation that outgrows the context recovers, a prompt
too long even alone fails its cell without poisoning the next one, and ``--ui widget`` in a
headless run saves no widget state."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from clawnb.notebook.headless import run_notebook
from tests.fake_servers import FakeServer, Reply

pytestmark = pytest.mark.timeout(120)

LONG = "Please remember this paragraph. " * 50  # ~1,600 characters, ~400 tokens


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("CLAWNB_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY", "CLAWNB_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))


def _outputs(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", ""))
        parts.extend(str(v) for v in out.get("data", {}).values())
        parts.extend(out.get("traceback", []))
        parts.append(out.get("evalue", ""))
    return "\n".join(parts)


def test_overflow_recovers_and_the_next_cell_works(tmp_path: Path) -> None:
    replies = [
        Reply("First answer."),
        Reply("The user shared two paragraphs."),  # compaction's summary
        Reply("Second answer, after compacting."),
        Reply("Summary again."),  # the too-long prompt's recovery attempt
        Reply("Short answer."),
    ]
    with FakeServer("vllm", replies, window_after_system=700) as server:
        options = (
            f"--model local-model --base-url {server.url} --ui widget "
            "--max-output-tokens 321 --temperature 0.5 --extra-body '{\"top_k\": 3}'"
        )
        too_long = new_code_cell("%%claw\nthird: " + "word " * 4000)
        too_long.metadata["tags"] = ["raises-exception"]
        nb = new_notebook(
            cells=[
                new_code_cell("%load_ext clawnb"),
                new_code_cell(f"%%claw {options}\nfirst: {LONG}"),
                new_code_cell(f"%%claw --ui widget\nsecond: {LONG}"),
                too_long,
                new_code_cell("%%claw\nfourth: short"),
            ],
            metadata={
                "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
            },
        )
        path = tmp_path / "local.ipynb"
        nbformat.write(nb, path)
        run_notebook(path, approval="deny", save=path)
    saved = nbformat.read(path, as_version=4)
    cells = saved.cells
    assert "First answer." in _outputs(cells[1])
    assert "no interactive frontend" in _outputs(cells[1])
    second = _outputs(cells[2])
    assert "too long for the model's context" in second
    assert "Second answer, after compacting." in second
    assert "it was not kept, so the next cell works" in _outputs(cells[3])
    assert "Short answer." in _outputs(cells[4])
    assert "widgets" not in saved.metadata  # --ui widget headless: no widget state saved
    assert "application/vnd.jupyter.widget" not in path.read_text()

    first = server.requests[0]
    assert (first["max_tokens"], first["temperature"], first["top_k"]) == (321, 0.5, 3)
    last = server.requests[-1]["messages"]
    assert last[-1] == {"role": "user", "content": "fourth: short"}
    assert not any("third: " in json.dumps(m) for m in last)  # the refused prompt is gone
    assert all(r["max_tokens"] == 321 for r in server.requests[1:])  # options kept for later cells


def test_bad_generation_option_is_a_usage_error(tmp_path: Path) -> None:
    cell = new_code_cell("%%claw --extra-body '{oops'\nhello")
    cell.metadata["tags"] = ["raises-exception"]
    nb = new_notebook(
        cells=[new_code_cell("%load_ext clawnb"), cell],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    path = tmp_path / "bad.ipynb"
    nbformat.write(nb, path)
    saved = run_notebook(path, approval="deny")
    text = _outputs(saved.cells[1])
    assert "UsageError" in text and "--extra-body is not valid JSON" in text


def test_claw_cost_says_not_reported_when_the_server_sends_no_usage(shell, capsys) -> None:
    with FakeServer("ollama", [Reply("hello", usage=None)]) as server:
        shell.run_cell(f"%%claw --model m --base-url {server.url}\nhi")
    capsys.readouterr()
    shell.run_line_magic("claw", "cost")
    out = capsys.readouterr().out
    assert "tokens: not reported" in out and "0 in + 0 out" not in out
