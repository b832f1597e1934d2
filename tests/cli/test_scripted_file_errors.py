"""A scripted model file with a wrong shape ends the chat with one line naming the file and
the line — not a traceback from deep in the loop (``python -m clawnb chat`` as a subprocess,
reading the prompt from a pipe)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

GOOD = '{"text": "fine"}\n'


@pytest.mark.parametrize(
    "line, says",
    [
        ('{"text": "hi", "usage": "lots"}', "'usage' must be an object (got \"lots\")"),
        ('{"usage": {"input_tokens": "9"}}', "'usage.input_tokens' must be a whole number"),
        (
            '{"tool_calls": [{"id": 1, "name": "read"}]}',
            "'tool_calls[0].id' must be a non-empty string (got 1)",
        ),
        ('{"tool_calls": [{"id": "c1", "name": 2}]}', "'tool_calls[0].name' must be a non-empty"),
        ('{"tool_calls": [{"id": "c1"}]}', "'tool_calls[0]' has no 'name'"),
        ('{"tool_calls": ["read"]}', "'tool_calls[0]' must be an object"),
        ('{"tool_calls": {"id": "c1"}}', "'tool_calls' must be a list"),
        ('{"reasoning": 5, "text": "a"}', "'reasoning' must be a string or null (got 5)"),
        ('{"text": ["a"]}', "'text' must be a string or null"),
        ('{"stop_reason": 3}', "'stop_reason' must be a string (got 3)"),
        ('{"text": ', "line 2 is not valid JSON"),
        ("[1, 2", "line 2 is not valid JSON"),
    ],
)
def test_a_wrong_field_or_bad_json_is_one_line_naming_file_and_line(tmp_path, line, says):
    script = tmp_path / "model.jsonl"
    script.write_text(GOOD + line + "\n")  # the bad turn is on line 2
    done = subprocess.run(
        [sys.executable, "-m", "clawnb", "chat", "--model", f"scripted:{script}"],
        input="hello\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path / "home"),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "PYTHONPATH": str(ROOT),
        },
    )
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output
    errors = [row for row in output.splitlines() if row.startswith("error:")]
    assert len(errors) == 1, output
    assert str(script) in errors[0] and "line 2" in errors[0] and says in errors[0], errors[0]
    assert done.returncode != 0
