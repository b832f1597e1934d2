"""One table of commands against every front end: the terminal chat (a pseudo-terminal),
``%claw …`` and a ``%%claw`` cell whose body is ``/…`` in a real IPython kernel, ``/…`` cells
in the claw kernel, and the Python API (``await session.command(…)``). Each says the same
thing, modulo how a command is typed there (``/`` or ``%claw ``) and the lines a front end
adds about itself (its approval policy)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from clawnb.errors import CommandError
from clawnb.session.commands import COMMANDS
from tests.conftest import spawn_chat, write_script
from tests.notebook.kernelclient import Kernel, kernel_env

pytestmark = pytest.mark.timeout(240)

# (what is typed after the prefix) — read-only ones first, then ones that change the session
TABLE = [
    "help",
    "help mode",
    "status",
    "cost",
    "history",
    "cost",
    "sessions",
    "mode accept_edits",
    "mode nonsense",
    "model scripted:{ws}/other.jsonl",
    "status",
    "undo",
    "statsu",
    "frobnicate",
]
# lines a front end adds about itself (CommandHost.status_lines / config_lines)
OWN_LINES = re.compile(r"^(approvals: |approval policy without a frontend: |CLAWNB_APPROVAL = )")
# where each front end shows a command's mistake
ERROR_PREFIX = re.compile(r"^(\w*UsageError: |error: )")


def _everywhere(frontend_names: list[str]) -> set[str]:
    """The commands every front end in the table offers (the chat's /exit and the notebook's
    errors are each one front end's)."""
    return {c.name for c in COMMANDS if all(c.offered_in(f) for f in frontend_names)}


def normalise(text: str, prefix: str) -> str:
    shared = _everywhere(["chat", "notebook", "kernel", "api"])
    lines = []
    for raw in text.replace("\r", "").strip().splitlines():
        line = ERROR_PREFIX.sub("", raw.rstrip())
        if OWN_LINES.match(line):
            continue
        line = line.replace(prefix, "/")
        line = re.sub(r"\d{8}-\d{6}-[0-9a-f]{6}", "ID", line)  # a session's id and folder
        line = re.sub(r"ws-[0-9a-f]{12}", "ws-HASH", line)
        line = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", "WHEN", line)
        # each front end's system prompt has its own words (the notebook's tools), so its own size
        line = re.sub(r"~[\d,]+ of", "~N of", line)
        # history: the notebook numbers a prompt by the cell that sent it (In [2]), the others
        # count prompts ([1]); the words after the number are the same
        line = re.sub(r"^(In )?\[\d+\] you", "[#] you", line)
        row = re.match(r"^  /(\S+)", line)
        if row and lines and lines[0] == "commands:" and row.group(1) not in shared:
            continue  # a command one front end has and another has not
        lines.append(re.sub(r" {2,}", "  ", line))  # help's columns depend on the names
    return "\n".join(lines)


def _world(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    ws = tmp_path / "ws"
    ws.mkdir()
    write_script(ws / "s.jsonl", [{"text": "hi"}])
    write_script(ws / "other.jsonl", [{"text": "hello"}])
    env = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "CLAWNB_MODEL": f"scripted:{ws}/s.jsonl",  # the chat's cwd is not the workspace
    }
    return ws, env


def _table(ws: Path) -> list[str]:
    return [line.replace("{ws}", str(ws)) for line in TABLE]


def chat_answers(tmp_path: Path, ws: Path, env: dict[str, str]) -> list[str]:
    child = spawn_chat(tmp_path, "--workspace", str(ws), "--no-color", env=env, timeout=30)
    child.expect("you> ")
    child.sendline("say hi")  # one turn first: every front end has a saved conversation
    child.expect("you> ")
    answers = []
    try:
        for line in _table(ws):
            child.sendline("/" + line)
            child.expect("you> ")
            echoed, _, said = str(child.before).replace("\r", "").partition("\n")
            assert echoed.strip() == "/" + line, echoed
            answers.append(said)
        child.sendline("/exit")
    finally:
        child.close(force=True)
    return answers


def _start(ws: Path, env: dict[str, str], kernel_name: str, tmp_path: Path) -> Kernel:
    if kernel_name == "python3":
        return Kernel(ws, kernel_env(tmp_path, **env))
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    from clawnb.notebook.kernel import install

    install(prefix=tmp_path)
    ksm = KernelSpecManager(kernel_dirs=[str(tmp_path / "share/jupyter/kernels")])
    kernel = Kernel.__new__(Kernel)
    kernel.km = KernelManager(kernel_name="clawnb", kernel_spec_manager=ksm)
    full = kernel_env(tmp_path, JUPYTER_PATH=str(tmp_path / "share/jupyter"), **env)
    kernel.km.start_kernel(cwd=str(ws), env=full)
    kernel.kc = kernel.km.client()
    kernel.kc.start_channels()
    kernel.kc.wait_for_ready(timeout=60)
    return kernel


def kernel_answers(
    tmp_path: Path, ws: Path, env: dict[str, str], kernel_name: str, cell: str
) -> list[str]:
    kernel = _start(ws, env, kernel_name, tmp_path)
    try:
        if kernel_name == "python3":
            assert kernel.execute("%load_ext clawnb").status == "ok"
        first = kernel.execute("say hi" if kernel_name == "clawnb" else "%%claw\nsay hi")
        assert first.status == "ok", first.text
        cells = [cell.replace("LINE", line) for line in _table(ws)]
        return [kernel.execute(c, allow_stdin=False).text for c in cells]
    finally:
        kernel.close()


def api_answers(ws: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from clawnb.session.assemble import build_agent

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(ws)
    session = build_agent(workspace=ws, ask_user=False, session="new")
    asyncio.run(session.send("say hi"))

    async def run(line: str) -> str:
        try:
            return await session.command("/" + line) or ""
        except CommandError as exc:
            return str(exc)

    try:
        return [asyncio.run(run(line)) for line in _table(ws)]
    finally:
        session.close()


def test_the_same_commands_say_the_same_in_every_front_end(tmp_path, monkeypatch):
    results: dict[str, list[str]] = {}
    prefixes = {"chat": "/", "%claw": "%claw ", "%%claw /": "%claw ", "kernel": "/", "api": "/"}
    for name in prefixes:
        home = tmp_path / name.replace("%", "p").replace(" ", "_").replace("/", "s")
        home.mkdir()
        ws, env = _world(home)
        if name == "chat":
            results[name] = chat_answers(home, ws, env)
        elif name == "%claw":
            results[name] = kernel_answers(home, ws, env, "python3", "%claw LINE")
        elif name == "%%claw /":
            results[name] = kernel_answers(home, ws, env, "python3", "%%claw\n/LINE")
        elif name == "kernel":
            results[name] = kernel_answers(home, ws, env, "clawnb", "/LINE")
        else:
            results[name] = api_answers(ws, env, monkeypatch)
        # the workspace and data folders differ by name only
        results[name] = [
            normalise(a.replace(str(home), "HOME"), prefixes[name]) for a in results[name]
        ]

    expected = results["api"]
    for name, answers in results.items():
        for line, got, want in zip(TABLE, answers, expected, strict=True):
            assert got == want, f"{name}: {line!r}\n--- got\n{got}\n--- api\n{want}"

    said = dict(zip(TABLE, expected, strict=False))
    # /help lists every command offered everywhere; an unknown command gets the nearest one
    for command in _everywhere(["chat", "notebook", "kernel", "api"]):
        if not COMMANDS.find(command).hidden:
            assert f"  /{command}" in said["help"], command
    assert said["statsu"] == "unknown command /statsu — did you mean /status? (/help lists them)"
    assert "mode: accept_edits" in expected[TABLE.index("status", 3)]
    assert "model: scripted:HOME/ws/other.jsonl" in expected[TABLE.index("status", 3)]


def test_help_in_each_front_end_lists_exactly_what_works_there():
    chat = COMMANDS.help_text("chat", "/")
    import clawnb.notebook.runner  # noqa: F401  (the notebook's own commands register here)

    notebook = COMMANDS.help_text("notebook", "%claw ")
    kernel = COMMANDS.help_text("kernel", "/")
    assert "/exit" in chat and "%claw exit" not in notebook and "/exit" not in kernel
    assert "%claw errors" in notebook and "/errors" in kernel
    assert "/errors" not in COMMANDS.help_text("chat", "/")
