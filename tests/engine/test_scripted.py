"""The scripted (replay) model used by the demo, Binder and the course."""

import json

import pytest

from clawnb.errors import ScriptError
from clawnb.events import StreamEvent
from clawnb.providers.replay import ScriptedProvider, load_script
from clawnb.types import StopReason


def write(path, text):
    path.write_text(text)
    return path


async def test_jsonl_and_array_scripts_play_back_in_order(tmp_path):
    lines = [
        {"text": "a", "tool_calls": [{"id": "1", "name": "read", "arguments": {"path": "x"}}]},
        {"turn": {"text": "b"}, "request": {"model": "m"}},
    ]
    jsonl = write(tmp_path / "s.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n\n")
    array = write(tmp_path / "s.json", json.dumps(lines))
    for path in (jsonl, array):
        provider = ScriptedProvider.from_file(path)
        first = await provider.chat([], [])
        assert first.stop_reason is StopReason.TOOL_USE
        assert first.tool_calls[0].arguments == {"path": "x"}
        assert (await provider.chat([], [])).text == "b"
        with pytest.raises(ScriptError, match="no more turns"):
            await provider.chat([], [])


async def test_streaming_playback_sends_text_calls_and_done(tmp_path):
    path = write(
        tmp_path / "s.jsonl",
        json.dumps(
            {
                "text": "Hello there world",
                "reasoning": "think",
                "tool_calls": [{"id": "1", "name": "bash", "arguments": {"command": "ls"}}],
            }
        ),
    )
    events = []
    turn = await ScriptedProvider.from_file(path).stream_chat([], [], events.append)
    texts = "".join(e.text for e in events if isinstance(e, StreamEvent.TextDelta))
    assert texts == "Hello there world"
    assert events[0] == StreamEvent.ReasoningDelta("think")
    assert StreamEvent.ToolCallStart(0, "1", "bash") in events
    assert StreamEvent.ToolCallDelta(0, '{"command":"ls"}') in events
    assert events[-1] == StreamEvent.Done()
    assert turn.text == "Hello there world"


@pytest.mark.parametrize(
    "content, needle",
    [
        ('{"text": "ok"}\n{"text": \n', "line 2 is not valid JSON"),
        ('[{"text": "ok"}, ', "invalid JSON"),
        ('{"text": 5}\n', "line 1 is not a valid turn"),
        ('{"tool_calls": [{"name": "x"}]}\n', "line 1 is not a valid turn"),
        ('"just a string"\n', "line 1 is not a valid turn"),
        ('{"stop_reason": "later"}\n', "line 1 is not a valid turn"),
    ],
)
def test_malformed_scripts_name_the_file_and_place(tmp_path, content, needle):
    path = write(tmp_path / "bad.jsonl", content)
    with pytest.raises(ScriptError, match=needle) as info:
        load_script(path)
    assert "bad.jsonl" in str(info.value)


def test_missing_script_is_a_clear_error(tmp_path):
    with pytest.raises(ScriptError, match="cannot read script"):
        load_script(tmp_path / "absent.jsonl")
