"""The smallest context window clawnb works in, against real servers (issue 27).

    python tests/providers/measure_window.py [--tools standard|lean] URL [URL ...]

Each URL is a running server (``llama-server --jinja -c N``, ``python -m llama_cpp.server
--n_ctx N``; see docs/local-models.md). For each, through the real session (``build_agent``:
clawnb's own system prompt and the tool set ``--tools`` names, with ``server="auto"`` as the
chat and ``%%claw`` use it, so the server's profile and window are detected), it asks a plain
question, then runs one tool round (``read`` forced for the first round, so even a tiny model
calls it; the answer after it is the model's own), and prints what happened, clawnb's own
estimate of its fixed prompt (system prompt + tool schemas) and the prompt tokens the server
counted (its usage, where it reports one), e.g.::

    http://127.0.0.1:8776/v1 n_ctx=512 tools=standard fixed≈2311
      plain: refused (FixedPromptTooLarge: the agent's own prompt (2311 tokens) does not …)
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from pathlib import Path

import httpx

from clawnb.config import Config
from clawnb.providers.openai import OpenAICompatProvider
from clawnb.session.assemble import build_agent
from clawnb.types import Message


def window_of(url: str) -> int | None:
    """The server's window: llama-server's ``/props``, else what ``/v1/models`` says."""
    root = url.removesuffix("/v1")
    try:
        props = httpx.get(root + "/props", timeout=10).json()
        return int(props["default_generation_settings"]["n_ctx"])
    except (httpx.HTTPError, KeyError, TypeError, ValueError):
        return None


def session_for(url: str, ws: Path, tools: str, *, forced: bool):
    provider = OpenAICompatProvider(
        "smollm2",
        base_url=url,
        max_tokens=48,
        temperature=0,
        server="auto",  # detection: the profile and the window, as the front ends do
        read_timeout=300,
        tool_choice={"type": "function", "function": {"name": "read"}} if forced else None,
    )
    config = Config.from_toml(f'[model]\ntools = "{tools}"\n', "measure_window")
    return build_agent(
        config, workspace=ws, provider=provider, subagents=False, skills=False, mode="bypass"
    )


async def one(url: str, ws: Path, tools: str, *, forced: bool) -> tuple[str, int]:
    (ws / "notes.txt").write_text("buy milk\n")
    session = session_for(url, ws, tools, forced=forced)
    history = [Message.System(session.agent.system_prompt or "")]
    fixed = session.context.fixed_tokens(history)
    prompt = (
        "Read notes.txt and tell me what it says." if forced else "What is the capital of France?"
    )
    usage: list[int] = []

    def on_event(event: object) -> None:
        turn = getattr(event, "turn", None)
        if turn is not None and turn.usage is not None:
            usage.append(turn.usage.input_tokens)

    try:
        text = await session.send(prompt, on_event)
    except Exception as exc:  # noqa: BLE001 - the figure is what failed, and how
        return f"refused ({type(exc).__name__}: {str(exc)[:200]})", fixed
    ran = any(getattr(m, "content", "").startswith("buy milk") for m in session.history)
    tokens = f"prompt tokens {usage}" if usage else "no usage"
    what = "ok" + (" (read ran)" if forced and ran else "")
    return f"{what}, {tokens}, answer {text[:40]!r}", fixed


async def main(urls: list[str], tools: str) -> None:
    for url in urls:
        with tempfile.TemporaryDirectory() as tmp:
            plain, fixed = await one(url, Path(tmp), tools, forced=False)
        with tempfile.TemporaryDirectory() as tmp:
            tool, _ = await one(url, Path(tmp), tools, forced=True)
        print(
            f"{url} n_ctx={window_of(url)} tools={tools} fixed≈{fixed}\n"
            f"  plain: {plain}\n  tool round: {tool}",
            flush=True,
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", choices=("standard", "lean"), default="standard")
    parser.add_argument("urls", nargs="+")
    args = parser.parse_args()
    asyncio.run(main(args.urls, args.tools))
