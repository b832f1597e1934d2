"""The one command registry: declared once, dispatched the same way from every front end
(the chat's and the notebook's tables live in their own tests; here the registry itself and
the Python API's ``session.command``)."""

from __future__ import annotations

import pytest

from clawnb.errors import CommandError
from clawnb.session.assemble import build_agent
from clawnb.session.commands import COMMANDS, Command, CommandRegistry, split_command
from tests.conftest import call_turn, scripted_model


class _Host:
    frontend = "chat"
    prefix = "/"

    def __init__(self) -> None:
        self.quitting = False

    def quit(self) -> None:
        self.quitting = True

    async def run_turn(self, prompt: str, *, plan: bool = False) -> str | None:
        return f"ran {prompt!r} plan={plan}"

    def status_lines(self) -> list[str]:
        return ["front end: test"]

    def config_lines(self) -> list[str]:
        return []


def test_help_lists_every_registered_command_of_the_front_end():
    text = COMMANDS.help_text("chat", "/")
    for command in COMMANDS.visible("chat"):
        assert f"/{command.name}" in text, command.name
    # /exit is the chat's; the notebook's help does not offer it
    assert "%claw exit" not in COMMANDS.help_text("notebook", "%claw ")
    assert "%claw undo" in COMMANDS.help_text("notebook", "%claw ")


def test_every_existing_command_keeps_its_name():
    chat = {"plan", "cost", "compact", "undo", "sessions", "resume", "clear", "help", "exit"}
    notebook = {"status", "reset", "history", "cost", "config", "mode", "model", "undo"}
    notebook |= {"sessions", "resume", "trust", "help"}
    assert all(COMMANDS.find(n) is not None for n in chat | notebook)
    assert COMMANDS.find("quit") is COMMANDS.find("exit") is COMMANDS.find("q")
    assert COMMANDS.find("reset") is COMMANDS.find("clear")


async def test_an_unknown_command_suggests_the_nearest_one():
    with pytest.raises(CommandError, match=r"unknown command /udno — did you mean /undo\?"):
        await COMMANDS.dispatch("/udno", session=None, host=_Host())
    with pytest.raises(CommandError, match=r"unknown command /xyzzy \(/help lists them\)"):
        await COMMANDS.dispatch("/xyzzy", session=None, host=_Host())


def test_completion_offers_names_and_aliases_with_the_prefix():
    assert COMMANDS.complete("co", "chat") == ["compact", "config", "cost"]
    assert "exit" not in COMMANDS.complete("e", "notebook")
    assert "quit" in COMMANDS.complete("q", "chat")


def test_a_taken_name_is_not_silently_replaced():
    registry = CommandRegistry([Command("undo", "put files back", lambda ctx: "undone")])
    with pytest.raises(ValueError, match="undo"):
        registry.add(Command("undo", "something else", lambda ctx: "x"))
    with pytest.raises(ValueError, match="u"):
        registry.add(Command("other", "an alias that is taken", lambda ctx: "x", aliases=("undo",)))
    registry.add(Command("undo", "replaced on purpose", lambda ctx: "new"), replace=True)
    assert registry.find("undo").summary == "replaced on purpose"


def test_split_command_takes_the_name_and_the_rest():
    assert split_command("/resume  abc ") == ("resume", "abc")
    assert split_command("plan write the tests") == ("plan", "write the tests")


async def test_engine_commands_refuse_a_session_that_is_not_clawnbs():
    class Learner:  # follows the Session protocol, nothing more
        history: list = []

    with pytest.raises(CommandError, match="needs clawnb's own agent"):
        await COMMANDS.dispatch("/undo", session=Learner(), host=_Host())
    assert "commands:" in await COMMANDS.dispatch("/help", session=Learner(), host=_Host())
    host = _Host()
    await COMMANDS.dispatch("/exit", session=Learner(), host=host)
    assert host.quitting


@pytest.fixture
def session(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("hello\n")
    model = scripted_model(
        tmp_path / "s.jsonl",
        [call_turn("w1", "write", path="new.txt", content="made"), {"text": "done"}],
    )
    s = build_agent(None, workspace=ws, model=model, mode="accept_edits", session="new")
    yield s
    s.close()


async def test_the_python_api_dispatches_through_the_same_registry(session):
    # the registry's commands, then the session's skills (the built-in ones here)
    assert (await session.command("/help") or "").startswith(COMMANDS.help_text("api", "/"))
    cost = await session.command("/cost")
    assert "cost: not priced" in cost and "$0.0000" not in cost
    status = await session.command("/status")
    assert "mode: accept_edits" in status and f"workspace: {session.workspace}" in status
    assert await session.command("/mode default") == "mode: default"
    assert session.mode == "default"
    with pytest.raises(CommandError, match=r"usage: /mode \{"):
        await session.command("/mode sideways")


async def test_undo_through_the_api_puts_the_turns_files_back(session):
    await session.send("make a file")
    created = session.workspace / "new.txt"
    assert created.read_text() == "made"
    text = await session.command("/undo")
    assert not created.exists(), text
    history = await session.command("/history")
    assert "[1] you: make a file" in history and "✓ write new.txt" in history


async def test_a_skill_turns_files_are_undone_under_what_the_person_typed(session):
    # the whole body of /init goes to the model; the undo step is named by the command
    await session.command("/init the data folder")
    assert (session.workspace / "new.txt").read_text() == "made"
    text = await session.command("/undo")
    assert text.startswith("undo /init the data folder:"), text
    assert not (session.workspace / "new.txt").exists()


async def test_clear_then_resume_brings_the_conversation_back(session):
    await session.send("make a file")
    first = session.session_id
    assert "new conversation" in await session.command("/clear")
    assert session.history == [] or len(session.history) <= 1
    said = await session.command("/resume")
    assert session.session_id == first
    assert said.startswith(f"resumed session {first}: ") and "1 prompt" in said
    assert "* " + first in await session.command("/sessions")
