"""Instructions in layers (issue 25 item 3): the project's files root first, the person's own
``instructions.md`` last, ``@path`` includes with their limits, and /config naming every file
that went into the prompt — through a real session's system prompt."""

from __future__ import annotations

import asyncio
import os

from clawnb.instructions import MAX_INCLUDE_DEPTH, InstructionLoader
from clawnb.session.assemble import build_agent


def test_the_persons_file_comes_last_and_config_names_every_file(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    user = tmp_path / "xdg" / "clawnb" / "instructions.md"
    user.parent.mkdir(parents=True)
    user.write_text("USER-PREFERS tabs.\n")
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / "AGENTS.md").write_text("ROOT-SAYS spaces. See @docs/style.md\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "style.md").write_text("STYLE-GUIDE: short lines.\n")
    (repo / "sub" / "CLAUDE.md").write_text("SUB-SAYS nothing more.\n")
    session = build_agent(None, workspace=repo / "sub", model="scripted:/dev/null")
    try:
        prompt = session.system_prompt
        order = [prompt.index(m) for m in ("ROOT-SAYS", "STYLE-GUIDE", "SUB-SAYS", "USER-PREFERS")]
        assert order == sorted(order)
        assert "@docs/style.md" not in prompt  # replaced by the file
        config = asyncio.run(session.command("/config"))
    finally:
        session.close()
    listed = config.split("instructions = ")[1].splitlines()[0].split(", ")
    assert listed == [
        str(repo / "AGENTS.md"),
        str(repo / "docs" / "style.md"),
        str(repo / "sub" / "CLAUDE.md"),
        str(user),
    ]


def test_includes_stay_inside_come_once_and_stop_at_the_depth_limit(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "secret.md").write_text("OUTSIDE-SECRET\n")
    os.symlink(tmp_path / "secret.md", ws / "linked.md")
    chain = [ws / f"c{i}.md" for i in range(MAX_INCLUDE_DEPTH + 2)]
    for i, path in enumerate(chain):
        nxt = f"@c{i + 1}.md" if i + 1 < len(chain) else ""
        path.write_text(f"LEVEL-{i} {nxt}\n")
    (ws / "AGENTS.md").write_text(
        "Mail me at me@example.com or @maintainer.\n"
        "Not a file: @missing/notes.md stays.\n"
        "`@c0.md` in code stays, and so does\n"
        "```\n@c0.md\n```\n"
        "Escapes: @../secret.md and @linked.md and @/etc/hostname\n"
        "Twice: @AGENTS.md\n"
        "Chain: @c0.md\n"
    )
    loader = InstructionLoader(["AGENTS.md"], includes=True)
    text = loader.load(ws) or ""
    assert "me@example.com or @maintainer." in text
    assert "@missing/notes.md stays" in text
    assert "`@c0.md` in code stays" in text and "```\n@c0.md\n```" in text
    assert "OUTSIDE-SECRET" not in text
    assert "[@../secret.md not included:" in text and "[@linked.md not included:" in text
    assert "[@/etc/hostname not included:" in text
    assert "[@AGENTS.md not included: it is already in the instructions]" in text
    for i in range(MAX_INCLUDE_DEPTH):
        assert f"LEVEL-{i}" in text
    assert f"more than {MAX_INCLUDE_DEPTH} includes deep" in text
    assert f"LEVEL-{MAX_INCLUDE_DEPTH + 1}" not in text


def test_the_books_loader_is_unchanged_without_the_options(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "style.md").write_text("STYLE\n")
    (ws / "AGENTS.md").write_text("See @style.md\n")
    text = InstructionLoader(["AGENTS.md"]).load(ws) or ""
    assert "See @style.md" in text and "STYLE" not in text
