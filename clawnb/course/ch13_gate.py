"""Chapter 13: the gate in front of a call (``gate(engine, call, ask)``). Not a book test file;
the book's loop does this inline."""

from __future__ import annotations

from ..types import ToolCall
from ._suite import Suite

suite = Suite("gate", "gate", chapters=["ch13"])


class _Person:
    """Answers the gate's questions from a script and remembers what it was asked."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    async def __call__(self, call: ToolCall) -> str:
        self.asked.append(call.name)
        return self.answers.pop(0)


def _engine(impl):
    P, Rule = impl.Permission, impl.PermissionRule
    return impl.PermissionEngine(
        [Rule("read", P.Allow), Rule("rm", P.Deny), Rule("bash", P.Ask)], P.Ask
    )


def _call(name: str) -> ToolCall:
    return ToolCall(f"id-{name}", name, {})


@suite.test
async def test_gate_allowed_call_runs_without_asking(impl, tmp):
    person = _Person()
    assert await impl.gate(_engine(impl), _call("read"), person) is None
    assert person.asked == []


@suite.test
async def test_gate_denied_call_is_refused_without_asking(impl, tmp):
    person = _Person()
    refusal = await impl.gate(_engine(impl), _call("rm"), person)
    assert isinstance(refusal, str) and refusal.startswith("error:")
    assert "rm" in refusal
    assert person.asked == []


@suite.test
async def test_gate_asks_and_yes_runs_once(impl, tmp):
    engine, person = _engine(impl), _Person("yes", "yes")
    assert await impl.gate(engine, _call("bash"), person) is None
    assert await impl.gate(engine, _call("bash"), person) is None
    assert person.asked == ["bash", "bash"]  # "yes" is for this call only


@suite.test
async def test_gate_asks_and_no_is_refused(impl, tmp):
    refusal = await impl.gate(_engine(impl), _call("bash"), _Person("no"))
    assert isinstance(refusal, str) and refusal.startswith("error:")


@suite.test
async def test_gate_always_allows_the_tool_for_the_session(impl, tmp):
    engine, person = _engine(impl), _Person("always")
    assert await impl.gate(engine, _call("bash"), person) is None
    assert await impl.gate(engine, _call("bash"), person) is None
    assert person.asked == ["bash"]
    assert engine.evaluate("bash", {}) == impl.Permission.Allow


@suite.test
async def test_gate_default_applies_to_unlisted_tools(impl, tmp):
    person = _Person("no")
    assert await impl.gate(_engine(impl), _call("write"), person) is not None
    assert person.asked == ["write"]
