"""What the model reads from an MCP result, built from the SDK's own result types (no server
needed for these; the same kinds of content come from a real server in test_mcp_faults)."""

from __future__ import annotations

import base64
import struct
import zlib

import pytest

mcp_types = pytest.importorskip("mcp_types")

from clawnb.mcp.results import (  # noqa: E402
    cap_text,
    image_size,
    render_prompt,
    render_resource,
    render_result,
)

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def text(value: str):
    return mcp_types.TextContent(type="text", text=value)


def png(width: int, height: int) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    body = b"IHDR" + header
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + body + struct.pack(">I", zlib.crc32(body))


def test_structured_content_is_compact_json_and_its_json_copy_in_text_is_dropped():
    result = mcp_types.CallToolResult(
        content=[text('{\n  "n": 3\n}'), text("three items")], structured_content={"n": 3}
    )
    rendered = render_result(result, output_schema=SCHEMA)
    assert rendered.text == '{"n":3}\nthree items'
    assert not rendered.is_error


def test_structured_content_that_breaks_the_output_schema_falls_back_to_the_content():
    result = mcp_types.CallToolResult(
        content=[text("many things")], structured_content={"n": "many"}
    )
    rendered = render_result(result, output_schema=SCHEMA)
    assert rendered.text.endswith("\nmany things")
    assert (
        "does not match the tool's output schema ('many' is not of type 'integer')" in rendered.text
    )
    # an unusable schema is no crash either
    broken = render_result(result, output_schema={"type": "no-such-type"})
    assert broken.text.endswith("many things")


def test_an_error_result_is_flagged_with_its_text():
    result = mcp_types.CallToolResult(content=[text("disk full")], is_error=True)
    assert (render_result(result).text, render_result(result).is_error) == ("disk full", True)
    empty = mcp_types.CallToolResult(content=[], is_error=True)
    assert render_result(empty).text == "the tool reported an error without a message"


def test_an_image_is_kept_as_data_and_read_as_its_type_and_size():
    data = base64.b64encode(png(640, 480)).decode()
    result = mcp_types.CallToolResult(
        content=[
            text("chart:"),
            mcp_types.ImageContent(type="image", data=data, mime_type="image/png"),
        ]
    )
    rendered = render_result(result)
    assert rendered.text == "chart:\n[image/png 640×480]"
    (image,) = rendered.images
    assert (image.mime_type, image.width, image.height, image.to_bytes()) == (
        "image/png",
        640,
        480,
        png(640, 480),
    )


def test_image_sizes_come_from_gif_jpeg_and_webp_headers_too():
    gif = b"GIF89a" + struct.pack("<HH", 32, 16) + b"\x00" * 8
    sof = b"\xff\xc0" + struct.pack(">HBHH", 17, 8, 200, 300) + b"\x00" * 12
    jpeg = b"\xff\xd8" + b"\xff\xe1" + struct.pack(">H", 6) + b"Exif" + sof
    webp = (
        b"RIFF\x00\x00\x00\x00WEBPVP8X"
        + b"\x00" * 8
        + (99).to_bytes(3, "little")
        + (49).to_bytes(3, "little")
    )
    assert [image_size(d) for d in (gif, jpeg, webp, b"not an image")] == [
        (32, 16),
        (300, 200),
        (100, 50),
        None,
    ]


def test_audio_links_and_embedded_resources_become_lines_the_model_can_read():
    blob = base64.b64encode(b"\x00" * 3000).decode()
    result = mcp_types.CallToolResult(
        content=[
            mcp_types.AudioContent(type="audio", data=blob, mime_type="audio/wav"),
            mcp_types.ResourceLink(
                type="resource_link", name="report", uri="file:///r.txt", description="weekly"
            ),
            mcp_types.EmbeddedResource(
                type="resource",
                resource=mcp_types.TextResourceContents(uri="memo://a", text="buy milk"),
            ),
            mcp_types.EmbeddedResource(
                type="resource",
                resource=mcp_types.BlobResourceContents(
                    uri="blob://b", mime_type="application/zip", blob=blob
                ),
            ),
        ]
    )
    assert render_result(result).text.splitlines() == [
        "[audio/wav, 3.0 KB of audio]",
        "[resource link: report <file:///r.txt>] weekly",
        "[resource memo://a]",
        "buy milk",
        "[resource blob://b: application/zip, 3.0 KB]",
    ]


def test_output_over_the_cap_is_cut_with_a_marker_saying_how_much_there_was():
    result = mcp_types.CallToolResult(content=[text("y" * 300_000)])
    rendered = render_result(result, max_chars=2000)
    assert rendered.truncated
    assert rendered.text.startswith(
        "y" * 2000 + "\n\n[... cut here: the result was 300,000 characters"
    )
    assert len(rendered.text) < 2200


def test_every_result_passes_the_redactor_even_across_the_cut(monkeypatch):
    key = "sk-or-v1-" + "c4n4ry" * 8
    monkeypatch.setenv("OPENROUTER_API_KEY", key)
    result = mcp_types.CallToolResult(content=[text(f"found {key} in .env")])
    assert render_result(result).text == "found *** in .env"
    # a key that straddles the cut is hidden, not half-shown
    long = "a" * 1990 + key + "b" * 5000
    capped, cut = cap_text(long, 2000)
    assert cut and key[:10] not in capped
    structured = mcp_types.CallToolResult(content=[], structured_content={"token": key})
    assert key not in render_result(structured).text


def test_prompts_and_resources_render_for_the_command_registry(monkeypatch):
    prompt = mcp_types.GetPromptResult(
        messages=[mcp_types.PromptMessage(role="user", content=text("Please review x."))]
    )
    assert render_prompt(prompt) == [("user", "Please review x.")]
    resource = mcp_types.ReadResourceResult(
        contents=[mcp_types.TextResourceContents(uri="memo://n", text="the notes")]
    )
    assert render_resource(resource).text == "[resource memo://n]\nthe notes"


class _Namespace:
    """A front end's live namespace, as the notebook's inspect_variable offers it."""

    def __init__(self) -> None:
        self.values: dict[str, object] = {}

    def bind_value(self, base: str, value: object) -> str:
        name = f"mcp_{base}_{len(self.values) + 1}"
        self.values[name] = value
        return name


async def test_a_big_structured_result_is_bound_where_a_namespace_is_and_bind_over_chars_0_never(
    tmp_path,
):
    from clawnb.mcp.tools import ValueBinder
    from tests.mcp.helpers import faults, running

    namespace = _Namespace()
    assert isinstance(namespace, ValueBinder)
    servers = (faults(tmp_path, "big"), faults(tmp_path, "never", bind_over_chars=0))
    async with running(*servers, log_dir=tmp_path / "logs") as m:
        tools = {t.definition.name: t for t in m.tools()}
        small = await tools["mcp__big__rows"].call({"n": 3})  # without a namespace: as JSON
        m.binder = namespace
        bound = await tools["mcp__big__rows"].call({"n": 2000})
        kept = await tools["mcp__never__rows"].call({"n": 2000})
        tiny = await tools["mcp__big__rows"].call({"n": 3})
    assert (
        small == tiny == '{"rows":[{"id":0,"name":"row 0"},{"id":1,"name":"row 1"},'
        '{"id":2,"name":"row 2"}]}'
    )
    assert "bound to the kernel variable `mcp_big_rows_1`" in bound
    assert len(namespace.values["mcp_big_rows_1"]["rows"]) == 2000
    assert kept.startswith('{"rows":[') and "row 1999" in kept  # 0: never bound
    assert list(namespace.values) == ["mcp_big_rows_1"]
