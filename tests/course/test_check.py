"""What a learner sees from ``check()``: failures that explain, a time limit, an interrupt that
works in a real kernel, and a report that only counts what ran the learner's own code."""

import time

import pytest

import clawnb
from clawnb.course import check
from clawnb.course._suite import is_stub


class RetryForever(clawnb.MockProvider):
    """A provider whose learner 'fixed' running out of responses by trying again, forever."""

    async def chat(self, messages, tools):
        while True:
            try:
                return await super().chat(messages, tools)
            except Exception:
                continue


class SpinForever(clawnb.MockProvider):
    """A provider that loops without ever awaiting (nothing to cancel)."""

    async def chat(self, messages, tools):
        while True:
            pass


class EmptyIsNone(clawnb.MockProvider):
    async def chat(self, messages, tools):
        turn = await super().chat(messages, tools)
        turn.text = turn.text or None
        return turn


def test_a_failure_shows_expected_actual_the_test_lines_and_the_notebook_section():
    report = check("mock", MockProvider=EmptyIsNone, verbose=False)
    text = str(report)
    assert not report.ok
    assert "---- test_mock_empty_text_is_some ----" in text
    assert "expected: ''\n  actual: None" in text
    assert "->  " in text and 'assert (await provider.chat([], [])).text == ""' in text
    assert "the rule: notebooks/exercises/01_first_llm_call.ipynb §" in text


def test_an_endless_retry_loop_times_out_with_a_hint_and_the_check_goes_on():
    start = time.monotonic()
    report = check("mock", MockProvider=RetryForever, timeout=0.5, verbose=False)
    elapsed = time.monotonic() - start
    text = str(report)
    assert "test test_mock_empty_responses_exhausted ... TIMED OUT" in text
    assert "timed out after 0.5 s — does your loop ever end?" in text
    assert "test test_mock_returns_text ... ok" in text  # the tests after it still ran
    assert not report.ok
    # Three tests loop (each 0.5 s plus the stop); the rest take milliseconds.
    assert elapsed < 6, elapsed


def test_a_loop_that_never_awaits_is_stopped_too():
    start = time.monotonic()
    report = check("mock", MockProvider=SpinForever, timeout=0.1, verbose=False)
    tests = len(report.results)
    assert tests >= 14 and report.failed == tests
    assert all(r.status == "TIMED OUT" for r in report.results)
    assert "could not be stopped" not in str(report)
    assert time.monotonic() - start < tests * 1.0


def test_a_test_that_starts_a_real_server_gets_its_own_longer_limit(monkeypatch, tmp_path):
    # at_least=20 on the two real-server tests of chapter 21: at check()'s 0.05 s the tests
    # that start the small fake server run out of time, the two real ones still pass.
    from clawnb.course import reference

    monkeypatch.chdir(tmp_path)  # progress is noted in the current folder
    report = check(
        "mcp_client",
        timeout=0.05,
        verbose=False,
        StdioClient=reference.StdioClient,
        McpToolAdapter=reference.McpToolAdapter,
    )
    status = {r.name: r.status for r in report.results}
    assert status["test_mcp_client_talks_to_a_real_server"] == "ok"
    assert status["test_mcp_adapter_wraps_a_real_servers_tool"] == "ok"
    assert status["test_mcp_client_close_leaves_no_process_behind"] == "TIMED OUT"


def test_a_misspelt_name_is_refused_with_a_suggestion():
    with pytest.raises(TypeError, match=r"'ReadTol'.*Did you mean 'ReadTool'\?"):
        check("ch09", ReadTol=object, verbose=False)


def test_an_unknown_chapter_is_refused_with_a_suggestion():
    with pytest.raises(KeyError, match=r"Did you mean 'ch09'\?"):
        check("ch9", verbose=False)


def test_the_report_says_whose_objects_ran_and_counts_only_the_learners():
    report = check("ch03", single_turn=clawnb.single_turn, verbose=False)
    text = str(report)
    assert text.splitlines()[1].startswith("yours: single_turn · clawnb's: ")
    assert "MockProvider" in text.splitlines()[1]
    # The SimpleAgent suite never calls single_turn: its passes are not the learner's.
    assert "ok (ran only clawnb's objects, not counted)" in text
    assert report.not_counted > 0
    assert report.passed + report.not_counted + report.skipped == len(report.results)


def test_a_check_with_no_objects_says_it_checked_clawnb():
    report = check("ch13", verbose=False)
    assert "yours: none given — this checks clawnb's reference" in str(report)


def test_a_live_test_shows_as_skipped_not_ok(monkeypatch):
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    report = check("openrouter", OpenRouterProvider=clawnb.OpenRouterProvider, verbose=False)
    assert "test test_openrouter_live_api ... skipped (live: needs a real" in str(report)
    assert report.skipped == 1


class Permission:
    Allow = Deny = Ask = None  # the exercise's placeholder, left in place


def stub_function(engine, call, ask):
    raise NotImplementedError("None to run the call, else the refusal text")


class StubClass:
    def __init__(self, rules):
        raise NotImplementedError

    def evaluate(self, name):
        """Decide."""
        raise NotImplementedError


class HalfDone:
    def __init__(self, rules):
        self.rules = rules

    def evaluate(self, name):
        raise NotImplementedError


def test_stubs_are_recognised_and_filled_code_is_not():
    assert is_stub(Permission)
    assert is_stub(stub_function)
    assert is_stub(StubClass)
    assert not is_stub(HalfDone)
    assert not is_stub(clawnb.Permission)
    assert not is_stub(test_stubs_are_recognised_and_filled_code_is_not)


def test_a_stub_left_in_place_fails_the_check_even_when_tests_pass():
    report = check("ch13", Permission=Permission, verbose=False)
    assert "stub Permission ... FAILED (still the exercise stub" in str(report)
    assert not report.ok


LOOPING_CELL = """
import clawnb
from clawnb.course import check

class RetryForever(clawnb.MockProvider):
    async def chat(self, messages, tools):
        print("retrying", flush=True)
        while True:
            try:
                return await super().chat(messages, tools)
            except Exception:
                continue

check("mock", MockProvider=RetryForever, timeout=120)
"""


def test_interrupting_a_looping_check_in_a_real_kernel_frees_it_within_a_second(tmp_path):
    import os
    import queue
    import sys

    from jupyter_client import KernelManager

    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAWNB_")}
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(tmp_path), env=env)
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)

        def until(msg_id, predicate, limit):
            end = time.monotonic() + limit
            seen = []
            while time.monotonic() < end:
                try:
                    msg = kc.get_iopub_msg(timeout=0.02)
                except queue.Empty:
                    continue
                if msg["parent_header"].get("msg_id") == msg_id:
                    seen.append(msg)
                    if predicate(msg):
                        return seen
            raise AssertionError(f"no such message within {limit} s: {seen}")

        def idle(m):
            return m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"

        msg_id = kc.execute(LOOPING_CELL)
        until(msg_id, lambda m: "retrying" in m["content"].get("text", ""), 30)
        interrupted = time.monotonic()
        km.interrupt_kernel()
        seen = until(msg_id, idle, 10)
        assert time.monotonic() - interrupted < 1.0
        text = "".join(m["content"].get("text", "") for m in seen)
        assert "interrupted: the remaining tests did not run" in text
        errors = [m["content"] for m in seen if m["msg_type"] == "error"]
        assert [e["ename"] for e in errors] == ["CheckInterrupted"]  # a KeyboardInterrupt
        assert errors[0]["traceback"] == [
            "CheckInterrupted: check('mock') stopped; the kernel is ready"
        ]

        # The kernel is usable again, and no stray thread keeps a core busy. The stop was
        # delivered to the thread as an exception; on a CPU-starved machine the thread may
        # take a moment longer to reach it than the 0.8 s the interrupt waits, so wait for the
        # condition (the thread gone) rather than assume it is gone at once.
        msg_id = kc.execute(
            "import threading, time\n"
            "end = time.monotonic() + 5\n"
            "while time.monotonic() < end and any(\n"
            "    t.name == 'clawnb-check' for t in threading.enumerate()):\n"
            "    time.sleep(0.02)\n"
            "print(sorted(t.name for t in threading.enumerate()))"
        )
        seen = until(msg_id, idle, 10)
        assert "clawnb-check" not in "".join(m["content"].get("text", "") for m in seen)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
