"""Model providers: mock and scripted (offline), streaming mock, OpenAI-compatible HTTP."""

from .mock import MockProvider, MockStreamProvider

__all__ = ["MockProvider", "MockStreamProvider"]
