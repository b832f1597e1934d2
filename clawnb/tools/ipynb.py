"""Notebook tools: read and edit ``.ipynb`` files cell by cell instead of as raw JSON.

A notebook on disk is JSON full of things the model should not have to wade through or
retype: base64 images, widget state, ids, execution counts, metadata. ``notebook_read`` shows
it as a model needs it — numbered cells with their ids, type and source, outputs summarised
(text truncated, images as ``[image/png 640×480]``, errors as their exception line).
``notebook_edit`` changes one cell (replace, insert, delete) and leaves every other byte of
meaning alone: other cells, their ids, metadata and outputs are kept; the edited cell's
outputs and execution count are cleared, since they belonged to the old source.

nbformat is not a core dependency (it comes with the ``notebook`` extra), so the tools work
on the plain JSON: structural checks of their own always run, and when nbformat is
installed the edited notebook must also pass ``nbformat.validate`` before it is written. The
file is written atomically, in nbformat's own layout (one-space indent, sources as lists of
lines), so an edit of a notebook saved by Jupyter changes only the lines of the edited cell.

Both tools take ``path`` like ``read``: the gate's path rules apply to them unchanged.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import os
import re
import struct
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..types import JSON, ToolDefinition, ToolTraits
from .base import (
    ChangePreview,
    FileStamp,
    FileTool,
    ToolError,
    open_regular,
    optional_int,
    optional_str,
    require_str,
)
from .base import resolve_path as _resolve_path
from .diff import PREVIEW_DIFF_LINES, render_diff
from .write import atomic_write, real_target

__all__ = [
    "NotebookEditTool",
    "NotebookReadTool",
    "cell_diff",
    "header_size",
    "image_size",
    "is_notebook_path",
    "load_notebook",
    "render_notebook",
    "structural_errors",
]

CELL_TYPES = ("code", "markdown", "raw")
ACTIONS = ("replace", "insert", "delete")
OUTPUT_TYPES = ("stream", "display_data", "execute_result", "error")
# nbformat's rule for cell ids (4.5+): 1-64 characters of letters, digits, '-' and '_'
_ID_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_CELL_NO = re.compile(r"cell \d+")
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
MAX_OUTPUT_CHARS = 1500  # per output, head and tail kept
MAX_OUTPUT_LINES = 30
MAX_READ_CHARS = 40_000  # one notebook_read result; the rest is a further call away
MAX_READ_BYTES = 200 * 1024 * 1024  # a bigger file is not a notebook anyone edits by hand


def is_notebook_path(path: str | os.PathLike[str]) -> bool:
    return os.fspath(path).lower().endswith(".ipynb")


def source_text(cell: dict[str, Any]) -> str:
    src = cell.get("source", "")
    if isinstance(src, list):
        return "".join(s if isinstance(s, str) else str(s) for s in src)
    return src if isinstance(src, str) else str(src)


def _split_lines(text: str) -> list[str]:
    """nbformat's multi-line string layout: a list of lines, each keeping its newline."""
    return text.splitlines(keepends=True)


# -- loading and checking ------------------------------------------------------------------------


def load_notebook(data: bytes, shown: str) -> dict[str, Any]:
    """Parse ``data`` as an nbformat 4 notebook; a clear :class:`ToolError` for anything else."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ToolError(f"'{shown}' is not a notebook: not UTF-8 (byte {exc.start})") from None
    if not text.strip():
        raise ToolError(f"'{shown}' is empty, not a notebook")
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        # the message names line and column only: never echo the file's content
        raise ToolError(
            f"'{shown}' is not valid notebook JSON: {exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}"
        ) from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        major = nb.get("nbformat") if isinstance(nb, dict) else None
        if isinstance(major, int) and major < 4:
            raise ToolError(
                f"'{shown}' is an nbformat {major} notebook; these tools read nbformat 4 "
                "(convert it with: jupyter nbconvert --to notebook --inplace FILE)"
            )
        raise ToolError(f"'{shown}' is not a notebook: no 'cells' list at the top level")
    major = nb.get("nbformat")
    if major != 4:
        raise ToolError(
            f"'{shown}' declares nbformat {major!r}; these tools read nbformat 4 notebooks"
        )
    return nb


def _minor(nb: dict[str, Any]) -> int:
    minor = nb.get("nbformat_minor")
    return minor if isinstance(minor, int) else 0


def structural_errors(nb: dict[str, Any]) -> list[str]:
    """What nbformat's schema would reject that matters for reading and editing: the checks
    that run whether or not nbformat is installed."""
    errors: list[str] = []
    if nb.get("nbformat") != 4:
        errors.append(f"nbformat is {nb.get('nbformat')!r}, expected 4")
    if not isinstance(nb.get("nbformat_minor"), int):
        errors.append("nbformat_minor is missing or not an integer")
    if not isinstance(nb.get("metadata", {}), dict):
        errors.append("metadata is not an object")
    cells = nb.get("cells")
    if not isinstance(cells, list):
        return [*errors, "cells is not a list"]
    needs_ids = _minor(nb) >= 5
    seen: set[str] = set()
    for n, cell in enumerate(cells, 1):
        where = f"cell {n}"
        if not isinstance(cell, dict):
            errors.append(f"{where} is not an object")
            continue
        kind = cell.get("cell_type")
        if kind not in CELL_TYPES:
            errors.append(f"{where}: cell_type {kind!r} is not code, markdown or raw")
        src = cell.get("source")
        if not (
            isinstance(src, str) or (isinstance(src, list) and all(isinstance(s, str) for s in src))
        ):
            errors.append(f"{where}: source is not a string or a list of strings")
        if not isinstance(cell.get("metadata"), dict):
            errors.append(f"{where}: metadata is missing or not an object")
        cid = cell.get("id")
        if cid is not None or needs_ids:
            if not isinstance(cid, str) or not _ID_RE.match(cid):
                errors.append(f"{where}: id {cid!r} is missing or not a valid cell id")
            elif cid in seen:
                errors.append(f"{where}: id {cid!r} is used by another cell too")
            else:
                seen.add(cid)
        if kind == "code":
            if not isinstance(cell.get("outputs"), list):
                errors.append(f"{where}: a code cell needs an outputs list")
            else:
                for output in cell["outputs"]:
                    kind_out = output.get("output_type") if isinstance(output, dict) else None
                    if kind_out not in OUTPUT_TYPES:
                        errors.append(f"{where}: output_type {kind_out!r} is unknown")
            count = cell.get("execution_count", None)
            if "execution_count" not in cell or not (
                count is None or (isinstance(count, int) and not isinstance(count, bool))
            ):
                errors.append(f"{where}: execution_count is missing or not an integer or null")
        elif "outputs" in cell or "execution_count" in cell:
            errors.append(f"{where}: a {kind} cell cannot have outputs or an execution_count")
    return errors


def nbformat_error(nb: dict[str, Any]) -> str | None:
    """``nbformat.validate``'s complaint about ``nb``, ``None`` when valid or when nbformat
    is not installed (the structural checks then stand alone)."""
    from ..control.imports import load

    try:
        load("nbformat")  # the installed one, never a workspace's nbformat.py
        import nbformat
        from nbformat import ValidationError
    except ImportError:  # not installed (a workspace's stand-in raises ShadowedModuleError)
        return None
    with warnings.catch_warnings():
        # nbformat warns (instead of failing) about things like missing ids; the structural
        # checks report those clearly, and warnings must not leak into the agent's process
        warnings.simplefilter("ignore")
        try:
            nbformat.validate(nb, version=4)
        except ValidationError as exc:
            message = str(getattr(exc, "message", exc)).splitlines()[0]
            path = "/".join(str(p) for p in getattr(exc, "absolute_path", ()) or ())
            return f"{message} (at {path})" if path else message
        except Exception as exc:  # a schema the installed nbformat does not know, say
            return f"{type(exc).__name__}: {exc}"
    return None


def validation_problems(nb: dict[str, Any]) -> list[str]:
    errors = structural_errors(nb)
    if not errors:
        problem = nbformat_error(nb)
        if problem:
            errors.append(f"nbformat: {problem}")
    return errors


def _indent_of(text: str) -> int:
    """The indent the file uses (nbformat writes 1); 1 when it cannot tell."""
    match = re.search(r"\n( +)\"", text[:2000])
    return len(match.group(1)) if match else 1


def dump_notebook(
    nb: dict[str, Any], indent: int = 1, newline: bool = True, ascii_only: bool = False
) -> bytes:
    """nbformat's layout: ``indent`` spaces, keys in the order they have (a notebook saved by
    Jupyter has them sorted, and new cells are built sorted), non-ASCII kept as is unless
    ``ascii_only`` (a file written with ``\\u`` escapes keeps them)."""
    text = json.dumps(nb, indent=indent, ensure_ascii=ascii_only, separators=(",", ": "))
    return (text + ("\n" if newline else "")).encode("utf-8")


# -- the model's view ------------------------------------------------------------------------------


def image_size(mime: str, data: Any) -> tuple[int, int] | None:
    """Width and height of a base64 PNG, JPEG or GIF from its header, ``None`` if unknown."""
    if isinstance(data, list):
        data = "".join(data)
    if not isinstance(data, str):
        return None
    try:
        if mime == "image/png":
            raw = base64.b64decode(re.sub(r"\s+", "", data)[:64] + "==", validate=False)
            if raw[:8] == b"\x89PNG\r\n\x1a\n" and raw[12:16] == b"IHDR":
                width, height = struct.unpack(">II", raw[16:24])
                return width, height
            return None
        if mime == "image/gif":
            raw = base64.b64decode(re.sub(r"\s+", "", data)[:16] + "==", validate=False)
            if raw[:3] == b"GIF":
                width, height = struct.unpack("<HH", raw[6:10])
                return width, height
            return None
        if mime == "image/jpeg":
            return _jpeg_size(base64.b64decode(re.sub(r"\s+", "", data), validate=False))
    except (binascii.Error, ValueError, struct.error):
        return None
    return None


def header_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from the first bytes of a PNG, GIF, JPEG or WebP image, else
    ``None`` — no image library needed (also the MCP results' images)."""
    try:
        if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
            w, h = struct.unpack(">II", data[16:24])
            return int(w), int(h)
        if data[:6] in (b"GIF87a", b"GIF89a"):
            w, h = struct.unpack("<HH", data[6:10])
            return int(w), int(h)
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            return _webp_size(data)
        if data[:2] == b"\xff\xd8":
            return _jpeg_size(data)
    except (struct.error, IndexError):
        return None
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 ":
        w, h = struct.unpack("<HH", data[26:30])
        return int(w) & 0x3FFF, int(h) & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        return width, int.from_bytes(data[27:30], "little") + 1
    return None


def _jpeg_size(raw: bytes) -> tuple[int, int] | None:
    """Walk the JPEG markers to the first start-of-frame, which holds the size."""
    if raw[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 9 < len(raw):
        if raw[i] != 0xFF:
            i += 1
            continue
        marker = raw[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        (length,) = struct.unpack(">H", raw[i + 2 : i + 4])
        # SOF0..SOF15, except DHT (C4), JPG (C8) and DAC (CC)
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", raw[i + 5 : i + 9])
            return width, height
        i += 2 + length
    return None


def _size_text(n: int) -> str:
    return (
        f"{n} B" if n < 1024 else f"{n / 1024:.1f} KB" if n < 1024**2 else f"{n / 1024**2:.1f} MB"
    )


def _clip(text: str) -> str:
    """Cut an output's text: at most MAX_OUTPUT_LINES lines and MAX_OUTPUT_CHARS characters,
    keeping head and tail (the end of a log is where the error is)."""
    text = _ANSI_RE.sub("", text).rstrip("\n")
    lines = text.split("\n")
    if len(lines) > MAX_OUTPUT_LINES:
        head, tail = lines[: MAX_OUTPUT_LINES - 10], lines[-10:]
        hidden = len(lines) - len(head) - len(tail)
        text = "\n".join([*head, f"… [{hidden} more lines]", *tail])
    if len(text) > MAX_OUTPUT_CHARS:
        keep = MAX_OUTPUT_CHARS // 2
        text = f"{text[:keep]}… [{len(text) - 2 * keep} more characters] …{text[-keep:]}"
    return text


def _data_text(mime: str, value: Any) -> str:
    if isinstance(value, list):
        return "".join(v if isinstance(v, str) else str(v) for v in value)
    return value if isinstance(value, str) else ""


def _summarise_bundle(data: dict[str, Any]) -> list[str]:
    """One rich output (``display_data`` / ``execute_result``): images as their size, the
    plain text when there is one, other types by name and size."""
    parts: list[str] = []
    for mime in sorted(data):
        if mime.startswith("image/") and mime != "image/svg+xml":
            size = image_size(mime, data[mime])
            shape = f" {size[0]}×{size[1]}" if size else ""
            raw_len = len(_data_text(mime, data[mime])) * 3 // 4
            parts.append(f"[{mime}{shape}]" if size else f"[{mime} {_size_text(raw_len)}]")
    if "text/plain" in data:
        parts.append(_clip(_data_text("text/plain", data["text/plain"])))
    elif "text/markdown" in data:
        parts.append(_clip(_data_text("text/markdown", data["text/markdown"])))
    for mime in sorted(data):
        if mime.startswith("image/") and mime != "image/svg+xml":
            continue
        if mime in ("text/plain", "text/markdown"):
            continue
        if mime == "application/vnd.jupyter.widget-view+json":
            parts.append("[widget]")
            continue
        value = data[mime]
        if not isinstance(value, str | list):
            length = len(json.dumps(value))
        elif mime.startswith("text/") or mime.endswith(("json", "+xml", "javascript")):
            length = len(_data_text(mime, value))
        else:  # binary, stored as base64
            length = len(_data_text(mime, value)) * 3 // 4
        parts.append(f"[{mime} {_size_text(length)}]")
    return parts


def summarise_output(output: Any) -> str:
    if not isinstance(output, dict):
        return "[unreadable output]"
    kind = output.get("output_type")
    if kind == "stream":
        name = output.get("name", "stdout")
        text = _clip(_data_text("", output.get("text", "")))
        return f"[{name}] {text}" if "\n" not in text else f"[{name}]\n{text}"
    if kind == "error":
        line = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}".rstrip(": ")
        return "[error] " + _clip(_ANSI_RE.sub("", line))
    if kind in ("display_data", "execute_result"):
        data = output.get("data")
        parts = _summarise_bundle(data) if isinstance(data, dict) else []
        label = "[out]" if kind == "execute_result" else "[display]"
        body = "\n".join(parts) if parts else "(empty)"
        return f"{label} {body}" if "\n" not in body else f"{label}\n{body}"
    return f"[{kind} output]"


def _cell_header(number: int, cell: dict[str, Any]) -> str:
    kind = cell.get("cell_type", "?")
    cid = cell.get("id")
    parts = [f"cell {number}"]
    parts.append(f"id {cid}" if isinstance(cid, str) else "no id")
    parts.append(str(kind))
    if kind == "code":
        count = cell.get("execution_count")
        parts.append(f"In [{count if count is not None else ' '}]")
    return "── " + " · ".join(parts) + " ──"


def _render_cell(number: int, cell: Any, outputs: bool) -> list[str]:
    if not isinstance(cell, dict):
        return [f"── cell {number} · not a cell ({type(cell).__name__}) ──"]
    lines = [_cell_header(number, cell)]
    src = source_text(cell)
    lines.append(src if src else "(empty)")
    attachments = cell.get("attachments")
    if isinstance(attachments, dict) and attachments:
        for name, bundle in attachments.items():
            desc = _summarise_bundle(bundle) if isinstance(bundle, dict) else []
            lines.append(f"[attachment {name}: {' '.join(desc) or 'unreadable'}]")
    cell_outputs = cell.get("outputs") if cell.get("cell_type") == "code" else None
    if outputs and isinstance(cell_outputs, list) and cell_outputs:
        lines.append("── outputs ──")
        lines.extend(summarise_output(o) for o in cell_outputs)
    elif isinstance(cell_outputs, list) and cell_outputs:
        lines.append(f"({len(cell_outputs)} outputs not shown)")
    return lines


def render_notebook(
    nb: dict[str, Any],
    shown: str,
    *,
    offset: int = 1,
    limit: int | None = None,
    outputs: bool = True,
    max_chars: int = MAX_READ_CHARS,
) -> str:
    """The notebook as the model reads it: a header line, then each cell with a numbered
    header (``── cell 3 · id 9f1c2a7e · code · In [2] ──``), its source as written, and its
    outputs summarised. Past ``max_chars`` it stops at a cell boundary (at least one cell is
    shown) and says where to read on, rather than being cut mid-cell by the result limit."""
    cells = nb["cells"]
    total = len(cells)
    meta = nb.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    spec = meta.get("kernelspec")
    spec = spec if isinstance(spec, dict) else {}
    kernel = spec.get("display_name") or spec.get("name")
    head = f"{shown}: nbformat 4.{_minor(nb)}, {total} cell{'s' if total != 1 else ''}"
    if kernel:
        head += f", kernel {kernel}"
    start = min(offset - 1, total)
    end = total if limit is None else min(start + limit, total)
    body: list[str] = []
    size = 0
    for number in range(start + 1, end + 1):
        block = "\n".join(["", *_render_cell(number, cells[number - 1], outputs)])
        if body and size + len(block) > max_chars:
            end = number - 1
            break
        body.append(block)
        size += len(block)
    lines = [head]
    if (start, end) != (0, total):
        lines.append(f"showing cells {start + 1}-{end} of {total}" if end > start else "no cells")
    lines.extend(body)
    if end < total:
        lines.append("")
        lines.append(f"… {total - end} more cells (read on with offset={end + 1})")
    return "\n".join(lines)


# -- editing ---------------------------------------------------------------------------------------


@dataclass
class EditPlan:
    """One resolved edit: what happens to which cell, before anything is written."""

    action: str
    index: int  # where the cell is (replace/delete) or will be (insert), 0-based
    old: dict[str, Any] | None
    new: dict[str, Any] | None
    ids_added: int = 0  # cells of a 4.5+ notebook that had no (or a duplicate) id

    @property
    def number(self) -> int:
        return self.index + 1

    def describe(self) -> str:
        cell = self.new if self.new is not None else self.old or {}
        cid = cell.get("id")
        ident = f"id {cid}" if isinstance(cid, str) else "no id"
        verb = {"replace": "replaced", "insert": "inserted", "delete": "deleted"}[self.action]
        return f"cell {self.number} ({ident}, {cell.get('cell_type', '?')}) {verb}"


def _new_id(cells: list[Any]) -> str:
    taken = {c.get("id") for c in cells if isinstance(c, dict)}
    while True:
        cid = uuid.uuid4().hex[:8]  # nbformat's own format for new ids
        if cid not in taken:
            return cid


def _make_cell(kind: str, source: str, *, as_list: bool, cid: str | None) -> dict[str, Any]:
    """A new cell with nbformat's keys, in nbformat's (sorted) order."""
    cell: dict[str, Any] = {"cell_type": kind}
    if kind == "code":
        cell["execution_count"] = None
    if cid is not None:
        cell["id"] = cid
    cell["metadata"] = {}
    if kind == "code":
        cell["outputs"] = []
    cell["source"] = _split_lines(source) if as_list else source
    return cell


def _find_cell(cells: list[Any], cell_id: str | None, number: int | None, shown: str) -> int:
    if cell_id is not None and number is not None:
        raise ToolError("give either cell_id or cell_number, not both")
    if cell_id is not None:
        for i, cell in enumerate(cells):
            if isinstance(cell, dict) and cell.get("id") == cell_id:
                return i
        match = re.fullmatch(r"(?:cell[- ]?)?(\d+)", cell_id.strip())
        hint = f"; to address a cell by position use cell_number={match.group(1)}" if match else ""
        raise ToolError(f"no cell with id {cell_id!r} in '{shown}'{hint} (see notebook_read)")
    if number is not None:
        if not cells:
            raise ToolError(
                f"'{shown}' has no cells; to add one, insert without cell_id or cell_number"
            )
        if not 1 <= number <= len(cells):
            raise ToolError(
                f"'{shown}' has {len(cells)} cells; cell_number must be 1-{len(cells)}, "
                f"got {number}"
            )
        return number - 1
    raise ToolError("say which cell: cell_id (from notebook_read) or cell_number (1-based)")


def plan_edit(nb: dict[str, Any], args: JSON, shown: str) -> EditPlan:
    """Resolve an edit's arguments against ``nb`` and apply it to ``nb`` in memory."""
    action = optional_str(args, "action") or "replace"
    if action not in ACTIONS:
        raise ToolError(f"action must be one of {', '.join(ACTIONS)}, got {action!r}")
    cell_id = optional_str(args, "cell_id")
    number = optional_int(args, "cell_number", minimum=1)
    source = optional_str(args, "source")
    kind = optional_str(args, "cell_type")
    if kind is not None and kind not in CELL_TYPES:
        raise ToolError(f"cell_type must be code, markdown or raw, got {kind!r}")
    position = optional_str(args, "position") or "after"
    if position not in ("before", "after"):
        raise ToolError(f"position must be 'before' or 'after', got {position!r}")
    cells: list[Any] = nb["cells"]
    with_ids = _minor(nb) >= 5
    lists = not cells or any(
        isinstance(c, dict) and isinstance(c.get("source"), list) for c in cells
    )
    plan = _plan(action, cells, cell_id, number, source, kind, position, with_ids, lists, shown)
    if with_ids:
        plan.ids_added = _repair_ids(cells)
    return plan


def _repair_ids(cells: list[Any]) -> int:
    """Give every cell of a 4.5+ notebook a valid, unique id, as Jupyter does when it saves
    one; returns how many cells got a new id."""
    seen: set[str] = set()
    fixed = 0
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        cid = cell.get("id")
        if isinstance(cid, str) and _ID_RE.match(cid) and cid not in seen:
            seen.add(cid)
            continue
        cid = _new_id(cells)
        while cid in seen:
            cid = _new_id(cells)
        cell["id"] = cid
        # keep nbformat's sorted key order, so the cell serialises as Jupyter would write it
        items = sorted(cell.items())
        cell.clear()
        cell.update(items)
        seen.add(cid)
        fixed += 1
    return fixed


def _plan(
    action: str,
    cells: list[Any],
    cell_id: str | None,
    number: int | None,
    source: str | None,
    kind: str | None,
    position: str,
    with_ids: bool,
    lists: bool,
    shown: str,
) -> EditPlan:
    if action == "insert":
        if source is None:
            raise ToolError("insert needs 'source' (the new cell's text)")
        if cell_id is None and number is None:
            index = len(cells) if position == "after" else 0
        else:
            anchor = _find_cell(cells, cell_id, number, shown)
            index = anchor + 1 if position == "after" else anchor
        new = _make_cell(
            kind or "code", source, as_list=lists, cid=_new_id(cells) if with_ids else None
        )
        cells.insert(index, new)
        return EditPlan("insert", index, None, new)

    index = _find_cell(cells, cell_id, number, shown)
    old = cells[index]
    if not isinstance(old, dict):
        raise ToolError(f"cell {index + 1} of '{shown}' is not a cell object; cannot edit it")
    if action == "delete":
        del cells[index]
        return EditPlan("delete", index, old, None)

    if source is None and kind is None:
        raise ToolError("replace needs 'source' and/or 'cell_type'")
    new_kind = kind or old.get("cell_type", "code")
    new_source = source if source is not None else source_text(old)
    as_list = isinstance(old.get("source"), list)
    cid = old.get("id") if isinstance(old.get("id"), str) else None
    new = _make_cell(new_kind, new_source, as_list=as_list, cid=cid)
    # keep what belongs to the cell, not to its old source: metadata (tags, collapsed
    # state, slide type) and attachments its Markdown may still refer to
    new["metadata"] = old.get("metadata") if isinstance(old.get("metadata"), dict) else {}
    if new_kind != "code":
        new["metadata"] = {
            k: v
            for k, v in new["metadata"].items()
            if k not in ("execution", "collapsed", "scrolled")
        }
    if isinstance(old.get("attachments"), dict) and new_kind in ("markdown", "raw"):
        new["attachments"] = old["attachments"]
    new = {k: new[k] for k in sorted(new)}
    extra = {k: v for k, v in old.items() if k not in new and k not in _CELL_KEYS}
    new.update(extra)  # unknown keys another tool put there travel with the cell
    cells[index] = new
    return EditPlan("replace", index, old, new)


_CELL_KEYS = frozenset(
    {"cell_type", "execution_count", "id", "metadata", "outputs", "source", "attachments"}
)


def _preview_summary(plan: EditPlan) -> str:
    """One line for the approval card: ``cell 3 (id 9f1c2a7e, code) replaced; its 2 outputs
    are cleared``."""
    parts = [plan.describe()]
    old_kind = plan.old.get("cell_type") if plan.old else None
    new_kind = plan.new.get("cell_type") if plan.new else None
    if old_kind and new_kind and old_kind != new_kind:
        parts.append(f"type {old_kind} → {new_kind}")
    if plan.action == "replace" and plan.old is not None and plan.old.get("outputs"):
        parts.append(f"its {len(plan.old['outputs'])} outputs are cleared")
    if plan.action == "replace" and plan.old is not None and plan.new is not None:
        if source_text(plan.old) == source_text(plan.new):
            parts.append("source unchanged")
    return "; ".join(parts)


def cell_diff(plan: EditPlan) -> str:
    """The change as a person reviews it: the cell's number, id and type, then its source as
    a diff with line numbers (old source → new source). Never the JSON."""
    before = source_text(plan.old) if plan.old is not None else ""
    after = source_text(plan.new) if plan.new is not None else ""
    lines = [plan.describe()]
    old_kind = plan.old.get("cell_type") if plan.old else None
    new_kind = plan.new.get("cell_type") if plan.new else None
    if old_kind and new_kind and old_kind != new_kind:
        lines.append(f"type: {old_kind} → {new_kind}")
    if plan.action == "insert":
        before = ""
    diff = render_diff(before, after) if before != after else ""
    if plan.action == "replace" and plan.old is not None and plan.old.get("outputs"):
        lines.append(f"(its {len(plan.old['outputs'])} outputs are cleared)")
    if diff:
        lines.append(diff)
    elif plan.action == "replace":
        lines.append("(source unchanged)")
    return "\n".join(lines)


# -- the tools -------------------------------------------------------------------------------------


def _read(
    target: Path, shown: str, hash_limit: int | None = None
) -> tuple[bytes, FileStamp | None]:
    """The notebook's bytes, from a regular file only (a FIFO or a device is refused before it
    is opened: :func:`~clawnb.tools.base.open_regular`), and — with ``hash_limit`` — the
    read-before-edit stamp of exactly those bytes, taken from the same handle."""
    try:
        with open_regular(target, shown) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_READ_BYTES:
                raise ToolError(f"'{shown}' is {_size_text(size)}; too large to open as a notebook")
            data = fh.read(MAX_READ_BYTES + 1)
            if len(data) > MAX_READ_BYTES:  # grew since fstat
                raise ToolError(f"'{shown}' is too large to open as a notebook")
            stamp = FileStamp.of(fh, data, limit=hash_limit) if hash_limit is not None else None
        return data, stamp
    except FileNotFoundError:
        raise ToolError(f"'{shown}' does not exist") from None
    except OSError as exc:
        raise ToolError(f"failed to read '{shown}': {exc.strerror or exc}") from None


def _require_notebook(path: str) -> None:
    if not is_notebook_path(path):
        raise ToolError(f"'{path}' is not a .ipynb file; use read/edit for other files")


class NotebookReadTool(FileTool):
    """Show a notebook cell by cell (see the module docstring)."""

    traits = ToolTraits(read_only=True)

    definition = (
        ToolDefinition(
            "notebook_read",
            "Read a Jupyter notebook (.ipynb) cell by cell: each cell's number, id, type "
            "and source, with outputs summarised (long text cut, images as their size, "
            "errors as the exception line). Use this instead of read for notebooks.",
        )
        .param("path", "string", "The .ipynb file to read", required=True)
        .param("offset", "integer", "First cell to show (1-based, default 1)")
        .param("limit", "integer", "How many cells to show (default all)")
        .param("outputs", "boolean", "Include the outputs' summaries (default true)")
    )

    async def call(self, args: JSON) -> str:
        path = require_str(args, "path")
        _require_notebook(path)
        offset = optional_int(args, "offset", minimum=1) or 1
        limit = optional_int(args, "limit", minimum=0)
        show_outputs = args.get("outputs", True) if isinstance(args, dict) else True
        if not isinstance(show_outputs, bool):
            raise ToolError(f"'outputs' must be true or false, got {show_outputs!r}")
        target = _resolve_path(path, self.workspace)
        return await asyncio.to_thread(self._read, path, target, offset, limit, show_outputs)

    def _read(self, shown: str, target: Path, offset: int, limit: int | None, outputs: bool) -> str:
        state = self.file_state
        data, stamp = _read(target, shown, state.max_hash_bytes if state is not None else None)
        nb = load_notebook(data, shown)
        text = render_notebook(nb, shown, offset=offset, limit=limit, outputs=outputs)
        problems = structural_errors(nb)
        if problems:
            text += "\n\nwarning: this notebook is not valid nbformat: " + "; ".join(problems[:3])
        # the stamp of the very bytes shown: a change after the read is a change since it
        if state is not None and stamp is not None:
            state.remember(target, stamp)
        return text


class NotebookEditTool(FileTool):
    """Replace, insert or delete one cell of a notebook (see the module docstring)."""

    definition = (
        ToolDefinition(
            "notebook_edit",
            "Change one cell of a Jupyter notebook (.ipynb): replace its source and/or "
            "type, insert a new cell before/after another, or delete it. Other cells, "
            "ids, metadata and outputs are kept; the edited cell's outputs are cleared. "
            "Read the notebook with notebook_read first. Inserting into a path that does "
            "not exist creates a new notebook.",
        )
        .param("path", "string", "The .ipynb file to edit", required=True)
        .param_raw(
            "action",
            {
                "type": "string",
                "enum": list(ACTIONS),
                "description": "replace (default), insert or delete",
            },
        )
        .param("cell_id", "string", "The target cell's id, as notebook_read shows it")
        .param(
            "cell_number", "integer", "The target cell's number (1-based), for cells without an id"
        )
        .param("source", "string", "The cell's new source (replace, insert)")
        .param_raw(
            "cell_type",
            {
                "type": "string",
                "enum": list(CELL_TYPES),
                "description": "code, markdown or raw (insert: default code; replace: "
                "default unchanged)",
            },
        )
        .param_raw(
            "position",
            {
                "type": "string",
                "enum": ["after", "before"],
                "description": "insert: after (default) or before the target cell; with "
                "no target, at the end or the start",
            },
        )
    )

    def _target(self, path: str) -> Path:
        return real_target(_resolve_path(path, self.workspace))

    def _check_fresh(self, target: Path, shown: str, data: bytes | None = None) -> None:
        if self.file_state is None:
            return
        try:
            self.file_state.check_fresh(target, "editing", shown, data)
        except ToolError as exc:
            # point at the notebook reader, not at read's raw JSON
            raise ToolError(str(exc).replace("the read tool", "notebook_read")) from None

    def _plan(self, shown: str, target: Path, args: JSON) -> tuple[dict[str, Any], EditPlan, str]:
        """Load, check and apply in memory; returns (new notebook, plan, original text). The
        bytes loaded are the ones checked against what notebook_read showed (by content), so
        the edit a person approved is computed from the notebook the agent saw."""
        if target.exists():
            original, _ = _read(target, shown)
            self._check_fresh(target, shown, original)
            nb = load_notebook(original, shown)
            text = original.decode("utf-8-sig")
        else:
            if (optional_str(args, "action") or "replace") != "insert":
                raise ToolError(
                    f"'{shown}' does not exist; use action 'insert' to create a new notebook"
                )
            nb = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
            text = ""
        plan = plan_edit(nb, args, shown)
        return nb, plan, text

    async def preview(self, args: JSON) -> ChangePreview:
        """What the edit will do, checked against the file on disk but not written (the
        gate shows it on the approval card): the cell's number, id and type as the summary,
        its old source → new source as the diff. Never the JSON. Raises :class:`ToolError`
        for an edit that would fail, so such a call is never put to the user."""
        path = require_str(args, "path")
        _require_notebook(path)
        target = self._target(path)
        _nb, plan, text = await asyncio.to_thread(self._plan, path, target, args)

        before = source_text(plan.old) if plan.old is not None else ""
        after = source_text(plan.new) if plan.new is not None else ""
        return ChangePreview(
            path=path,
            kind="edit" if text else "create",
            summary=_preview_summary(plan),
            diff=render_diff(before, after, max_lines=PREVIEW_DIFF_LINES)
            if before != after
            else "",
            after=after,
            before=before if plan.old is not None else None,
        )

    async def call(self, args: JSON) -> str:
        path = require_str(args, "path")
        _require_notebook(path)
        target = self._target(path)
        return await asyncio.to_thread(self._edit, path, target, args)

    def _edit(self, shown: str, target: Path, args: JSON) -> str:
        nb, plan, text = self._plan(shown, target, args)
        problems = validation_problems(nb)
        new_problems = problems
        if problems and text:
            # a notebook that was already invalid stays editable: only what the edit broke
            # stops it (validating the original costs time, so only when needed)
            before = {
                _CELL_NO.sub("cell N", p)
                for p in validation_problems(load_notebook(text.encode("utf-8"), shown))
            }
            new_problems = [p for p in problems if _CELL_NO.sub("cell N", p) not in before]
        if new_problems:
            raise ToolError(
                f"the edit would leave '{shown}' invalid ({'; '.join(new_problems[:3])}); "
                "nothing was written"
            )
        data = dump_notebook(
            nb,
            _indent_of(text),
            newline=not text or text.endswith("\n"),
            ascii_only=bool(text) and text.isascii(),
        )
        if "\r\n" in text[:4096]:  # a notebook saved with Windows line ends keeps them
            data = data.replace(b"\n", b"\r\n")
        if not target.parent.exists():
            raise ToolError(f"failed to write '{shown}': its directory does not exist")
        try:
            atomic_write(target, data)
        except OSError as exc:
            raise ToolError(f"failed to write '{shown}': {exc.strerror or exc}") from None
        if self.file_state is not None:
            self.file_state.record(target, data)
        note = ""
        if plan.ids_added:
            note += (
                f"\n(gave {plan.ids_added} cell{'s' if plan.ids_added != 1 else ''} without a "
                f"unique id a new one, as nbformat 4.{_minor(nb)} requires)"
            )
        if problems:
            note += f"\n(note: the notebook was already invalid before: {'; '.join(problems[:2])})"
        return f"edited {shown}: {cell_diff(plan)}{note}"
