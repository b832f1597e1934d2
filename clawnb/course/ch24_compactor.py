"""Chapter 24: a compaction with a circuit breaker — the middle of the history summarised by
the model; after three failed summaries in a row, the oldest whole turns dropped instead, told
once. Not a book test file: the book's compaction has no failure path."""

from __future__ import annotations

from ..types import AssistantTurn, Message, StopReason, ToolCall
from ._suite import Suite

suite = Suite("compactor", "Compactor", chapters=["ch24"])

PROMPT = Message.System("You are a careful coding agent.")
SUMMARY = "[Conversation summary]: "


class _Model:
    """A scripted summariser: each call takes the next answer; an exception is raised (a
    server's 500), text is the summary. It keeps what it was asked."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.asked = []

    async def chat(self, messages, tools):
        self.asked.append((messages, tools))
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        return AssistantTurn(answer, [], StopReason.STOP)


def _failing():
    return _Model(RuntimeError("HTTP 500 from the summary endpoint"))


def _turn(n: int, words: int = 300) -> list[Message]:
    """One whole turn: the person asks, the model reads a file, gets it, answers."""
    call = ToolCall(f"c{n}", "read", {"path": f"src/part{n}.py"})
    return [
        Message.User(f"request {n}: look at part {n}"),
        Message.Assistant(AssistantTurn(None, [call], StopReason.TOOL_USE)),
        Message.ToolResult(f"c{n}", f"code of part {n} " + "word " * words),
        Message.Assistant(AssistantTurn(f"part {n} looks fine", [], StopReason.STOP)),
    ]


def _history(turns: int, words: int = 300) -> list[Message]:
    history: list[Message] = [PROMPT]
    for n in range(1, turns + 1):
        history += _turn(n, words)
    return history


@suite.test
async def test_compactor_leaves_a_short_history_alone(impl, tmp):
    model = _Model("never used")
    compactor = impl.Compactor(model, max_tokens=4000, keep=4)
    history = _history(2, words=20)
    before = list(history)
    assert await compactor.after_turn(history) is None
    assert history == before
    assert model.asked == []


@suite.test
async def test_compactor_summarises_the_middle_and_keeps_prompt_and_recent(impl, tmp):
    # Over the limit: one call to the model, with no tools, asked about the middle; the system
    # prompt stays first, then one System message with the summary, then the last `keep`
    # messages exactly as they were.
    model = _Model("They looked at parts 1 to 5; all fine.")
    compactor = impl.Compactor(model, max_tokens=1000, keep=4)
    history = _history(6)
    recent = history[-4:]
    assert await compactor.after_turn(history) == "summary"
    assert len(model.asked) == 1
    request, tools = model.asked[0]
    assert tools == []
    assert "part 3" in request[-1].content
    assert history[0] == PROMPT
    assert isinstance(history[1], Message.System)
    assert history[1].content == SUMMARY + "They looked at parts 1 to 5; all fine."
    assert history[2:] == recent


@suite.test
async def test_compactor_never_splits_a_tool_round(impl, tmp):
    # keep=2 would start the kept part at a tool result: the cut moves back to the turn that
    # made the call, so every call still has its result.
    compactor = impl.Compactor(_Model("a summary"), max_tokens=1000, keep=2)
    history = _history(6)
    assert await compactor.after_turn(history) == "summary"
    assert impl.history_is_valid(history)
    assert history[2:] == _history(6)[-3:]


@suite.test
async def test_compactor_summaries_do_not_pile_up(impl, tmp):
    # An earlier summary is not part of the prompt: it is in the next middle and summarised
    # again, so there is only ever one summary after the prompt.
    model = _Model("first summary", "second summary")
    compactor = impl.Compactor(model, max_tokens=1000, keep=4)
    history = _history(6)
    assert await compactor.after_turn(history) == "summary"
    history += _turn(7) + _turn(8)
    assert await compactor.after_turn(history) == "summary"
    summaries = [m for m in history if getattr(m, "content", "").startswith(SUMMARY)]
    assert [m.content for m in summaries] == [SUMMARY + "second summary"]
    assert history[0] == PROMPT
    assert "first summary" in model.asked[1][0][-1].content


@suite.test
async def test_compactor_a_failed_summary_does_not_fail_the_turn(impl, tmp):
    # The turn was answered before compaction began: a summary that fails (an HTTP 500) is
    # not raised, and the history is left as it was.
    compactor = impl.Compactor(_failing(), max_tokens=1000, keep=4)
    history = _history(6)
    before = list(history)
    assert await compactor.after_turn(history) == "failed"
    assert history == before
    assert compactor.notes == []


@suite.test
async def test_compactor_three_failures_open_the_breaker_and_drop_whole_turns(impl, tmp):
    # The third failure in a row opens the breaker: the oldest whole turns go (a cut only
    # before a person's message), until the rest fits; the model is not asked again.
    model = _failing()
    compactor = impl.Compactor(model, max_tokens=1000, keep=4)
    history = _history(6)
    said = [await compactor.after_turn(history) for _ in range(3)]
    assert said == ["failed", "failed", "dropped"]
    assert history[0] == PROMPT
    assert isinstance(history[1], Message.User)
    assert impl.history_is_valid(history)
    assert compactor.tokens(history) < 1000
    assert history[-4:] == _turn(6)
    for n in (7, 8, 9):
        history += _turn(n)
        assert await compactor.after_turn(history) == "dropped"
    assert len(model.asked) == 3


@suite.test
async def test_compactor_says_so_once(impl, tmp):
    # The person is told when the breaker opens, in one note naming how many failed and
    # why; later drops add no note.
    compactor = impl.Compactor(_failing(), max_tokens=1000, keep=4)
    history = _history(6)
    for n in range(7, 13):
        await compactor.after_turn(history)
        history += _turn(n)
    assert len(compactor.notes) == 1
    assert "3" in compactor.notes[0]
    assert "HTTP 500" in compactor.notes[0]


@suite.test
async def test_compactor_counts_failures_in_a_row(impl, tmp):
    # A summary that works resets the count: fail, fail, succeed, fail, fail is never three
    # in a row, so nothing is dropped.
    error = RuntimeError("HTTP 500")
    model = _Model(error, error, "a summary", error, error, "another")
    compactor = impl.Compactor(model, max_tokens=1000, keep=4)
    said = []
    for _ in range(5):
        history = _history(6)
        said.append(await compactor.after_turn(history))
    assert said == ["failed", "failed", "summary", "failed", "failed"]
    assert compactor.notes == []


@suite.test
async def test_compactor_the_current_request_always_stays(impl, tmp):
    # Even when the last turn alone is over the limit, the person's latest message and what
    # followed it are kept: dropping them would leave the model nothing to answer.
    compactor = impl.Compactor(_failing(), max_tokens=300, keep=2)
    history = _history(3, words=600)
    for _ in range(3):
        await compactor.after_turn(history)
    assert history[0] == PROMPT
    assert history[1:] == _turn(3, words=600)
