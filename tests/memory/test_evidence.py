"""Issue 25 item 5 — memory that knows its evidence: a memory learnt from a file, or from one
cell of a notebook, records the path (the cell id) and a content hash; when that evidence
changes or goes, the memory is shown to the model as possibly stale and ``/memory`` marks it."""

from __future__ import annotations

import json
from pathlib import Path

from clawnb.config import Config
from clawnb.memory.store import MemoryStore, content_hash, project_memory_dir
from clawnb.session.assemble import build_agent
from tests.memory.conftest import MemoryModel, ops

SCHEMA = "id column: key\ndates: ISO 8601\n"


def _notebook(cells: list[tuple[str, str]]) -> str:
    return json.dumps(
        {
            "cells": [
                {"id": ident, "cell_type": "code", "source": [src], "metadata": {}}
                for ident, src in cells
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def _session(ws: Path, model: MemoryModel):
    return build_agent(
        Config(memory="on"), workspace=ws, provider=model, subagents=False, skills=False
    )


async def _learn(ws: Path, *operations: dict) -> None:
    session = _session(ws, MemoryModel([ops(*operations)]))
    await session.send("learn from the files")
    await session.memory_settled()
    session.close()


async def test_a_memory_learnt_from_a_file_goes_stale_when_the_file_changes(trusted_ws):
    (trusted_ws / "schema.md").write_text(SCHEMA)
    await _learn(
        trusted_ws,
        {
            "op": "create",
            "name": "id column",
            "description": "the id column is 'key'",
            "type": "project",
            "file": "schema.md",
        },
    )
    store = MemoryStore(project_memory_dir(trusted_ws))
    memory = store.get("id column")
    assert memory is not None
    assert memory.evidence_path == "schema.md"
    assert memory.evidence_hash == content_hash(SCHEMA.encode())
    assert "evidence: schema.md sha256:" in (store.root / "id-column.md").read_text()

    fresh = _session(trusted_ws, MemoryModel())
    assert "[id column](id-column.md)" in fresh.system_prompt
    assert "Possibly stale" not in fresh.system_prompt
    listing = await fresh.command("/memory")
    assert listing is not None and "possibly stale" not in listing
    fresh.close()

    (trusted_ws / "schema.md").write_text(SCHEMA.replace("key", "uid"))
    later = _session(trusted_ws, MemoryModel())
    assert (
        "Possibly stale (the file it was learnt from changed since): id column"
        in later.system_prompt
    )
    listing = await later.command("/memory")
    assert listing is not None and "id column [project] (possibly stale)" in listing
    shown = await later.command("/memory show 'id column'")
    assert shown is not None and "possibly stale" in shown
    later.close()
    (trusted_ws / "schema.md").unlink()  # gone is stale too
    gone = _session(trusted_ws, MemoryModel())
    assert "Possibly stale" in gone.system_prompt
    gone.close()


async def test_a_memory_learnt_from_a_notebook_cell_follows_that_cell_only(trusted_ws):
    book = trusted_ws / "analysis.ipynb"
    book.write_text(_notebook([("load", "df = load('a.csv')"), ("plot", "df.plot()")]))
    await _learn(
        trusted_ws,
        {
            "op": "create",
            "name": "data file",
            "description": "the data is loaded from a.csv",
            "type": "project",
            "file": "analysis.ipynb",
            "cell": "load",
        },
    )
    store = MemoryStore(project_memory_dir(trusted_ws))
    memory = store.get("data file")
    assert memory is not None
    assert (memory.evidence_path, memory.evidence_cell) == ("analysis.ipynb", "load")
    assert memory.evidence_hash == content_hash(b"df = load('a.csv')")
    # another cell changes: still fresh
    book.write_text(_notebook([("load", "df = load('a.csv')"), ("plot", "df.hist()")]))
    session = _session(trusted_ws, MemoryModel())
    assert "Possibly stale" not in session.system_prompt
    session.close()
    # its own cell changes: possibly stale
    book.write_text(_notebook([("load", "df = load('b.csv')"), ("plot", "df.hist()")]))
    session = _session(trusted_ws, MemoryModel())
    assert "Possibly stale (the file it was learnt from changed since): data file" in (
        session.system_prompt
    )
    session.close()


async def test_evidence_outside_the_workspace_is_not_recorded(trusted_ws, tmp_path):
    (tmp_path / "elsewhere.txt").write_text("x")
    await _learn(
        trusted_ws,
        {
            "op": "create",
            "name": "outside",
            "description": "something",
            "type": "project",
            "file": str(tmp_path / "elsewhere.txt"),
        },
    )
    memory = MemoryStore(project_memory_dir(trusted_ws)).get("outside")
    assert memory is not None and memory.evidence_path == ""
