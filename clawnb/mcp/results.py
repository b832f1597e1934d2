"""An MCP tool result → the text the model reads (and the images a notebook card shows).

:func:`render_result` takes a ``CallToolResult``:

* **structured content** becomes compact JSON — when the tool declared an output schema and
  the content does not match it, the result falls back to the content blocks (with a short
  note), never a crash;
* **content blocks**: text as is; an image is kept as data for the card and read as
  ``[image/png 640×480]``; audio as ``[audio/wav, 1.2 MB]``; a resource link as its name, URI
  and description; an embedded resource as its text (a binary one as its type and size);
* ``is_error`` results are flagged, so the tool raises and the model reads ``error: …``;
* output over ``max_chars`` (default ~25k tokens) is cut with a marker saying how much;
* every text passes :func:`clawnb.control.secrets.redact`.

The SDK's types are read by their fields, so this module imports nothing from the SDK.
"""

from __future__ import annotations

import base64
import binascii
import importlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..control.secrets import redact
from ..types import compact_json
from .config import DEFAULT_MAX_RESULT_CHARS

if TYPE_CHECKING:
    import mcp_types

__all__ = [
    "McpImage",
    "RenderedResult",
    "cap_text",
    "image_size",
    "render_content",
    "render_prompt",
    "render_resource",
    "render_result",
]


@dataclass(frozen=True)
class McpImage:
    """An image a tool returned: base64 ``data`` and its ``mime_type``, with the size read
    from its header when it is a PNG, GIF, JPEG or WebP."""

    mime_type: str
    data: str
    width: int | None = None
    height: int | None = None

    @property
    def label(self) -> str:
        """``"[image/png 640×480]"`` (or ``"[image/png, 12.3 KB]"`` when the size is unknown)."""
        if self.width is not None and self.height is not None:
            return f"[{self.mime_type} {self.width}×{self.height}]"
        return f"[{self.mime_type}, {_bytes(len(self.data) * 3 // 4)}]"

    def to_bytes(self) -> bytes:
        return base64.b64decode(self.data, validate=False)


@dataclass(frozen=True)
class RenderedResult:
    """What a tool call gave: ``text`` for the model (redacted, capped), ``images`` for the
    card, whether the server flagged it an error, and whether it was cut."""

    text: str
    is_error: bool = False
    images: tuple[McpImage, ...] = ()
    truncated: bool = False


def _bytes(n: int) -> str:
    if n < 1000:
        return f"{n} bytes"
    if n < 1_000_000:
        return f"{n / 1000:.1f} KB"
    return f"{n / 1_000_000:.1f} MB"


# -- images ------------------------------------------------------------------------------------


def image_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from the header of a PNG, GIF, JPEG or WebP image, else ``None``
    (the notebook tools' reader: no image library needed, the figures are in the first bytes)."""
    from ..tools.ipynb import header_size

    return header_size(data)


def _image(mime: str, data: str) -> McpImage:
    # the header is in the first bytes; a JPEG's size can sit after a large EXIF block
    head = data[: 256 * 1024]
    head = head[: len(head) - len(head) % 4]
    try:
        size = image_size(base64.b64decode(head, validate=False))
    except (binascii.Error, ValueError):
        size = None
    return McpImage(mime, data, *(size or (None, None)))


# -- content blocks ----------------------------------------------------------------------------


def render_content(blocks: Iterable[Any]) -> tuple[str, tuple[McpImage, ...]]:
    """Content blocks (tool results, prompt messages) → ``(text, images)``; unredacted."""
    parts: list[str] = []
    images: list[McpImage] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(str(block.text))
        elif kind == "image":
            image = _image(str(block.mime_type), str(block.data))
            images.append(image)
            parts.append(image.label)
        elif kind == "audio":
            parts.append(f"[{block.mime_type}, {_bytes(len(str(block.data)) * 3 // 4)} of audio]")
        elif kind == "resource_link":
            name = getattr(block, "title", None) or block.name
            mime = f", {block.mime_type}" if block.mime_type else ""
            text = f"[resource link: {name} <{block.uri}>{mime}]"
            if block.description:
                text += f" {block.description}"
            parts.append(text)
        elif kind == "resource":
            text, embedded = _resource_contents(block.resource)
            parts.append(text)
            if embedded is not None:
                images.append(embedded)
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    return "\n".join(parts), tuple(images)


def _resource_contents(contents: Any) -> tuple[str, McpImage | None]:
    mime = getattr(contents, "mime_type", None)
    uri = getattr(contents, "uri", "")
    text = getattr(contents, "text", None)
    if isinstance(text, str):
        return f"[resource {uri}{', ' + mime if mime else ''}]\n{text}", None
    blob = str(getattr(contents, "blob", ""))
    size = _bytes(len(blob) * 3 // 4)
    if mime and mime.startswith("image/"):
        image = _image(mime, blob)
        return f"[resource {uri}: {image.label}]", image
    return f"[resource {uri}: {mime or 'binary'}, {size}]", None


# -- caps --------------------------------------------------------------------------------------


def cap_text(text: str, max_chars: int = DEFAULT_MAX_RESULT_CHARS) -> tuple[str, bool]:
    """``(redacted text, cut?)``: at most ``max_chars`` characters plus a marker that says how
    long the whole was. Redaction runs before the cut on a prefix a little longer than what
    is kept, so a key that straddles the cut is still hidden, and a huge text is not
    redacted in full only to be thrown away."""
    total = len(text)
    redacted = redact(text if total <= 2 * max_chars + 4096 else text[: 2 * max_chars + 4096])
    if len(redacted) <= max_chars and total <= 2 * max_chars + 4096:
        return redacted, False
    kept = redacted[:max_chars]
    marker = (
        f"\n\n[... cut here: the result was {total:,} characters; the first {max_chars:,} are "
        "shown (max_result_chars) ...]"
    )
    return kept + marker, True


# -- results -----------------------------------------------------------------------------------


def _schema_mismatch(value: Any, schema: dict[str, Any]) -> str | None:
    """Why ``value`` does not match ``schema`` (one line), or ``None`` when it does. A schema
    that is itself broken counts as a mismatch: the content is the safer reading."""
    try:
        jsonschema = importlib.import_module("jsonschema")
    except ImportError:  # pragma: no cover - the SDK depends on it
        return None
    try:
        validator = jsonschema.validators.validator_for(schema)(schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    except Exception as exc:  # an invalid schema or an unresolvable $ref
        return f"the tool's output schema is unusable ({type(exc).__name__})"
    if error is None:
        return None
    message = str(getattr(error, "message", error))
    return message if len(message) <= 160 else message[:157] + "..."


def _same_json(text: str, value: Any) -> bool:
    """Is ``text`` the JSON of ``value`` — or of the value an SDK server wrapped as
    ``{"result": value}`` (a tool returning a plain number or string)?"""
    wrapped = isinstance(value, dict) and list(value) == ["result"]
    if wrapped and text == value["result"]:
        return True  # a string result, written out as itself
    try:
        parsed = json.loads(text)
    except ValueError:
        return False
    return bool(parsed == value or (wrapped and parsed == value["result"]))


def render_result(
    result: mcp_types.CallToolResult | Any,
    *,
    output_schema: dict[str, Any] | None = None,
    max_chars: int = DEFAULT_MAX_RESULT_CHARS,
) -> RenderedResult:
    """A ``CallToolResult`` → :class:`RenderedResult` (see the module docstring)."""
    blocks: Sequence[Any] = list(getattr(result, "content", None) or [])
    structured = getattr(result, "structured_content", None)
    is_error = bool(getattr(result, "is_error", False))
    note = ""
    use_structured = structured is not None and not is_error
    if use_structured and output_schema is not None:
        problem = _schema_mismatch(structured, output_schema)
        if problem is not None:
            use_structured = False
            note = (
                f"[the structured result does not match the tool's output schema ({problem}); "
                "its content follows]\n"
            )
    if use_structured:
        # The spec has servers repeat structured content as a JSON text block: drop that
        # copy, keep any other blocks (a message, an image).
        others = [
            b
            for b in blocks
            if not (getattr(b, "type", None) == "text" and _same_json(str(b.text), structured))
        ]
        text, images = render_content(others)
        body = compact_json(structured)
        text = body if not text else f"{body}\n{text}"
    else:
        text, images = render_content(blocks)
        if not text and structured is not None:
            text = compact_json(structured)
        text = note + text
    if not text.strip():
        text = "the tool reported an error without a message" if is_error else "(no output)"
    capped, cut = cap_text(text, max_chars)
    return RenderedResult(capped, is_error=is_error, images=images, truncated=cut)


def render_prompt(
    result: mcp_types.GetPromptResult | Any, *, max_chars: int = DEFAULT_MAX_RESULT_CHARS
) -> list[tuple[str, str]]:
    """A ``GetPromptResult`` → ``[(role, text), …]`` (redacted, each capped): what a
    ``/mcp__SERVER__PROMPT`` command puts into the conversation."""
    out: list[tuple[str, str]] = []
    for message in getattr(result, "messages", None) or []:
        text, _ = render_content([message.content])
        out.append((str(message.role), cap_text(text, max_chars)[0]))
    return out


def render_resource(
    result: mcp_types.ReadResourceResult | Any, *, max_chars: int = DEFAULT_MAX_RESULT_CHARS
) -> RenderedResult:
    """A ``ReadResourceResult`` (``@SERVER:URI``) → text for the conversation."""
    parts: list[str] = []
    images: list[McpImage] = []
    for contents in getattr(result, "contents", None) or []:
        text, image = _resource_contents(contents)
        parts.append(text)
        if image is not None:
            images.append(image)
    capped, cut = cap_text("\n".join(parts) or "(empty resource)", max_chars)
    return RenderedResult(capped, images=tuple(images), truncated=cut)
