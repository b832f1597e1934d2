"""The cards and the transcript as HTML: the stylesheet (JupyterLab theme variables only),
one card's head and body, the diff rows, and the static Markdown-with-HTML rendering a saved
notebook keeps (:func:`transcript_markdown`). Everything shown goes through
:func:`clawnb.notebook.scrub.scrub` first; model text through
:func:`~clawnb.notebook.sanitize.sanitize_markdown`.
"""

from __future__ import annotations

import html
import re
from typing import Any

from .sanitize import sanitize_markdown
from .scrub import scrub
from .transcript import (
    ANSWERING,
    BLOCKED,
    DENIED,
    DONE,
    ERROR,
    INTERRUPTED,
    PENDING,
    RUNNING,
    WAITING,
    Card,
    Transcript,
    args_text,
    code_argument,
    nested_mark,
    preview,
)

__all__ = ["STYLE", "answer_markdown", "card_html", "close_fences", "transcript_markdown"]


ICON = {
    PENDING: "○",
    WAITING: "⏸",
    ANSWERING: "⏸",
    RUNNING: "◐",
    DONE: "✓",
    DENIED: "⊘",
    BLOCKED: "⊘",
    ERROR: "✗",
    INTERRUPTED: "■",
}


# Each status as a CSS class: the colour lives in STYLE, taken from the JupyterLab theme.
STATUS_CLASS = {
    PENDING: "pending",
    WAITING: "waiting",
    ANSWERING: "waiting",
    RUNNING: "running",
    DONE: "done",
    DENIED: "failed",
    BLOCKED: "failed",
    ERROR: "failed",
    INTERRUPTED: "failed",
}


# Every colour comes from JupyterLab's theme variables, so light, dark and high-contrast themes
# all work; the fallback after each variable is for viewers without them (VS Code, nbviewer).
# Text keeps the theme's own foreground everywhere: a status is told by its icon, its words and
# a coloured left border, never by coloured text that one of the themes would make unreadable.
# Diff rows tint the theme's success/error colour over the background (color-mix), so the text
# on them is the theme's text on (almost) the theme's background. A viewer that strips <style>
# (an untrusted notebook) shows plain, readable text in its own colours.
STYLE = (
    "<style>"
    ".clawnb-card{border:1px solid var(--jp-border-color2,rgba(128,128,128,.35));"
    "border-left:4px solid var(--jp-border-color1,rgba(128,128,128,.6));border-radius:4px;"
    "padding:2px 8px;margin:3px 0;overflow:hidden}"
    ".clawnb-card.clawnb-s-running{border-left-color:var(--jp-brand-color1,#1976d2)}"
    ".clawnb-card.clawnb-s-done{border-left-color:var(--jp-success-color1,#388e3c)}"
    ".clawnb-card.clawnb-s-failed{border-left-color:var(--jp-error-color1,#d32f2f)}"
    ".clawnb-card.clawnb-s-waiting{border:2px solid var(--jp-warn-color1,#f57c00);"
    "border-left-width:6px;background:var(--jp-layout-color2,rgba(128,128,128,.12))}"
    ".clawnb-card.clawnb-s-waiting:focus{outline:2px solid var(--jp-brand-color1,#1976d2);"
    "outline-offset:2px}"
    ".clawnb-card summary{cursor:pointer;list-style-position:inside}"
    ".clawnb-card.clawnb-nested{margin-left:24px}"
    # a notebook saved mid-run: its live widgets' outputs are dead once reopened, the snapshot
    # next to them is the readable copy; while the widgets live, the snapshot stays hidden
    ".jp-OutputArea-child:has(+ .jp-OutputArea-child .clawnb-snapshot):not(:has(.clawnb-cell))"
    "{display:none}"
    ".jp-OutputArea-child:has(.clawnb-cell) + .jp-OutputArea-child:has(.clawnb-snapshot)"
    "{display:none}"
    ".clawnb-card code{background:transparent;color:inherit}"
    ".clawnb-diff{font-family:var(--jp-code-font-family,monospace);"
    "font-size:var(--jp-code-font-size,small);white-space:pre;line-height:1.4;"
    "overflow:auto;max-height:28em;margin:2px 0;"
    "border:1px solid var(--jp-border-color2,rgba(128,128,128,.35))}"
    ".clawnb-diff div{padding:0 4px;min-width:max-content}"
    ".clawnb-add{background:color-mix(in srgb,var(--jp-success-color1,#388e3c) 24%,transparent)}"
    ".clawnb-del{background:color-mix(in srgb,var(--jp-error-color1,#d32f2f) 24%,transparent)}"
    ".clawnb-hunk{background:var(--jp-layout-color2,rgba(128,128,128,.12))}"
    # two classes and the element: nbconvert's HTML export styles every output's pre with
    # .jp-OutputArea-output pre / .jp-RenderedHTMLCommon pre (no border, no padding), which
    # beat a single class, so exported cards lost their monospace bordered blocks (issue 26)
    ":is(.clawnb-card,.clawnb-reasoning) pre:is(.clawnb-code,.clawnb-result)"
    "{font-family:var(--jp-code-font-family,monospace);"
    "font-size:var(--jp-code-font-size,small);white-space:pre-wrap;margin:2px 0;"
    "padding:4px 6px;background:var(--jp-cell-editor-background,transparent);"
    "color:var(--jp-content-font-color1,inherit);"
    "border:1px solid var(--jp-border-color2,rgba(128,128,128,.35))}"
    ".clawnb-result{max-height:16em;overflow:auto}"
    # an image a tool returned: never wider than the card (560 px notebooks), not too tall
    ".clawnb-images img{display:block;max-width:100%;max-height:24em;height:auto;margin:4px 0;"
    "border:1px solid var(--jp-border-color2,rgba(128,128,128,.35))}"
    ".clawnb-muted{color:var(--jp-content-font-color2,inherit)}"
    # on a waiting card's highlight the secondary grey falls under 4.5:1 (axe, light theme)
    ".clawnb-s-waiting .clawnb-muted{color:var(--jp-content-font-color1,inherit)}"
    ".clawnb-change{font-weight:600}"
    ".clawnb-error{border:1px solid var(--jp-error-color1,#d32f2f);border-left-width:4px;"
    "border-radius:4px;padding:4px 8px;margin:3px 0;white-space:pre-wrap;"
    "background:color-mix(in srgb,var(--jp-error-color1,#d32f2f) 10%,transparent)}"
    ".clawnb-bar{flex-wrap:wrap;gap:4px;margin:4px 0}"
    # the beacon's offer of browser notifications: wraps rather than truncates when narrow
    ".clawnb-notify.jupyter-button{width:auto;max-width:100%;height:auto;white-space:normal;"
    "overflow:visible;line-height:1.4;margin:0 0 0 8px;padding:0 8px;font-size:small}"
    ".clawnb-bar .jupyter-button,.clawnb-question .jupyter-button{width:auto;"
    "min-width:max-content;overflow:visible;white-space:nowrap;margin:0;padding:0 12px}"
    ".clawnb-bar .clawnb-approve{border:2px solid var(--jp-success-color1,#388e3c);"
    "font-weight:600}"
    ".clawnb-bar .clawnb-deny{border:2px solid var(--jp-error-color1,#d32f2f)}"
    ".clawnb-bar .clawnb-always{border:2px solid var(--jp-warn-color1,#f57c00)}"
    # the scoped "always": which calls it covers and how long it lasts, beside its button
    ".clawnb-bar :is(.clawnb-always-for,.clawnb-always-scope){width:auto;margin:0}"
    ".clawnb-bar :is(.clawnb-always-for,.clawnb-always-scope) select{width:auto;"
    "max-width:100%;color:var(--jp-widgets-input-color,var(--jp-ui-font-color1,inherit));"
    "background:var(--jp-widgets-input-background-color,var(--jp-layout-color1,inherit))}"
    ".clawnb-bar .clawnb-plan-execute{border:2px solid var(--jp-success-color1,#388e3c);"
    "font-weight:600}"
    ".clawnb-bar .clawnb-plan-revise{border:2px solid var(--jp-brand-color1,#1976d2)}"
    ".clawnb-bar .clawnb-plan-cancel{border:2px solid var(--jp-error-color1,#d32f2f)}"
    "</style>"
)


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def answer_markdown(text: str) -> str:
    """The model's text as Markdown, the same way live and in the saved rendering: raw HTML
    escaped and images made links (:func:`~clawnb.notebook.sanitize.sanitize_markdown`), an
    open code fence closed."""
    return close_fences(sanitize_markdown(text.strip()))


def close_fences(text: str) -> str:
    """``text`` with a code fence the model left open closed at its end, so whatever the
    rendering puts after it (the footer, the next card) is not swallowed into the code block."""
    opened: str | None = None
    for line in text.splitlines():
        match = _FENCE.match(line)
        if match is None:
            continue
        marker, rest = match.groups()
        if opened is None:
            if not (marker[0] == "`" and "`" in rest):  # a backtick fence's info has no `
                opened = marker
        elif marker[0] == opened[0] and len(marker) >= len(opened) and not rest.strip():
            opened = None
    return text if opened is None else f"{text}\n{opened}"


def pre(text: str, css_class: str = "") -> str:
    cls = f" class='{css_class}'" if css_class else ""
    style = "white-space:pre-wrap;margin:0;font-family:inherit"
    return f"<div{cls} style='{style}'>{html.escape(scrub(text))}</div>"


def one_line(escaped: str) -> str:
    """Escaped text with its line breaks as character references: the HTML stays on one
    physical line, so a blank line inside a ``<pre>`` cannot end the Markdown HTML block the
    static rendering puts it in (it would spill the rest out as Markdown)."""
    return escaped.replace("\r", "").replace("\n", "&#10;")


def card_html(card: Card) -> str:
    """The whole card as one block of HTML, for the static rendering (a finished card is one
    line that opens to its details, as in the live view)."""
    status = STATUS_CLASS.get(card.status, "pending")
    classes = f"clawnb-card clawnb-s-{status}" + (" clawnb-nested" if card.parent else "")
    body = card_body_html(card)
    if card.finished and body:
        return (
            f"<details class='{classes}'><summary>{card_head_inner(card)}</summary>{body}</details>"
        )
    return f"<div class='{classes}'><div>{card_head_inner(card)}</div>{body}</div>"


LIVE_OUTPUT_LINES = 12


def card_head_html(card: Card) -> str:
    live = ""
    if card.status == RUNNING and card.output.strip():
        # the tail of what the command printed so far (in the head, which re-renders every
        # second anyway: the body, with an "arguments" block the user may have opened, stays)
        rows = card.output.rstrip("\n").split("\n")[-LIVE_OUTPUT_LINES:]
        tail = html.escape(scrub(preview("\n".join(rows), lines=LIVE_OUTPUT_LINES)))
        live = f"<pre class='clawnb-result clawnb-live'>{one_line(tail)}</pre>"
    return f"<div class='clawnb-head'>{card_head_inner(card)}{live}</div>"


def card_head_inner(card: Card) -> str:
    icon = ICON.get(card.status, "•")
    title = html.escape(scrub(card.title))
    title_html = f" <code>{title}</code>" if title and card.name != "ask_user" else ""
    status = html.escape(scrub(card.label()))
    # the one-line card says what came of the call; an open card shows it in full below
    hint = html.escape(scrub(card.hint())) if card.finished else ""
    hint_html = f" <span class='clawnb-muted'>· {hint}</span>" if hint else ""
    return (
        f"{html.escape(nested_mark(card))}"
        f"<span class='clawnb-icon' aria-hidden='true'>{icon}</span> "
        f"<b>{html.escape(card.name)}</b>{title_html} "
        f"<span class='clawnb-status'>{status}</span>{hint_html}"
    )


def result_head_and_diff(result: str) -> tuple[str, str] | None:
    """``(first line, diff)`` for an edit-style result (``edited f.py`` + a numbered diff)."""
    head, sep, rest = result.partition("\n\n")
    if sep and rest.startswith("@@ -"):
        return head, rest
    return None


def card_body_html(card: Card) -> str:
    parts: list[str] = []
    arguments = card.arguments
    if card.name == "ask_user" and isinstance(arguments, dict):
        question = arguments.get("question")
        if isinstance(question, str):
            parts.append(f"<div><b>{html.escape(scrub(question))}</b></div>")
            arguments = None
    code = code_argument(arguments)
    if code is not None:
        text = html.escape(scrub(code[0].rstrip("\n")))
        count = code[0].rstrip("\n").count("\n") + 1
        if count > 1:  # the whole command is below (it scrolls); say how much there is
            parts.append(f"<div class='clawnb-muted'>{count} lines</div>")
        parts.append(f"<pre class='clawnb-code'>{one_line(text)}</pre>")
        arguments = code[1]
    change = card.preview
    result = card.shown_result
    if change is not None:
        # the change that was (or will be) approved: the one diff this card shows
        if not card.finished:  # a finished card says it on its one line
            summary = html.escape(scrub(str(change.summary)))
            parts.append(f"<div class='clawnb-change'>{summary}</div>")
        if change.diff:
            parts.append(diff_html(str(change.diff)))
        if card.status == DONE:
            split = result_head_and_diff(result)
            result = split[0] if split is not None else result.split("\n", 1)[0]
    elif arguments not in (None, {}):
        text = html.escape(scrub(args_text(arguments)[0]))
        parts.append(
            "<details><summary class='clawnb-muted'>arguments</summary>"
            f"<pre class='clawnb-result'>{one_line(text)}</pre></details>"
        )
    if result:
        split = result_head_and_diff(result) if change is None else None
        if split is not None:
            parts.append(f"<div>{html.escape(scrub(split[0]))}</div>")
            parts.append(diff_html(split[1]))
        else:
            text = html.escape(scrub(preview(result)))
            parts.append(f"<pre class='clawnb-result'>{one_line(text)}</pre>")
    parts += [images_html(card.images)] if card.images else []
    return "".join(parts)


# Images on a card: raster types only (an SVG is a document that can hold script and links),
# as data URIs (nothing is fetched: an image cannot be a beacon), a few, each under a cap.
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_IMAGES = 4
MAX_IMAGE_BASE64 = 4_000_000  # about 3 MB of image
_BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


def images_html(images: list[Any]) -> str:
    """The images a call returned, as ``<img>`` data URIs; one that is not a raster type,
    not clean base64 or too big is its label (``[image/svg+xml, 2.1 KB]``) instead."""
    out = []
    for image in images[:MAX_IMAGES]:
        mime = str(getattr(image, "mime_type", ""))
        data = "".join(str(getattr(image, "data", "")).split())
        label = html.escape(str(getattr(image, "label", mime)))
        if mime in IMAGE_TYPES and len(data) <= MAX_IMAGE_BASE64 and _BASE64.fullmatch(data):
            out.append(
                f"<img class='clawnb-image' alt='{label}' title='{label}' "
                f"src='data:{mime};base64,{data}'>"
            )
        else:
            out.append(f"<div class='clawnb-muted'>{label}</div>")
    if len(images) > MAX_IMAGES:
        out.append(f"<div class='clawnb-muted'>({len(images) - MAX_IMAGES} more images)</div>")
    return "<div class='clawnb-images'>" + "".join(out) + "</div>"


def is_error_note(text: str) -> bool:
    return text.startswith("error:")


def error_html(text: str) -> str:
    """Why the turn stopped, as the cell's error block: the theme's error colour on the
    border, the theme's text colour on the words (readable in every theme), not grey italics."""
    return f"<div class='clawnb-error' role='alert'>{one_line(html.escape(scrub(text)))}</div>"


def diff_html(diff: str) -> str:
    rows = []
    for line in scrub(diff).splitlines():
        cls = ""
        if line.startswith("+") and not line.startswith("+++"):
            cls = " class='clawnb-add'"
        elif line.startswith("-") and not line.startswith("---"):
            cls = " class='clawnb-del'"
        elif line.startswith("@@"):
            cls = " class='clawnb-hunk'"
        rows.append(f"<div{cls}>{html.escape(line) or '&nbsp;'}</div>")
    return "<div class='clawnb-diff'>" + "".join(rows) + "</div>"


def transcript_markdown(transcript: Transcript) -> str:
    """The finished cell as Markdown with inline HTML cards: what a saved notebook keeps."""
    out: list[str] = []
    for block in transcript.ordered_blocks():
        if block.kind == "text" and block.text.strip():
            # model text: no raw HTML, no images that load (clawnb.notebook.sanitize)
            out.append(answer_markdown(block.text))
        elif block.kind == "reasoning" and block.text.strip():
            body = one_line(html.escape(block.text.strip()))
            out.append(
                "<details class='clawnb-reasoning'><summary class='clawnb-muted'>reasoning"
                f"</summary><pre class='clawnb-result'>{body}</pre></details>"
            )
        elif block.kind == "note" and is_error_note(block.text):
            out.append(error_html(block.text))
        elif block.kind == "note":
            out.append(f"*{sanitize_markdown(block.text)}*")
        elif block.card is not None:
            out.append(card_html(block.card))
    if transcript.turns or transcript.in_turn or transcript.input_tokens:
        # a cell that failed before the model answered has nothing to count: no "0 turns"
        out.append(f"<sub class='clawnb-muted'>{html.escape(transcript.footer())}</sub>")
    # the stylesheet once, first: every class above takes its colours from the theme
    return scrub(STYLE + "\n\n" + "\n\n".join(out))
