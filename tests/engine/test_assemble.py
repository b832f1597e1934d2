"""build_agent: one factory wires config, provider, tools, gate, prompt, context, cost, session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clawnb.config import Config, trust_workspace
from clawnb.context import SUMMARY_PREFIX, summary_body
from clawnb.events import Approval
from clawnb.providers.replay import ScriptedProvider
from clawnb.session.assemble import build_agent, make_provider
from clawnb.session.log import SessionLog
from clawnb.types import Message
from tests.conftest import scripted_model, session_files


def _write_turn(name: str, content: str = "hi", call_id: str = "w1") -> dict:
    return {
        "tool_calls": [
            {"id": call_id, "name": "write", "arguments": {"path": name, "content": content}}
        ]
    }


def _project_config(ws: Path, text: str) -> None:
    (ws / ".claw").mkdir(parents=True, exist_ok=True)
    (ws / ".claw" / "config.toml").write_text(text)


async def test_scripted_model_from_project_config_and_approval(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for var in (
        "CLAWNB_MODEL",
        "CLAWNB_BASE_URL",
        "CLAWNB_MAX_CONTEXT_TOKENS",
        "CLAWNB_MAX_TOKENS",
    ):
        monkeypatch.delenv(var, raising=False)
    model = scripted_model(tmp_path / "s.jsonl", [_write_turn("a.txt"), {"text": "written"}])
    ws = tmp_path / "ws"
    _project_config(ws, f'model = "{model}"\ninstructions = "Always be brief."\n')
    (ws / "CLAUDE.md").write_text("Project rule: tabs.")
    # a scripted model in a project file is honoured only once the folder is trusted
    trust_workspace(ws, config_home=tmp_path / "xdg")
    asked = []

    async def approve(request):
        asked.append(request.call.name)
        return Approval.allow_once()

    session = build_agent(workspace=ws, approve=approve)
    assert isinstance(session.provider, ScriptedProvider)
    assert await session.send("write a.txt") == "written"
    assert asked == ["write"]  # default mode asks before writing
    assert (ws / "a.txt").read_text() == "hi"
    system = session.history[0]
    assert isinstance(system, Message.System)
    assert "Project rule: tabs." in system.content
    assert "Always be brief." in system.content
    assert session.cost.turn_count == 2


async def test_without_approval_callback_writes_are_refused(tmp_path):
    model = scripted_model(tmp_path / "s.jsonl", [_write_turn("a.txt"), {"text": "ok"}])
    session = build_agent(Config(), workspace=tmp_path, model=model)
    await session.send("go")
    assert not (tmp_path / "a.txt").exists()
    assert "approval" in session.history[3].content


async def test_deny_rule_from_config_wins_over_bypass(tmp_path):
    model = scripted_model(tmp_path / "s.jsonl", [_write_turn("secret.txt"), {"text": "ok"}])
    config = Config.from_toml('[permissions]\nmode = "bypass"\ndeny = ["write(secret*)"]')
    session = build_agent(config, workspace=tmp_path, model=model)
    await session.send("go")
    assert not (tmp_path / "secret.txt").exists()
    assert session.history[3].content.startswith("error: permission denied")


async def test_mode_argument_overrides_config(tmp_path):
    model = scripted_model(tmp_path / "s.jsonl", [_write_turn("a.txt"), {"text": "ok"}])
    session = build_agent(Config(), workspace=tmp_path, model=model, mode="accept_edits")
    await session.send("go")
    assert (tmp_path / "a.txt").exists()
    assert session.mode == "accept_edits"


async def test_cost_uses_reported_usage_and_config_pricing(tmp_path):
    turns = [{"text": "hello", "usage": {"input_tokens": 1_000_000, "output_tokens": 0}}]
    model = scripted_model(tmp_path / "s.jsonl", turns)
    provider = ScriptedProvider.from_file(tmp_path / "s.jsonl")
    config = Config.from_toml('[pricing."real/model"]\ninput = 3.0\noutput = 15.0')
    session = build_agent(config, workspace=tmp_path, model="real/model", provider=provider)
    await session.send("hi")
    assert session.cost.summary() == "tokens: 1000000 in + 0 out | cost: $3.0000"
    offline = build_agent(config, workspace=tmp_path, model=model)
    # a script has no price: "not priced", never a "$0.0000" that reads like a real one
    assert not offline.cost.priced and offline.cost.cost_label() == "not priced"


async def test_session_new_then_resume(tmp_path):
    model = scripted_model(tmp_path / "s.jsonl", [{"text": "first"}, {"text": "second"}])
    one = build_agent(Config(), workspace=tmp_path, model=model, session="new")
    await one.send("q1")
    path = one.history.path
    assert session_files(tmp_path) == [path]  # in the user's data directory
    assert not (tmp_path / ".claw" / "sessions").exists()
    one.close()
    two = build_agent(
        Config(), workspace=tmp_path, model=f"scripted:{tmp_path / 's.jsonl'}", session="latest"
    )
    assert len(two.history) == 3
    two.agent.provider = one.provider  # continue the same script
    assert await two.send("q2") == "second"
    saved = SessionLog.read(path)
    assert [type(m).__name__ for m in saved] == ["System", "User", "Assistant", "User", "Assistant"]
    assert sum(isinstance(m, Message.System) for m in saved) == 1
    assert two.list_sessions()[0].messages == 5


async def test_resume_and_new_session_switch_history(tmp_path):
    model = scripted_model(tmp_path / "s.jsonl", [{"text": "a"}])
    s = build_agent(Config(), workspace=tmp_path, model=model, session="new")
    await s.send("hello")
    first = s.session_id
    s.new_session()
    assert s.session_id != first and len(s.history) == 0
    assert s.resume(first) == 3
    assert s.session_id == first


async def test_plan_then_execute(tmp_path):
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            {
                "text": "Plan: write a.txt",
                "tool_calls": [
                    {"id": "w0", "name": "write", "arguments": {"path": "a.txt", "content": "x"}},
                    {"id": "p1", "name": "exit_plan", "arguments": {}},
                ],
            },
            _write_turn("a.txt", "done", "w1"),
            {"text": "Executed."},
        ],
    )
    s = build_agent(Config(), workspace=tmp_path, model=model, mode="accept_edits")
    assert await s.plan("make a.txt") == "Plan: write a.txt"
    assert not (tmp_path / "a.txt").exists()
    assert "not available in planning mode" in s.history[3].content
    assert "PLANNING MODE" in s.history[1].content
    assert await s.execute_plan() == "Executed."
    assert (tmp_path / "a.txt").read_text() == "done"
    assert s.history[5] == Message.User("Approved. Execute the plan.")


async def test_manual_compact(tmp_path):
    model = scripted_model(tmp_path / "s.jsonl", [{"text": f"answer {i}"} for i in range(6)])
    s = build_agent(Config(preserve_recent=2), workspace=tmp_path, model=model)
    for i in range(6):
        await s.send(f"q{i}")
    assert await s.compact()
    assert s.history[1].content.startswith(SUMMARY_PREFIX)
    assert len(s.history) == 4


def test_tools_include_a_subagent_with_the_same_gate(tmp_path):
    s = build_agent(Config(), workspace=tmp_path, model="scripted:/dev/null")
    assert {"read", "write", "edit", "bash", "subagent"} <= set(s.tools.names())
    assert s.tools.get("subagent").gate is s.gate


def test_make_provider(tmp_path):
    from clawnb.providers.openai import OpenAICompatProvider

    p = make_provider("anthropic/claude-sonnet-4", Config(base_url="http://127.0.0.1:1/v1"))
    assert isinstance(p, OpenAICompatProvider) and p.cache_prompt
    assert not make_provider("gpt-4o", Config()).cache_prompt
    from clawnb.errors import ScriptError

    with pytest.raises(ScriptError):
        make_provider(f"replay:{tmp_path / 'missing.jsonl'}", Config())


async def test_recording_leaves_out_compaction_summaries(tmp_path):
    from clawnb.providers.mock import MockStreamProvider
    from clawnb.providers.replay import load_script
    from clawnb.types import AssistantTurn, TokenUsage

    provider = MockStreamProvider(
        [
            AssistantTurn("one", usage=TokenUsage(900, 200)),
            AssistantTurn("the summary"),
            AssistantTurn("two", usage=TokenUsage(100, 10)),
        ]
    )
    rec = tmp_path / "rec.jsonl"
    s = build_agent(
        Config(max_context_tokens=1000, preserve_recent=1),
        workspace=tmp_path,
        model="live/model",
        provider=provider,
        record=rec,
    )
    await s.send("q1")
    assert s.context.compactions == 1
    assert summary_body(s.history[1]) == "the summary"
    await s.send("q2")
    assert [t.text for t in load_script(rec)] == ["one", "two"]


def test_closing_an_unused_session_leaves_no_file(tmp_path):
    s = build_agent(Config(), workspace=tmp_path, model="scripted:/dev/null", session="new")
    path = s.history.path
    assert path.exists()
    s.close()
    assert not path.exists()


async def test_allowed_directory_is_relative_to_the_workspace(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "top.txt").write_text("outside src")
    (tmp_path / "src" / "in.txt").write_text("inside src")
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            {
                "tool_calls": [
                    {"id": "r1", "name": "read", "arguments": {"path": "top.txt"}},
                    {"id": "r2", "name": "read", "arguments": {"path": "src/in.txt"}},
                ]
            },
            {"text": "ok"},
        ],
    )
    config = Config.from_toml('allowed_directory = "src"')
    s = build_agent(config, workspace=tmp_path, model=model)
    await s.send("read both")
    # outside the allowed directory a read asks; with nobody to ask it is refused
    assert s.history[3].content.startswith("error: `read` needs the user's approval")
    assert "reads outside the workspace" in s.history[3].content
    assert s.history[4].content == "inside src"


async def test_allowed_directory_outside_the_workspace(tmp_path):
    data, ws = tmp_path / "data", tmp_path / "ws"
    data.mkdir()
    ws.mkdir()
    (data / "d.txt").write_text("data file")
    (ws / "w.txt").write_text("workspace file")
    model = scripted_model(
        tmp_path / "s.jsonl",
        [
            {
                "tool_calls": [
                    {"id": "r1", "name": "read", "arguments": {"path": str(data / "d.txt")}},
                    {"id": "r2", "name": "read", "arguments": {"path": "w.txt"}},
                    {"id": "g1", "name": "glob", "arguments": {"pattern": "*.txt"}},
                ]
            },
            {"text": "ok"},
        ],
    )
    s = build_agent(Config(allowed_directory=str(data)), workspace=ws, model=model)
    await s.send("read")
    assert s.history[3].content == "data file"
    for result in s.history[4:6]:  # a read outside asks; with nobody to ask it is refused
        assert "needs the user's approval" in result.content
        assert "outside the workspace" in result.content


async def test_resume_refreshes_the_system_prompt(tmp_path):
    model = scripted_model(tmp_path / "s.jsonl", [{"text": "a"}])
    s = build_agent(Config(), workspace=tmp_path, model=model, session="new")
    await s.send("hello")
    first = s.session_id
    s.close()
    (tmp_path / "CLAUDE.md").write_text("New rule: be kind.")
    again = build_agent(Config(), workspace=tmp_path, model=model, session=first)
    assert "New rule: be kind." in again.history[0].content
    assert again.history[1] == Message.User("hello")
    assert "New rule: be kind." in SessionLog.read(again.history.path)[0].content


async def test_hooks_from_config_guard_tool_calls(tmp_path):
    model = scripted_model(tmp_path / "s.jsonl", [_write_turn("a.txt"), {"text": "ok"}])
    config = Config.from_toml(
        '[permissions]\nmode = "bypass"\n'
        '[[hooks.pre_tool]]\ncommand = "echo no writes today >&2; exit 1"\n'
        'tool_pattern = "write"\n'
    )
    s = build_agent(config, workspace=tmp_path, model=model)
    await s.send("go")
    assert not (tmp_path / "a.txt").exists()
    assert "no writes today" in s.history[3].content


async def test_long_tool_results_are_cut_and_saved_where_the_model_can_read_them(tmp_path):

    from clawnb.session.assemble import build_agent

    big = tmp_path / "big.txt"
    big.write_text("".join(f"line {i}\n" for i in range(20_000)))  # ~190k characters
    script = tmp_path / "s.jsonl"
    script.write_text(
        json.dumps({"tool_calls": [{"id": "c1", "name": "read", "arguments": {"path": "big.txt"}}]})
        + "\n"
        + json.dumps({"text": "ok"})
        + "\n"
    )
    session = build_agent(workspace=tmp_path, model=f"scripted:{script}", gate=False)
    await session.send("read it")
    result = next(m for m in session.history if type(m).__name__ == "ToolResult").content
    assert len(result) < 3_000 and "chars not shown" in result  # a preview
    saved = [p for p in (tmp_path / ".claw").rglob("*.txt")]
    assert len(saved) == 1 and saved[0].read_text() == big.read_text()
    assert str(saved[0]) in result or saved[0].name in result


@pytest.mark.parametrize(
    "base_url",
    [
        "http://192.168.1.5:8000/v1",
        "http://10.0.0.7:11434/v1",
        "http://[fd00::5]:8080/v1",
        "http://127.0.0.2:8000/v1",
        "http://host.docker.internal:1234/v1",
    ],
)
def test_a_private_or_local_server_needs_no_key_in_any_front_end(base_url, monkeypatch):
    """%%claw builds its provider with require_key=True, the chat warns by the same rule
    (providers.profiles.is_local_url): a self-hosted server on the local network is keyless
    in both, where %%claw used to demand a key for 192.168.x while the chat connected."""
    from clawnb.providers.profiles import is_local_url

    for name in ("CLAWNB_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    provider = make_provider("some-model", Config(base_url=base_url), require_key=True)
    assert provider.api_base.startswith(base_url.rstrip("/"))  # built, no key demanded
    assert is_local_url(base_url)


def test_a_remote_server_without_a_key_is_refused_before_any_request(monkeypatch):
    from clawnb.errors import ProviderConfigError

    for name in ("CLAWNB_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ProviderConfigError, match="CLAWNB_API_KEY"):
        make_provider("m", Config(base_url="https://api.example.com/v1"), require_key=True)
