"""clawnb's own fixed prompt in a small window (issue 27, item 5), through the real session and
provider over HTTP on 127.0.0.1: the system prompt and the tool schemas count in every
estimate; a window too small for them says so ("the agent's own prompt (N tokens) does not fit
this server's window (M)") instead of blaming the person's message, which is not kept;
llama-server's ``/props`` names its window; the lean tool set sends fewer, shorter schemas and
still runs a tool round."""

from __future__ import annotations

import json
import re

import pytest

from clawnb.config import Config
from clawnb.context import (
    ContextManager,
    ExtractiveSummarizer,
    FixedPromptTooLarge,
    estimate_tokens,
    schema_tokens,
)
from clawnb.course._http_fixture import LoopbackServer, http_response
from clawnb.errors import ConfigError
from clawnb.providers.openai import OpenAICompatProvider
from clawnb.providers.profiles import props_context_window
from clawnb.session.assemble import build_agent
from clawnb.tools import default_tools
from clawnb.tools.lean import LEAN_TOOLS, lean_tools
from clawnb.types import AssistantTurn, Message, ToolDefinition
from tests.conftest import chat_with_server, end_chat
from tests.fake_servers import FakeServer, RecordedServer, Reply, recorded_exchanges

EXCHANGES = recorded_exchanges()
SCHEMA = ToolDefinition(
    "read",
    "Read the contents of a file. " * 20,
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def provider(url: str, **options) -> OpenAICompatProvider:
    options.setdefault("server", "auto")  # what the chat and %%claw use
    options.setdefault("retry_backoff", 0.01)
    return OpenAICompatProvider("smollm2", base_url=url, **options)


def session_on(url: str, tmp_path, config: Config | None = None):
    return build_agent(
        config or Config(), workspace=tmp_path, provider=provider(url), skills=False, mode="bypass"
    )


# -- every estimate counts the fixed prompt ----------------------------------------------------


def test_the_tool_schemas_count_in_every_estimate_of_the_context():
    manager = ContextManager(100_000, 4)
    messages = [Message.System("You are terse."), Message.User("Hello")]
    assert manager.estimate(messages) == estimate_tokens(messages)  # no tools told
    manager.tools = lambda: [SCHEMA]
    assert schema_tokens([SCHEMA]) > 150
    assert manager.estimate(messages) == estimate_tokens(messages) + schema_tokens([SCHEMA])
    assert manager.fixed_tokens(messages) == estimate_tokens(messages[:1]) + schema_tokens([SCHEMA])


async def test_the_compaction_threshold_is_reached_by_the_schemas_too():
    # the messages alone are under the threshold; with the schemas they are over it
    def history() -> list[Message]:
        return [
            Message.System("You are terse."),
            Message.User("Hello"),
            Message.Assistant(AssistantTurn("Hi.")),
            Message.User("How are you?"),
        ]

    offline = provider("http://127.0.0.1:9/v1", server="openai")
    without = ContextManager(150, 1, summarizer=ExtractiveSummarizer())
    assert not await without.maybe_compact(offline, history())
    assert without.compactions == 0
    counted = ContextManager(150, 1, summarizer=ExtractiveSummarizer())
    counted.tools = lambda: [SCHEMA]
    messages = history()
    assert estimate_tokens(messages) < counted.threshold <= counted.estimate(messages)
    assert await counted.maybe_compact(offline, messages)
    assert counted.compactions == 1


def test_a_session_counts_its_own_tool_schemas(tmp_path):
    session = session_on("http://127.0.0.1:9/v1", tmp_path)
    definitions = session.agent.tools.active_definitions()
    assert session.context.tool_tokens == schema_tokens(definitions)
    history = [Message.System(session.agent.system_prompt or ""), Message.User("Hello")]
    # the issue: the estimate said 401 where the server counted 1,635+ tokens
    assert session.context.estimate(history) > estimate_tokens(history) + 800


def test_a_window_budget_below_the_fixed_prompt_says_so_once():
    manager = ContextManager(100_000, 4)
    manager.tools = lambda: [SCHEMA] * 4
    messages = [Message.System("You are terse."), Message.User("Hello")]
    note = manager.fit_window(512, messages)
    assert note is not None and "below the agent's own prompt (" in note
    assert manager.max_tokens == 384
    assert len(manager.notes) == 1 and "larger context window" in manager.notes[0]
    manager.max_tokens = 100_000
    manager.fit_window(512, messages)
    assert len(manager.notes) == 1  # said once
    roomy = ContextManager(100_000, 4)
    assert roomy.fit_window(8192, messages) == "context budget lowered to 6144 tokens"


# -- a 512-token window: the agent's own prompt is named -------------------------------------


@pytest.mark.parametrize("peer", ["ls512", "lcp512"])
async def test_a_512_window_names_the_agents_own_prompt_and_drops_the_message(tmp_path, peer):
    with RecordedServer(peer) as server:
        session = session_on(server.url, tmp_path)
        with pytest.raises(FixedPromptTooLarge) as caught:
            await session.send("Hello")
    line = str(caught.value)
    assert "the agent's own prompt (" in line
    assert "does not fit this server's window (512)" in line
    assert "shorten" not in line
    assert caught.value.fixed_tokens > 512
    assert not caught.value.prompt_kept
    assert not any(isinstance(m, Message.User) for m in session.history)
    assert "overflow" in server.cases[-1]  # the server refused it, as recorded


pexpect = pytest.importorskip("pexpect")


def test_the_chat_on_a_512_window_blames_its_own_prompt_not_the_message(tmp_path):
    with RecordedServer("ls512") as server:
        child = chat_with_server(tmp_path, server.url)
        child.sendline("Hello")
        child.expect("the agent's own prompt \\((\\d+) tokens\\) does not fit")
        child.expect("you> ")
        shown = child.before
        end_chat(child)
    assert "window (512)" in shown
    assert "not kept" in shown
    assert "shorten it" not in shown
    assert re.search(r"llama-server -c \d+", shown)  # what to do about it


# -- llama-server's /props ---------------------------------------------------------------------


def test_props_window_is_read_from_the_recorded_shape():
    assert props_context_window(json.loads(EXCHANGES["ls512/props"]["body"])) == 512
    assert props_context_window(json.loads(EXCHANGES["ls/props"]["body"])) == 8192
    for wrong in (None, [], {}, {"default_generation_settings": {"n_ctx": "512"}}):
        assert props_context_window(wrong) is None


MODELS_WITHOUT_WINDOW = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]})


async def test_the_window_comes_from_props_when_the_model_list_does_not_say_it():
    models = http_response(MODELS_WITHOUT_WINDOW, 200, "application/json", {"Server": "llama.cpp"})
    props = http_response(EXCHANGES["ls512/props"]["body"], 200, "application/json")
    async with LoopbackServer(models, props) as server:
        p = provider(server.url + "/v1")
        profile = await p.detect_server()
        await p.detect_server()  # once: cached
    assert profile is not None and profile.kind == "llama.cpp"
    assert p.context_window == 512
    assert [r.path for r in server.requests] == ["/v1/models", "/props"]


async def test_a_failing_props_leaves_the_window_unknown_without_a_word(caplog):
    models = http_response(MODELS_WITHOUT_WINDOW, 200, "application/json", {"Server": "llama.cpp"})
    for props in (
        http_response("not json", 200, "application/json"),
        http_response("{}", 404, "application/json"),
    ):
        async with LoopbackServer(models, props) as server:
            p = provider(server.url + "/v1")
            await p.detect_server()
        assert p.context_window is None
        assert [r.path for r in server.requests] == ["/v1/models", "/props"]
    assert not [r for r in caplog.records if r.levelname in ("WARNING", "ERROR")]


async def test_a_window_from_the_model_list_needs_no_props():
    with RecordedServer("ls512") as server:
        p = provider(server.url)
        await p.detect_server()
    assert p.context_window == 512  # /v1/models meta.n_ctx, as recorded


# -- the lean tool set -------------------------------------------------------------------------


def test_the_lean_set_is_five_tools_with_smaller_schemas(tmp_path):
    standard = [t.definition for t in default_tools(tmp_path)]
    lean = [t.definition for t in lean_tools(tmp_path)]
    assert [d.name for d in lean] == list(LEAN_TOOLS)
    assert schema_tokens(lean) * 3 < schema_tokens(standard)
    for definition in lean:  # every lean parameter is one the tool itself reads
        own = next(d for d in standard if d.name == definition.name).parameters["properties"]
        assert set(definition.parameters["properties"]) <= set(own)
        assert set(definition.parameters["required"]) <= set(definition.parameters["properties"])


def lean_config(tmp_path) -> Config:
    return Config.from_toml('[model]\ntools = "lean"\n', "config.toml")


def test_model_tools_lean_is_a_config_key(tmp_path):
    assert lean_config(tmp_path).generation_for("any").tools == "lean"
    assert Config().generation_for("any").tools is None  # the standard set
    with pytest.raises(ConfigError, match="model.tools"):
        Config.from_toml('[model]\ntools = "tiny"\n', "config.toml")


async def test_a_lean_session_sends_five_short_schemas_and_runs_a_tool_round(tmp_path):
    (tmp_path / "notes.txt").write_text("buy milk\n")
    replies = [Reply(calls=[("c1", "read", {"path": "notes.txt"})]), Reply("It says buy milk.")]
    with FakeServer("llama.cpp", replies) as server:
        lean = session_on(server.url, tmp_path, lean_config(tmp_path))
        answer = await lean.send("What does notes.txt say?")
    assert answer == "It says buy milk."
    first = server.requests[0]
    assert [t["function"]["name"] for t in first["tools"]] == list(LEAN_TOOLS)
    assert "buy milk" in server.requests[1]["messages"][-1]["content"]  # the read ran
    standard = session_on("http://127.0.0.1:9/v1", tmp_path)
    assert lean.context.tool_tokens * 3 < standard.context.tool_tokens


def test_a_claw_cell_on_a_512_window_blames_its_own_prompt_not_the_cell(tmp_path):
    pytest.importorskip("jupyter_client")
    from tests.notebook.kernelclient import Kernel, kernel_env

    ws = tmp_path / "ws"
    ws.mkdir()
    with RecordedServer("ls512") as server:
        kernel = Kernel(ws, kernel_env(tmp_path, HOME=str(tmp_path / "home")))
        try:
            assert kernel.execute("%load_ext clawnb").status == "ok"
            run = kernel.execute(
                f"%%claw --base-url {server.url} --model smollm2\nHello", timeout=90
            )
        finally:
            kernel.close()
    assert run.status == "error"  # Run All stops here
    errors = [o for o in run.outputs if o["output_type"] == "error"]
    assert [e["ename"] for e in errors] == ["ClawFailed"]
    line = errors[0]["evalue"]
    assert "the agent's own prompt (" in line and "does not fit this server's window (512)" in line
    assert "this prompt was not kept" in line
    assert "too long for the model's context window" not in run.text


def test_the_own_prompt_error_survives_pickling():
    import pickle

    error = FixedPromptTooLarge(
        400, "the agent's own prompt (9 tokens) …", hint="larger", context_window=8, fixed_tokens=9
    )
    clone = pickle.loads(pickle.dumps(error))
    assert (str(clone), clone.fixed_tokens, clone.context_window) == (str(error), 9, 8)
