"""9-character tool-call ids for Mistral's strict templates (issue 27).

llama-server with ``models/templates/mistralai-Mistral-Nemo-Instruct-2407.jinja`` renders each
assistant tool call and each tool result through

    {%- if not tool_call.id is defined or tool_call.id|length != 9 %}
        {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}

(and the same for ``message.tool_call_id``), so a history whose calls came from another server
(``call_…`` ids of 24 characters, or the ids clawnb's fakes and recordings use) fails every
later request with a 400. The fake in ``tests/fake_servers.py`` (``template="mistral-nemo"``)
applies that rule; these tests go through the real provider over HTTP on 127.0.0.1.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clawnb.agent import StreamingAgent
from clawnb.errors import BadRequestError
from clawnb.providers.openai import OpenAICompatProvider, convert_messages, shorten_tool_ids
from clawnb.tools.read import ReadTool
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall, ToolDefinition
from tests.fake_servers import TOOL_ID_MESSAGE, FakeServer, Reply

READ = ToolDefinition(
    "read", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}
)
NINE = re.compile(r"[A-Za-z0-9]{9}")


def tool_history(*ids: str) -> list[Message]:
    """A question, one assistant turn calling ``read`` once per id, their results, a follow-up."""
    calls = [ToolCall(i, "read", {"path": f"f{n}"}) for n, i in enumerate(ids)]
    return [
        Message.System("You are terse."),
        Message.User("read them"),
        Message.Assistant(AssistantTurn(None, calls, StopReason.TOOL_USE)),
        *(Message.ToolResult(c.id, f"contents of {c.id}") for c in calls),
        Message.Assistant(AssistantTurn("Both read.")),
        Message.User("and now?"),
    ]


def wire_ids(request: dict) -> tuple[list[str], list[str]]:
    messages = request["messages"]
    calls = [c["id"] for m in messages for c in m.get("tool_calls") or ()]
    results = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    return calls, results


OPENAI_IDS = ("call_7fK2pQxLmN3vR8sT1uWyZa0b", "call_Bq4cD9eF2gH6iJ1kL5mN8oP3")


async def test_the_strict_template_refuses_ids_that_are_not_nine_alphanumerics():
    # guards the fake: without 9-character ids the template's raise_exception is a 400
    with FakeServer("llama.cpp", template="mistral-nemo") as server:
        provider = OpenAICompatProvider(
            "local", base_url=server.url, max_retries=0, short_tool_ids=False
        )
        with pytest.raises(BadRequestError) as info:
            await provider.stream_chat(tool_history(*OPENAI_IDS), [READ])
    assert TOOL_ID_MESSAGE in str(info.value)
    assert len(server.requests) == 1


async def test_a_mistral_model_gets_nine_character_ids_that_pair_each_call_with_its_result():
    history = tool_history(*OPENAI_IDS)
    before = list(history)
    with FakeServer("llama.cpp", template="mistral-nemo") as server:
        provider = OpenAICompatProvider("Mistral-Nemo-Instruct-2407", base_url=server.url)
        first = await provider.stream_chat(history, [READ])
        second = await provider.chat(history, [READ])
    assert first.text == second.text == "ok"
    assert len(server.requests) == 2  # accepted at once: the name says Mistral
    calls, results = wire_ids(server.requests[0])
    assert all(NINE.fullmatch(i) for i in calls + results)
    assert calls == results and len(set(calls)) == 2  # call n answered by result n, distinct
    assert wire_ids(server.requests[1]) == (calls, results)  # the same ids in every request
    assert history == before  # the stored history keeps its own ids


async def test_a_server_that_refuses_other_ids_gets_nine_character_ids_from_then_on(caplog):
    with FakeServer("llama.cpp", template="mistral-nemo") as server:
        provider = OpenAICompatProvider("local", base_url=server.url)
        assert provider.short_tool_ids is False  # "local" does not say Mistral
        turn = await provider.stream_chat(tool_history(*OPENAI_IDS), [READ])
        assert turn.text == "ok"
        assert provider.short_tool_ids is True
        assert len(server.requests) == 2  # refused once, asked again at once
        await provider.stream_chat(tool_history("call_later_1"), [READ])
    assert len(server.requests) == 3  # no second refusal
    assert "9-character tool-call ids" in caplog.text
    calls, results = wire_ids(server.requests[1])
    assert all(NINE.fullmatch(i) for i in calls) and calls == results


def test_ids_that_already_fit_are_kept_and_no_two_ids_share_one():
    kept = "a1B2c3D4e"
    originals = [kept, *(f"call_{n}" for n in range(2000))]
    wire = convert_messages(tool_history(*originals))
    back = shorten_tool_ids(wire)
    calls, results = wire_ids({"messages": wire})
    assert calls[0] == kept
    assert len(set(calls)) == len(originals) and calls == results
    assert all(NINE.fullmatch(i) for i in calls)
    assert [back[i] for i in calls] == originals  # and back: each wire id names its call


async def test_a_tool_round_through_the_agent_works_on_the_strict_template(tmp_path: Path):
    # The fake's forced calls carry ids like "call_forced_1", as servers in front of other
    # templates do: the round's follow-up request is where the template refuses them.
    (tmp_path / "notes.txt").write_text("buy milk\n")
    with FakeServer(
        "llama.cpp",
        [Reply("It says buy milk.")],
        template="mistral-nemo",
        forced_arguments={"path": str(tmp_path / "notes.txt")},
    ) as server:
        provider = OpenAICompatProvider(
            "mistral-nemo", base_url=server.url, tool_choice="required", max_retries=0
        )
        agent = StreamingAgent(provider, tools=[ReadTool(tmp_path)])
        history = [Message.User("read notes.txt")]
        assert await agent.chat(history) == "It says buy milk."
    call = history[1]
    assert isinstance(call, Message.Assistant) and call.turn.tool_calls[0].id == "call_forced_1"
    calls, results = wire_ids(server.requests[1])
    assert len(calls) == 1 and NINE.fullmatch(calls[0]) and calls == results
    assert "buy milk" in server.requests[1]["messages"][-1]["content"]
