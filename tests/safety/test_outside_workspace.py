"""Outside the workspace: a read asks (and runs once when a person approves it), a write is
refused, an added directory is read and written like the workspace. Driven through the loop
(SimpleAgent over a scripted model) with the real file tools and a front end's approval
callback; what the model was told and what is on disk show which way each call went."""

from __future__ import annotations

from pathlib import Path

import pytest

from clawnb.agent import SimpleAgent
from clawnb.config import ConfigLoader
from clawnb.control.dirs import AddedDirectories, DirectoryRefused
from clawnb.events import Approval, ApprovalRequest
from clawnb.gates import GatePipeline, build_gate
from clawnb.providers.mock import MockProvider
from clawnb.tools import default_tools
from clawnb.tools.base import BaseTool
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall, ToolDefinition, ToolTraits

DATA = "region,total\nnorth,12\n"


class Approver:
    """A front end's approval callback answering from a script, recording each request."""

    def __init__(self, *answers: Approval) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Approval:
        self.requests.append(request)
        return self.answers.pop(0)


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path]:
    ws, data = tmp_path / "ws", tmp_path / "data"
    ws.mkdir()
    data.mkdir()
    (data / "sales.csv").write_text(DATA)
    (ws / "notes.txt").write_text("inside\n")
    return ws, data


def calls(*specs: tuple[str, dict]) -> list[AssistantTurn]:
    tool_calls = [ToolCall(f"c{i}", name, args) for i, (name, args) in enumerate(specs)]
    return [
        AssistantTurn(None, tool_calls, StopReason.TOOL_USE),
        AssistantTurn("done", [], StopReason.STOP),
    ]


async def run(gate: GatePipeline, ws: Path, *specs: tuple[str, dict]) -> list[str]:
    messages: list[Message] = [Message.User("go")]
    tools = default_tools(ws, web=False)
    await SimpleAgent(MockProvider(calls(*specs)), gate=gate, tools=tools).chat(messages)
    return [m.content for m in messages if isinstance(m, Message.ToolResult)]


# -- reads ask ---------------------------------------------------------------------------------


async def test_an_outside_read_asks_and_runs_once_approved(world):
    ws, data = world
    approver = Approver(Approval.allow_once(), Approval.deny())
    gate = build_gate(workspace=ws, approve=approver)
    read = ("read", {"path": "../data/sales.csv"})
    out = await run(gate, ws, read, read)
    assert "north,12" in out[0]
    assert out[1].startswith("error: the user denied this tool call")
    assert len(approver.requests) == 2  # the approval was for that one call
    request = approver.requests[0]
    real = str(data / "sales.csv")
    assert "outside the workspace" in request.reason and real in request.reason
    assert request.details["outside"] == [real]
    assert request.details["explicit_only"] is True  # no "always" offered


async def test_reads_inside_the_workspace_still_run_unasked(world):
    ws, _ = world
    approver = Approver()
    out = await run(build_gate(workspace=ws, approve=approver), ws, ("read", {"path": "notes.txt"}))
    assert "inside" in out[0] and approver.requests == []


@pytest.mark.parametrize("mode", ["default", "accept_edits", "plan", "bypass"])
async def test_always_allow_and_allow_rules_do_not_wave_an_outside_read_through(world, mode):
    ws, data = world
    approver = Approver(Approval.allow_session(), Approval.deny())
    gate = build_gate(workspace=ws, mode=mode, allow=["read", "grep", "glob"], approve=approver)
    assert gate.permissions is not None
    gate.permissions.record_session_allow("read")  # an earlier "Always allow" for read
    read = ("read", {"path": str(data / "sales.csv")})
    out = await run(gate, ws, read, read)
    assert "north,12" in out[0]  # "always" on this question allowed this call only
    assert out[1].startswith("error: the user denied")
    assert len(approver.requests) == 2


async def test_an_auto_allowed_read_only_tool_still_asks_outside(world):
    ws, data = world

    class Peek(BaseTool):
        definition = ToolDefinition("peek", "read a file").param("path", "string", "", True)
        traits = ToolTraits(read_only=True, auto_allowed=True)

        async def call(self, args):
            return Path(args["path"]).read_text()

    approver = Approver(Approval.deny())
    gate = build_gate(workspace=ws, approve=approver)
    decision = await gate.before_tool(
        ToolCall("p", "peek", {"path": str(data / "sales.csv")}), Peek()
    )
    assert getattr(decision, "outcome", None) == "denied"
    assert len(approver.requests) == 1


async def test_a_policy_cannot_approve_an_outside_read(world):
    ws, _ = world
    gate = build_gate(workspace=ws, approve=Approver(Approval.allow_by_policy("--approve allow")))
    out = await run(gate, ws, ("read", {"path": "../data/sales.csv"}))
    assert out[0] == (
        "error: not approved: --approve allow cannot approve a read outside the workspace; "
        "a person must"
    )


async def test_a_policy_cannot_open_a_secret_file_and_says_so(world):
    ws, _ = world
    (ws / ".env").write_text("KEY=x\n")
    gate = build_gate(workspace=ws, approve=Approver(Approval.allow_by_policy("my policy")))
    out = await run(gate, ws, ("read", {"path": ".env"}))
    assert (
        out[0]
        == "error: not approved: my policy cannot approve opening a secret file; a person must"
    )


async def test_without_an_approval_callback_an_outside_read_is_refused(world):
    ws, _ = world
    out = await run(build_gate(workspace=ws), ws, ("read", {"path": "../data/sales.csv"}))
    assert "needs the user's approval" in out[0] and "outside the workspace" in out[0]
    assert "north" not in out[0]


async def test_a_deny_rule_refuses_an_outside_read_without_asking(world):
    ws, _ = world
    approver = Approver()
    gate = build_gate(workspace=ws, deny=["read(../data/**)"], approve=approver)
    out = await run(gate, ws, ("read", {"path": "../data/sales.csv"}))
    assert out[0].startswith("error: permission denied for `read`")
    assert approver.requests == []


async def test_grep_glob_and_a_link_out_ask_with_the_resolved_path(world):
    ws, data = world
    (ws / "shared").symlink_to(data)
    approver = Approver(Approval.allow_once(), Approval.allow_once(), Approval.allow_once())
    gate = build_gate(workspace=ws, approve=approver)
    out = await run(
        gate,
        ws,
        ("grep", {"pattern": "north", "path": "../data"}),
        ("glob", {"pattern": "../data/*.csv"}),
        ("read", {"path": "shared/sales.csv"}),
    )
    assert "north,12" in out[0] and "sales.csv" in out[1] and "north,12" in out[2]
    reasons = [r.reason for r in approver.requests]
    assert all("outside the workspace" in r for r in reasons)
    assert str(data / "sales.csv") in reasons[2]  # where the link leads, not "shared/…"
    assert approver.requests[1].details["outside"] == [str(data)]


async def test_a_home_path_asks_where_it_leads(world, monkeypatch):
    ws, data = world
    monkeypatch.setenv("HOME", str(data))
    approver = Approver(Approval.allow_once())
    out = await run(
        build_gate(workspace=ws, approve=approver), ws, ("read", {"path": "~/sales.csv"})
    )
    assert "north,12" in out[0]
    assert approver.requests[0].details["outside"] == [str(data / "sales.csv")]


async def test_plan_agent_reads_outside_ask_too(world):
    from clawnb.planning import PlanAgent

    ws, _ = world
    approver = Approver(Approval.deny())
    gate = build_gate(workspace=ws, mode="plan", approve=approver)
    turns = [
        AssistantTurn(
            None, [ToolCall("c0", "read", {"path": "../data/sales.csv"})], StopReason.TOOL_USE
        ),
        AssistantTurn("the plan", [], StopReason.STOP),
    ]
    messages: list[Message] = [Message.User("plan it")]
    agent = PlanAgent(MockProvider(turns), gate=gate, tools=default_tools(ws, web=False))
    await agent.plan(messages)
    results = [m.content for m in messages if isinstance(m, Message.ToolResult)]
    assert results[0].startswith("error: the user denied") and len(approver.requests) == 1


# -- writes are refused ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["default", "accept_edits", "bypass"])
async def test_an_outside_write_or_edit_is_refused_in_every_mode(world, mode):
    ws, data = world
    approver = Approver()
    gate = build_gate(workspace=ws, mode=mode, approve=approver)
    out = await run(
        gate,
        ws,
        ("write", {"path": "../data/new.csv", "content": "x"}),
        ("edit", {"path": str(data / "sales.csv"), "old_string": "12", "new_string": "99"}),
    )
    assert not (data / "new.csv").exists() and (data / "sales.csv").read_text() == DATA
    for result in out:
        assert result.startswith("error: safety check failed: path ")
        assert "is outside allowed directory" in result and "/add-dir DIR" in result
    assert approver.requests == []  # refused, not asked


# -- added directories -------------------------------------------------------------------------


async def test_an_added_directory_is_read_unasked_and_written_like_the_workspace(world):
    ws, data = world
    approver = Approver(Approval.allow_once())
    gate = build_gate(workspace=ws, approve=approver, directories=AddedDirectories([data]))
    out = await run(
        gate,
        ws,
        ("read", {"path": "../data/sales.csv"}),
        ("write", {"path": "../data/summary.txt", "content": "north leads\n"}),
    )
    assert "north,12" in out[0]
    assert (data / "summary.txt").read_text() == "north leads\n"
    # the read ran unasked; the write was asked as a workspace write is in default mode
    assert len(approver.requests) == 1 and approver.requests[0].call.name == "write"
    assert "outside" not in approver.requests[0].details


async def test_secret_and_control_files_stay_protected_in_an_added_directory(world):
    ws, data = world
    (data / ".env").write_text("KEY=secret-in-added-dir\n")
    approver = Approver(Approval.deny(), Approval.allow_by_policy("--approve allow"))
    gate = build_gate(
        workspace=ws, mode="bypass", approve=approver, directories=AddedDirectories([data])
    )
    out = await run(
        gate,
        ws,
        ("read", {"path": "../data/.env"}),
        ("write", {"path": "../data/.env", "content": "KEY=x\n"}),
        ("write", {"path": "../data/CLAUDE.md", "content": "obey\n"}),
    )
    assert out[0].startswith("error: the user denied")  # a secret file: asked, in bypass
    assert "opens a secret file" in approver.requests[0].reason
    assert (
        out[1]
        == "error: safety check failed: file `../data/.env` is protected (matches pattern `.env`)"
    )
    assert "cannot approve a change to the agent's own configuration" in out[2]
    assert not (data / "CLAUDE.md").exists()
    assert (data / ".env").read_text() == "KEY=secret-in-added-dir\n"


async def test_gate_add_directory_counts_from_the_next_call(world):
    ws, data = world
    gate = build_gate(workspace=ws, mode="accept_edits", approve=Approver())
    write = ("write", {"path": "../data/out.txt", "content": "ok\n"})
    assert (await run(gate, ws, write))[0].startswith("error: safety check failed")
    assert gate.add_directory("../data") == data
    assert (await run(gate, ws, write))[0].startswith("wrote")
    assert (data / "out.txt").read_text() == "ok\n"


def test_add_directory_refuses_what_is_no_folder(world):
    ws, data = world
    added = AddedDirectories()
    for bad, why in (("/", "whole file system"), (str(data / "sales.csv"), "not a folder"),
                     ("nowhere", "no such folder")):  # fmt: skip
        with pytest.raises(DirectoryRefused, match=why):
            added.add(bad, base=ws)
    assert list(added) == []


def test_added_folders_expand_home_and_resolve_links(world, monkeypatch):
    ws, data = world
    monkeypatch.setenv("HOME", str(data.parent))
    (ws / "data-link").symlink_to(data)
    added = AddedDirectories.from_config(["~/data", "data-link", "~/missing"], ws)
    assert list(added) == [data]  # one folder, by its real path; the missing one left out


def test_the_home_folder_and_those_above_it_cannot_be_added(world, monkeypatch):
    ws, data = world
    home = data / "home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    added = AddedDirectories()
    for folder in ("~", str(data)):
        with pytest.raises(DirectoryRefused, match="holds your home folder"):
            added.add(folder, base=ws)
    assert added.add("~/.ssh", base=ws) == home / ".ssh"  # a folder inside it is the person's call
    assert list(AddedDirectories.from_config(["~"], ws)) == []  # in a config: left out


# -- config --------------------------------------------------------------------------------------


def _load(ws: Path, xdg: Path, *, user: str = "", project: str = "") -> object:
    if project:
        (ws / ".claw").mkdir(exist_ok=True)
        (ws / ".claw" / "config.toml").write_text(project)
    (xdg / "clawnb").mkdir(parents=True, exist_ok=True)
    (xdg / "clawnb" / "config.toml").write_text(user)
    return ConfigLoader.load(project_dir=ws, config_home=xdg, env={}, trusted=True)


async def test_user_config_additional_directories_are_writable(world, tmp_path):
    ws, data = world
    config = _load(ws, tmp_path / "xdg", user='additional_directories = ["../data"]\n')
    assert config.additional_directories == ["../data"]
    gate = GatePipeline.from_config(config, workspace=ws, mode="accept_edits")
    out = await run(gate, ws, ("write", {"path": "../data/out.txt", "content": "ok\n"}))
    assert out[0].startswith("wrote") and (data / "out.txt").exists()


async def test_a_project_config_cannot_add_directories(world, tmp_path, caplog):
    ws, data = world
    config = _load(ws, tmp_path / "xdg", project='additional_directories = ["../data", "~"]\n')
    assert config.additional_directories == []
    assert "additional_directories in project" in caplog.text
    gate = GatePipeline.from_config(config, workspace=ws, mode="bypass")
    out = await run(gate, ws, ("write", {"path": "../data/out.txt", "content": "x"}))
    assert out[0].startswith("error: safety check failed") and not (data / "out.txt").exists()


def test_user_and_project_layers_add_up_only_from_the_user(world, tmp_path):
    ws, data = world
    other = tmp_path / "other"
    other.mkdir()
    config = _load(
        ws,
        tmp_path / "xdg",
        user='additional_directories = ["../data", "../other"]\n',
        project='additional_directories = ["/"]\n',
    )
    assert config.additional_directories == ["../data", "../other"]
    gate = GatePipeline.from_config(config, workspace=ws)
    assert list(gate.directories) == [data, other]


@pytest.mark.parametrize("sandbox", ["off", "auto"])
async def test_a_subagent_shares_the_folders_added_to_its_session(world, sandbox):
    from clawnb.config import Config
    from clawnb.session.assemble import build_agent

    ws, data = world
    config = Config.model_validate({"sandbox": {"mode": sandbox}})
    script = ws.parent / "s.jsonl"
    script.write_text('{"text": "hi"}\n')
    session = build_agent(config, workspace=ws, model=f"scripted:{script}", mode="bypass")
    session.gate.add_directory(data)  # what /add-dir does
    child = session.child()
    call = ToolCall("w", "write", {"path": str(data / "from-child.txt"), "content": "x"})
    decision = await child.gate.before_tool(call, child.tools.get("write"))
    assert decision == call  # not refused: the child's gate knows the added folder
