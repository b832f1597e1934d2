"""Tokens sent to the model to change one cell of a 2 MB notebook with images: the notebook
tools vs read/edit of the raw JSON.

A notebook of ~2 MB is built the way plotting notebooks grow: code cells with PNG figures
(incompressible pixels, base64 in the JSON), stdout logs and a few Markdown cells. The task
is the same for both: change the source of one code cell in the middle. Each strategy runs
the real tools on its own copy of the notebook and counts what the model receives and sends
back:

* **notebook tools**: ``notebook_read`` (every cell, outputs summarised), then
  ``notebook_edit`` with the cell id and the new source;
* **raw JSON**: ``read`` of the whole file, then ``edit`` with the cell's JSON lines as
  ``old_string`` and the rewritten lines as ``new_string`` (the minimum a model must retype).
  The result limiter the agent normally applies (50,000 characters, head and tail) is left
  out: with it the model would not even see the cell and would need more calls.

Tokens are estimated as characters / 4 (clawnb's own estimate). Base64 tokenises worse than
that (about 1.3–1.5 characters per token with GPT-style tokenisers), so the raw figure is an
underestimate and the ratio favours the raw strategy. Both results are checked: the same
cell changed, the notebook still valid. The last line is the ratio (goal ≤ 0.05).

    python benchmarks/bench_notebook_edit.py [--megabytes 2]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import random
import struct
import tempfile
import zlib
from pathlib import Path

from clawnb.tools import FileState
from clawnb.tools.edit import EditTool
from clawnb.tools.ipynb import NotebookEditTool, NotebookReadTool
from clawnb.tools.read import ReadTool


def png(width: int, height: int, rng: random.Random) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + rng.randbytes(3 * width) for _ in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(rows, 1))
        + chunk(b"IEND", b"")
    )


def build_notebook(megabytes: float, seed: int = 7) -> dict:
    rng = random.Random(seed)
    cells: list[dict] = []
    size = 0
    n = 0
    while size < megabytes * 1024 * 1024:
        n += 1
        cells.append(
            {
                "cell_type": "markdown",
                "id": f"md{n:04d}",
                "metadata": {},
                "source": [f"## Figure {n}\n", "\n", "Distribution of the measurements.\n"],
            }
        )
        image = base64.b64encode(png(160, 120, rng)).decode()
        log = "".join(f"epoch {i}: loss={rng.random():.4f}\n" for i in range(40))
        cells.append(
            {
                "cell_type": "code",
                "execution_count": n,
                "id": f"code{n:04d}",
                "metadata": {},
                "outputs": [
                    {"name": "stdout", "output_type": "stream", "text": log.splitlines(True)},
                    {
                        "data": {
                            "image/png": image,
                            "text/plain": ["<Figure size 640x480 with 1 Axes>"],
                        },
                        "metadata": {},
                        "output_type": "display_data",
                    },
                ],
                "source": [
                    "fig, ax = plt.subplots()\n",
                    f"ax.hist(data[{n}], bins=30)\n",
                    f"ax.set_title('figure {n}')\n",
                    "plt.show()",
                ],
            }
        )
        size += len(image) + len(log) + 400
    return {
        "cells": cells,
        "metadata": {"kernelspec": {"display_name": "Python 3", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def tokens(text: str) -> int:
    return (len(text) + 3) // 4


async def with_notebook_tools(path: Path, cell_id: str, new_source: str) -> int:
    state = FileState()
    read, edit = NotebookReadTool(path.parent, state), NotebookEditTool(path.parent, state)
    shown = await read.call({"path": path.name})
    args = {"path": path.name, "cell_id": cell_id, "source": new_source}
    result = await edit.call(args)
    return tokens(shown) + tokens(json.dumps(args)) + tokens(result)


async def with_raw_json(path: Path, cell_id: str, new_source: str) -> int:
    state = FileState()
    read, edit = ReadTool(path.parent, state), EditTool(path.parent, state)
    shown = await read.call({"path": path.name})
    # the cell's "source" lines as they stand in the file, and the same lines rewritten
    nb = json.loads(shown)
    cell = next(c for c in nb["cells"] if c.get("id") == cell_id)
    indent = " " * 4
    old = ",\n".join(indent + json.dumps(line, ensure_ascii=False) for line in cell["source"])
    lines = new_source.splitlines(True)
    new = ",\n".join(indent + json.dumps(line, ensure_ascii=False) for line in lines)
    assert shown.count(old) == 1, "the cell's source lines are not unique in the file"
    args = {"path": path.name, "old_string": old, "new_string": new}
    # the edit tool refuses notebooks now; measure the raw strategy on a .json copy
    result = await edit.call(args)
    return tokens(shown) + tokens(json.dumps(args)) + tokens(result)


def changed_cells(before: dict, after: dict) -> list[int]:
    return [
        i
        for i, (a, b) in enumerate(zip(before["cells"], after["cells"], strict=True))
        if a["source"] != b["source"]
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=2.0)
    options = parser.parse_args()
    nb = build_notebook(options.megabytes)
    text = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    middle = nb["cells"][len(nb["cells"]) // 2 | 1]  # a code cell (cells alternate)
    cell_id = middle["id"]
    new_source = "fig, ax = plt.subplots()\nax.hist(data[0], bins=50, density=True)\nplt.show()"
    with tempfile.TemporaryDirectory() as tmp:
        a = Path(tmp) / "figures.ipynb"
        b = Path(tmp) / "figures_raw.json"  # edit refuses .ipynb: same bytes, other name
        a.write_text(text, encoding="utf-8")
        b.write_text(text, encoding="utf-8")
        size = os.path.getsize(a)
        nb_tokens = await with_notebook_tools(a, cell_id, new_source)
        raw_tokens = await with_raw_json(b, cell_id, new_source)
        after_a = json.loads(a.read_text(encoding="utf-8"))
        after_b = json.loads(b.read_text(encoding="utf-8"))
        index = nb["cells"].index(middle)
        assert changed_cells(nb, after_a) == [index] == changed_cells(nb, after_b)
        try:
            import nbformat

            nbformat.validate(after_a)
            nbformat.validate(after_b)
            valid = "both validate with nbformat"
        except ImportError:
            valid = "nbformat not installed: not validated"
    images = sum(1 for c in nb["cells"] if c["cell_type"] == "code")
    print(f"notebook: {size / 1024 / 1024:.2f} MB, {len(nb['cells'])} cells, {images} images")
    print(f"task: replace the source of cell {index + 1} (id {cell_id}); {valid}")
    print(f"notebook_read + notebook_edit: {nb_tokens:>9,} tokens")
    print(f"read + edit of the raw JSON:   {raw_tokens:>9,} tokens")
    print(f"ratio notebook tools / raw JSON: {nb_tokens / raw_tokens:.4f}")


if __name__ == "__main__":
    asyncio.run(main())
