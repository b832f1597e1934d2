"""A server's prompts as slash commands, its resources by reference.

* ``/mcp__SERVER__PROMPT args`` (every front end, through the command registry): the
  server's prompt, its arguments bound from ``args``, becomes the next turn. Arguments are
  ``key=value`` words (shell quoting: ``topic="the parser"``); a prompt with one argument
  takes the whole text; otherwise bare words fill the declared arguments in order. A missing
  required argument is one line naming it, and nothing is sent.
* ``@SERVER:URI`` in a prompt (any front end): the resource is read and attached after the
  person's words, each redacted and capped like a tool result. An unknown server leaves the
  text as it is (``@user:example.com`` is not a resource); a server that fails says so in the
  attachment instead of failing the turn.

Both are the person's own actions — the model never calls them — and their text passes the
secrets redactor on the way into the conversation.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..control.secrets import redact
from .errors import McpError
from .results import render_prompt, render_resource
from .tools import tool_name

if TYPE_CHECKING:
    from .manager import McpManager

__all__ = ["ServerPrompt", "attach_resources", "bind_arguments", "find_prompt", "prompt_text"]

PREFIX = "mcp__"
# @server:uri — at the start or after a space; the server named as in the config
_REFERENCE = re.compile(r"(?<!\S)@([A-Za-z0-9_.-]+):(\S+)")
MAX_ATTACHED = 5  # resources attached to one message


@dataclass(frozen=True)
class ServerPrompt:
    """One prompt a connected server offers, under its command name."""

    command: str  # mcp__SERVER__PROMPT
    server: str
    prompt: Any  # mcp.types.Prompt

    @property
    def arguments(self) -> list[Any]:
        return list(getattr(self.prompt, "arguments", None) or [])

    @property
    def usage(self) -> str:
        parts = []
        for arg in self.arguments:
            parts.append(f"{arg.name}=…" if arg.required else f"[{arg.name}=…]")
        return " ".join(parts)

    @property
    def description(self) -> str:
        text = " ".join((getattr(self.prompt, "description", None) or "").split())
        return redact(text[:200]) or f"prompt {self.prompt.name} of {self.server}"


async def prompts(manager: McpManager) -> list[ServerPrompt]:
    """Every connected server's prompts under their command names (named like tools:
    sanitised, unique, at most 64 characters)."""
    taken: set[str] = set()
    out = []
    for server, prompt in await manager.list_prompts():
        out.append(ServerPrompt(tool_name(server, prompt.name, taken), server, prompt))
    return out


async def find_prompt(manager: McpManager, command: str) -> ServerPrompt | None:
    if not command.startswith(PREFIX):
        return None
    return next((p for p in await prompts(manager) if p.command == command), None)


def bind_arguments(prompt: ServerPrompt, args: str) -> dict[str, str]:
    """The prompt's arguments from what the person typed after the command."""
    declared = prompt.arguments
    names = [a.name for a in declared]
    text = args.strip()
    if len(declared) == 1 and text and not text.startswith(f"{names[0]}="):
        return {names[0]: text}
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise McpError(f"/{prompt.command}: {exc}") from None
    bound: dict[str, str] = {}
    bare: list[str] = []
    for word in words:
        key, eq, value = word.partition("=")
        if eq and key in names:
            bound[key] = value
        elif eq and key.isidentifier():
            raise McpError(
                f"/{prompt.command} has no argument {key!r}"
                + (f" (it takes: {', '.join(names)})" if names else " (it takes none)")
            )
        else:
            bare.append(word)
    free = [n for n in names if n not in bound]
    if len(bare) > len(free):
        raise McpError(
            f"/{prompt.command}: too many words; usage: /{prompt.command} {prompt.usage}"
        )
    bound.update(zip(free, bare, strict=False))
    missing = [a.name for a in declared if a.required and a.name not in bound]
    if missing:
        raise McpError(
            f"/{prompt.command} needs {', '.join(missing)}; usage: /{prompt.command} {prompt.usage}"
        )
    return bound


async def prompt_text(manager: McpManager, prompt: ServerPrompt, args: str) -> str:
    """The text the prompt puts into the conversation (one turn), redacted."""
    result = await manager.get_prompt(
        prompt.server, prompt.prompt.name, bind_arguments(prompt, args)
    )
    messages = render_prompt(result)
    if not messages:
        raise McpError(f"/{prompt.command}: the server returned an empty prompt")
    if all(role == "user" for role, _ in messages):
        return "\n\n".join(text for _, text in messages)
    return "\n\n".join(f"[{role}]\n{text}" for role, text in messages)


async def attach_resources(manager: McpManager, text: str) -> str:
    """``text`` with every ``@SERVER:URI`` of a configured server read and attached after it."""
    seen: list[tuple[str, str]] = []
    for match in _REFERENCE.finditer(text):
        server, uri = match.group(1), match.group(2).rstrip(".,;)")
        if server in manager.connections and (server, uri) not in seen:
            seen.append((server, uri))
    if not seen:
        return text
    blocks = []
    for server, uri in seen[:MAX_ATTACHED]:
        try:
            body = render_resource(await manager.read_resource(server, uri)).text
        except McpError as exc:
            body = f"(could not read it: {exc})"
        blocks.append(
            f'<resource server="{server}" uri="{redact(uri)}">\n{redact(body)}\n</resource>'
        )
    if len(seen) > MAX_ATTACHED:
        blocks.append(f"({len(seen) - MAX_ATTACHED} more references not attached)")
    return text + "\n\n" + "\n\n".join(blocks)
