"""Chapter 22: a command registry, declared once. Not a book test file: the book's chat has a
few commands written inline."""

from __future__ import annotations

import asyncio

from ._suite import Suite

suite = Suite("commands", "Command, CommandRegistry", chapters=["ch22"])


def _registry(impl, said):
    registry = impl.CommandRegistry()
    registry.add(
        impl.Command(
            "model",
            "Show or switch the model",
            lambda args: said.append(args) or f"model: {args or 'default'}",
            "[NAME]",
            ("m",),
        )
    )
    registry.add(impl.Command("cost", "Tokens and cost so far", lambda args: "0 tokens"))
    return registry


@suite.test
async def test_commands_dispatch_runs_the_handler_with_its_arguments(impl, tmp):
    # "/name the rest" runs name's handler with the rest of the line, stripped.
    said = []
    registry = _registry(impl, said)
    assert await registry.dispatch("/model  gpt-5 mini ") == "model: gpt-5 mini"
    assert said == ["gpt-5 mini"]
    assert await registry.dispatch("/cost") == "0 tokens"


@suite.test
async def test_commands_an_alias_reaches_the_same_command(impl, tmp):
    said = []
    registry = _registry(impl, said)
    assert await registry.dispatch("/m opus") == "model: opus"
    assert registry.find("m") is registry.find("model")


@suite.test
async def test_commands_an_async_handler_is_awaited(impl, tmp):
    # A handler may talk to the model: a coroutine function's result is awaited.
    async def compact(args):
        await asyncio.sleep(0)
        return "compacted"

    registry = impl.CommandRegistry()
    registry.add(impl.Command("compact", "Summarise the history", compact))
    assert await registry.dispatch("/compact") == "compacted"


@suite.test
async def test_commands_unknown_name_suggests_the_nearest(impl, tmp):
    # One line that names what was typed and the nearest command, not an exception.
    registry = _registry(impl, [])
    said = await registry.dispatch("/modle gpt-5")
    assert "/modle" in said
    assert "did you mean /model?" in said.lower()
    assert registry.suggest("cots") == "cost"
    assert registry.suggest("zzzzzz") is None


@suite.test
async def test_commands_help_lists_every_command(impl, tmp):
    # /help is generated from the registry: each command with its usage, description and
    # aliases, itself included, so a command added later is in it without more work.
    registry = _registry(impl, [])
    registry.add(impl.Command("plan", "Plan before changing anything", lambda args: "", "<task>"))
    text = await registry.dispatch("/help")
    lines = text.splitlines()
    assert sorted(line.split()[0] for line in lines) == ["/cost", "/help", "/model", "/plan"]
    model = next(line for line in lines if line.startswith("/model"))
    assert "[NAME]" in model
    assert "Show or switch the model" in model
    assert "/m" in model.split("[NAME]")[1]
    assert "<task>" in next(line for line in lines if line.startswith("/plan"))


@suite.test
def test_commands_a_taken_name_is_refused(impl, tmp):
    # Two commands under one name (or a name that is another's alias) would shadow each
    # other silently: the second is refused.
    registry = _registry(impl, [])
    for taken in ("model", "m", "help"):
        try:
            registry.add(impl.Command(taken, "again", lambda args: ""))
        except ValueError:
            continue
        raise AssertionError(f"/{taken} was added twice")
    assert registry.names() == ["cost", "help", "model"]
