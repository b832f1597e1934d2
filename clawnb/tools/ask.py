"""AskTool (book extra): let the model ask the user a clarifying question.

The tool (``ask_user``: a required ``question``, optional ``options``) does not know where
the user is; an :class:`InputHandler` does. This module ships three:

* :class:`MockInputHandler` — scripted answers, for tests and offline demos;
* :class:`CliInputHandler` — prints the question in a terminal and reads one line;
* :class:`ChannelInputHandler` — puts a :class:`UserInputRequest` on an ``asyncio.Queue`` and
  awaits its ``response`` future. Any front end (the notebook's widget, a web UI) answers by
  taking requests off the queue and setting the future — the Python shape of the book's
  mpsc channel + oneshot reply.
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol, TextIO, runtime_checkable

from ..types import JSON, ToolDefinition, ToolTraits
from .base import BaseTool, ToolError

__all__ = [
    "AskTool",
    "ChannelInputHandler",
    "CliInputHandler",
    "InputHandler",
    "MockInputHandler",
    "UserInputRequest",
    "parse_options",
]


@runtime_checkable
class InputHandler(Protocol):
    """Answers a question from the model; ``options`` may be empty (free text)."""

    async def ask(self, question: str, options: list[str]) -> str: ...


def parse_options(args: JSON) -> list[str]:
    """The ``options`` argument as a list of strings (non-strings dropped, missing → ``[]``)."""
    value = args.get("options") if isinstance(args, dict) else None
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str)]


class AskTool(BaseTool):
    """``ask_user``: put a question (and optional choices) to the user, return the answer."""

    # changes nothing, but one question at a time: a person answers them
    traits = ToolTraits(read_only=True, concurrency_safe=False)

    def __init__(self, handler: InputHandler) -> None:
        self.handler = handler
        self.definition = (
            ToolDefinition(
                "ask_user",
                "Ask the user a clarifying question. Use this when you need more information "
                "before proceeding. The user will see your question and can provide a free-text "
                "answer or choose from the options you provide.",
            )
            .param("question", "string", "The question to ask the user", required=True)
            .param_raw(
                "options",
                {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Optional list of choices to present to the user",
                },
            )
        )

    async def call(self, args: JSON) -> str:
        question = args.get("question") if isinstance(args, dict) else None
        if not isinstance(question, str):
            raise ToolError("missing required parameter: question")
        return await self.handler.ask(question, parse_options(args))


class MockInputHandler:
    """Returns the given answers in order; asking once more is an error."""

    def __init__(self, answers: Iterable[str] = ()) -> None:
        self.answers: deque[str] = deque(answers)
        self.questions: list[tuple[str, list[str]]] = []

    async def ask(self, question: str, options: list[str]) -> str:
        self.questions.append((question, list(options)))
        if not self.answers:
            raise ToolError("MockInputHandler: no more answers")
        return self.answers.popleft()


class CliInputHandler:
    """Asks in a terminal: prints the question and numbered options, reads one line.

    A number between 1 and the number of options picks that option; anything else is taken
    as a free-text answer. ``input_fn`` and ``output`` default to ``input`` and stdout.
    """

    def __init__(
        self,
        input_fn: Callable[[str], str] | None = None,
        output: TextIO | None = None,
    ) -> None:
        self.input_fn = input_fn or input
        self.output = output

    def _prompt(self, question: str, options: list[str]) -> str:
        out = self.output or sys.stdout
        print(f"\n  {question}", file=out)
        for i, option in enumerate(options, 1):
            print(f"    {i}) {option}", file=out)
        out.flush()
        try:
            answer = self.input_fn("  > ").strip()
        except EOFError:
            raise ToolError("the user gave no answer (end of input)") from None
        if answer.isdigit() and 1 <= int(answer) <= len(options):
            return options[int(answer) - 1]
        return answer

    async def ask(self, question: str, options: list[str]) -> str:
        # input() blocks; run it on a thread so the event loop (and the UI) stay alive.
        return await asyncio.to_thread(self._prompt, question, list(options))


@dataclass
class UserInputRequest:
    """One question waiting for the user. Answer with ``response.set_result(text)`` (or
    :meth:`respond`); cancelling ``response`` makes the tool call fail cleanly."""

    question: str
    options: list[str]
    response: asyncio.Future[str] = field(repr=False)

    def respond(self, answer: str) -> None:
        if not self.response.done():
            self.response.set_result(answer)


class ChannelInputHandler:
    """Sends each question as a :class:`UserInputRequest` on ``queue`` and awaits the reply."""

    def __init__(self, queue: asyncio.Queue[UserInputRequest]) -> None:
        self.queue = queue

    @classmethod
    def channel(cls) -> tuple[ChannelInputHandler, asyncio.Queue[UserInputRequest]]:
        """A handler and the queue a front end should serve."""
        queue: asyncio.Queue[UserInputRequest] = asyncio.Queue()
        return cls(queue), queue

    async def ask(self, question: str, options: list[str]) -> str:
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        request = UserInputRequest(question, list(options), future)
        await self.queue.put(request)
        try:
            answer = await future
        except asyncio.CancelledError:
            if future.cancelled() and not _current_task_cancelling():
                raise ToolError("the question was withdrawn before the user answered") from None
            raise
        if not isinstance(answer, str):
            raise ToolError(f"the answer must be text, got {type(answer).__name__}")
        return answer


def _current_task_cancelling() -> bool:
    task = asyncio.current_task()
    return bool(task is not None and task.cancelling())
