"""The recorded cases against real local servers, when they run (opt-in, issue 27).

    CLAWNB_REAL_LLAMA=http://127.0.0.1:8765/v1,http://127.0.0.1:8775/v1 pytest tests/providers/test_real_local_servers.py

Each URL is a server built and started as ``docs/local-models.md`` says (llama-cpp-python's
``python -m llama_cpp.server … --chat_format chatml-function-calling``, llama.cpp's
``llama-server --jinja …``), any window of 4096 tokens or more. Without the variable these
tests are skipped: the servers take minutes to build and are no part of CI; the same cases run
on every test run against their recordings (``test_recorded_servers.py``).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

from clawnb.agent import StreamingAgent
from clawnb.errors import ContextOverflowError, MaxTurnsExceeded
from clawnb.providers.openai import OpenAICompatProvider
from clawnb.tools.read import ReadTool
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall, ToolDefinition

URLS = [u.strip() for u in os.environ.get("CLAWNB_REAL_LLAMA", "").split(",") if u.strip()]
pytestmark = [
    pytest.mark.skipif(
        not URLS, reason="set CLAWNB_REAL_LLAMA=URL,... to run against real servers"
    ),
    pytest.mark.timeout(600),
]
READ = ToolDefinition(
    "read",
    "Read a text file and return its contents.",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def provider(url: str, **options) -> OpenAICompatProvider:
    options.setdefault("max_tokens", 48)
    options.setdefault("temperature", 0)
    options.setdefault("server", "auto")  # as the chat and %%claw make it
    return OpenAICompatProvider("smollm2", base_url=url, read_timeout=300, **options)


@pytest.fixture(params=URLS or ["unset"])
def url(request) -> str:
    return str(request.param)


async def test_a_plain_question_streams_an_answer(url):
    turn = await provider(url).stream_chat([Message.User("What is the capital of France?")], [])
    assert turn.text


async def test_a_question_with_tools_offered_is_answered(url):
    # llama-cpp-python's recipe: "auto" cannot stream there, so the profile asks unstreamed.
    # (SmolLM2 under the Mistral-Nemo template may end at once: no text is still an answer.)
    question = [Message.User("What is the capital of France?")]
    turn = await provider(url).stream_chat(question, [READ])
    assert turn.stop_reason in (StopReason.STOP, StopReason.LENGTH, StopReason.TOOL_USE)


async def test_a_forced_read_is_one_round_where_the_server_honours_it(url, tmp_path: Path):
    (tmp_path / "notes.txt").write_text("buy milk\n")
    forced = {"type": "function", "function": {"name": "read"}}
    p = provider(url, tool_choice=forced)
    profile = await p.detect_server()
    agent = StreamingAgent(p, tools=[ReadTool(tmp_path)], max_turns=2)
    history = [Message.User(f"Read {tmp_path / 'notes.txt'} and say what it says.")]
    with contextlib.suppress(MaxTurnsExceeded):
        # llama-cpp-python's grammar picks a function under "auto" too (SmolLM2 does)
        await agent.chat(history)
    results = [m for m in history if isinstance(m, Message.ToolResult)]
    if profile is not None and profile.kind == "llama.cpp":
        # llama-server ignores a named tool_choice ("Wrong type supplied for parameter
        # 'tool_choice'"): no call is forced, the model answers in words
        assert not results
    else:
        # the forced call came and ran (SmolLM2 makes its arguments up: the path may be wrong)
        first = history[1]
        assert results and isinstance(first, Message.Assistant)
        assert [c.name for c in first.turn.tool_calls] == ["read"]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
async def test_a_conversation_past_the_window_is_an_overflow_with_the_window(url, stream):
    p = provider(url)
    ask = p.stream_chat if stream else p.chat
    with pytest.raises(ContextOverflowError) as info:
        await ask([Message.User("apple banana cherry " * 12000)], [])
    assert info.value.context_window is None or info.value.context_window >= 512


async def test_a_history_with_two_user_messages_and_foreign_tool_ids_is_accepted(url):
    call = ToolCall("call_7fK2pQxLmN3vR8sT1uWyZa0b", "read", {"path": "notes.txt"})
    history = [
        Message.System("You are terse."),
        Message.User("first question, interrupted"),
        Message.User("Read notes.txt"),
        Message.Assistant(AssistantTurn(None, [call], StopReason.TOOL_USE)),
        Message.ToolResult(call.id, "buy milk"),
        Message.System("[summary] nothing else"),
        Message.User("What did it say?"),
    ]
    turn = await provider(url).stream_chat(history, [READ])  # no 400 from a strict template
    assert turn.stop_reason in (StopReason.STOP, StopReason.LENGTH, StopReason.TOOL_USE)
