"""Generation options and server profiles, from config file, environment and chat flags to the
request body a real local server (on 127.0.0.1) receives."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from clawnb.config import DEFAULT_MAX_OUTPUT_TOKENS, Config, ConfigLoader, options_overlay
from clawnb.errors import ConfigError
from clawnb.providers.openai import OpenAICompatProvider
from clawnb.providers.profiles import detect, is_local_url
from clawnb.session.assemble import build_agent
from clawnb.types import Message, ToolDefinition
from tests.conftest import chat_with_server, end_chat
from tests.fake_servers import _MODELS, FakeServer, Reply

ROOT = Path(__file__).resolve().parents[2]
READ = ToolDefinition("read", "Read a file.", {"type": "object", "properties": {}})


def _load(tmp: Path, project: str = "", user: str = "", env: dict | None = None) -> Config:
    for path, text in ((tmp / "p" / ".claw" / "config.toml", project),
                       (tmp / "x" / "clawnb" / "config.toml", user)):  # fmt: skip
        if text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    return ConfigLoader.load(project_dir=tmp / "p", config_home=tmp / "x", env=env or {})


# -- config -----------------------------------------------------------------------------------


def test_model_table_sets_name_and_options_and_layers_merge_key_by_key(tmp_path):
    config = _load(
        tmp_path,
        project='[model]\nname = "qwen2.5-coder"\ntemperature = 0.2\nextra_body = {top_k = 20}\n',
        user="[model]\nmax_output_tokens = 2048\n",
    )
    assert config.model == "qwen2.5-coder"
    options = config.generation_for()
    assert (options.temperature, options.max_output_tokens) == (0.2, 2048)
    assert options.extra_body == {"top_k": 20}


def test_plain_model_string_still_works_beside_a_model_table_in_another_layer(tmp_path):
    config = _load(tmp_path, project='model = "a/b"\n', user="[model]\ntool_choice = 'auto'\n")
    assert config.model == "a/b" and config.generation_for().tool_choice == "auto"


def test_per_model_overrides_exact_name_beats_the_longest_glob():
    config = Config.from_toml(
        """
        [model]
        temperature = 0.7
        max_output_tokens = 1000
        [model.overrides."qwen*"]
        temperature = 0.1
        [model.overrides."qwen2.5-*"]
        temperature = 0.2
        [model.overrides."qwen2.5-coder"]
        temperature = 0.3
        """
    )
    assert config.generation_for("qwen3").temperature == 0.1
    assert config.generation_for("qwen2.5-7b").temperature == 0.2
    assert config.generation_for("qwen2.5-coder").temperature == 0.3
    assert config.generation_for("llama").temperature == 0.7
    assert config.generation_for("qwen3").max_output_tokens == 1000  # untouched fields stay


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("[model]\ntemprature = 1\n", "key 'model.temprature': unknown key"),
        ('[model]\ntemperature = "hot"\n', "key 'model.temperature'"),
        ("[model]\nmax_output_tokens = -1\n", "key 'model.max_output_tokens'"),
        ('[model]\nserver = "tgi"\n', "key 'model.server'"),
        ("[generation]\ntemperature = 1\n", "unknown key 'generation'"),
    ],
)
def test_bad_model_options_name_the_file_and_key(tmp_path, text, words):
    with pytest.raises(ConfigError, match="config.toml") as caught:
        _load(tmp_path, project=text)
    assert words in str(caught.value)


def test_old_context_variable_still_works_with_a_warning(tmp_path):
    with pytest.warns(FutureWarning, match="CLAWNB_MAX_CONTEXT_TOKENS"):
        config = _load(tmp_path, env={"CLAWNB_MAX_TOKENS": "4000"})
    assert config.max_context_tokens == 4000
    with pytest.warns(FutureWarning, match="ignored"):
        config = _load(
            tmp_path, env={"CLAWNB_MAX_TOKENS": "4000", "CLAWNB_MAX_CONTEXT_TOKENS": "9000"}
        )
    assert config.max_context_tokens == 9000
    assert _load(tmp_path, env={"CLAWNB_MAX_CONTEXT_TOKENS": "123"}).max_context_tokens == 123


def test_flag_values_are_checked_and_named_as_flags():
    with pytest.raises(ConfigError, match="--max-output-tokens"):
        options_overlay(max_output_tokens=-5, source="command line")
    with pytest.raises(ConfigError, match="--extra-body is not valid JSON"):
        options_overlay(extra_body="{oops", source="command line")
    with pytest.raises(ConfigError, match="--extra-body: expected a JSON object"):
        options_overlay(extra_body="[1, 2]", source="command line")


# -- config → request body, through build_agent and a real server -----------------------------


async def _first_body(config: Config, tmp_path: Path, kind: str = "vllm", **agent) -> dict:
    with FakeServer(kind, [Reply("done")]) as server:
        config = config.merge(options_overlay(base_url=server.url))
        session = build_agent(config, workspace=tmp_path, **agent)
        await session.send("hello")
    return server.requests[0]


async def test_default_output_cap_is_sent_and_zero_means_none(tmp_path):
    body = await _first_body(Config(model="m"), tmp_path)
    assert body["max_tokens"] == DEFAULT_MAX_OUTPUT_TOKENS
    body = await _first_body(Config.from_toml('[model]\nname="m"\nmax_output_tokens=0'), tmp_path)
    assert "max_tokens" not in body


async def test_config_options_and_per_model_override_reach_the_request_body(tmp_path):
    config = Config.from_toml(
        """
        [model]
        name = "local-coder"
        max_output_tokens = 1234
        temperature = 0.6
        tool_choice = "required"
        extra_body = { top_k = 20, repeat_penalty = 1.1 }
        [model.overrides."local-*"]
        temperature = 0.1
        """
    )
    body = await _first_body(config, tmp_path)
    assert body["model"] == "local-coder"
    assert (body["max_tokens"], body["temperature"], body["tool_choice"]) == (1234, 0.1, "required")
    assert (body["top_k"], body["repeat_penalty"]) == (20, 1.1)


async def test_flags_override_the_config_file(tmp_path):
    config = Config.from_toml('[model]\nname = "m"\ntemperature = 0.9\nmax_output_tokens = 50\n')
    config = config.merge(options_overlay(temperature=0.0, tool_choice="read"))
    body = await _first_body(config, tmp_path)
    assert body["temperature"] == 0.0 and body["max_tokens"] == 50
    assert body["tool_choice"] == {"type": "function", "function": {"name": "read"}}


# -- server profiles ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(_MODELS))
def test_each_servers_models_answer_is_recognised(kind):
    entry = {"id": "m", **_MODELS[kind]}
    assert detect({"object": "list", "data": [entry]}) == kind


def test_unknown_models_answers_are_left_undetected():
    assert detect({"data": [{"id": "m", "owned_by": "someone"}]}) is None
    assert detect("<html>") is None and detect({"data": "x"}) is None


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8080/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://192.168.1.20:8000/v1", True),
        ("http://[::1]:8000/v1", True),
        ("http://gpu-box.local:8000/v1", True),
        ("https://openrouter.ai/api/v1", False),
        ("https://api.openai.com/v1", False),
    ],
)
def test_local_urls(url, local):
    assert is_local_url(url) is local


async def test_llama_cpp_python_gets_tools_only_once_detected_and_tool_choice_sent(tmp_path):
    reply = Reply(None, [("c1", "read", {"path": "a"})])
    with FakeServer("llama-cpp-python", [reply, Reply(None, [("c2", "read", {})])]) as server:
        plain = OpenAICompatProvider("m", base_url=server.url)  # no profile: tools are lost
        lost = await plain.stream_chat([Message.User("read a")], [READ])
        auto = OpenAICompatProvider("m", base_url=server.url, server="auto")
        turn = await auto.stream_chat([Message.User("read a")], [READ])
    assert not lost.tool_calls and "did not pass the tools" in (lost.text or "")
    assert auto.profile is not None and auto.profile.kind == "llama-cpp-python"
    assert [c.name for c in turn.tool_calls] == ["read"]
    assert server.requests[1]["tool_choice"] == "auto"
    assert server.paths.count("/v1/models") == 1


async def test_a_users_tool_choice_wins_over_the_profile(tmp_path):
    with FakeServer("llama-cpp-python") as server:
        provider = OpenAICompatProvider(
            "m", base_url=server.url, server="llama-cpp-python", tool_choice="required"
        )
        await provider.chat([Message.User("x")], [READ])
        await provider.chat([Message.User("x")], [])
    assert server.requests[0]["tool_choice"] == "required"
    assert "/v1/models" not in server.paths  # a named kind is not probed
    assert "tools" not in server.requests[1]


async def test_vllm_context_window_is_read_from_models():
    with FakeServer("vllm") as server:
        provider = OpenAICompatProvider("local-model", base_url=server.url, server="auto")
        await provider.chat([Message.User("x")], [])
    assert provider.profile.kind == "vllm" and provider.context_window == 4096


async def test_a_server_that_is_down_is_probed_again_later():
    with FakeServer("ollama") as server:
        url = server.url
    provider = OpenAICompatProvider("m", base_url=url, server="auto", max_retries=0)
    assert await provider.detect_server() is None
    assert provider._probe_pending  # asked again on the next request


def test_unknown_server_kind_is_a_config_error():
    with pytest.raises(Exception, match="unknown server kind 'tgi'"):
        OpenAICompatProvider("m", base_url="http://127.0.0.1:1/v1", server="tgi")


# -- the chat: flags → body, and no key warning for a local server -----------------------------

pexpect = pytest.importorskip("pexpect")


def test_chat_base_url_and_generation_flags_reach_the_server(tmp_path):
    with FakeServer("llama-cpp-python", [Reply("hello from the fake")]) as server:
        child = chat_with_server(
            tmp_path,
            server.url,
            *("--server", "auto", "--max-output-tokens", "321", "--temperature", "0.25"),
            *("--extra-body", json.dumps({"top_k": 7})),
        )
        banner = child.before
        child.sendline("hi")
        child.expect("hello from the fake")
        child.expect("you> ")
        end_chat(child)
    assert "no API key" not in banner  # a local server needs none: no warning
    body = server.requests[0]
    assert (body["max_tokens"], body["temperature"], body["top_k"]) == (321, 0.25, 7)
    assert body["tool_choice"] == "auto"  # llama-cpp-python detected: tools must be asked for


def test_chat_rejects_a_bad_flag_value_in_one_line(tmp_path):
    child = pexpect.spawn(
        sys.executable,
        [
            "-m",
            "clawnb",
            "chat",
            "--workspace",
            str(tmp_path),
            "--no-save",
            "--extra-body",
            "{oops",
        ],  # fmt: skip
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)},
        encoding="utf-8",
        timeout=20,
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    assert "--extra-body is not valid JSON" in child.before
    assert "Traceback" not in child.before


def test_llama_cpp_is_known_by_its_server_header_alone():
    assert detect({"data": [{"id": "m", "owned_by": "someone"}]}, "llama.cpp") == "llama.cpp"
    assert detect(None, "uvicorn") is None  # llama-cpp-python and vLLM both say uvicorn
