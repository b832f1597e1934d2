"""Book chapter 12: the tool registry in the loop — ``multi_tool.rs``, 15 tests.

Real tools, real side effects, driven by a scripted MockProvider; the last three tests use
``SimpleAgent.chat`` on a caller-owned history."""

from __future__ import annotations

from ..types import Message
from ._helpers import text_turn, tool_turn
from ._suite import Suite

suite = Suite("multi_tool", "Tool registry integration", chapters=["ch12"])


def _agent(impl, responses):
    return (
        impl.SimpleAgent(impl.MockProvider(responses))
        .tool(impl.ReadTool())
        .tool(impl.WriteTool())
        .tool(impl.EditTool())
        .tool(impl.BashTool())
    )


@suite.test
async def test_multi_tool_write_and_read_flow(impl, tmp):
    path = str(tmp / "test.txt")
    agent = _agent(
        impl,
        [
            tool_turn(("c1", "write", {"path": path, "content": "Hello from agent!"})),
            tool_turn(("c2", "read", {"path": path})),
            text_turn("The file says: Hello from agent!"),
        ],
    )
    result = await agent.run("write and read a file")
    assert "Hello from agent!" in result
    assert (tmp / "test.txt").read_text() == "Hello from agent!"


@suite.test
async def test_multi_tool_edit_flow(impl, tmp):
    f = tmp / "edit.txt"
    f.write_text("Hello World")
    agent = _agent(
        impl,
        [
            tool_turn(
                ("c1", "edit", {"path": str(f), "old_string": "World", "new_string": "Rust"})
            ),
            tool_turn(("c2", "read", {"path": str(f)})),
            text_turn("Changed it to Hello Rust"),
        ],
    )
    await agent.run("edit the file")
    assert f.read_text() == "Hello Rust"


@suite.test
async def test_multi_tool_bash_then_report(impl, tmp):
    agent = _agent(
        impl,
        [
            tool_turn(("c1", "bash", {"command": "echo hello-from-bash"})),
            text_turn("The command printed: hello-from-bash"),
        ],
    )
    assert "hello-from-bash" in await agent.run("run a command")


@suite.test
async def test_multi_tool_write_edit_read_flow(impl, tmp):
    path = str(tmp / "flow.txt")
    agent = _agent(
        impl,
        [
            tool_turn(("c1", "write", {"path": path, "content": "first version"})),
            tool_turn(
                ("c2", "edit", {"path": path, "old_string": "first", "new_string": "second"})
            ),
            tool_turn(("c3", "read", {"path": path})),
            text_turn("Now it says: second version"),
        ],
    )
    await agent.run("write, edit, read")
    assert (tmp / "flow.txt").read_text() == "second version"


@suite.test
async def test_multi_tool_all_four_tools(impl, tmp):
    path = str(tmp / "all.txt")
    agent = _agent(
        impl,
        [
            tool_turn(("c1", "bash", {"command": f"echo checking {tmp}"})),
            tool_turn(("c2", "write", {"path": path, "content": "original content"})),
            tool_turn(
                ("c3", "edit", {"path": path, "old_string": "original", "new_string": "modified"})
            ),
            tool_turn(("c4", "read", {"path": path})),
            text_turn("All four tools used."),
        ],
    )
    assert await agent.run("use every tool") == "All four tools used."
    assert (tmp / "all.txt").read_text() == "modified content"


@suite.test
async def test_multi_tool_multiple_writes(impl, tmp):
    agent = _agent(
        impl,
        [
            tool_turn(("c1", "write", {"path": str(tmp / "a.txt"), "content": "file A"})),
            tool_turn(("c2", "write", {"path": str(tmp / "b.txt"), "content": "file B"})),
            text_turn("Wrote both files."),
        ],
    )
    await agent.run("write two files")
    assert (tmp / "a.txt").read_text() == "file A"
    assert (tmp / "b.txt").read_text() == "file B"


@suite.test
async def test_multi_tool_read_multiple_files(impl, tmp):
    (tmp / "one.txt").write_text("alpha")
    (tmp / "two.txt").write_text("beta")
    agent = _agent(
        impl,
        [
            tool_turn(
                ("c1", "read", {"path": str(tmp / "one.txt")}),
                ("c2", "read", {"path": str(tmp / "two.txt")}),
            ),
            text_turn("The files contain alpha and beta."),
        ],
    )
    result = await agent.run("read both files")
    assert "alpha" in result
    assert "beta" in result


@suite.test
async def test_multi_tool_bash_and_write(impl, tmp):
    path = tmp / "bash_out.txt"
    agent = _agent(
        impl,
        [
            tool_turn(("c1", "bash", {"command": f"echo file-data > '{path}'"})),
            tool_turn(("c2", "read", {"path": str(path)})),
            text_turn("The shell wrote file-data."),
        ],
    )
    await agent.run("write a file with the shell")
    assert path.read_text() == "file-data\n"


@suite.test
async def test_multi_tool_edit_twice(impl, tmp):
    f = tmp / "twice.txt"
    f.write_text("aaa bbb ccc")
    agent = _agent(
        impl,
        [
            tool_turn(("c1", "edit", {"path": str(f), "old_string": "aaa", "new_string": "xxx"})),
            tool_turn(("c2", "edit", {"path": str(f), "old_string": "ccc", "new_string": "zzz"})),
            text_turn("Edited twice."),
        ],
    )
    await agent.run("edit two words")
    assert f.read_text() == "xxx bbb zzz"


@suite.test
async def test_multi_tool_write_nested_dirs_then_read(impl, tmp):
    path = tmp / "deep" / "nested" / "dir" / "file.txt"
    agent = _agent(
        impl,
        [
            tool_turn(("c1", "write", {"path": str(path), "content": "nested content"})),
            tool_turn(("c2", "read", {"path": str(path)})),
            text_turn("Read the nested file: nested content"),
        ],
    )
    assert "nested content" in await agent.run("write deep, read back")
    assert path.read_text() == "nested content"


@suite.test
async def test_multi_tool_five_step_conversation(impl, tmp):
    path = str(tmp / "steps.txt")
    agent = _agent(
        impl,
        [
            tool_turn(("c1", "bash", {"command": "echo starting"})),
            tool_turn(("c2", "write", {"path": path, "content": "draft"})),
            tool_turn(("c3", "read", {"path": path})),
            tool_turn(("c4", "edit", {"path": path, "old_string": "draft", "new_string": "final"})),
            tool_turn(("c5", "read", {"path": path})),
            text_turn("Finished in five steps."),
        ],
    )
    assert await agent.run("take five steps") == "Finished in five steps."
    assert (tmp / "steps.txt").read_text() == "final"


@suite.test
async def test_multi_tool_overwrite_file(impl, tmp):
    path = str(tmp / "over.txt")
    agent = _agent(
        impl,
        [
            tool_turn(("c1", "write", {"path": path, "content": "version 1"})),
            tool_turn(("c2", "write", {"path": path, "content": "version 2"})),
            text_turn("Overwritten."),
        ],
    )
    await agent.run("write twice")
    assert (tmp / "over.txt").read_text() == "version 2"


@suite.test
async def test_multi_tool_chat_basic(impl, tmp):
    agent = _agent(impl, [text_turn("Hello!")])
    messages = [Message.User("Hi")]
    assert await agent.chat(messages) == "Hello!"
    assert len(messages) == 2
    assert isinstance(messages[0], Message.User)
    assert isinstance(messages[1], Message.Assistant)


@suite.test
async def test_multi_tool_chat_with_tool_call(impl, tmp):
    f = tmp / "chat.txt"
    f.write_text("chat data")
    agent = _agent(
        impl,
        [tool_turn(("c1", "read", {"path": str(f)})), text_turn("It says chat data")],
    )
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
    agent = _agent(impl, [text_turn("First answer"), text_turn("Second answer")])
    messages = [Message.User("First question")]
    assert await agent.chat(messages) == "First answer"
    assert len(messages) == 2
    messages.append(Message.User("Second question"))
    assert await agent.chat(messages) == "Second answer"
    assert len(messages) == 4
