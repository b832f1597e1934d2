"""The smallest context window clawnb works in, against a real server (issue 27).

    python tests/providers/measure_window.py URL [URL ...]

Each URL is a running server (``llama-server --jinja -c N``, see docs/local-models.md). For
each, through the real session (``build_agent``: clawnb's own system prompt and its default
tools), it asks a plain question, then runs one tool round (``read`` forced for the first
round, so even a tiny model calls it; the answer after it is the model's own), and prints
what happened and the prompt tokens the server counted (its usage), e.g.::

    http://127.0.0.1:8776/v1 n_ctx=512  plain: refused (…)  tool round: refused (…)
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import httpx

from clawnb.config import Config
from clawnb.providers.openai import OpenAICompatProvider
from clawnb.session.assemble import build_agent


def window_of(url: str) -> int | None:
    try:
        props = httpx.get(url.removesuffix("/v1") + "/props", timeout=10).json()
        return int(props["default_generation_settings"]["n_ctx"])
    except (httpx.HTTPError, KeyError, TypeError, ValueError):
        return None


async def one(url: str, ws: Path, *, forced: bool) -> str:
    (ws / "notes.txt").write_text("buy milk\n")
    provider = OpenAICompatProvider(
        "smollm2",
        base_url=url,
        max_tokens=48,
        temperature=0,
        tool_choice={"type": "function", "function": {"name": "read"}} if forced else None,
    )
    session = build_agent(
        Config(), workspace=ws, provider=provider, subagents=False, skills=False, mode="bypass"
    )
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
        return f"refused ({type(exc).__name__}: {str(exc)[:160]})"
    ran = any(getattr(m, "content", "").startswith("buy milk") for m in session.history)
    tokens = f"prompt tokens {usage}" if usage else "no usage"
    what = "ok" + (" (read ran)" if forced and ran else "")
    return f"{what}, {tokens}, answer {text[:40]!r}"


async def main(urls: list[str]) -> None:
    for url in urls:
        with tempfile.TemporaryDirectory() as tmp:
            plain = await one(url, Path(tmp), forced=False)
        with tempfile.TemporaryDirectory() as tmp:
            tool = await one(url, Path(tmp), forced=True)
        print(f"{url} n_ctx={window_of(url)}\n  plain: {plain}\n  tool round: {tool}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
