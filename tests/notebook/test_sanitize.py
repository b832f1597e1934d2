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
