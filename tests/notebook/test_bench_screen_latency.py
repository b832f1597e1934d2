"""The screen-latency benchmark's prose workload measures what it claims: its passage renders
as Markdown to its own text, and a token counts as visible only once everything up to it is.

The benchmark itself (a real JupyterLab + Chromium, ~1 minute) is run by hand; these checks
guard the premises its MutationObserver relies on, so an edit of the passage cannot silently
turn the comparison into one that never matches or matches too early.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType

import mistune

from clawnb.notebook.html import answer_markdown

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_screen_latency.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_screen_latency", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def test_prose_tokens_are_the_passage_word_by_word() -> None:
    bench = _bench()
    tokens = bench.prose_tokens()
    assert "".join(tokens) == bench.PROSE.rstrip()
    assert len(tokens) >= 300
    assert all(len(token.split()) == 1 for token in tokens)


def test_prose_passage_renders_as_markdown_to_its_own_text() -> None:
    bench = _bench()
    # what the live view sends (rendered and sanitized, clawnb.notebook.sanitize) and what a
    # Markdown renderer makes of the passage are paragraphs of the same text, nothing else
    for html in (mistune.html(answer_markdown(bench.PROSE)), mistune.html(bench.PROSE)):
        parser = _Text()
        parser.feed(html)
        assert parser.tags <= {"div", "p"}
        assert bench.normalise(" ".join(parser.parts)) == bench.normalise(bench.PROSE)
    assert not re.search(r"[*_#`$<>\[\]|~\\&]", bench.PROSE)


def test_a_token_is_visible_only_once_the_text_up_to_it_is_shown() -> None:
    bench = _bench()
    tokens = ["From", " 2023", " on,", "\n\nthe", " model"]
    text, ends = bench.prefix_ends(tokens)
    assert text == "From 2023 on, the model"

    def visible(shown: str) -> int:  # what the page's observer counts
        shown = bench.normalise(shown)
        return sum(text[:end] in shown for end in ends)

    assert visible("◐ thinking 1s") == 0
    assert visible("From 202") == 1  # an end held back: token 1 is not shown yet
    assert visible("From 2023 on,") == 3
    # a paragraph break, rendered as separate paragraphs, reads as one space
    assert visible("From 2023 on,\nthe model\n1.2k tokens") == 5


def test_the_hold_back_count_follows_the_kernel_key() -> None:
    bench = _bench()
    tokens = [" read", " the", " 2023", " notes"]
    # one character that may start a key is shown at once ("the" with a key starting with
    # "e"); two wait: a key starting with "e0" has the hex form "6530…", "… 2065" may become it
    assert bench.held_by_rule(tokens, "e0000000-" + "0" * 24) == [False, False, False, False]
    later = [" read", " the", " 2065", " notes"]
    assert bench.held_by_rule(later, "e0" + "0" * 30) == [False, False, True, False]
    # a key starting with "7": hex "37…", so a text ending in "37" may still become it
    assert bench.held_by_rule(tokens, "70000000-" + "0" * 24) == [False, False, False, False]
