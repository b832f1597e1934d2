"""A corpus of typical learner bugs, each put into the chapter's solution notebook and run
through ``check()`` as the notebook would: the report is never green, names the test that
caught the bug, says what was expected and what came back (or that it timed out), and the
whole check finishes within its time limit. The learner-trial table in docs/course.md is this
corpus."""

import gc
import re
import time

import pytest
from learner import BUGS, learner_objects

from clawnb.course import check


# A learner's bug may leave a thread blocked in a command or a process running after check()
# moved on (that is what it is tested for); what they report when they end, at whatever
# moment, is not this test's failure.
@pytest.mark.filterwarnings(
    "ignore::ResourceWarning",
    "ignore::pytest.PytestUnraisableExceptionWarning",
    "ignore::pytest.PytestUnhandledThreadExceptionWarning",
)
@pytest.mark.parametrize("bug", BUGS, ids=[b.id for b in BUGS])
def test_a_typical_bug_is_caught_named_and_explained(bug):
    objects = learner_objects(bug.notebook, [(bug.old, bug.new), *bug.extra])
    start = time.monotonic()
    report = check(bug.chapter, timeout=bug.limit, verbose=False, **objects)
    elapsed = time.monotonic() - start
    gc.collect()  # what the bug left behind is collected here, under the filters above
    text = str(report)
    assert not report.ok, text
    assert "test result: FAILED." in text
    if bug.fails.startswith("stub "):
        assert f"{bug.fails} ... FAILED (still the exercise stub" in text
        return
    assert re.search(rf"test {bug.fails} \.\.\. (FAILED|TIMED OUT)", text), text
    sections = text.split("\n---- ")[1:]
    # its own section, or the first of the failures it is folded into ("the same failure in")
    folded = rf"\(the same failure in \d+ more: (.*, )?{bug.fails}(,|\))"
    section = next(s for s in sections if s.startswith(f"{bug.fails} ----") or re.search(folded, s))
    # an exception still says what the test expected, and what came instead
    explained = ("expected:" in section and "actual:" in section) or "timed out after" in section
    assert explained, section
    assert "in the test (" in section and "-> " in section, section
    assert "the rule: notebooks/exercises/" in section, section
    assert f"notebooks/exercises/{bug.notebook}_" in section, section  # the chapter's own
    looping = text.count("TIMED OUT")
    assert elapsed < 5 + bug.slower + looping * (bug.limit + 1), elapsed


def test_the_corpus_spans_enough_bugs_and_chapters():
    assert len(BUGS) >= 15
    assert len({b.chapter for b in BUGS}) >= 8


def test_a_misspelt_keyword_is_refused_not_silently_replaced_by_clawnbs():
    objects = learner_objects("09", [])
    with pytest.raises(TypeError, match="Did you mean 'ReadTool'"):
        check("ch09", ReadTol=objects["ReadTool"], verbose=False)


def test_the_unchanged_solutions_pass_the_same_way():
    # The harness itself is sound: without a bug, the same path is green.
    for notebook in sorted({b.notebook for b in BUGS}):
        objects = learner_objects(notebook, [])
        chapter = next(b.chapter for b in BUGS if b.notebook == notebook)
        assert check(chapter, verbose=False, **objects).ok, notebook
