"""What a policy may approve is the gate's decision, not each front end's: an answer that
says it came from a policy (``Approval.allow_by_policy``) can never approve a change to the
agent's own configuration — whoever wrote the front end."""

from __future__ import annotations

from clawnb.events import Approval, ApprovalRequest
from clawnb.session.assemble import build_agent
from tests.conftest import call_turn, scripted_model


def _session(tmp_path, monkeypatch, answer):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    ws = tmp_path / "ws"
    (ws / ".claw").mkdir(parents=True)
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("c1", "write", path=".claw/config.toml", content='mode = "bypass"\n'),
            call_turn("c2", "write", path="notes.txt", content="fine"),
            {"text": "done"},
        ],
    )
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> Approval:
        asked.append(request)
        return answer

    return build_agent(None, workspace=ws, model=model, approve=approve), ws, asked


async def test_a_policy_cannot_approve_a_control_file_in_any_front_end(tmp_path, monkeypatch):
    session, ws, asked = _session(tmp_path, monkeypatch, Approval.allow_by_policy("my policy"))
    await session.send("go")
    assert not (ws / ".claw" / "config.toml").exists()
    assert (ws / "notes.txt").read_text() == "fine"  # the same policy may approve other writes
    results = {m.id: m.content for m in session.history if type(m).__name__ == "ToolResult"}
    assert "my policy cannot approve a change to the agent's own configuration" in results["c1"]
    assert [r.call.id for r in asked] == ["c1", "c2"]


async def test_a_persons_yes_still_approves_a_control_file(tmp_path, monkeypatch):
    session, ws, _ = _session(tmp_path, monkeypatch, Approval.allow_once())
    await session.send("go")
    assert (ws / ".claw" / "config.toml").read_text() == 'mode = "bypass"\n'
