"""Book chapter 12: the tool registry in the loop — ``multi_tool.rs``, 15 tests.

Real tools, real side effects, driven by a scripted MockProvider; the last three tests use
``SimpleAgent.chat`` on a caller-owned history."""

from __future__ import annotations

from ..types import Message
from ._helpers import (
    Recorder,
    bash_call,
    edit_call,
    file_with,
    read_call,
    text_turn,
    tool_results,
    tool_turn,
    write_call,
)
from ._suite import Suite

suite = Suite("multi_tool", "Tool registry integration", chapters=["ch12"])


def _equipped(impl, model):
    """A SimpleAgent on ``model`` with the four file and shell tools."""
    return (
        impl.SimpleAgent(model)
        .tool(impl.ReadTool())
        .tool(impl.WriteTool())
        .tool(impl.EditTool())
        .tool(impl.BashTool())
    )


def _agent(impl, *responses):
    """An agent with the four file and shell tools whose model answers with ``responses``."""
    return _equipped(impl, impl.MockProvider(list(responses)))


def _step_by_step(impl, *calls, answer):
    """``_agent`` whose model makes ``calls`` one per turn, in order, then says ``answer``."""
    return _agent(impl, *(tool_turn(call) for call in calls), text_turn(answer))


async def _run(impl, prompt, *calls, answer):
    """The reply to ``prompt`` of a ``_step_by_step`` agent."""
    return await _step_by_step(impl, *calls, answer=answer).run(prompt)


async def _results(impl, prompt, *calls, answer):
    """Like ``_run``, with a model that notes what it is sent: the reply, and ``(id, result)``
    of every tool result in the history the model saw before its answer."""
    model = Recorder([*(tool_turn(call) for call in calls), text_turn(answer)])
    reply = await _equipped(impl, model).run(prompt)
    return reply, tool_results(model.sent[-1])


@suite.test
async def test_multi_tool_write_and_read_flow(impl, tmp):
    path = tmp / "test.txt"
    calls = [write_call("c1", path, "Hello from agent!"), read_call("c2", path)]
    answer = "The file says: Hello from agent!"
    result = await _run(impl, "write and read a file", *calls, answer=answer)
    assert "Hello from agent!" in result
    assert path.read_text() == "Hello from agent!"


@suite.test
async def test_multi_tool_edit_flow(impl, tmp):
    f = file_with(tmp / "edit.txt", "Hello World")
    calls = [edit_call("c1", f, "World", "Rust"), read_call("c2", f)]
    await _run(impl, "edit the file", *calls, answer="Changed it to Hello Rust")
    assert f.read_text() == "Hello Rust"


@suite.test
async def test_multi_tool_bash_then_report(impl, tmp):
    call = bash_call("c1", "echo hello-from-bash")
    answer = "The command printed: hello-from-bash"
    assert "hello-from-bash" in await _run(impl, "run a command", call, answer=answer)


@suite.test
async def test_multi_tool_write_edit_read_flow(impl, tmp):
    path = tmp / "flow.txt"
    calls = [
        write_call("c1", path, "first version"),
        edit_call("c2", path, "first", "second"),
        read_call("c3", path),
    ]
    await _run(impl, "write, edit, read", *calls, answer="Now it says: second version")
    assert path.read_text() == "second version"


@suite.test
async def test_multi_tool_all_four_tools(impl, tmp):
    path = tmp / "all.txt"
    calls = [
        write_call("c1", path, "original content"),
        bash_call("c2", f"cat '{path}'"),
        edit_call("c3", path, "original", "modified"),
        read_call("c4", path),
    ]
    reply, results = await _results(impl, "use every tool", *calls, answer="All four tools used.")
    assert reply == "All four tools used."
    # Each tool ran and its result reached the model: the shell saw the write, the read the edit.
    assert [id for id, text in results if text.startswith("error")] == []
    shown = dict(results)
    assert shown["c2"] == "original content"
    assert shown["c4"] == "modified content"
    assert path.read_text() == "modified content"


@suite.test
async def test_multi_tool_multiple_writes(impl, tmp):
    calls = [write_call("c1", tmp / "a.txt", "file A"), write_call("c2", tmp / "b.txt", "file B")]
    await _run(impl, "write two files", *calls, answer="Wrote both files.")
    assert (tmp / "a.txt").read_text() == "file A"
    assert (tmp / "b.txt").read_text() == "file B"


@suite.test
async def test_multi_tool_read_multiple_files(impl, tmp):
    one = file_with(tmp / "one.txt", "alpha")
    two = file_with(tmp / "two.txt", "beta")
    both = tool_turn(read_call("c1", one), read_call("c2", two))
    agent = _agent(impl, both, text_turn("The files contain alpha and beta."))
    result = await agent.run("read both files")
    assert "alpha" in result
    assert "beta" in result


@suite.test
async def test_multi_tool_bash_and_write(impl, tmp):
    path = tmp / "bash_out.txt"
    calls = [bash_call("c1", f"echo file-data > '{path}'"), read_call("c2", path)]
    await _run(impl, "write a file with the shell", *calls, answer="The shell wrote file-data.")
    assert path.read_text() == "file-data\n"


@suite.test
async def test_multi_tool_edit_twice(impl, tmp):
    f = file_with(tmp / "twice.txt", "aaa bbb ccc")
    calls = [edit_call("c1", f, "aaa", "xxx"), edit_call("c2", f, "ccc", "zzz")]
    await _run(impl, "edit two words", *calls, answer="Edited twice.")
    assert f.read_text() == "xxx bbb zzz"


@suite.test
async def test_multi_tool_write_nested_dirs_then_read(impl, tmp):
    path = tmp / "deep" / "nested" / "dir" / "file.txt"
    calls = [write_call("c1", path, "nested content"), read_call("c2", path)]
    answer = "Read the nested file: nested content"
    assert "nested content" in await _run(impl, "write deep, read back", *calls, answer=answer)
    assert path.read_text() == "nested content"


@suite.test
async def test_multi_tool_five_step_conversation(impl, tmp):
    path = tmp / "steps.txt"
    calls = [
        bash_call("c1", "echo starting"),
        write_call("c2", path, "draft"),
        read_call("c3", path),
        edit_call("c4", path, "draft", "final"),
        read_call("c5", path),
    ]
    reply, results = await _results(impl, "take five steps", *calls, answer="Done in five steps.")
    # Five rounds, each result answering its own call, in the order the model asked.
    assert [id for id, _ in results] == ["c1", "c2", "c3", "c4", "c5"]
    assert (results[2][1], results[4][1]) == ("draft", "final")  # read before and after the edit
    assert reply == "Done in five steps."
    assert path.read_text() == "final"


@suite.test
async def test_multi_tool_overwrite_file(impl, tmp):
    path = tmp / "over.txt"
    calls = [write_call("c1", path, "version 1"), write_call("c2", path, "version 2")]
    await _run(impl, "write twice", *calls, answer="Overwritten.")
    assert path.read_text() == "version 2"


@suite.test
async def test_multi_tool_chat_basic(impl, tmp):
    agent = _agent(impl, text_turn("Hello!"))
    messages = [Message.User("Hi")]
    assert await agent.chat(messages) == "Hello!"
    assert len(messages) == 2
    assert isinstance(messages[0], Message.User)
    assert isinstance(messages[1], Message.Assistant)


@suite.test
async def test_multi_tool_chat_with_tool_call(impl, tmp):
    f = file_with(tmp / "chat.txt", "chat data")
    agent = _step_by_step(impl, read_call("c1", f), answer="It says chat data")
    messages = [Message.User("What is in the file?")]
    assert await agent.chat(messages) == "It says chat data"
    assert len(messages) == 4
    assert isinstance(messages[0], Message.User)
    assert isinstance(messages[1], Message.Assistant)
    assert isinstance(messages[2], Message.ToolResult)
    assert messages[2].content == "chat data"
    assert isinstance(messages[3], Message.Assistant)


@suite.test
async def test_multi_tool_chat_multi_turn(impl, tmp):
    agent = _agent(impl, text_turn("First answer"), text_turn("Second answer"))
    messages = [Message.User("First question")]
    assert await agent.chat(messages) == "First answer"
    assert len(messages) == 2
    messages.append(Message.User("Second question"))
    assert await agent.chat(messages) == "Second answer"
    assert len(messages) == 4
