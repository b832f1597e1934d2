"""Book chapter 13: PermissionEngine — ``permissions.rs``, 11 tests."""

from __future__ import annotations

from ._suite import Suite

suite = Suite("permissions", "PermissionEngine", chapters=["ch13"])


@suite.test
def test_permissions_allow_all(impl, tmp):
    engine = impl.PermissionEngine.allow_all()
    assert engine.evaluate("bash", {}) == impl.Permission.Allow
    assert engine.evaluate("write", {}) == impl.Permission.Allow


@suite.test
def test_permissions_ask_by_default(impl, tmp):
    engine = impl.PermissionEngine.ask_by_default([])
    assert engine.evaluate("bash", {}) == impl.Permission.Ask


@suite.test
def test_permissions_rule_matching(impl, tmp):
    P, Rule = impl.Permission, impl.PermissionRule
    rules = [Rule("read", P.Allow), Rule("bash", P.Ask), Rule("write", P.Deny)]
    engine = impl.PermissionEngine(rules, P.Ask)
    assert engine.evaluate("read", {}) == P.Allow
    assert engine.evaluate("bash", {}) == P.Ask
    assert engine.evaluate("write", {}) == P.Deny


@suite.test
def test_permissions_glob_pattern(impl, tmp):
    P = impl.Permission
    engine = impl.PermissionEngine([impl.PermissionRule("mcp__*", P.Ask)], P.Allow)
    # The pattern covers every name that starts with mcp__, and no other: the rest get the default.
    names = ["mcp__fs__read", "mcp__git__log", "read", "my_mcp__tool"]
    assert [engine.evaluate(name, {}) for name in names] == [P.Ask, P.Ask, P.Allow, P.Allow]


@suite.test
def test_permissions_first_rule_wins(impl, tmp):
    P, Rule = impl.Permission, impl.PermissionRule
    rules = [Rule("bash", P.Allow), Rule("bash", P.Deny)]  # the second is never reached
    engine = impl.PermissionEngine(rules, P.Ask)
    assert engine.evaluate("bash", {}) == P.Allow


@suite.test
def test_permissions_session_allow(impl, tmp):
    engine = impl.PermissionEngine.ask_by_default([])
    assert engine.evaluate("bash", {}) == impl.Permission.Ask
    engine.record_session_allow("bash")
    assert engine.evaluate("bash", {}) == impl.Permission.Allow


@suite.test
def test_permissions_session_allow_per_tool(impl, tmp):
    engine = impl.PermissionEngine.ask_by_default([])
    engine.record_session_allow("read")
    assert engine.evaluate("read", {}) == impl.Permission.Allow
    assert engine.evaluate("write", {}) == impl.Permission.Ask


@suite.test
def test_permissions_is_allowed(impl, tmp):
    P, Rule = impl.Permission, impl.PermissionRule
    engine = impl.PermissionEngine([Rule("read", P.Allow), Rule("write", P.Deny)], P.Ask)
    assert engine.is_allowed("read", {})
    assert not engine.is_allowed("write", {})
    assert not engine.is_allowed("bash", {})


@suite.test
def test_permissions_needs_approval(impl, tmp):
    P = impl.Permission
    engine = impl.PermissionEngine([impl.PermissionRule("read", P.Allow)], P.Ask)
    assert not engine.needs_approval("read", {})
    assert engine.needs_approval("bash", {})


@suite.test
def test_permissions_wildcard_rule(impl, tmp):
    P = impl.Permission
    engine = impl.PermissionEngine([impl.PermissionRule("*", P.Allow)], P.Deny)
    for name in ("anything", "bash", "mcp__fs__read"):  # "*" matches any tool name
        assert engine.evaluate(name, {}) == P.Allow, f"evaluate({name!r}, {{}})"


@suite.test
def test_permissions_deny_overrides_default(impl, tmp):
    P = impl.Permission
    engine = impl.PermissionEngine([impl.PermissionRule("dangerous", P.Deny)], P.Allow)
    assert engine.evaluate("dangerous", {}) == P.Deny
    assert engine.evaluate("safe", {}) == P.Allow
