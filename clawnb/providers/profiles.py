"""Local-server profiles: what each OpenAI-compatible server needs to be asked, and how to tell
them apart.

Servers that all answer ``/v1/chat/completions`` still differ in ways that matter to an agent:

* **llama-cpp-python** passes ``tools`` to the model only when the request also sends
  ``tool_choice``; without it the agent never gets its tools. The profile sends ``"auto"`` —
  which that server cannot stream (it fails inside the stream, an empty 200), so those
  requests go unstreamed.
* **vLLM** names its context window (``max_model_len``) in ``/v1/models``; the profile keeps it
  so context-overflow recovery can size the conversation to fit. llama-server names its own
  in ``/v1/models`` (``meta.n_ctx``) and in ``GET /props`` (asked once, when the model list
  did not say it).
* **llama.cpp** (``llama-server --jinja``), **Ollama** and **LM Studio** need nothing extra in
  the request (their server-side switches are in ``docs/local-models.md``).

:func:`detect` reads ``GET /v1/models`` (each server fills ``owned_by`` its own way; llama.cpp
also sends ``Server: llama.cpp``) — done
once, lazily, by :class:`~clawnb.providers.openai.OpenAICompatProvider` when ``server="auto"``
and the base URL is on this machine or the local network. ``server="<kind>"`` skips the
guess. :func:`provider_options` turns a :class:`~clawnb.config.Config` into the provider's
keyword arguments.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from ..config import Config

__all__ = [
    "PROFILES",
    "SERVER_KINDS",
    "ServerProfile",
    "detect",
    "is_local_url",
    "models_context_window",
    "props_context_window",
    "provider_options",
]


@dataclass(frozen=True)
class ServerProfile:
    """``kind`` and its display ``name``; ``tool_choice`` is sent with every request that
    offers tools (unless the user chose one); ``streams_auto_tool_choice`` is False for a
    server that cannot stream a reply while ``tool_choice`` is ``"auto"`` (those requests
    are then sent unstreamed)."""

    kind: str
    name: str
    tool_choice: str | None = None
    streams_auto_tool_choice: bool = True


PROFILES: dict[str, ServerProfile] = {
    "openai": ServerProfile("openai", "OpenAI-compatible"),
    "llama.cpp": ServerProfile("llama.cpp", "llama.cpp (llama-server)"),
    # chatml-function-calling raises "Automatic streaming tool choice is not supported"
    # inside the stream (an empty 200): tests/fake_servers.py, docs/local-models.md
    "llama-cpp-python": ServerProfile(
        "llama-cpp-python", "llama-cpp-python", "auto", streams_auto_tool_choice=False
    ),
    "ollama": ServerProfile("ollama", "Ollama"),
    "vllm": ServerProfile("vllm", "vLLM"),
    "lmstudio": ServerProfile("lmstudio", "LM Studio"),
}
SERVER_KINDS = ("auto", *PROFILES)

# owned_by in /v1/models, as each server fills it
_OWNERS = {
    "llamacpp": "llama.cpp",
    "vllm": "vllm",
    "me": "llama-cpp-python",
    "library": "ollama",
    "organization_owner": "lmstudio",
    "system": "openai",
    "openai": "openai",
    "openai-internal": "openai",
}


def _entries(models: Any) -> list[dict[str, Any]]:
    data = models.get("data") if isinstance(models, dict) else None
    return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []


def detect(models: Any, server_header: str | None = None) -> str | None:
    """The server kind a ``GET /v1/models`` answer (and the response's ``Server`` header)
    reveals, or ``None`` if they do not. llama.cpp names itself in every response's header;
    the others are told apart by the ``owned_by`` and fields of their model list."""
    if server_header and server_header.strip().lower().startswith("llama.cpp"):
        return "llama.cpp"
    for entry in _entries(models):
        if "max_model_len" in entry:
            return "vllm"
        if isinstance(entry.get("meta"), dict) and "n_ctx_train" in entry["meta"]:
            return "llama.cpp"
        kind = _OWNERS.get(str(entry.get("owned_by")))
        if kind is not None:
            return kind
    return None


def models_context_window(models: Any, model: str) -> int | None:
    """The context window ``/v1/models`` states for ``model``: vLLM's ``max_model_len``, or
    llama-server's ``meta.n_ctx`` (its ``-c``; ``n_ctx_train`` is the model's, not the
    server's)."""
    entries = _entries(models)
    chosen = [e for e in entries if e.get("id") == model] or entries[:1]
    for entry in chosen:
        meta = entry.get("meta")
        for value in (
            entry.get("max_model_len"),
            meta.get("n_ctx") if isinstance(meta, dict) else None,
        ):
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return None


def props_context_window(props: Any) -> int | None:
    """The window in llama-server's ``GET /props`` answer: ``default_generation_settings``'s
    ``n_ctx`` (the server's ``-c``, per slot), or ``None`` when it is not there."""
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    value = settings.get("n_ctx") if isinstance(settings, dict) else None
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def is_local_url(url: str) -> bool:
    """Whether ``url`` points at this machine or a private network (where a self-hosted
    server, not a cloud API, is answering)."""
    host = (urlsplit(url).hostname or "").lower()
    if host in ("localhost", "host.docker.internal") or host.endswith((".local", ".localhost")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def provider_options(config: Config, model: str) -> dict[str, Any]:
    """Keyword arguments for :class:`~clawnb.providers.openai.OpenAICompatProvider` from the
    ``[model]`` options that apply to ``model`` (its ``overrides`` included).

    No ``max_output_tokens`` means clawnb's default cap, which a server may refuse (it is then
    dropped); ``0`` means no cap at all.
    """
    from ..config import DEFAULT_MAX_OUTPUT_TOKENS

    options = config.generation_for(model)
    out: dict[str, Any] = {"server": options.server or "auto"}
    if options.max_output_tokens is None:
        out["max_tokens"] = DEFAULT_MAX_OUTPUT_TOKENS
        out["default_cap"] = True
    elif options.max_output_tokens > 0:
        out["max_tokens"] = options.max_output_tokens
    if options.temperature is not None:
        out["temperature"] = options.temperature
    if options.tool_choice is not None:
        out["tool_choice"] = options.tool_choice
    if options.extra_body:
        out["extra_body"] = dict(options.extra_body)
    # how much one answer may hold ([limits]): past it the provider stops reading
    out["max_reply_bytes"] = config.limits.max_reply_bytes
    out["max_line_bytes"] = config.limits.max_sse_line_bytes
    return out
