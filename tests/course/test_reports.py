"""Reports that point right: the line marked as the learner's is theirs (not a library frame
under it), the rule is the section of the component under test in the exercise notebook,
identical failures fold into one, and an exception still says what the test expected."""

from __future__ import annotations

import linecache
import re

import clawnb
from clawnb.course import check
from clawnb.course._explain import Mismatch
from clawnb.course._suite import Impl


def _cell(source: str, number: int) -> dict:
    """Run ``source`` as a notebook cell would (its own file name, source kept for tracebacks)
    and return the names it defines."""
    filename = f"<cell {number}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict = {"__name__": f"learner_cell_{number}"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def _section(text: str, test: str) -> str:
    return text.split(f"---- {test} ----\n", 1)[1].split("\n---- ", 1)[0]


def test_your_code_is_the_learners_own_line_not_the_library_frame_under_it():
    learner = _cell(
        "import json\n"
        "from clawnb import MockProvider\n"
        "\n"
        "class ParsingMock(MockProvider):\n"
        "    async def chat(self, messages, tools):\n"
        "        turn = await super().chat(messages, tools)\n"
        "        json.loads('{not json')\n"
        "        return turn\n",
        1,
    )
    text = str(check("mock", MockProvider=learner["ParsingMock"], verbose=False))
    section = _section(text, "test_mock_returns_text")
    assert "raised at your code, line 7: json.loads('{not json')  (inside decoder.py:" in section
    # and no line of json's own is called the learner's
    assert set(re.findall(r"your code, line (\d+)", text)) == {"7"}, text


def test_a_stopped_loop_points_at_the_learners_line_not_inside_asyncio():
    learner = _cell(
        "import asyncio\n"
        "from clawnb import MockProvider\n"
        "\n"
        "class PatientMock(MockProvider):\n"
        "    async def chat(self, messages, tools):\n"
        "        while True:\n"
        "            await asyncio.sleep(0.01)  # wait for a response that never comes\n",
        2,
    )
    text = str(check("mock", MockProvider=learner["PatientMock"], timeout=0.3, verbose=False))
    section = _section(text, "test_mock_returns_text")
    assert "timed out after 0.3 s" in section
    assert "it was running your code, line 7: await asyncio.sleep(0.01)" in section, section


def test_the_rule_is_the_section_of_the_component_under_test_in_the_exercise_notebook():
    # The gate's tests build an engine too; a gate that lets everything through is the
    # gate's mistake, so the pointer is the gate's section, in the notebook the learner uses.
    ref = Impl()

    async def gate(engine, call, ask):
        return None  # runs every call: never asks, never refuses

    text = str(
        check(
            "ch13",
            verbose=False,
            gate=gate,
            Permission=ref.Permission,
            PermissionRule=ref.PermissionRule,
            PermissionEngine=ref.PermissionEngine,
        )
    )
    section = _section(text, "test_gate_denied_call_is_refused_without_asking")
    assert (
        "the rule: notebooks/exercises/13_permission_engine.ipynb"
        " § Build it: the gate in front of a call" in section
    ), section


def test_one_mistake_behind_every_test_reads_as_one_failure_and_a_count():
    class SyncBash(clawnb.BashTool):
        def call(self, args):  # not async: every test that awaits it fails the same way
            return "hello"

    text = str(check("bash", BashTool=SyncBash, verbose=False))
    assert text.count("actual: TypeError: object str can't be used in 'await'") == 1, text
    folded = [line for line in text.splitlines() if line.startswith("(the same failure in ")]
    assert len(folded) == 1 and int(folded[0].split()[4]) >= 5, folded
    assert "test test_bash_no_output ... FAILED" in text  # each is still listed


def test_an_exception_still_says_what_the_test_expected():
    class EmptyHanded(clawnb.MockProvider):
        async def chat(self, messages, tools):
            raise ValueError("no turns left")

    text = str(check("mock", MockProvider=EmptyHanded, verbose=False))
    section = _section(text, "test_mock_steps_through_sequence")
    assert "expected: 'First'\n  actual: ValueError: no turns left" in section, section
    section = _section(text, "test_mock_returns_text")  # not inside an assert
    assert "expected: the line marked -> to run without an error" in section, section


def test_an_ordering_says_the_bound_and_the_value_that_came():
    assert Mismatch(">=", 0, 5).explain() == ["expected: a value >= 5", "  actual: 0"]
    flipped = Mismatch("<=", 5, 0, expected_on_left=True)  # `assert 5 <= ticks`
    assert flipped.explain() == ["expected: a value >= 5", "  actual: 0"]
