"""Model Markdown is sanitized before the notebook saves it (issue 10 item 8)."""

from __future__ import annotations

from clawnb.notebook.sanitize import sanitize_markdown


def test_raw_html_is_escaped_and_images_become_links():
    text = 'hi <img src="http://x/a"> ![alt](http://x/b?d=1) <div class="clawnb-card">✓</div>'
    out = sanitize_markdown(text)
    assert "<" not in out.replace("&lt;", "")
    assert "![" not in out
    assert "[image: alt](http://x/b?d=1)" in out


def test_code_is_left_alone():
    text = "use `<b>` here\n\n```html\n<img src='http://x'>\n![a](b)\n```\n\n    <i>indented</i>\n"
    assert sanitize_markdown(text) == text


def test_ordinary_markdown_keeps_its_formatting():
    text = "# Title\n\n- **bold** and *it* a [link](https://example.org)\n\n| a | b |\n|---|---|\n| 1 | 2 |"
    assert sanitize_markdown(text) == text


def test_an_unclosed_fence_keeps_its_content_as_code_and_a_stray_backtick_is_text():
    assert sanitize_markdown("```\n<x>") == "```\n<x>"
    assert sanitize_markdown("a ` <b> b") == "a ` &lt;b> b"


# -- inspect_variable and {name} interpolation (issue 10 item 9) -------------------------------


def _inspect(namespace, name):
    import asyncio

    from clawnb.notebook.kernel_tools import InspectVariableTool

    return asyncio.run(InspectVariableTool(namespace).call({"name": name}))


def test_inspect_variable_refuses_private_paths_and_kernel_objects(shell):
    import pytest

    from clawnb.tools.base import ToolError

    class Holder:
        secret = "s"

    holder = Holder()
    holder._private = "p"
    ns = {"get_ipython": shell.get_ipython, "holder": holder, "sh": shell, "fn": shell.run_cell}
    for name in (
        "holder._private",
        "holder.__class__",
        "get_ipython",
        "sh",
        "fn",
        "holder.__dict__",
    ):
        with pytest.raises(ToolError):
            _inspect(ns, name)
    assert "type: " in _inspect(ns, "holder.secret")


def test_inspect_variable_masks_secret_looking_environment_values(monkeypatch):
    import os

    # A small environment, so the repr is not cut before the variables under test (the
    # whole environment of a CI run is longer than inspect_variable's output limit).
    for name in list(os.environ):
        monkeypatch.delenv(name)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("DB_PASSWORD", "hunter2pw")
    monkeypatch.setenv("AAA_VISIBLE", "shown-value")
    monkeypatch.setenv("AAA_API_TOKEN", "tok")
    out = _inspect({"os": os, "env": dict(os.environ)}, "os.environ")
    assert "hunter2pw" not in out and "'AAA_API_TOKEN': '***'" in out
    assert "shown-value" in out
    assert "hunter2pw" not in _inspect({"env": dict(os.environ)}, "env")


def test_interpolating_a_value_that_holds_a_key_is_refused(monkeypatch):
    import pytest

    from clawnb.notebook.interpolate import SecretInPromptError, interpolate

    monkeypatch.setenv("OPENAI_API_KEY", "interp-key-0123456789abc")
    ns = {"cfg": {"key": "interp-key-0123456789abc"}, "name": "ok", "_hidden": "h"}
    with pytest.raises(SecretInPromptError, match=r"\{cfg\} holds an API key"):
        interpolate("look at {cfg}", ns)
    assert interpolate("hi {name} {_hidden}", ns) == "hi ok {_hidden}"
