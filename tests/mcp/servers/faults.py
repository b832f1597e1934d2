"""An MCP server over stdio (the SDK's low-level ``Server``) whose tools misbehave on purpose.

Run: ``python faults.py``. Effects are written under ``$FAULTS_DIR`` (the test's temporary
folder), so a test can check what really happened on the server's side:

* ``echo(text)`` — returns the text;
* ``crash`` — the process exits with code 3 in the middle of the call;
* ``hang`` — never answers;
* ``slow(seconds)`` — writes ``slow.started``, sleeps; writes ``slow.cancelled`` if the client
  cancels the request (``notifications/cancelled``);
* ``big(megabytes)`` — returns that much text;
* ``image`` — a 640×480 PNG and a line of text;
* ``structured`` / ``mismatch`` — structured content that matches / does not match the
  declared output schema;
* ``fails`` — an ``isError`` result;
* ``rows(n)`` — structured content: ``{"rows": [{"id": i, "name": …}, …]}``, ``n`` rows;
* ``mixed`` — audio, a resource link and embedded text and binary resources;
* prompts: ``review(topic)``; resources: ``memo://notes``;
* ``children`` — starts two ``sleep`` processes (in the server's process group) and writes
  the server's and their pids to ``children.pids``.
"""

from __future__ import annotations

import base64
import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

OUT = Path(os.environ.get("FAULTS_DIR", "."))
_TEXT = {"type": "object", "properties": {"text": {"type": "string"}}}
_NONE: dict[str, object] = {"type": "object", "properties": {}}
_COUNT_SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer"}},
    "required": ["n"],
}

TOOLS = [
    types.Tool(name="echo", description="Echo the text back.", input_schema=_TEXT),
    types.Tool(name="crash", description="Exit in the middle of the call.", input_schema=_NONE),
    types.Tool(name="hang", description="Never answer.", input_schema=_NONE),
    types.Tool(
        name="slow",
        description="Sleep for a while.",
        input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}},
    ),
    types.Tool(
        name="big",
        description="Return a lot of text.",
        input_schema={"type": "object", "properties": {"megabytes": {"type": "number"}}},
    ),
    types.Tool(name="image", description="Return a picture.", input_schema=_NONE),
    types.Tool(
        name="structured",
        description="A count.",
        input_schema=_NONE,
        output_schema=_COUNT_SCHEMA,
    ),
    types.Tool(
        name="mismatch",
        description="A count that does not follow its own schema.",
        input_schema=_NONE,
        output_schema=_COUNT_SCHEMA,
    ),
    types.Tool(name="fails", description="Report an error.", input_schema=_NONE),
    types.Tool(
        name="rows",
        description="A table as structured content.",
        input_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
    ),
    types.Tool(name="mixed", description="Every other kind of content.", input_schema=_NONE),
    types.Tool(name="children", description="Start child processes.", input_schema=_NONE),
]


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def text(value: str) -> types.TextContent:
    return types.TextContent(type="text", text=value)


async def list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    name = params.name
    if name == "echo":
        return types.CallToolResult(content=[text(str(args.get("text", "")))])
    if name == "crash":
        os._exit(3)
    if name == "hang":
        await anyio.sleep_forever()
    if name == "slow":
        (OUT / "slow.started").write_text("started")
        try:
            await anyio.sleep(float(args.get("seconds", 30)))
        except anyio.get_cancelled_exc_class():
            (OUT / "slow.cancelled").write_text("cancelled")
            raise
        return types.CallToolResult(content=[text("slept")])
    if name == "big":
        size = int(float(args.get("megabytes", 1)) * 1_000_000)
        return types.CallToolResult(content=[text("x" * size)])
    if name == "image":
        data = base64.b64encode(png(640, 480)).decode()
        return types.CallToolResult(
            content=[
                text("a grey square"),
                types.ImageContent(type="image", data=data, mime_type="image/png"),
            ]
        )
    if name == "structured":
        return types.CallToolResult(content=[text('{"n": 3}')], structured_content={"n": 3})
    if name == "mismatch":
        return types.CallToolResult(
            content=[text("the count is unknown today")],
            structured_content={"n": "many"},
        )
    if name == "rows":
        rows = [{"id": i, "name": f"row {i}"} for i in range(int(args.get("n", 3)))]
        return types.CallToolResult(
            content=[text(json.dumps({"rows": rows}))], structured_content={"rows": rows}
        )
    if name == "fails":
        return types.CallToolResult(content=[text("disk full")], is_error=True)
    if name == "mixed":
        wav = base64.b64encode(b"RIFF" + b"\x00" * 2000).decode()
        blob = base64.b64encode(b"\x00\x01\x02" * 100).decode()
        return types.CallToolResult(
            content=[
                types.AudioContent(type="audio", data=wav, mime_type="audio/wav"),
                types.ResourceLink(
                    type="resource_link",
                    name="report",
                    uri="file:///srv/report.txt",
                    mime_type="text/plain",
                    description="the weekly report",
                ),
                types.EmbeddedResource(
                    type="resource",
                    resource=types.TextResourceContents(
                        uri="memo://today", mime_type="text/plain", text="buy milk"
                    ),
                ),
                types.EmbeddedResource(
                    type="resource",
                    resource=types.BlobResourceContents(
                        uri="blob://data", mime_type="application/octet-stream", blob=blob
                    ),
                ),
            ]
        )
    if name == "children":
        kids = [
            subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            for _ in range(2)
        ]
        pids = [os.getpid(), *(k.pid for k in kids)]
        (OUT / "children.pids").write_text(" ".join(map(str, pids)))
        return types.CallToolResult(content=[text(" ".join(map(str, pids)))])
    return types.CallToolResult(content=[text(f"unknown tool {name}")], is_error=True)


async def list_prompts(ctx, params) -> types.ListPromptsResult:
    arg = types.PromptArgument(name="topic", description="what to review", required=True)
    return types.ListPromptsResult(
        prompts=[types.Prompt(name="review", description="Review a topic.", arguments=[arg])]
    )


async def get_prompt(ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
    topic = (params.arguments or {}).get("topic", "?")
    return types.GetPromptResult(
        messages=[types.PromptMessage(role="user", content=text(f"Please review {topic}."))]
    )


async def list_resources(ctx, params) -> types.ListResourcesResult:
    return types.ListResourcesResult(
        resources=[types.Resource(name="notes", uri="memo://notes", mime_type="text/plain")]
    )


async def read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    return types.ReadResourceResult(
        contents=[
            types.TextResourceContents(uri=params.uri, mime_type="text/plain", text="the notes")
        ]
    )


server = Server(
    "faults",
    version="1.0",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
    on_list_resources=list_resources,
    on_read_resource=read_resource,
)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    print(f"faults server {os.getpid()} starting", file=sys.stderr, flush=True)
    anyio.run(main)
