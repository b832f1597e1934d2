"""Serialisation round-trips and the small type behaviours the loops rely on."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clawnb.types import (
    AssistantTurn,
    Message,
    StopReason,
    TokenUsage,
    ToolCall,
    ToolDefinition,
    ToolSet,
    compact_json,
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)
calls = st.builds(ToolCall, id=st.text(), name=st.text(), arguments=json_values)
turns = st.builds(
    AssistantTurn,
    text=st.none() | st.text(),
    tool_calls=st.lists(calls, max_size=3),
    stop_reason=st.sampled_from(StopReason),
    usage=st.none() | st.builds(TokenUsage, st.integers(0, 10**9), st.integers(0, 10**9)),
    reasoning=st.none() | st.text(),
)
messages = st.one_of(
    st.builds(Message.System, st.text()),
    st.builds(Message.User, st.text()),
    st.builds(Message.Assistant, turns),
    st.builds(Message.ToolResult, st.text(), st.text()),
)


@given(messages)
def test_message_json_round_trip_is_lossless(msg):
    encoded = json.dumps(msg.to_dict())
    assert Message.from_dict(json.loads(encoded)) == msg


def test_variants_match_and_constructors():
    turn = AssistantTurn("hi")
    history = [
        Message.system("s"),
        Message.user("u"),
        Message.assistant(turn),
        Message.tool_result("c1", "r"),
    ]
    kinds = []
    for msg in history:
        match msg:
            case Message.System(content=c):
                kinds.append(("system", c))
            case Message.User(content=c):
                kinds.append(("user", c))
            case Message.Assistant(turn=t):
                kinds.append(("assistant", t.text))
            case Message.ToolResult(id=i, content=c):
                kinds.append(("tool", i, c))
    assert kinds == [("system", "s"), ("user", "u"), ("assistant", "hi"), ("tool", "c1", "r")]
    assert all(isinstance(m, Message) for m in history)


@pytest.mark.parametrize(
    "bad, needle",
    [
        ({"role": "wizard"}, "unknown message role"),
        ({"role": "user"}, "invalid user message"),
        ({"role": "user", "content": 3}, "expected a string"),
        ({"role": "assistant", "turn": {"tool_calls": "nope"}}, "tool_calls"),
        ({"role": "assistant", "turn": {"stop_reason": "maybe"}}, "invalid assistant message"),
        ([], "must be a JSON object"),
    ],
)
def test_from_dict_rejects_bad_input_clearly(bad, needle):
    with pytest.raises(ValueError, match=needle):
        Message.from_dict(bad)


def test_tool_definition_builder_matches_the_book_schema():
    d = (
        ToolDefinition("ask_user", "Ask")
        .param("question", "string", "The question", True)
        .param_raw("options", {"type": "array", "items": {"type": "string"}}, False)
    )
    assert d.parameters == {
        "type": "object",
        "properties": {
            "question": {"type": "string", "description": "The question"},
            "options": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["question"],
    }
    assert ToolDefinition.from_dict(d.to_dict()) == d
    assert ToolDefinition("t", "d").parameters == {
        "type": "object",
        "properties": {},
        "required": [],
    }


def test_toolset_duplicate_name_replaces():
    class Named:
        def __init__(self, tag):
            self.tag = tag
            self.definition = ToolDefinition("same", tag)

        async def call(self, args):
            return self.tag

    tools = ToolSet().with_(Named("first")).with_(Named("second"))
    assert len(tools) == 1 and tools.get("same").tag == "second"
    assert [d.description for d in tools.definitions()] == ["second"]
    assert tools.get("missing") is None and "same" in tools


def test_compact_json_matches_serde_to_string():
    assert compact_json({"path": "out.txt", "content": "hello"}) == (
        '{"content":"hello","path":"out.txt"}'
    )


def test_turn_without_stop_reason_infers_it():
    with_calls = AssistantTurn.from_dict({"tool_calls": [{"id": "1", "name": "read"}]})
    assert with_calls.stop_reason is StopReason.TOOL_USE
    assert with_calls.tool_calls[0].arguments == {}
    assert AssistantTurn.from_dict({"text": "x"}).stop_reason is StopReason.STOP


def test_token_usage_default_and_sum():
    assert TokenUsage() == TokenUsage(0, 0)
    assert TokenUsage(1, 2) + TokenUsage(3, 4) == TokenUsage(4, 6)


@pytest.mark.parametrize(
    ("namespace", "union"),
    [
        ("clawnb.events.StreamEvent", "clawnb.events.AnyStreamEvent"),
        ("clawnb.events.AgentEvent", "clawnb.events.AnyAgentEvent"),
        ("clawnb.hooks.HookEvent", "clawnb.hooks.AnyHookEvent"),
        ("clawnb.hooks.HookAction", "clawnb.hooks.AnyHookAction"),
    ],
)
def test_each_event_union_names_every_variant_of_its_namespace(namespace, union):
    # A variant added to a namespace but not to its union would be rejected by the type
    # checker at every typed callback.
    import importlib
    import typing

    def resolve(dotted: str):
        module, _, name = dotted.rpartition(".")
        return getattr(importlib.import_module(module), name)

    variants = {v for v in vars(resolve(namespace)).values() if isinstance(v, type)}
    assert set(typing.get_args(resolve(union))) == variants
