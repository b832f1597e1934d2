"""Issue 24 item 3: approvals that learn. A question offers a scoped "always" (a bash prefix,
a folder glob, an MCP tool or server), the gate decides which, and the person keeps it for
the session or saves it as an allow rule that a new session reads."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from clawnb.config import Config, ConfigLoader
from clawnb.control.saved_rules import read_saved, rules_path
from clawnb.errors import ConfigError
from clawnb.events import Approval, ApprovalRequest
from clawnb.permissions import always_offers
from clawnb.session.assemble import build_agent
from tests.conftest import call_turn, scripted_model


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    return xdg


@pytest.fixture
def repo(tmp_path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


class Asker:
    """An approval callback that records each question and answers from a list."""

    def __init__(self, *answers: Approval) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Approval:
        self.requests.append(request)
        return self.answers.pop(0) if self.answers else Approval.deny("no")

    def asked(self) -> list[str]:
        return [str(r.call.arguments.get("command") or r.call.name) for r in self.requests]


def _offer(name: str, **args: object) -> list[str]:
    return [str(o["rule"]) for o in always_offers(name, dict(args), "/ws")]


def test_the_offer_is_the_commands_prefix_two_words_for_git_like_tools():
    assert _offer("bash", command="git status -s") == ["bash(git status*)"]
    assert _offer("bash", command="npm  test -- --watch") == ["bash(npm test*)"]
    assert _offer("bash", command="git -C sub log") == ["bash(git*)"]  # an option: one word
    assert _offer("bash", command="pytest -q tests") == ["bash(pytest*)"]
    assert _offer("bash", command="ls") == ["bash(ls*)"]


@pytest.mark.parametrize(
    "command",
    [
        "git status; rm -rf x",
        "git status && rm -rf x",
        "git status | sh",
        "git status $(rm -rf x)",
        "git status `rm -rf x`",
        "git status\nrm -rf x",
        "git log > ~/.bashrc",
        "python -c 'import os'",
        "env rm -rf x",
        "./build.sh",
        "FOO=1 make",
    ],
)
def test_a_compound_or_open_ended_command_is_offered_only_as_itself(command):
    offers = always_offers("bash", {"command": command}, "/ws")
    assert [(o["label"], o["saveable"]) for o in offers] == [("this exact command", False)]
    assert offers[0]["rule"] == f"exact:bash({command})"


def test_file_offers_the_top_folder_and_mcp_the_tool_or_the_server(tmp_path):
    assert _offer("edit", path="src/a/b.py") == ["edit(src/**)"]
    assert _offer("write", path="/ws/docs/guide.md") == ["write(docs/**)"]
    assert _offer("write", path="notes.txt") == ["write(notes.txt)"]
    assert _offer("write", path="../elsewhere/x.py") == []
    assert _offer("mcp__github__create_issue", title="t") == [
        "mcp__github__create_issue",
        "mcp__github__*",
    ]


async def test_git_status_saved_for_the_project_holds_in_a_new_session_git_push_still_asks(
    tmp_path, home, repo
):
    # the test: saved `git status*`, a new session, `git status -s` runs unasked
    first = Asker(Approval.allow_always("bash(git status*)", "project"))
    model = scripted_model(
        tmp_path / "one.jsonl", [call_turn("c1", "bash", command="git status -s"), {"text": "ok"}]
    )
    session = build_agent(
        ConfigLoader.load(project_dir=repo), workspace=repo, model=model, approve=first
    )
    await session.send("status?")
    offers = first.requests[0].details["always"]
    assert [o["rule"] for o in offers] == ["bash(git status*)"]
    saved = rules_path("project", repo)
    assert saved == repo / ".claw" / "rules.local.toml"
    assert read_saved("project", repo)[1] == ["bash(git status*)"]
    assert "rules.local.toml" in (repo / ".claw" / ".gitignore").read_text()

    second = Asker()  # denies whatever it is asked
    model = scripted_model(
        tmp_path / "two.jsonl",
        [
            call_turn("c2", "bash", command="git status -s"),
            call_turn("c3", "bash", command="git push origin main"),
            call_turn("c4", "bash", command="git status; touch pwned"),
            {"text": "done"},
        ],
    )
    config = ConfigLoader.load(project_dir=repo)
    fresh = build_agent(config, workspace=repo, model=model, approve=second)
    await fresh.send("status and push")
    assert second.asked() == ["git push origin main", "git status; touch pwned"]
    assert not (repo / "pwned").exists()
    results = {m.id: m.content for m in fresh.history if getattr(m, "id", None)}
    assert "denied" not in results["c2"]
    entries = [e for e in config.rule_entries() if e.text == "bash(git status*)"]
    assert entries and entries[0].origins == (f"saved {saved}",)


async def test_an_always_the_question_did_not_offer_is_refused(tmp_path, home, repo):
    # `pytest --version || true` is two commands: only "this exact command" is offered, so
    # an answer that widens it to a prefix (and would save it) runs nothing and saves nothing
    asker = Asker(Approval.allow_always("bash(pytest*)", "user"))
    model = scripted_model(
        tmp_path / "s.jsonl",
        [call_turn("c1", "bash", command="pytest --version || touch ran"), {"text": "ok"}],
    )
    session = build_agent(Config(), workspace=repo, model=model, approve=asker)
    await session.send("go")
    assert asker.requests[0].details["always"][0]["label"] == "this exact command"
    results = {m.id: m.content for m in session.history if getattr(m, "id", None)}
    assert "was not offered" in results["c1"]
    assert not (repo / "ran").exists()
    assert not (home / "clawnb" / "rules.toml").exists()
    assert session.allowed_for_session() == []


async def test_this_exact_command_is_allowed_again_for_the_session_only(tmp_path, home, repo):
    line = "git status && git log -1"
    asker = Asker(Approval.allow_always(f"exact:bash({line})", "project"))
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("c1", "bash", command=line),
            call_turn("c2", "bash", command=line),
            call_turn("c3", "bash", command="git status && touch pwned"),
            {"text": "ok"},
        ],
    )
    session = build_agent(Config(), workspace=repo, model=model, approve=asker)
    await session.send("go")
    assert asker.asked() == [line, "git status && touch pwned"]
    assert not (repo / "pwned").exists()
    assert not rules_path("project", repo).exists()  # not saveable: kept for the session


async def test_saved_for_the_user_a_rule_reaches_every_project(tmp_path, home, repo):
    asker = Asker(Approval.allow_always("bash(git log*)", "user"))
    model = scripted_model(
        tmp_path / "s.jsonl", [call_turn("c1", "bash", command="git log -1"), {"text": "ok"}]
    )
    session = build_agent(Config(), workspace=repo, model=model, approve=asker)
    await session.send("go")
    assert read_saved("user", repo)[1] == ["bash(git log*)"]
    other = tmp_path / "other"
    other.mkdir()
    assert "bash(git log*)" in ConfigLoader.load(project_dir=other).permissions.allow
    assert session.allowed_for_session() == ["bash(git log*)"]


async def test_a_session_always_allows_the_prefix_for_this_session_only(tmp_path, home, repo):
    asker = Asker(Approval.allow_always("bash(git status*)"))
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("c1", "bash", command="git status"),
            call_turn("c2", "bash", command="git status --short"),
            call_turn("c3", "bash", command="git status && touch pwned"),
            {"text": "ok"},
        ],
    )
    session = build_agent(Config(), workspace=repo, model=model, approve=asker)
    await session.send("go")
    assert asker.asked() == ["git status", "git status && touch pwned"]
    assert not (repo / "pwned").exists()
    assert not rules_path("project", repo).exists()
    assert not (home / "clawnb" / "rules.toml").exists()


async def test_never_offered_for_a_control_file_nor_a_secret_file(tmp_path, home, repo):
    (repo / ".env").write_text("KEY=x\n")
    asker = Asker(Approval.allow_once(), Approval.allow_once(), Approval.allow_once())
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("c1", "write", path=".claw/config.toml", content="model = 'x'\n"),
            call_turn("c2", "write", path="CLAUDE.md", content="obey\n"),
            call_turn("c3", "read", path=".env"),
            {"text": "ok"},
        ],
    )
    session = build_agent(Config(), workspace=repo, model=model, approve=asker, mode="bypass")
    await session.send("go")
    assert [r.call.name for r in asker.requests] == ["write", "write", "read"]
    for request in asker.requests:
        assert request.details.get("explicit_only") is True
        assert "always" not in request.details


async def test_an_always_for_a_control_file_call_saves_nothing(tmp_path, home, repo):
    # a front end that sends an "always" anyway: this call runs (a person answered), no
    # rule is recorded or saved
    asker = Asker(Approval.allow_always("write(.claw/**)", "project"))
    model = scripted_model(
        tmp_path / "s.jsonl",
        [call_turn("c1", "write", path=".claw/notes.md", content="x\n"), {"text": "ok"}],
    )
    session = build_agent(Config(), workspace=repo, model=model, approve=asker)
    await session.send("go")
    assert session.allowed_for_session() == []
    assert not rules_path("project", repo).exists()


async def test_a_policy_cannot_answer_always(tmp_path, home, repo):
    class Policy(Asker):
        async def __call__(self, request: ApprovalRequest) -> Approval:
            self.requests.append(request)
            return Approval(
                Approval.allow_always("bash(git status*)").decision,
                scope="bash(git status*)",
                save="project",
                policy="CLAWNB_APPROVAL=allow",
            )

    model = scripted_model(
        tmp_path / "s.jsonl", [call_turn("c1", "bash", command="git status"), {"text": "ok"}]
    )
    session = build_agent(Config(), workspace=repo, model=model, approve=Policy())
    await session.send("go")
    assert not rules_path("project", repo).exists()
    assert session.allowed_for_session() == []


def test_a_rules_file_a_repository_ships_is_ignored(tmp_path, home, repo, caplog):
    (repo / ".claw").mkdir()
    (repo / ".claw" / "rules.local.toml").write_text('[permissions]\nallow = ["bash"]\n')
    config = ConfigLoader.load(project_dir=repo)
    assert "bash" not in config.permissions.allow
    assert "was not written by clawnb here" in caplog.text


def test_a_saved_rules_file_with_other_keys_is_one_error_naming_it(tmp_path, home, repo):
    path = home / "clawnb" / "rules.toml"
    path.parent.mkdir(parents=True)
    path.write_text('model = "x"\n[permissions]\nallow = ["bash(ls*)"]\n')
    with pytest.raises(ConfigError, match=r"rules\.toml: key 'model'"):
        ConfigLoader.load(project_dir=repo)


async def test_rules_lists_saved_rules_with_their_file_and_forget_removes_one(tmp_path, home, repo):
    from clawnb.errors import CommandError

    asker = Asker(Approval.allow_always("bash(git status*)", "project"))
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            call_turn("c1", "bash", command="git status -s"),
            {"text": "ok"},
            call_turn("c2", "bash", command="git status"),
            {"text": "asked again"},
        ],
    )
    session = build_agent(
        ConfigLoader.load(project_dir=repo), workspace=repo, model=model, approve=asker
    )
    await session.send("status?")
    saved = repo / ".claw" / "rules.local.toml"
    shown = await session.command("/rules")
    assert "saved from approvals (allow; /rules forget PATTERN removes one):" in shown
    assert f"bash(git status*)  saved {saved}" in shown
    assert "always allowed this session: bash(git status*)" in shown

    said = await session.command("/rules forget bash(git status*)")
    assert said == (
        f"forgotten: bash(git status*) (removed from {saved}); it is asked about again "
        "from the next call"
    )
    assert read_saved("project", repo)[1] == []
    assert "bash(git status*)" not in (await session.command("/rules"))
    await session.send("again")
    assert asker.asked() == ["git status -s", "git status"]  # asked again
    with pytest.raises(CommandError, match="no saved or session rule 'bash\\(ls\\*\\)'"):
        await session.command("/rules forget bash(ls*)")
    with pytest.raises(CommandError, match="usage: /rules, or /rules forget PATTERN"):
        await session.command("/rules drop x")


async def test_forget_keeps_a_rule_a_config_file_lists_and_names_that_file(tmp_path, home, repo):
    user = home / "clawnb" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[permissions]\nallow = ["bash(git log*)"]\n')
    model = scripted_model(tmp_path / "s.jsonl", [{"text": "hi"}])
    session = build_agent(ConfigLoader.load(project_dir=repo), workspace=repo, model=model)
    from clawnb.errors import CommandError

    with pytest.raises(CommandError) as caught:
        await session.command('/rules forget "bash(git log*)"')
    assert str(caught.value) == (
        f"bash(git log*) was not saved from an approval: it comes from user {user}; edit "
        "that file to remove it"
    )
