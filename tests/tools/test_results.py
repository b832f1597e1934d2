"""Result size control: head + tail with a marker, the full text saved under the session
directory, wired into the executor as ``result_limit``."""

from __future__ import annotations

import re
import shutil

import pytest

from clawnb.agent import SimpleAgent
from clawnb.providers.mock import MockProvider
from clawnb.tools import BashTool, ReadTool, ResultLimiter, truncate_middle
from clawnb.tools.results import DEFAULT_MAX_RESULT_CHARS, PREVIEW_CHARS
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall

SAVED = re.compile(r"saved in full to (\S+?)\. Below")
PREVIEW_MAX = PREVIEW_CHARS + 600  # the preview and its note (path, size, how to page)


def test_truncate_middle_keeps_head_and_tail():
    text = "".join(f"{i:05d}\n" for i in range(20_000))  # 120,000 chars
    out = truncate_middle(text, 50_000)
    assert len(out) <= 50_000
    assert out.startswith("00000\n00001\n")
    assert out.endswith("19998\n19999\n")
    dropped = int(re.search(r"\[\.\.\. truncated (\d+) chars \.\.\.\]", out).group(1))
    kept = len(out) - len(f"\n\n[... truncated {dropped} chars ...]\n\n")
    assert kept + dropped == len(text)


def test_short_text_is_untouched():
    assert truncate_middle("short", 50_000) == "short"
    limiter = ResultLimiter()
    text = "x" * DEFAULT_MAX_RESULT_CHARS
    assert limiter(ToolCall("c1", "read", {}), text) == text


def test_limiter_saves_full_result_and_gives_a_preview(tmp_path):
    limiter = ResultLimiter(max_chars=10_000, directory=tmp_path)
    content = "A" * 30_000 + "MIDDLE" + "Z" * 30_000
    out = limiter(ToolCall("call/1", "grep", {}), content)
    assert len(out) <= PREVIEW_MAX
    assert "60,006 chars" in out and "chars not shown" in out and "MIDDLE" not in out
    assert out.rstrip().endswith("Z")  # the tail, where a long output has one
    saved = SAVED.search(out).group(1)
    assert saved.startswith(str(tmp_path / "tool-results"))
    assert saved.endswith("-grep-call_1.txt")
    with open(saved) as fh:
        assert fh.read() == content


def test_default_directory_is_created_lazily():
    limiter = ResultLimiter(max_chars=1000)
    out = limiter(ToolCall("c", "bash", {}), "y" * 5000)
    saved = SAVED.search(out).group(1)
    assert "clawnb-results-" in saved
    with open(saved) as fh:
        assert len(fh.read()) == 5000
    shutil.rmtree(limiter.directory)


def test_limiter_rejects_tiny_budget():
    with pytest.raises(ValueError):
        ResultLimiter(max_chars=10)


async def test_limiter_in_the_loop(tmp_path):
    """The loop stores the truncated text in the history; the model can read the rest."""
    big = tmp_path / "big.txt"
    big.write_text("".join(f"line {i}\n" for i in range(20_000)))
    provider = MockProvider(
        [
            AssistantTurn(None, [ToolCall("c1", "read", {"path": str(big)})], StopReason.TOOL_USE),
            AssistantTurn("done", [], StopReason.STOP),
        ]
    )
    limiter = ResultLimiter(max_chars=5_000, directory=tmp_path / "session")
    agent = SimpleAgent(provider, tools=[ReadTool()], result_limit=limiter)
    messages = [Message.User("read it")]
    assert await agent.chat(messages) == "done"
    result = messages[2]
    assert isinstance(result, Message.ToolResult)
    assert len(result.content) <= PREVIEW_MAX
    assert result.content.count("line 0\n") == 1 and "line 19999" in result.content
    saved = SAVED.search(result.content).group(1)
    # the saved file is exactly what the tool returned, readable with the read tool
    assert await ReadTool().call({"path": saved}) == big.read_text()


async def test_bash_output_is_limited_too(tmp_path):
    limiter = ResultLimiter(max_chars=2_000, directory=tmp_path)
    out = limiter(ToolCall("b", "bash", {}), await BashTool().call({"command": "seq 1 5000"}))
    assert len(out) <= PREVIEW_MAX and "5,000 lines" in out
    assert out.endswith("5000\n")  # the tail of a long output
