"""Child sessions share infrastructure, not state: a subagent inherits the session's rules,
redactor, sandbox and checkpoints, but not its "Always allow" answers, its read-before-edit
state or its ``ask_user`` — judged through a real session and a scripted model."""

from __future__ import annotations

from clawnb.events import AgentEvent, Approval, ApprovalRequest
from clawnb.session.assemble import build_agent
from clawnb.types import Message
from tests.conftest import call_turn, scripted_model


def _session(tmp_path, monkeypatch, turns, answers, **options):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "notes.txt").write_text("alpha\n")
    asked: list[str] = []

    async def approve(request: ApprovalRequest) -> Approval:
        asked.append(request.call.id)
        return answers.get(request.call.id, Approval.allow_once())

    model = scripted_model(tmp_path / "s.jsonl", turns)
    session = build_agent(None, workspace=ws, model=model, approve=approve, **options)
    return session, ws, asked


def _results(history):
    return {m.id: m.content for m in history if isinstance(m, Message.ToolResult)}


async def test_the_parents_always_allow_does_not_reach_a_child_nor_a_childs_the_parent(
    tmp_path, monkeypatch
):
    turns = [
        call_turn("p1", "write", path="a.txt", content="1"),  # parent: "always" for write
        call_turn("s1", "subagent", task="write b"),
        call_turn("c1", "write", path="b.txt", content="2"),  # child: asked again
        call_turn("c2", "write", path="c.txt", content="3"),  # child's own "always" holds
        {"text": "child done"},
        call_turn("s2", "subagent", task="write d"),
        call_turn("d1", "write", path="d.txt", content="4"),  # a sibling: asked again
        {"text": "sibling done"},
        call_turn("p2", "write", path="e.txt", content="5"),  # parent: its own always holds
        {"text": "all done"},
    ]
    always = Approval.allow_session()
    session, ws, asked = _session(
        tmp_path, monkeypatch, turns, {"p1": always, "c1": always, "d1": always}
    )
    assert await session.send("go") == "all done"
    assert [(ws / n).read_text() for n in ("a.txt", "b.txt", "c.txt", "d.txt", "e.txt")] == list(
        "12345"
    )
    assert asked == ["p1", "s1", "c1", "s2", "d1"]  # c2 (its own always), p2 (the parent's)
    assert session.allowed_for_session() == ["write"]  # the children's answers stayed theirs


async def test_a_child_edits_a_file_only_after_reading_it_itself(tmp_path, monkeypatch):
    turns = [
        call_turn("p1", "read", path="notes.txt"),  # the parent has read it
        call_turn("s1", "subagent", task="edit notes"),
        call_turn("c1", "edit", path="notes.txt", old_string="alpha", new_string="beta"),
        call_turn("c2", "read", path="notes.txt"),
        call_turn("c3", "edit", path="notes.txt", old_string="alpha", new_string="beta"),
        {"text": "edited after reading"},
        {"text": "done"},
    ]
    session, ws, _ = _session(tmp_path, monkeypatch, turns, {}, mode="accept_edits")
    seen: dict[str, str] = {}

    def on_event(event):
        inner = getattr(event, "event", None)
        if isinstance(event, AgentEvent.Nested) and isinstance(inner, AgentEvent.ToolResult):
            seen[inner.id] = inner.content

    await session.send("go", on_event)
    assert "read" in seen["c1"] and seen["c1"].startswith("error:")  # the parent's read is not its
    assert not seen["c3"].startswith("error:")
    assert _results(session.history)["s1"] == "edited after reading"
    assert (ws / "notes.txt").read_text() == "beta\n"


async def test_a_child_in_another_workspace_works_there(tmp_path, monkeypatch):
    session, ws, _ = _session(tmp_path, monkeypatch, [{"text": "x"}], {})
    other = tmp_path / "other"
    other.mkdir()
    child = session.child(workspace=other)
    assert child.workspace == other
    read = child.tools.get("read")
    assert read is not None and read.workspace == other
    assert read is not session.tools.get("read")  # fresh instances, its own file state
    assert child.checkpoints is session.checkpoints  # undo covers what a child changed


async def test_a_background_child_gets_no_ask_user(tmp_path, monkeypatch):
    session, _, _ = _session(tmp_path, monkeypatch, [{"text": "x"}], {}, ask_user=True)
    assert "ask_user" in session.tools
    assert "ask_user" not in session.child().tools
    assert "ask_user" in session.child(foreground=True).tools


async def test_a_child_can_only_narrow_the_tools(tmp_path, monkeypatch):
    session, _, _ = _session(tmp_path, monkeypatch, [{"text": "x"}], {})
    assert sorted(session.child(read_only=True).tools.names()) == sorted(
        ["glob", "grep", "notebook_read", "read", "tool_search", "web_fetch"]
    )
    assert session.child(tools=["read", "grep"]).tools.names() == ["read", "grep"]


async def test_a_childs_tokens_count_for_the_parent_too(tmp_path, monkeypatch):
    turns = [
        {
            **call_turn("s1", "subagent", task="t"),
            "usage": {"input_tokens": 10, "output_tokens": 1},
        },
        {"text": "child", "usage": {"input_tokens": 100, "output_tokens": 7}},
        {"text": "done", "usage": {"input_tokens": 20, "output_tokens": 2}},
    ]
    session, _, _ = _session(tmp_path, monkeypatch, turns, {})
    await session.send("go")
    assert session.cost.total_input_tokens == 130
    assert session.cost.total_output_tokens == 10
