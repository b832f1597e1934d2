"""Book chapter 10: BashTool — ``bash.rs``, 10 tests."""

from __future__ import annotations

from ._helpers import declaration, raises
from ._suite import Suite

suite = Suite("bash", "BashTool", chapters=["ch10"])


async def _run(impl, command):
    return await impl.BashTool().call({"command": command})


@suite.test
def test_bash_definition(impl, tmp):
    assert declaration(impl.BashTool().definition) == ("bash", True, {"command"})


@suite.test
async def test_bash_runs_command(impl, tmp):
    assert "hello" in await _run(impl, "echo hello")


@suite.test
async def test_bash_captures_stderr(impl, tmp):
    assert "err" in await _run(impl, "echo err >&2")


@suite.test
async def test_bash_missing_arg(impl, tmp):
    assert await raises(impl.BashTool().call({}))


@suite.test
def test_bash_default(impl, tmp):
    assert impl.BashTool().definition.name == "bash"


@suite.test
async def test_bash_stdout_and_stderr(impl, tmp):
    result = await _run(impl, "echo out && echo err >&2")
    assert "out" in result
    assert "stderr:" in result
    assert "err" in result


@suite.test
async def test_bash_no_output(impl, tmp):
    assert await _run(impl, "true") == "(no output)"


@suite.test
async def test_bash_exit_code_nonzero(impl, tmp):
    # a non-zero exit is not an error: the output still comes back
    assert "fail" in await _run(impl, "echo fail && exit 1")


@suite.test
async def test_bash_multiline_output(impl, tmp):
    result = await _run(impl, "echo line1 && echo line2 && echo line3")
    for line in ("line1", "line2", "line3"):
        assert line in result


@suite.test
async def test_bash_wrong_arg_type(impl, tmp):
    assert await raises(impl.BashTool().call({"command": 123}))
