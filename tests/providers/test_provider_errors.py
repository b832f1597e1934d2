"""Every httpx failure and every HTTP status class maps onto clawnb's error tree."""

from __future__ import annotations

import pickle

import httpx
import pytest
from provider_helpers import KEY

from clawnb.errors import (
    AuthenticationError,
    BadRequestError,
    ClawError,
    ProviderConfigError,
    ProviderConnectionError,
    ProviderError,
    ProviderHTTPError,
    ProviderTimeout,
    RateLimitError,
    ServerError,
    StreamError,
)
from clawnb.events import StreamEvent
from clawnb.providers.openai import OpenAICompatProvider
from clawnb.types import Message

TRANSPORT_ERRORS = [
    (httpx.ConnectError, ProviderConnectionError),
    (httpx.ReadError, ProviderConnectionError),
    (httpx.WriteError, ProviderConnectionError),
    (httpx.CloseError, ProviderConnectionError),
    (httpx.RemoteProtocolError, ProviderConnectionError),
    (httpx.LocalProtocolError, ProviderConnectionError),
    (httpx.ProxyError, ProviderConnectionError),
    (httpx.DecodingError, ProviderConnectionError),
    (httpx.TooManyRedirects, ProviderConnectionError),
    (httpx.ConnectTimeout, ProviderTimeout),
    (httpx.ReadTimeout, ProviderTimeout),
    (httpx.WriteTimeout, ProviderTimeout),
    (httpx.PoolTimeout, ProviderTimeout),
    (httpx.UnsupportedProtocol, ProviderConfigError),
]


def failing(exc_type):
    calls = []

    def handler(request):
        calls.append(request)
        raise exc_type("boom", request=request)

    provider = OpenAICompatProvider(
        "m", KEY, "http://x.invalid/v1", transport=httpx.MockTransport(handler), retry_backoff=0.001
    )
    return provider, calls


@pytest.mark.parametrize(("exc_type", "expected"), TRANSPORT_ERRORS, ids=lambda v: v.__name__)
async def test_transport_errors_are_mapped(exc_type, expected):
    for method in ("chat", "stream_chat"):
        provider, calls = failing(exc_type)
        with pytest.raises(expected) as info:
            await getattr(provider, method)([Message.User("x")], [])
        assert isinstance(info.value.__cause__, exc_type)
        # connection problems are retried, configuration problems are not
        assert len(calls) == (1 if expected is ProviderConfigError else 3)


def test_every_httpx_request_error_is_listed():
    listed = {e for e, _ in TRANSPORT_ERRORS}
    leaves = set()
    stack = [httpx.RequestError]
    while stack:
        cls = stack.pop()
        subs = cls.__subclasses__()
        stack.extend(subs)
        if not subs and cls.__module__.startswith("httpx"):
            leaves.add(cls)
    assert leaves <= listed, f"unmapped httpx errors: {leaves - listed}"


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, BadRequestError),
        (401, AuthenticationError),
        (403, AuthenticationError),
        (404, BadRequestError),
        (413, BadRequestError),
        (422, BadRequestError),
        (429, RateLimitError),
        (500, ServerError),
        (502, ServerError),
        (503, ServerError),
        (504, ServerError),
        (529, ServerError),
        (409, ProviderHTTPError),
    ],
)
async def test_statuses_are_mapped(status, expected):
    def handler(request):
        return httpx.Response(status, json={"error": {"message": "nope", "code": "c"}})

    provider = OpenAICompatProvider(
        "m",
        KEY,
        "http://x.invalid/v1",
        transport=httpx.MockTransport(handler),
        max_retries=0,
    )
    with pytest.raises(expected) as info:
        await provider.chat([Message.User("x")], [])
    assert type(info.value) is expected
    assert (info.value.status, info.value.message, info.value.code) == (status, "nope", "c")


async def test_read_error_after_output_is_not_retried():
    calls = []

    async def body():
        yield b'data: {"choices":[{"delta":{"content":"partial"}}]}\n\n'
        raise httpx.ReadError("connection reset")

    def handler(request):
        calls.append(request)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    provider = OpenAICompatProvider(
        "m", KEY, "http://x.invalid/v1", transport=httpx.MockTransport(handler)
    )
    events: list = []
    with pytest.raises(ProviderConnectionError, match="broke off"):
        await provider.stream_chat([Message.User("x")], [], events.append)
    assert len(calls) == 1
    assert events == [StreamEvent.TextDelta("partial")]


def test_errors_belong_to_the_tree_and_pickle():
    for error in (
        RateLimitError(429, "slow", "rl", retry_after=2.0),
        ServerError(500, "down"),
        StreamError("mid-stream", code=7),
        ProviderTimeout("late"),
    ):
        assert isinstance(error, ProviderError) and isinstance(error, ClawError)
        clone = pickle.loads(pickle.dumps(error))
        assert type(clone) is type(error) and str(clone) == str(error)
    clone = pickle.loads(pickle.dumps(RateLimitError(429, "slow", "rl", retry_after=2.0)))
    assert (clone.status, clone.code, clone.retry_after) == (429, "rl", 2.0)
    assert "HTTP 429: slow (code rl)" == str(clone)
    assert str(ServerError(503, "busy", 503)) == "HTTP 503: busy"
