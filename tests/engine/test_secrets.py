"""clawnb.secrets: the one redactor, key lookup and the scrubbed child environment."""

from __future__ import annotations

import base64
import pickle
from urllib.parse import quote

import pytest

from clawnb.secrets import (
    Redactor,
    Secret,
    env_key,
    is_secret_name,
    key_variables,
    read_dotenv,
    redact,
    scrubbed_env,
)

KEY = "canary-Zq9xW2vB7nL4kP0s+/=T"


def test_redactor_hides_a_key_in_every_encoding_and_alignment():
    r = Redactor([KEY], environ=False)
    raw = KEY.encode()
    texts = [KEY, raw.hex(), raw.hex().upper(), quote(KEY, safe="")]
    for pad in range(3):  # the key at each byte offset inside a larger base64 stream
        blob = b"X" * pad + b"OPENAI_API_KEY=" + raw + b"\0PATH=/usr/bin"
        texts += [base64.b64encode(blob).decode(), base64.urlsafe_b64encode(blob).decode()]
    for text in texts:
        out = r(text)
        assert KEY not in out and "***" in out, text
        # whatever is left is too short to recover the key from (at most 2 bytes at each end)
        for piece in out.split("***"):
            assert len(piece) < len(text) - 10


def test_redactor_reads_key_variables_from_the_environment_on_each_call(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "env-key-value-12345")
    assert redact("x env-key-value-12345 y") == "x *** y"
    monkeypatch.setenv("OPENAI_API_KEY", "another-key-value-678")
    assert redact("another-key-value-678") == "***"


def test_other_secret_looking_variables_are_redacted_when_they_look_like_tokens(monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "tok_abcdefghijklmnopqrstu")
    monkeypatch.setenv("GPG_KEY_DIR", "/home/me/.gnupg/private-keys")
    assert redact("tok_abcdefghijklmnopqrstu") == "***"
    assert redact("/home/me/.gnupg/private-keys") == "/home/me/.gnupg/private-keys"


def test_key_shaped_strings_and_bearer_headers_are_redacted():
    r = Redactor(environ=False)
    assert r("Authorization: Bearer abcdefghijklmnop") == "Authorization: Bearer ***"
    assert r("key sk-or-v1-0123456789abcdef0123") == "key ***"


def test_short_values_are_never_registered():
    r = Redactor(["short"], environ=False)
    r.register("tiny")
    assert r("short tiny") == "short tiny"


def test_secret_value_hides_itself_and_registers_with_the_redactor():
    s = Secret("a-registered-secret-value")
    assert repr(s) == str(s) == "<secret>"
    assert s.reveal() == "a-registered-secret-value"
    assert redact("x a-registered-secret-value") == "x ***"
    with pytest.raises(TypeError):
        pickle.dumps(s)
    assert Secret.of("  ") is None


def test_secret_names():
    for name in (
        "OPENAI_API_KEY",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "my_api_key",
    ):
        assert is_secret_name(name), name
    for name in ("PATH", "HOME", "GIT_AUTHOR_NAME", "SSH_AUTH_SOCK", "LANG"):
        assert not is_secret_name(name), name


def test_scrubbed_env_drops_secret_names_and_keeps_the_rest():
    env = {"PATH": "/bin", "OPENAI_API_KEY": "k", "X_TOKEN": "t", "HOME": "/h", "MY_SECRET": "s"}
    assert scrubbed_env(env) == {"PATH": "/bin", "HOME": "/h"}
    assert scrubbed_env(env, keep=["X_TOKEN"]) == {"PATH": "/bin", "HOME": "/h", "X_TOKEN": "t"}


def test_key_lookup_keeps_vendor_keys_apart(monkeypatch, tmp_path):
    for name in ("CLAWNB_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert key_variables("https://openrouter.ai/api/v1") == ("CLAWNB_API_KEY", "OPENROUTER_API_KEY")
    assert key_variables("http://127.0.0.1:8000/v1") == ("CLAWNB_API_KEY", "OPENAI_API_KEY")
    (tmp_path / ".env").write_text("export OPENROUTER_API_KEY='or-key-from-dotenv-1'\n")
    assert read_dotenv(tmp_path / ".env", ["OPENROUTER_API_KEY"]) == {
        "OPENROUTER_API_KEY": "or-key-from-dotenv-1"
    }
    assert (
        env_key("https://openrouter.ai/api/v1", dotenv=True, cwd=tmp_path) == "or-key-from-dotenv-1"
    )
    assert env_key("https://api.example.com/v1", dotenv=True, cwd=tmp_path) is None
    # a key found in .env is not in os.environ, so it is registered with the redactor
    assert redact("echo or-key-from-dotenv-1") == "echo ***"


def test_a_watched_workspace_dotenv_is_known_to_the_redactor(tmp_path):
    r = Redactor(environ=False)
    r.watch_dotenv(tmp_path)
    (tmp_path / ".env").write_text("DB_PASSWORD=pw-0123456789abcdefXYZ\nDEBUG=true\n")
    (tmp_path / ".env.example").write_text("API_TOKEN=example-token-value-000000\n")
    assert r("pw-0123456789abcdefXYZ true") == "*** true"
    assert r("example-token-value-000000") == "example-token-value-000000"
    (tmp_path / ".env.local").write_text("MY_API_KEY=local-key-abcdefgh\n")  # a new file, seen
    assert r("local-key-abcdefgh") == "***"


def test_the_session_file_never_holds_a_key(tmp_path, monkeypatch):
    from clawnb.session import SessionLog
    from clawnb.types import Message

    monkeypatch.setenv("OPENAI_API_KEY", "sess-key-0123456789abcdef")
    log = SessionLog(tmp_path / "s.jsonl")
    log.append(Message.User("my key is sess-key-0123456789abcdef"))
    text = (tmp_path / "s.jsonl").read_text()
    assert "sess-key-0123456789abcdef" not in text and "***" in text
    assert SessionLog.read(tmp_path / "s.jsonl")[0].content == "my key is ***"
