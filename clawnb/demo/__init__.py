"""The offline demo: a scripted model driving real tools in a scratch directory."""

from __future__ import annotations

from pathlib import Path

DEMO_SCRIPT = Path(__file__).with_name("greet.jsonl")
DEMO_PROMPT = "Write greet.py with a greeting function, run it, then let it take a name argument."
