"""Chapter 15: a tool call wrapped in its hooks (``hooked_call(registry, tool, args)``). Not a
book test file; the book's loop does this inline."""

from __future__ import annotations

from ..types import ToolDefinition
from ._suite import Suite

suite = Suite("hooked_call", "hooked_call", chapters=["ch15"])


class _Echo:
    """A tool that records the arguments it ran with."""

    def __init__(self, fail: bool = False) -> None:
        self.definition = ToolDefinition("echo", "Echo").param("text", "string", "text", True)
        self.ran: list[dict] = []
        self.fail = fail

    async def call(self, args):
        self.ran.append(args)
        if self.fail:
            raise ValueError("echo broke")
        return f"echo: {args['text']}"


class _Rewrite:
    def __init__(self, impl) -> None:
        self.impl = impl

    async def on_event(self, event):
        if isinstance(event, self.impl.HookEvent.PreToolCall):
            return self.impl.HookAction.ModifyArgs({"text": "rewritten"})
        return self.impl.HookAction.Continue()


@suite.test
async def test_hooked_call_runs_the_tool_and_logs_both_sides(impl, tmp):
    log, tool = impl.LoggingHook(), _Echo()
    result = await impl.hooked_call(impl.HookRegistry().with_(log), tool, {"text": "hi"})
    assert result == "echo: hi"
    assert log.messages() == ["pre:echo", "post:echo"]


@suite.test
async def test_hooked_call_block_stops_the_tool(impl, tmp):
    log, tool = impl.LoggingHook(), _Echo()
    registry = impl.HookRegistry().with_(impl.BlockingHook(["echo"], "not today")).with_(log)
    result = await impl.hooked_call(registry, tool, {"text": "hi"})
    assert result.startswith("error:") and "not today" in result
    assert tool.ran == []
    assert "post:echo" not in log.messages()


@suite.test
async def test_hooked_call_modified_arguments_reach_the_tool(impl, tmp):
    tool = _Echo()
    result = await impl.hooked_call(impl.HookRegistry().with_(_Rewrite(impl)), tool, {"text": "a"})
    assert tool.ran == [{"text": "rewritten"}]
    assert result == "echo: rewritten"


@suite.test
async def test_hooked_call_failure_becomes_a_result_and_post_hooks_see_it(impl, tmp):
    log, tool = impl.LoggingHook(), _Echo(fail=True)
    result = await impl.hooked_call(impl.HookRegistry().with_(log), tool, {"text": "hi"})
    assert result.startswith("error:") and "echo broke" in result
    assert log.messages() == ["pre:echo", "post:echo"]
