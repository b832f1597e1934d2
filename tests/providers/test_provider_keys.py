"""The API key: found in the right variable, sent only as a Bearer header, and never seen in a
repr, an exception, a log line or a recording."""

from __future__ import annotations

import json
import logging
import pickle

import pytest
from provider_helpers import KEY
from provider_variants import body, data, delta

from clawnb.course._http_fixture import LoopbackServer, http_response
from clawnb.errors import AuthenticationError, ProviderConfigError, StreamError
from clawnb.providers.openai import OpenAICompatProvider, OpenRouterProvider
from clawnb.providers.replay import RecordingProvider
from clawnb.types import Message

OK = http_response(body(data(delta("fine")), "data: [DONE]"))


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    for name in ("CLAWNB_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env


def test_repr_str_and_vars_do_not_show_the_key():
    p = OpenAICompatProvider("m", KEY, "http://localhost:1/v1")
    for text in (repr(p), str(p), repr(vars(p)), repr(p.__dict__)):
        assert KEY not in text
    assert "api_key=<set>" in repr(p)
    with pytest.raises(TypeError):
        pickle.dumps(p)


async def test_key_is_sent_as_bearer_header_only():
    async with LoopbackServer(OK) as server:
        await OpenAICompatProvider("m", KEY, server.url).stream_chat([Message.User("x")], [])
    request = server.requests[0]
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in request.body.decode()


async def test_no_key_means_no_authorization_header():
    async with LoopbackServer(OK) as server:
        await OpenAICompatProvider("llama3", None, server.url).stream_chat([Message.User("x")], [])
    assert "authorization" not in server.requests[0].headers


async def test_server_echoing_the_key_is_redacted_in_errors():
    reply = http_response(
        json.dumps(
            {"error": {"message": f"Incorrect API key provided: {KEY}", "code": "invalid_api_key"}}
        ),
        401,
        "application/json",
    )
    async with LoopbackServer(reply) as server:
        with pytest.raises(AuthenticationError) as info:
            await OpenAICompatProvider("m", KEY, server.url).chat([Message.User("x")], [])
    assert KEY not in str(info.value) and KEY not in info.value.message
    assert "Incorrect API key provided: ***" in str(info.value)


async def test_error_object_echoing_the_key_is_redacted():
    reply = http_response(body(data({"error": {"message": f"bad key {KEY}"}})))
    async with LoopbackServer(reply) as server:
        with pytest.raises(StreamError) as info:
            await OpenAICompatProvider("m", KEY, server.url).stream_chat([Message.User("x")], [])
    assert KEY not in str(info.value)


async def test_logs_never_contain_the_key(caplog):
    caplog.set_level(logging.DEBUG)
    retry = http_response('{"error": {"message": "busy"}}', 503, "application/json")
    async with LoopbackServer(retry, OK) as server:
        p = OpenAICompatProvider("m", KEY, server.url, retry_backoff=0.01)
        await p.stream_chat([Message.User("x")], [])
    assert caplog.records, "expected the retry to be logged"
    for record in caplog.records:
        assert KEY not in record.getMessage()


async def test_recordings_never_contain_the_key(tmp_path):
    path = tmp_path / "rec.jsonl"
    async with LoopbackServer(OK) as server:
        recorder = RecordingProvider(OpenAICompatProvider("m", KEY, server.url), path)
        await recorder.stream_chat([Message.User("x")], [])
    text = path.read_text()
    assert KEY not in text
    assert json.loads(text)["request"]["model"] == "m"


# --- where the key comes from -----------------------------------------------------------------


def test_clawnb_key_comes_first(monkeypatch):
    monkeypatch.setenv("CLAWNB_API_KEY", "k-clawnb")
    monkeypatch.setenv("OPENROUTER_API_KEY", "k-or")
    monkeypatch.setenv("OPENAI_API_KEY", "k-oa")
    assert OpenRouterProvider()._request_headers()["Authorization"] == "Bearer k-clawnb"
    assert OpenAICompatProvider("m")._request_headers()["Authorization"] == "Bearer k-clawnb"


def test_each_vendor_key_goes_only_to_its_vendor(monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "k-or")
    monkeypatch.setenv("OPENAI_API_KEY", "k-oa")
    assert OpenRouterProvider()._request_headers()["Authorization"] == "Bearer k-or"
    assert OpenAICompatProvider("gpt")._request_headers()["Authorization"] == "Bearer k-oa"
    monkeypatch.delenv("OPENAI_API_KEY")
    local = OpenAICompatProvider("llama3", base_url="http://localhost:11434/v1")
    assert "Authorization" not in local._request_headers()  # the OpenRouter key stays home


def test_switching_base_url_does_not_carry_an_env_key_elsewhere(monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "k-or")
    p = OpenAICompatProvider("m", base_url="https://openrouter.ai/api/v1")
    assert p.has_key
    p.base_url("http://127.0.0.1:9/v1")
    assert not p.has_key


def test_openrouter_without_a_key_is_a_config_error():
    with pytest.raises(ProviderConfigError, match="OPENROUTER_API_KEY"):
        OpenRouterProvider()
    with pytest.raises(ProviderConfigError, match="OPENROUTER_API_KEY"):
        OpenRouterProvider.from_env()


def test_from_env_reads_dotenv_without_touching_os_environ(tmp_path, monkeypatch):
    (tmp_path / ".env").write_text('# keys\nexport OPENROUTER_API_KEY="k-dotenv"\nOTHER=1\n')
    p = OpenRouterProvider.from_env()
    assert p._request_headers()["Authorization"] == "Bearer k-dotenv"
    assert p.model == "openrouter/free"
    import os

    assert "OPENROUTER_API_KEY" not in os.environ


def test_urls_in_messages_lose_their_credentials():
    from clawnb.providers.openai import _public_url

    assert _public_url("http://user:pw@host:8080/v1/chat/completions") == (
        "http://host:8080/v1/chat/completions"
    )
    assert _public_url("https://openrouter.ai/api/v1") == "https://openrouter.ai/api/v1"


async def test_401_without_a_configured_key_says_how_to_set_one():
    reply = http_response(
        '{"error": {"message": "No auth credentials found", "code": 401}}', 401, "application/json"
    )
    async with LoopbackServer(reply) as server:
        with pytest.raises(AuthenticationError) as info:
            await OpenAICompatProvider("m", None, server.url).chat([Message.User("x")], [])
    assert "No auth credentials found" in str(info.value)
    assert "set CLAWNB_API_KEY or OPENAI_API_KEY" in str(info.value)
