"""default_tools, deferred tools + tool_search through a real loop, tool metadata and
parallel execution of concurrency-safe calls."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from clawnb.agent import SimpleAgent
from clawnb.providers.mock import MockProvider
from clawnb.tools import (
    AskTool,
    BaseTool,
    BashTool,
    EditTool,
    GlobTool,
    GrepTool,
    MockInputHandler,
    ReadTool,
    ToolSearchTool,
    WebFetchTool,
    WriteTool,
    active_definitions,
    default_tools,
    defer,
    deferred_tools_section,
)
from clawnb.types import (
    AssistantTurn,
    Message,
    StopReason,
    ToolCall,
    ToolSet,
    ToolTraits,
    traits_of,
)


class _Recorder(MockProvider):
    """A MockProvider that remembers which tool names it was shown each turn."""

    def __init__(self, responses):
        super().__init__(responses)
        self.seen: list[list[str]] = []

    async def chat(self, messages, tools):
        self.seen.append([t.name for t in tools])
        return await super().chat(messages, tools)


def _calls(*calls: tuple[str, str, dict]) -> AssistantTurn:
    return AssistantTurn(None, [ToolCall(i, n, a) for i, n, a in calls], StopReason.TOOL_USE)


def _stop(text: str) -> AssistantTurn:
    return AssistantTurn(text, [], StopReason.STOP)


# ---------------------------------------------------------------- default_tools


def test_default_tools_contents(tmp_path):
    # every default set starts with the file, shell, search and notebook tools, in this order
    core = ["read", "write", "edit", "bash", "glob", "grep", "notebook_read", "notebook_edit"]
    tools = default_tools(tmp_path)
    assert tools.names() == [*core, "web_fetch", "tool_search"]
    with_ask = default_tools(tmp_path, input_handler=MockInputHandler(), web=False, deferred=())
    assert with_ask.names() == [*core, "ask_user"]


def test_default_tools_share_one_file_state(tmp_path):
    tools = default_tools(tmp_path)
    states = {
        id(tools.get(n).file_state)
        for n in ("read", "write", "edit", "notebook_read", "notebook_edit")
    }
    assert len(states) == 1


async def test_default_tools_enforce_read_before_edit_in_the_loop(tmp_path):
    (tmp_path / "f.txt").write_text("hello")
    provider = MockProvider(
        [
            _calls(("c1", "edit", {"path": "f.txt", "old_string": "hello", "new_string": "bye"})),
            _calls(("c2", "read", {"path": "f.txt"})),
            _calls(("c3", "edit", {"path": "f.txt", "old_string": "hello", "new_string": "bye"})),
            _stop("done"),
        ]
    )
    agent = SimpleAgent(provider, tools=default_tools(tmp_path))
    messages = [Message.User("change it")]
    await agent.chat(messages)
    results = [m.content for m in messages if isinstance(m, Message.ToolResult)]
    assert results[0].startswith("error: you must read 'f.txt' before editing it")
    assert results[1] == "hello"
    assert results[2].startswith("edited f.txt")
    assert (tmp_path / "f.txt").read_text() == "bye"


async def test_default_tools_work_in_workspace(tmp_path):
    tools = default_tools(tmp_path, web=False, deferred=())
    await tools.get("write").call({"path": "src/a.py", "content": "x = 1\n"})
    assert await tools.get("glob").call({"pattern": "**/*.py"}) == "src/a.py"
    assert await tools.get("grep").call({"pattern": "x ="}) == "src/a.py:1: x = 1"
    assert await tools.get("bash").call({"command": "cat src/a.py"}) == "x = 1\n"


def test_metadata_flags():
    """Fail-closed defaults; read-only tools are exactly the ones that change nothing, and
    they run concurrently unless they say otherwise (a person answers one question at a time)."""
    expected = [
        (ReadTool(), True, True),
        (GlobTool(), True, True),
        (GrepTool(), True, True),
        (WebFetchTool(), True, True),
        (AskTool(MockInputHandler([])), True, False),
        (ToolSearchTool(), True, False),
        (WriteTool(), False, False),
        (EditTool(), False, False),
        (BashTool(), False, False),
    ]
    for tool, read_only, concurrent in expected:
        assert (tool.read_only, tool.concurrency_safe) == (read_only, concurrent), tool


def test_a_tool_declaring_only_read_only_runs_concurrently():
    class Lookup(BaseTool):
        traits = ToolTraits(read_only=True)

    class Launch(BaseTool):
        pass

    assert Lookup().concurrency_safe is True
    assert Launch().concurrency_safe is False
    # an instance that turns read-only follows (bash declares its own: commands run one by one)
    launch = Launch()
    launch.traits = ToolTraits(read_only=True)
    assert launch.concurrency_safe is True


def test_a_capability_declared_outside_traits_is_refused_at_class_creation():
    """A stray or misspelt capability attribute was read by some parts and ignored by
    others; now the class cannot even be made."""
    with pytest.raises(TypeError, match="declare traits = ToolTraits"):

        class Sloppy(BaseTool):
            always_ask = True

    class BookStyle(BaseTool):  # the book's (and the course's) way: folded into traits
        read_only = True

    assert traits_of(BookStyle()) == ToolTraits(read_only=True)
    assert BookStyle().read_only and BookStyle().concurrency_safe

    class Book:  # a tool written to the book's protocol keeps the book's two flags only
        read_only = True
        always_ask = False  # not a flag the book has: not read

    class Plain:
        pass

    assert traits_of(Book()) == ToolTraits(read_only=True, concurrency_safe=False)
    assert traits_of(Plain()) == ToolTraits()


# ---------------------------------------------------------------- deferred tools


async def test_deferred_tool_hidden_until_searched(tmp_path):
    tools = default_tools(tmp_path, allow_private=True)
    provider = _Recorder(
        [
            _calls(("c1", "tool_search", {"query": "fetch web"})),
            _stop("loaded"),
        ]
    )
    agent = SimpleAgent(provider, tools=tools)
    messages = [Message.User("go")]
    await agent.chat(messages)
    assert "web_fetch" not in provider.seen[0]
    assert "tool_search" in provider.seen[0]
    assert "web_fetch" in provider.seen[1]
    result = messages[2].content
    assert result.startswith("Loaded: web_fetch.")
    payload = json.loads(result.split("\n", 1)[1])
    assert payload[0]["name"] == "web_fetch"
    assert "url" in payload[0]["parameters"]["properties"]


async def test_tool_search_by_exact_names_and_no_match():
    class Dummy:
        def __init__(self, name: str, description: str) -> None:
            from clawnb.types import ToolDefinition

            self.definition = ToolDefinition(name, description)

        async def call(self, args):
            return "ran"

    tools = ToolSet(
        [defer(Dummy("alpha", "first")), defer(Dummy("beta", "second")), Dummy("gamma", "g")]
    )
    search = ToolSearchTool(tools)
    tools.push(search)
    assert [d.name for d in active_definitions(tools)] == ["gamma", "tool_search"]
    assert "Not yet loaded: alpha, beta." in search.definition.description
    assert (await search.call({"query": "zeta"})) == (
        "No matching deferred tools found. Deferred tools: alpha, beta."
    )
    out = await search.call({"query": "alpha, beta"})
    assert out.startswith("Loaded: alpha, beta.")
    assert [d.name for d in active_definitions(tools)] == ["alpha", "beta", "gamma", "tool_search"]
    # a deferred tool can run even before it is loaded (the executor finds it in the set)
    assert await tools.get("alpha").call({}) == "ran"


def test_deferred_without_tool_search_are_visible():
    tools = ToolSet([defer(ReadTool())])
    assert [d.name for d in active_definitions(tools)] == ["read"]
    assert deferred_tools_section(tools) is None


def test_deferred_section_for_the_system_prompt(tmp_path):
    section = deferred_tools_section(default_tools(tmp_path))
    assert "web_fetch" in section and "tool_search" in section


def test_deferred_wrapper_keeps_metadata():
    wrapped = defer(WebFetchTool())
    assert wrapped.read_only and wrapped.concurrency_safe and traits_of(wrapped).deferred
    assert defer(wrapped) is wrapped
    assert wrapped.allow_private is False  # other attributes come from the inner tool


# ---------------------------------------------------------------- parallel execution


class _SlowDiskRead(ReadTool):
    """``read`` of real files on a disk that takes ``delay`` s to answer (the wait happens in
    a worker thread, as a slow disk's would). Named pipes were the slow files once; ``read``
    refuses them now (issue 21: a FIFO must never block a read)."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay

    async def call(self, args):
        await asyncio.to_thread(time.sleep, self.delay)
        return await super().call(args)


def _files(tmp_path, count: int) -> list[str]:
    paths = []
    for i in range(count):
        path = tmp_path / f"file{i}"
        path.write_text(f"content {i}")
        paths.append(str(path))
    return paths


async def test_parallel_reads_take_the_time_of_one(tmp_path):
    paths = _files(tmp_path, 5)
    turn = _calls(*[(f"c{i}", "read", {"path": p}) for i, p in enumerate(paths)])
    agent = SimpleAgent(MockProvider([turn, _stop("done")]), tools=[_SlowDiskRead(0.4)])
    messages = [Message.User("read all")]
    start = time.monotonic()
    await agent.chat(messages)
    elapsed = time.monotonic() - start
    assert elapsed < 1.2, f"5 reads of 0.4 s took {elapsed:.2f} s: not parallel"
    results = [m for m in messages if isinstance(m, Message.ToolResult)]
    assert [r.id for r in results] == [f"c{i}" for i in range(5)]
    assert [r.content for r in results] == [f"content {i}" for i in range(5)]


async def test_unsafe_calls_run_alone_and_in_order(tmp_path):
    log = tmp_path / "log.txt"
    paths = _files(tmp_path, 2)
    turn = _calls(
        ("r0", "read", {"path": paths[0]}),
        ("b1", "bash", {"command": f"sleep 0.3; echo b1 >> {log}"}),
        ("b2", "bash", {"command": f"echo b2 >> {log}"}),
        ("r1", "read", {"path": paths[1]}),
    )
    tools = [_SlowDiskRead(0.3), BashTool()]
    agent = SimpleAgent(MockProvider([turn, _stop("ok")]), tools=tools)
    messages = [Message.User("mixed")]
    start = time.monotonic()
    await agent.chat(messages)
    elapsed = time.monotonic() - start
    assert log.read_text() == "b1\nb2\n"  # the second bash waited for the first
    assert elapsed >= 0.85  # read, bash, bash, read: nothing overlapped across bash
    results = [m for m in messages if isinstance(m, Message.ToolResult)]
    assert [r.id for r in results] == ["r0", "b1", "b2", "r1"]
    assert results[0].content == "content 0" and results[3].content == "content 1"


async def test_cancelling_parallel_bash_leaves_no_orphans(tmp_path):
    """Interrupting a turn kills each running command's process group; every call still gets
    a result in the history."""
    pid_file = tmp_path / "pid"
    turn = _calls(("b1", "bash", {"command": f"sleep 1000 & echo $! > {pid_file}; wait"}))
    agent = SimpleAgent(MockProvider([turn, _stop("never")]), tools=[BashTool(kill_grace=0.3)])
    messages = [Message.User("hang")]
    task = asyncio.create_task(agent.chat(messages))
    for _ in range(250):
        if pid_file.exists() and pid_file.read_text().strip():
            break
        await asyncio.sleep(0.02)
    pid = int(pid_file.read_text())
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    stat = Path(f"/proc/{pid}/stat")
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
    assert isinstance(messages[-1], Message.ToolResult)
    assert messages[-1].content == "error: interrupted by user"
