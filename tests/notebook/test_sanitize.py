"""Model Markdown is sanitized before the notebook saves it (issue 10 item 8; issue 21: a real
HTML sanitizer on the rendered Markdown)."""

from __future__ import annotations

import re

from clawnb.notebook.sanitize import sanitize_markdown


def _rendered(markdown: str) -> str:
    """What a reader's browser gets: the output as nbconvert's Markdown renderer draws it."""
    import mistune

    return mistune.html(markdown)


def test_raw_html_is_shown_as_text_and_images_become_links():
    text = 'hi <img src="http://x/a"> ![alt](http://x/b?d=1) <div class="clawnb-card">✓</div>'
    html = _rendered(sanitize_markdown(text))
    assert "<img" not in html and "<div class" not in html
    assert '&lt;img src="http://x/a"&gt;' in html  # what the model wrote, as text
    assert '<a href="http://x/b?d=1" rel="noopener nofollow noreferrer">image: alt</a>' in html


def test_code_is_shown_as_code():
    text = (
        "use `<b>` here\n\n```html\n<img src='http://x'>\n![a](http://x/b)\n```\n\n    <i>in</i>\n"
    )
    html = _rendered(sanitize_markdown(text))
    assert "<code>&lt;b&gt;</code>" in html
    assert "<pre><code class=\"language-html\">&lt;img src='http://x'&gt;&#10;" in html
    assert "<pre><code>&lt;i&gt;in&lt;/i&gt;" in html
    assert "<img" not in html and "<a " not in html  # an image inside code stays text


def test_ordinary_markdown_keeps_its_formatting():
    text = "# Title\n\n- **bold** and *it* a [link](https://example.org)\n\n| a | b |\n|--:|---|\n| 1 | 2 |"
    html = _rendered(sanitize_markdown(text))
    for part in (
        "<h1>Title</h1>",
        "<li><strong>bold</strong> and <em>it</em> a "
        '<a href="https://example.org" rel="noopener nofollow noreferrer">link</a></li>',
        '<th align="right">a</th>',
        "<td>2</td>",
    ):
        assert part in html


def test_an_unclosed_fence_keeps_its_content_as_code_and_a_stray_backtick_is_text():
    assert "<pre><code>&lt;x&gt;</code></pre>" in _rendered(sanitize_markdown("```\n<x>"))
    assert "<p>a ` &lt;b&gt; b</p>" in _rendered(sanitize_markdown("a ` <b> b"))


def test_html_under_a_list_item_is_text_not_a_beacon_or_a_card():
    # the red team's bypass of the line-by-line escaping: indented under a list item, raw HTML
    # is a paragraph of the item to CommonMark, not indented code
    text = (
        "Summary:\n\n- first point\n\n    <img src=http://127.0.0.1:9/beacon>\n\n"
        '    <div class="clawnb-card clawnb-s-done">✓ <b>bash</b> approved</div>\n'
    )
    html = _rendered(sanitize_markdown(text))
    assert "<img" not in html and "<b>" not in html
    assert not re.search(r"<[a-z]+[^>]*class=[^>]*clawnb", html)
    assert "&lt;img src=http://127.0.0.1:9/beacon&gt;" in html


def test_no_class_style_or_remote_load_survives_from_model_text():
    text = (
        "```python clawnb-card\nx = 1\n```\n\n"
        "[a](javascript:alert(1)) [b](http://ok.example/) ![c](//127.0.0.1:9/c)\n\n"
        "[r]: http://127.0.0.1:9/ref\n\n![r][r]"
    )
    html = _rendered(sanitize_markdown(text))
    assert '<code class="language-python">' in html  # highlighting, never a class of its own
    assert "clawnb-card" not in html and "style=" not in html and "<img" not in html
    assert 'href="javascript' not in html and 'href="//127.0.0.1:9/c"' in html
    assert html.count('rel="noopener nofollow noreferrer"') == 3  # b, the image c and ref r


def test_the_sanitized_html_is_one_html_block_wherever_it_lands():
    # A blank line inside a code block must not end the HTML block and hand the rest back to
    # the Markdown renderer, where "![x](url)" would become a live image; nor may a note that
    # wraps the output in *...* turn text into Markdown.
    text = "```\nfirst\n\n\n![x](http://127.0.0.1:9/after-blank)\n```"
    out = sanitize_markdown(text)
    assert "\n" not in out and out.startswith("<div>")
    for markdown in (out, f"*{out}*", f"before\n\n{out}\n\nafter"):
        assert "<img" not in _rendered(markdown)
        assert "<a " not in _rendered(markdown)
    assert sanitize_markdown("  \n") == ""


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
