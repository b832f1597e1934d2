"""What is approved is what runs: display escaping, whole commands, a size limit before parsing."""

from __future__ import annotations

import time

import pytest

from clawnb.cli.terminal import printable
from clawnb.safety import (
    MAX_COMMAND_BYTES,
    CommandFilter,
    SafetyViolation,
    command_display,
    display_safe,
)


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("echo hi \u202e;fr- mr", "echo hi \\u202e;fr- mr"),
        ("a\u200bb\u200dc\ufeff", "a\\u200bb\\u200dc\\ufeff"),
        ("\u2066x\u2069", "\\u2066x\\u2069"),
        ("bell\x07 esc\x1b[2J", "bell\\x07 esc\\x1b[2J"),
        ("over\rwrite", "over\\rwrite"),
        ("tag\U000e0041", "tag\\U000e0041"),
        ("line1\nline2\tend", "line1\nline2\tend"),
        ("crlf\r\nnext", "crlf\nnext"),
        ("café 日本 🙂", "café 日本 🙂"),
    ],
)
def test_invisible_and_control_characters_are_shown_escaped(raw, shown):
    assert display_safe(raw) == shown
    assert printable(raw) == shown


def test_a_long_multiline_command_is_shown_whole_with_its_line_count():
    command = "rm -rf victim" + "\n" * 60 + "echo hello"
    rows = command_display(command)
    assert rows[0].endswith("│ rm -rf victim")
    assert "(59 blank lines)" in rows[1]
    assert rows[2].endswith("│ echo hello")
    assert rows[-1] == f"(61 lines, {len(command)} bytes)"


def test_a_huge_command_is_refused_before_it_is_parsed():
    command = "echo '" + "a' 'b" * 750_000 + "'"
    started = time.perf_counter()
    with pytest.raises(SafetyViolation, match="over the 100 KB limit"):
        CommandFilter.recommended().check("bash", {"command": command})
    assert time.perf_counter() - started < 1.0
    CommandFilter.recommended().check("bash", {"command": "x" * (MAX_COMMAND_BYTES - 10)})
