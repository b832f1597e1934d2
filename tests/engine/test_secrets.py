"""clawnb.control.secrets: the one redactor, key lookup and the scrubbed child environment."""

from __future__ import annotations

import base64
import json
import os
import pickle
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from clawnb.control.secrets import (
    MAX_HELD,
    Redactor,
    Secret,
    StreamRedactor,
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
    assert r("密钥是sk-or-v1-0123456789abcdef0123。") == "密钥是***。"  # glued to Chinese


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
    from clawnb.session.log import SessionLog
    from clawnb.types import Message

    monkeypatch.setenv("OPENAI_API_KEY", "sess-key-0123456789abcdef")
    log = SessionLog(tmp_path / "s.jsonl")
    log.append(Message.User("my key is sess-key-0123456789abcdef"))
    text = (tmp_path / "s.jsonl").read_text()
    assert "sess-key-0123456789abcdef" not in text and "***" in text
    assert SessionLog.read(tmp_path / "s.jsonl")[0].content == "my key is ***"


# -- the needles are computed once, and again when a source changes -------------------------


def test_the_needles_are_kept_while_their_sources_do_not_change(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "kept-key-0123456789")
    (tmp_path / ".env").write_text("DB_PASSWORD=pw-kept-0123456789abc\n")
    old = 1_600_000_000
    os.utime(tmp_path / ".env", (old, old))
    os.utime(tmp_path, (old, old))
    r = Redactor()
    r.watch_dotenv(tmp_path)
    first = r.known_values()
    assert "kept-key-0123456789" in first and "pw-kept-0123456789abc" in first
    assert r(" pw-kept-0123456789abc kept-key-0123456789") == " *** ***"
    assert r._current_needles() is r._current_needles()  # nothing changed: nothing recomputed


def test_a_key_set_in_the_environment_mid_session_is_caught_at_once(monkeypatch):
    r = Redactor()
    assert r("deploy with svc-token-abcdefghijklmnop") == "deploy with svc-token-abcdefghijklmnop"
    monkeypatch.setenv("MY_SERVICE_TOKEN", "svc-token-abcdefghijklmnop")  # a new variable
    assert r("deploy with svc-token-abcdefghijklmnop") == "deploy with ***"
    monkeypatch.setenv("OPENAI_API_KEY", "first-openai-key-000")
    assert r("first-openai-key-000") == "***"
    monkeypatch.setenv("OPENAI_API_KEY", "second-openai-key-111")  # a changed value
    assert r("first-openai-key-000 second-openai-key-111") == "first-openai-key-000 ***"


def test_a_key_variable_that_replaces_another_is_caught_at_once(monkeypatch):
    # as many variables as before, but a different secret-looking name among them
    monkeypatch.setenv("OLD_SERVICE_TOKEN", "old-token-abcdefghijklmnop")
    r = Redactor()
    assert r("old-token-abcdefghijklmnop") == "***"
    monkeypatch.delenv("OLD_SERVICE_TOKEN")
    monkeypatch.setenv("NEW_SERVICE_TOKEN", "new-token-abcdefghijklmnop")
    assert r("new-token-abcdefghijklmnop") == "***"


def test_a_key_added_to_the_workspace_dotenv_mid_session_is_caught_at_once(tmp_path):
    r = Redactor(environ=False)
    r.watch_dotenv(tmp_path)
    assert r("pw-created-0123456789") == "pw-created-0123456789"
    (tmp_path / ".env").write_text("DB_PASSWORD=pw-created-0123456789\n")  # the file appears
    assert r("pw-created-0123456789") == "***"
    with open(tmp_path / ".env", "a") as f:  # a line appended, in the same clock tick
        f.write("STRIPE_SECRET=sk_live_appended0123456789\n")
    assert r("sk_live_appended0123456789") == "***"
    replacement = tmp_path / "env.tmp"  # an editor's save: a new file renamed into place
    replacement.write_text("DB_PASSWORD=pw-replaced-9876543210\n")
    os.replace(replacement, tmp_path / ".env")
    assert r("pw-replaced-9876543210 pw-created-0123456789") == "*** pw-created-0123456789"


SETTLED = 1_600_000_000  # long ago: no "changed within the last second" rule helps


def _settled(*paths: Path, at: int = SETTLED) -> None:
    for path in paths:
        os.utime(path, (at, at), follow_symlinks=False)


def _watching(folder: Path) -> Redactor:
    r = Redactor(environ=False)
    r.watch_dotenv(folder)
    return r


def _settled_dotenv(folder: Path, password: str) -> tuple[Path, Redactor]:
    """``folder/.env`` holding ``password``, both dated long ago, and a redactor watching
    the folder that knows the password."""
    env = folder / ".env"
    env.write_text(f"DB_PASSWORD={password}\n")
    _settled(env, folder)
    r = _watching(folder)
    assert r(password) == "***"
    return env, r


def test_a_dotenv_changed_after_its_stamp_settled_is_read_again(tmp_path):
    env, r = _settled_dotenv(tmp_path, "pw-settled-0123456789")
    env.write_text("DB_PASSWORD=pw-changed!-0123456789\n")  # same size, new time
    _settled(env, at=SETTLED + 5)
    assert r("pw-changed!-0123456789") == "***"


def test_a_folder_watched_later_and_a_settled_dotenv_removed_are_caught_at_once(tmp_path):
    # the kept needles must notice a watched folder added, and a .env file gone
    first, second = tmp_path / "first", tmp_path / "second"
    for folder, key in ((first, "pw-first-0123456789"), (second, "pw-second-0123456789")):
        folder.mkdir()
        (folder / ".env").write_text(f"DB_PASSWORD={key}\n")
        _settled(folder / ".env", folder)
    r = _watching(first)
    assert r("pw-first-0123456789 pw-second-0123456789") == "*** pw-second-0123456789"
    r.watch_dotenv(second)
    assert r("pw-first-0123456789 pw-second-0123456789") == "*** ***"
    (first / ".env").unlink()
    _settled(first)  # the folder's stamp as it was: only the file's is gone
    assert r("pw-first-0123456789 pw-second-0123456789") == "pw-first-0123456789 ***"


@pytest.mark.skipif(sys.platform != "linux", reason="the kernel's change reports are inotify's")
def test_a_settled_dotenv_rewritten_behind_its_stamp_is_caught_at_once(tmp_path):
    # the same size and, put back, the same modification time: a stat stamp cannot tell, the
    # kernel's report of the write can (clawnb.control.watch stands for the stat)
    env, r = _settled_dotenv(tmp_path, "pw-before-0123456789")
    assert r("pw-before-0123456789") == "***"  # kept: the kernel watches the file now
    env.write_text("DB_PASSWORD=pw-behind-0123456789\n")
    _settled(env)
    assert r("pw-behind-0123456789") == "***"


def test_a_dotenv_that_is_a_link_is_read_again_when_the_file_it_leads_to_changes(tmp_path):
    target = tmp_path / "keys" / "team.env"
    target.parent.mkdir()
    target.write_text("DB_PASSWORD=pw-linked-0123456789\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".env").symlink_to(target)
    _settled(target, ws)
    r = _watching(ws)
    assert r("pw-linked-0123456789") == "***"
    assert r("pw-linked-0123456789") == "***"
    target.write_text("DB_PASSWORD=pw-rotated-0123456789\n")  # no event on the link itself
    _settled(target, at=SETTLED + 5)
    assert r("pw-rotated-0123456789") == "***"


# -- streamed text ----------------------------------------------------------------------------


def _streamed(r: Redactor, pieces: list[str]) -> tuple[str, list[str]]:
    stream = StreamRedactor(r)
    shown = [stream.feed(p) for p in pieces]
    shown.append(stream.flush())
    return "".join(shown), shown


STREAMED_SECRETS = {
    "a key from the environment": KEY,
    "its base64": base64.b64encode(KEY.encode()).decode(),
    "its hex": KEY.encode().hex(),
    "an unknown provider key": "sk-proj-Abcdefghijklmnop0123456789",
}


@pytest.mark.parametrize("secret", STREAMED_SECRETS.values(), ids=STREAMED_SECRETS.keys())
def test_a_key_split_across_stream_chunks_at_any_position_is_never_shown(secret):
    r = Redactor([KEY], environ=False)
    for cut in range(1, len(secret)):
        for before, after in [("key: ", " ok\n"), ("键是", "。好"), ("", "")]:
            pieces = [before, secret[:cut], secret[cut:], after]
            text, _ = _streamed(r, pieces)
            assert text == r("".join(pieces)) and secret not in text, (cut, text)
            # nor a part of it: the start of the key waits for the rest
            _, shown = _streamed(r, [before + secret[:cut], secret[cut:] + after])
            assert shown[0] == before, (cut, shown)


def test_a_bearer_token_split_across_chunks_is_never_shown():
    r = Redactor(environ=False)
    text = "Authorization: Bearer abcdefghijklmnop0123 next"
    for cut in range(1, len(text)):
        shown, _ = _streamed(r, [text[:cut], text[cut:]])
        assert shown == "Authorization: Bearer *** next", (cut, shown)


def test_streamed_words_show_at_once_unless_they_may_start_a_key():
    stream = StreamRedactor(Redactor([KEY], environ=False))
    assert stream.feed("这是一个测试。") == "这是一个测试。"  # Chinese has no spaces
    assert stream.feed("Hello wor") == "Hello wor"  # no key starts with "wor"
    assert stream.feed("ld, the s") == "ld, the "  # "s" may become "sk-…"
    assert stream.feed("ky is blue, ca") == "sky is blue, "  # "ca" may become the key
    assert stream.feed("n it be") == "can it "  # "be" may become "Bearer …"
    assert stream.feed("?") == "be?"
    assert stream.flush() == "" and stream.flush() == ""
    assert stream.feed("again") == "again"


KEY_SHAPES = [
    "sk-ant-api03-Abcdefghijklmnop0123",
    "Bearer abcdefghijklmnop0123",
    "AIza" + "Xy0_" * 9,
    "ghp_" + "Ab1" * 12,
    "xoxb-0123456789-abcdef",
]


@pytest.mark.parametrize("secret", KEY_SHAPES)
def test_every_key_shape_split_at_any_position_waits_until_it_is_whole(secret):
    r = Redactor(environ=False)
    for cut in range(1, len(secret)):
        for before, after in [("key: ", " ok\n"), ("键是", "。好"), ("(", ")")]:
            text, shown = _streamed(r, [before + secret[:cut], secret[cut:] + after])
            assert text == r(before + secret + after) and secret not in text, (cut, text)
            assert shown[0] == before, (cut, shown)


def test_any_chunking_of_text_with_keys_shows_what_the_whole_text_redacts_to():
    # keys in every encoding, glued to words, shapes and each other, cut at random places
    import random

    r = Redactor([KEY], environ=False)
    forms = sorted(r.known_values())
    rng = random.Random(12)
    letters = list("ab s k-_.=+/Bearer\n键AIzaghp_xoxb") + list(KEY)
    for _ in range(1500):
        parts = []
        for _ in range(rng.randint(1, 4)):
            parts.append("".join(rng.choice(letters) for _ in range(rng.randint(0, 12))))
            if rng.random() < 0.5:
                parts.append(rng.choice(forms))
            if rng.random() < 0.2:
                start = rng.choice(["Bearer ", "sk-", "ghp_", "xoxb-", "AIza"])
                parts.append(start + "".join(rng.choice("abXY01-_") for _ in range(40)))
        text = "".join(parts)
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randint(0, 8))))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        shown, _ = _streamed(r, pieces)
        assert not any(form in shown for form in forms), (pieces, shown)
        assert shown == r(text), (pieces, shown)


def test_a_long_run_streams_on_without_cutting_a_key_in_it():
    # a dump without spaces (base64 of a process environment) is longer than any key: it is
    # released as it comes, except its last MAX_HELD characters, and never through a key
    r = Redactor([KEY], environ=False)
    blob = base64.b64encode(b"A=" + b"x" * 900 + b"\0OPENAI_API_KEY=" + KEY.encode() + b"\0B=1")
    text = blob.decode()
    for size in (7, 64, 333):
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        shown, parts = _streamed(r, pieces)
        assert shown == r(text) and "***" in shown, size
        assert len(parts[-1]) <= MAX_HELD  # most of it was shown before the end


def test_streamed_text_written_ahead_to_the_session_never_holds_a_key(tmp_path, monkeypatch):
    # the write-ahead records keep what was shown in case the process is killed mid-answer:
    # a key the model echoes, whole or cut across deltas, must not be in them either
    from clawnb.session.log import SessionLog

    secret = "sess-stream-key-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    log = SessionLog(tmp_path / "s.jsonl")
    for piece in ["whole: ", secret, " split: ", secret[:9], secret[9:], " and more"]:
        log.write_ahead_text(piece)
    text = (tmp_path / "s.jsonl").read_text()
    records = [json.loads(line) for line in text.splitlines()]
    shown = "".join(r["text"] for r in records if r["type"] == "partial")
    assert secret not in text and secret[:9] not in text
    assert shown == "whole: *** split: *** and more"  # no key starts with "more"
