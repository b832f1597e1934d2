"""A notebook resumed after a kernel restart talks to the model with today's system prompt
(date, git state, instructions), as the chat's /resume always did — not the one the
conversation was saved with."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from clawnb.types import Message
from tests.conftest import write_script


def test_a_resumed_notebook_sends_todays_system_prompt(shell, tmp_path: Path, capsys) -> None:
    write_script(tmp_path / "s.jsonl", [{"text": "first answer"}, {"text": "second answer"}])
    assert shell.run_cell("%%claw --model scripted:s.jsonl\nhello").success
    saved = shell._clawnb_session.messages.path
    # the conversation as a person would find it days later: saved with an old prompt
    records = [json.loads(line) for line in saved.read_text().splitlines() if line.strip()]
    old = "You are clawnb. Today's date: 1999-12-31."
    for record in records:
        if record.get("message", {}).get("role") == "system":
            record["message"]["content"] = old
    saved.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert old in saved.read_text()

    del shell._clawnb_session  # the kernel restarts
    assert shell.run_cell("%claw resume").success
    assert "resumed session" in capsys.readouterr().out
    assert shell.run_cell("%%claw --model scripted:s.jsonl\nand again").success
    system = shell._clawnb_session.messages[0]
    assert isinstance(system, Message.System)
    assert "1999-12-31" not in system.content
    assert date.today().isoformat() in system.content


def test_a_notebook_resumed_after_a_kernel_restart_sends_todays_date_and_git_state(
    tmp_path: Path,
) -> None:
    """Real kernels and a fake server on 127.0.0.1 that records each request: after the
    restart and ``%claw resume``, the system prompt the model receives names today's date and
    the branch checked out now, not the ones the conversation was saved with."""
    import subprocess

    from tests.conftest import session_files
    from tests.fake_servers import FakeServer, Reply

    from .kernelclient import Kernel, kernel_env

    ws = tmp_path / "ws"
    ws.mkdir()
    git = ["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    (ws / "notes.txt").write_text("v1\n")
    subprocess.run([*git, "add", "notes.txt"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first"], check=True)
    env = kernel_env(tmp_path, XDG_DATA_HOME=str(tmp_path / "data"))
    with FakeServer("vllm", [Reply("first answer"), Reply("second answer")]) as server:
        cell = f"%%claw --model local-model --base-url {server.url}\n"
        first = Kernel(ws, env)
        try:
            assert first.execute("%load_ext clawnb").status == "ok"
            run = first.execute(cell + "hello")
            assert run.status == "ok" and "first answer" in run.text, run.text
        finally:
            first.close()
        sent = server.requests[-1]["messages"][0]["content"]
        assert "Git: branch main" in sent, sent
        # days later, on another branch; the saved conversation still holds the old prompt
        [saved] = session_files(ws, env)
        records = [json.loads(line) for line in saved.read_text().splitlines() if line.strip()]
        for record in records:
            if record.get("message", {}).get("role") == "system":
                content = record["message"]["content"]
                record["message"]["content"] = content.replace(
                    f"Date: {date.today().isoformat()}", "Date: 1999-12-31"
                )
        saved.write_text("".join(json.dumps(r) + "\n" for r in records))
        assert "Date: 1999-12-31" in saved.read_text()
        subprocess.run([*git, "checkout", "-q", "-b", "feature"], check=True)

        second = Kernel(ws, env)
        try:
            assert second.execute("%load_ext clawnb").status == "ok"
            run = second.execute("%claw resume")
            assert run.status == "ok" and "resumed session" in run.text, run.text
            run = second.execute(cell + "and again")
            assert run.status == "ok" and "second answer" in run.text, run.text
        finally:
            second.close()
    messages = server.requests[-1]["messages"]
    assert any("hello" in m["content"] for m in messages if m["role"] == "user")  # resumed
    system = messages[0]["content"]
    assert messages[0]["role"] == "system"
    assert f"Date: {date.today().isoformat()}" in system and "1999-12-31" not in system
    assert "Git: branch feature" in system and "branch main" not in system
