"""The ch5 suites really check what a learner passes in (not only clawnb's own objects)."""

from __future__ import annotations

from clawnb.course import check


def test_broken_learner_parser_fails_the_chapter():
    report = check("ch05a", parse_sse_line=lambda line: None, verbose=False)
    failed = {r.name for r in report.results if r.status != "ok"}
    assert "test_streaming_parse_text_delta" in failed
    assert "test_streaming_parse_done" in failed
    assert "test_streaming_parse_non_data_lines" not in failed


def test_learner_provider_without_base_url_fails_the_stream_tests():
    class NoBuilder:
        def __init__(self, api_key=None, model=None):
            pass

    report = check("openrouter", OpenRouterProvider=NoBuilder, verbose=False)
    failed = {r.name for r in report.results if r.status != "ok"}
    assert "test_openrouter_base_url" in failed
    assert "test_openrouter_chat_mock_server" in failed


def test_chapter_table_lists_the_streaming_suites():
    from clawnb.course import chapters

    table = chapters()
    assert "streaming" in table["ch05a"]
    assert {"streaming", "openrouter"} <= set(table["ch05b"])
