"""A skill's own examples, run headless: ``python -m clawnb skills check --run [DIR]``.

An example is ``NAME/examples/*.jsonl`` beside a skill's ``SKILL.md``, one JSON object a line:

* first, what the person types: ``{"invoke": "/stock-report 5"}`` (a ``/NAME`` command, or a
  plain prompt that the model may answer by loading the skill);
* then the scripted model's turns, as ``scripted:`` files have them (``{"tool_calls": […]}``,
  ``{"text": "…"}``);
* last, what must have happened: ``{"expect": {"calls": ["mcp__inventory__low_stock",
  "write"], "answer": "low", "files": {"stock-report.md": "figs"}, "errors": false}}`` —
  the tools called, in order; a piece of the last answer; a piece of each file's text after the
  run; and whether a call may end in an error (default: none may).

Each example runs in a session of its own on a **temporary copy** of the project (the project
itself is never written), trusted for that run only (its own ``.claw/config.toml``: MCP servers
start, project skills count), with approvals answered by the ``allow`` policy — which never
approves a control-file change — and bash sandboxed as usual. Running examples runs the
project's code: ``check`` does it only when asked (``--run``).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["run_examples"]

_SKIPPED = shutil.ignore_patterns(
    ".git", "__pycache__", ".venv", "node_modules", ".ipynb_checkpoints"
)


def run_examples(project: Path, skill_dirs: list[Path]) -> tuple[int, list[str]]:
    """Run every example of the skills in ``skill_dirs`` (inside ``project``); returns how
    many ran and one line per problem, each naming the example."""
    problems: list[str] = []
    ran = 0
    for folder in skill_dirs:
        for path in sorted((folder / "examples").glob("*.jsonl")):
            shown = f"{path.relative_to(project)}"
            try:
                invoke, turns, expect = _parse(path)
            except ValueError as exc:
                problems.append(f"{shown}: {exc}")
                continue
            ran += 1
            problems += [f"{shown}: {p}" for p in _run(project, invoke, turns, expect)]
    return ran, problems


def _parse(path: Path) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    invoke: str | None = None
    turns: list[dict[str, Any]] = []
    expect: dict[str, Any] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {n} is not JSON ({exc.msg})") from None
        if not isinstance(entry, dict):
            raise ValueError(f"line {n} is not a JSON object")
        if "invoke" in entry:
            if invoke is not None or turns:
                raise ValueError(f"line {n}: 'invoke' comes once, first")
            invoke = str(entry["invoke"])
        elif "expect" in entry:
            if not isinstance(entry["expect"], dict):
                raise ValueError(f"line {n}: 'expect' takes an object")
            expect = entry["expect"]
        else:
            turns.append(entry)
    if invoke is None:
        raise ValueError('no {"invoke": …} line: what the person types comes first')
    unknown = set(expect) - {"calls", "answer", "files", "errors"}
    if unknown:
        raise ValueError(f"unknown key in 'expect': {', '.join(sorted(unknown))}")
    return invoke, turns, expect


def _run(
    project: Path, invoke: str, turns: list[dict[str, Any]], expect: dict[str, Any]
) -> list[str]:
    from ..control.trust import TrustStore, project_config_path
    from ..events import Approval
    from ..session.assemble import build_agent
    from ..types import Message

    with tempfile.TemporaryDirectory(prefix="clawnb-example-") as tmp:
        copy = Path(tmp) / project.name
        shutil.copytree(project, copy, symlinks=True, ignore=_SKIPPED)
        script = Path(tmp) / "model.jsonl"
        script.write_text("".join(json.dumps(t) + "\n" for t in turns), encoding="utf-8")
        store = TrustStore()
        config = project_config_path(copy)
        trusted = config.is_file()
        if trusted:
            store.trust(copy, config)

        async def allow(request: Any) -> Approval:
            return Approval.allow_by_policy("allow")

        async def go() -> tuple[list[Any], str | None]:
            session = build_agent(None, workspace=copy, model=f"scripted:{script}", approve=allow)
            try:
                if invoke.startswith("/"):
                    answer = await session.command(invoke)
                else:
                    answer = await session.send(invoke)
                return list(session.history), answer
            finally:
                session.close()

        try:
            history, answer = asyncio.run(go())
        except Exception as exc:  # the example's own failure: one line, the check goes on
            return [f"the run failed: {type(exc).__name__}: {exc}"]
        finally:
            if trusted:
                store.revoke(copy)
        problems: list[str] = []
        calls = [c for m in history if isinstance(m, Message.Assistant) for c in m.turn.tool_calls]
        results = {m.id: m.content for m in history if isinstance(m, Message.ToolResult)}
        if "calls" in expect and [c.name for c in calls] != list(expect["calls"]):
            problems.append(f"called {[c.name for c in calls]}, expected {list(expect['calls'])}")
        if not expect.get("errors", False):
            for call in calls:
                result = results.get(call.id, "")
                if result.startswith("error"):
                    problems.append(f"{call.name} failed: {result.splitlines()[0][:200]}")
        if "answer" in expect and str(expect["answer"]) not in (answer or ""):
            problems.append(f"the last answer does not say {expect['answer']!r}: {answer!r}")
        for name, piece in (expect.get("files") or {}).items():
            target = copy / name
            if not target.is_file():
                problems.append(f"{name} was not written")
            elif str(piece) not in target.read_text(encoding="utf-8", errors="replace"):
                problems.append(f"{name} does not contain {piece!r}")
        return problems
