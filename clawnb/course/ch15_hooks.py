"""Book chapter 15: hooks — ``hooks.rs``, 10 tests."""

from __future__ import annotations

from ._suite import Suite

suite = Suite("hooks", "HookRegistry, LoggingHook, BlockingHook", chapters=["ch15"])


@suite.test
async def test_hooks_logging_hook(impl, tmp):
    hook = impl.LoggingHook()
    action = await hook.on_event(impl.HookEvent.PreToolCall("bash", {"command": "ls"}))
    assert action == impl.HookAction.Continue()
    assert hook.messages() == ["pre:bash"]


@suite.test
async def test_hooks_logging_hook_multiple_events(impl, tmp):
    E = impl.HookEvent
    hook = impl.LoggingHook()
    await hook.on_event(E.AgentStart("hello"))
    await hook.on_event(E.PreToolCall("read", {}))
    await hook.on_event(E.PostToolCall("read", {}, "content"))
    await hook.on_event(E.AgentEnd("done"))
    assert hook.messages() == ["agent:start", "pre:read", "post:read", "agent:end"]


@suite.test
async def test_hooks_blocking_hook(impl, tmp):
    hook = impl.BlockingHook(["bash"], "bash is disabled")
    action = await hook.on_event(impl.HookEvent.PreToolCall("bash", {}))
    assert action == impl.HookAction.Block("bash is disabled")


@suite.test
async def test_hooks_blocking_hook_allows_other_tools(impl, tmp):
    hook = impl.BlockingHook(["bash"], "blocked")
    action = await hook.on_event(impl.HookEvent.PreToolCall("read", {}))
    assert action == impl.HookAction.Continue()


@suite.test
async def test_hooks_registry_dispatch_continue(impl, tmp):
    registry = impl.HookRegistry().with_(impl.LoggingHook())
    action = await registry.dispatch(impl.HookEvent.PreToolCall("read", {}))
    assert action == impl.HookAction.Continue()


@suite.test
async def test_hooks_registry_dispatch_block(impl, tmp):
    registry = (
        impl.HookRegistry().with_(impl.LoggingHook()).with_(impl.BlockingHook(["bash"], "no bash"))
    )
    action = await registry.dispatch(impl.HookEvent.PreToolCall("bash", {}))
    assert action == impl.HookAction.Block("no bash")


@suite.test
async def test_hooks_registry_multiple_hooks_order(impl, tmp):
    log1, log2 = impl.LoggingHook(), impl.LoggingHook()
    registry = impl.HookRegistry().with_(log1).with_(log2)
    await registry.dispatch(impl.HookEvent.PreToolCall("read", {}))
    assert len(log1.messages()) == 1
    assert len(log2.messages()) == 1


@suite.test
async def test_hooks_registry_block_short_circuits(impl, tmp):
    log = impl.LoggingHook()
    registry = impl.HookRegistry().with_(impl.BlockingHook(["bash"], "blocked")).with_(log)
    action = await registry.dispatch(impl.HookEvent.PreToolCall("bash", {}))
    assert action == impl.HookAction.Block("blocked")
    assert log.messages() == []  # the second hook was never asked


@suite.test
def test_hooks_registry_is_empty(impl, tmp):
    registry = impl.HookRegistry()
    assert registry.is_empty()
    registry = registry.with_(impl.LoggingHook())
    assert not registry.is_empty()


@suite.test
async def test_hooks_post_tool_event(impl, tmp):
    hook = impl.LoggingHook()
    await hook.on_event(impl.HookEvent.PostToolCall("write", {"path": "test.txt"}, "ok"))
    assert hook.messages() == ["post:write"]
