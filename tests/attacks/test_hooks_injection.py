"""A hostile model names a file (or writes a command) built to break out of a hook's command
line: `;`, `$(...)`, backticks, quotes. The hooks substitute `$FILE_PATH` and `$TOOL_ARGS.key`
quoted for the place they stand, so nothing the model chose ever runs. Judged by effect: the
canary files the payloads would create do not exist. The same payloads substituted as plain
text do create them (the control case), so the test can fail."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from clawnb.config import Config
from clawnb.session.assemble import build_agent
from clawnb.types import Message
from tests.conftest import call_turn, scripted_model

PAYLOADS = [
    "a; touch CANARY_SEMI; b.txt",
    "$(touch CANARY_SUBST).txt",
    "`touch CANARY_TICK`.txt",
    "x' ; touch CANARY_SQ ; echo '.txt",
    'x" ; touch CANARY_DQ ; echo ".txt',
    'x"$(touch CANARY_DQSUBST)".txt',
]
CANARIES = [
    "CANARY_SEMI",
    "CANARY_SUBST",
    "CANARY_TICK",
    "CANARY_SQ",
    "CANARY_DQ",
    "CANARY_DQSUBST",
]

# one hook per quoting style a person might write around the variable
HOOK_COMMANDS = [
    "echo $FILE_PATH >> hooks.out",
    'echo "$FILE_PATH" >> hooks.out',
    "echo '$FILE_PATH' >> hooks.out",
    'echo "changed: $TOOL_ARGS.path" >> hooks.out',
]


def _config() -> Config:
    tables = "".join(
        f"[[hooks.post_tool]]\ncommand = {_toml(command)}\nif = \"tool == 'write'\"\n"
        for command in HOOK_COMMANDS
    )
    bash_hook = (
        "[[hooks.pre_tool]]\n"
        'command = "echo $TOOL_ARGS.command >> hooks.out; exit 1"\n'
        "if = \"tool == 'bash'\"\n"
    )
    return Config.from_toml('[permissions]\nmode = "bypass"\n' + tables + bash_hook)


def _toml(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _present(ws: Path) -> list[str]:
    return [name for name in CANARIES if (ws / name).exists()]


def test_the_payloads_do_run_when_substituted_as_plain_text(tmp_path):
    """The control case: a naive hook engine (text replace) runs every payload."""
    for payload in PAYLOADS:
        for command in HOOK_COMMANDS[:3]:
            naive = command.replace("$FILE_PATH", payload)
            subprocess.run(["sh", "-c", naive], cwd=tmp_path, capture_output=True)
    assert sorted(_present(tmp_path)) == sorted(CANARIES)


async def test_hostile_file_names_and_commands_reach_the_hooks_as_literal_words(tmp_path):
    turns = [call_turn(f"w{i}", "write", path=p, content="x") for i, p in enumerate(PAYLOADS)]
    # the pre_tool hook refuses every bash call, so only a hook could make these canaries
    turns.append(call_turn("b1", "bash", command="echo $(touch CANARY_SUBST) `touch CANARY_TICK`"))
    turns.append({"text": "done"})
    model = scripted_model(tmp_path.parent / f"{tmp_path.name}.jsonl", turns)
    session = build_agent(_config(), workspace=tmp_path, model=model)
    await session.send("write the files")
    results = {m.id: m.content for m in session.history if isinstance(m, Message.ToolResult)}
    for i, payload in enumerate(PAYLOADS):
        assert not results[f"w{i}"].startswith("error"), results[f"w{i}"]
        assert (tmp_path / payload).exists()  # the write happened; the hooks ran after it
    assert results["b1"].startswith("error: blocked by hook")
    assert _present(tmp_path) == []
    out = (tmp_path / "hooks.out").read_text()
    for payload in PAYLOADS:
        assert out.count(payload) == len(HOOK_COMMANDS), payload  # each hook saw it literally
    assert "echo $(touch CANARY_SUBST) `touch CANARY_TICK`" in out  # the pre_tool hook's copy


@pytest.mark.parametrize("payload", PAYLOADS)
async def test_each_payload_alone_creates_nothing(tmp_path, payload):
    model = scripted_model(
        tmp_path.parent / f"{tmp_path.name}.jsonl",
        [call_turn("w1", "write", path=payload, content="x"), {"text": "done"}],
    )
    session = build_agent(_config(), workspace=tmp_path, model=model)
    await session.send("write")
    assert (tmp_path / payload).exists()
    assert _present(tmp_path) == []
