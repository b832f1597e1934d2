"""Chapter 24: tool results that fit — a long result saved whole, a preview in its place,
pages read back. Not a book test file: the book's tools return everything."""

from __future__ import annotations

import re

from ._suite import Suite

suite = Suite("result_store", "ResultStore", chapters=["ch24"])

NOTE = re.compile(r"^\[lines \d+-\d+ of \d+; the next page starts at offset \d+\]$", re.M)


def _log(lines: int) -> str:
    """A long, numbered output, so each part of it can be recognised."""
    return "".join(f"line {n:04}: {'x' * (n % 50)}\n" for n in range(1, lines + 1))


def _saved(tmp):
    return [p for p in tmp.rglob("*") if p.is_file()]


@suite.test
def test_result_store_a_short_result_passes_unchanged(impl, tmp):
    store = impl.ResultStore(tmp / "results", max_chars=4000)
    text = _log(40)[:3999]
    assert store.fit("c1", text) == text
    assert _saved(tmp) == []


@suite.test
def test_result_store_a_long_result_is_saved_whole_and_costs_only_its_preview(impl, tmp):
    # The model's copy is about head + tail + a note, whatever the size of the output; the
    # file holds every character of it.
    store = impl.ResultStore(tmp / "results", max_chars=4000, head=1200, tail=400)
    text = _log(5000)
    shown = store.fit("c1", text)
    assert len(shown) < 1200 + 400 + 500
    files = _saved(tmp)
    assert len(files) == 1
    assert files[0].read_text() == text


@suite.test
def test_result_store_preview_has_head_tail_path_and_size(impl, tmp):
    # What the model needs to decide what to read next: how big it is, where it is, how it
    # begins and how it ends (an error is often in the last lines).
    store = impl.ResultStore(tmp / "results", max_chars=4000, head=1200, tail=400)
    text = _log(5000)
    shown = store.fit("c1", text)
    path = _saved(tmp)[0]
    assert str(path) in shown
    assert f"{len(text):,} chars" in shown
    assert "5,000 lines" in shown
    assert text[:1200] in shown
    assert text[-400:] in shown
    assert "line 2500:" not in shown


@suite.test
def test_result_store_pages_read_the_whole_file_back(impl, tmp):
    # Pages count lines from 1, as the read tool's offset does; each page ends with a line
    # saying where the next one starts, the last one with none. Put together without those
    # lines, the pages are the file.
    store = impl.ResultStore(tmp / "results", max_chars=4000)
    text = _log(250)
    store.fit("c1", text)
    path = _saved(tmp)[0]
    first = store.page(path, 1, 100)
    assert first.splitlines()[0] == "line 0001: x"
    assert first.splitlines()[-1] == "[lines 1-100 of 250; the next page starts at offset 101]"
    pages = [store.page(path, offset, 100) for offset in (1, 101, 201)]
    assert NOTE.sub("", pages[2]) == pages[2]  # the last page says nothing more
    assert "".join(NOTE.sub("", page) for page in pages) == text
    assert store.page(path, 120, 3) == "".join(text.splitlines(keepends=True)[119:122]) + (
        "[lines 120-122 of 250; the next page starts at offset 123]"
    )


@suite.test
def test_result_store_page_past_the_end_says_so(impl, tmp):
    store = impl.ResultStore(tmp / "results", max_chars=4000)
    store.fit("c1", _log(250))
    said = store.page(_saved(tmp)[0], 400, 100)
    assert "250 lines" in said


@suite.test
def test_result_store_a_call_id_cannot_leave_the_folder(impl, tmp):
    # The call's id comes from the model: as a file name it is only a name, never a path.
    folder = tmp / "session" / "results"
    store = impl.ResultStore(folder, max_chars=4000)
    store.fit("../../escape", _log(2000))
    assert [p.parent for p in _saved(tmp)] == [folder]
    store.fit("a/b", _log(2000))  # a folder inside it is no better
    assert [p.parent for p in _saved(tmp)] == [folder, folder]
