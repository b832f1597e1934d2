"""Real servers from the package index (mcp-server-time, mcp-server-git, mcp-server-fetch, all
on the SDK's 2.x line like clawnb) over stdio, and a streamable-HTTP server written with the
SDK's ``MCPServer`` on 127.0.0.1 — started, listed and called through clawnb's layer, with
the calls going through clawnb's real gate where approval matters."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading

import pytest

pytest.importorskip("mcp")
pytest.importorskip("mcp_server_git")
pytest.importorskip("mcp_server_fetch")

from clawnb.agent import SimpleAgent  # noqa: E402
from clawnb.events import Approval  # noqa: E402
from clawnb.gates import GatePipeline  # noqa: E402
from clawnb.mcp.manager import McpManager  # noqa: E402
from clawnb.permissions import PermissionEngine  # noqa: E402
from clawnb.providers.mock import MockProvider  # noqa: E402
from clawnb.types import AssistantTurn, Message, StopReason, ToolCall  # noqa: E402
from tests.mcp.helpers import entry, http_server, running, time_server, tool  # noqa: E402

pytestmark = pytest.mark.timeout(240)


def git(repo, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    path = tmp_path_factory.mktemp("repo")
    git(path, "init", "-q")
    (path / "README.md").write_text("hello\n")
    git(path, "add", "README.md")
    git(path, "-c", "user.email=t@example.com", "-c", "user.name=T", "commit", "-qm", "first")
    (path / "new.txt").write_text("not yet added\n")
    return path


@pytest.fixture(scope="module")
def page():
    """A local web page for mcp-server-fetch (refused by default: it is a private address)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path == "/robots.txt":
                self.send_response(404)
                self.end_headers()
                return
            body = b"<html><body><h1>Kestrel notes</h1><p>The kestrel hovers.</p></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/kestrel"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def manager(repo, tmp_path_factory):
    """time, git and fetch, started together once for the module (the manager's loop is its
    own, so it outlives each test's event loop)."""
    import asyncio

    servers = [
        time_server(),
        entry(
            "git", command=sys.executable, args=["-m", "mcp_server_git", "--repository", str(repo)]
        ),
        entry(
            "fetch", command=sys.executable, args=["-m", "mcp_server_fetch", "--allow-private-ips"]
        ),
    ]
    m = McpManager(servers, log_dir=tmp_path_factory.mktemp("logs"), workspace=repo)
    lines = asyncio.run(m.start())
    assert lines == []
    yield m
    m.close()


async def test_time_server_tools_are_named_mcp_time_and_answer_with_structured_json(manager):
    names = [t.definition.name for t in manager.tools() if t.mcp_server == "time"]
    assert names == ["mcp__time__get_current_time", "mcp__time__convert_time"]
    now = tool(manager, "get_current_time")
    result = await now.call({"timezone": "Asia/Tokyo"})
    assert result.startswith('{"datetime":"') and '"timezone":"Asia/Tokyo"' in result
    # the schema the model sees is the server's own
    assert now.definition.parameters["required"] == ["timezone"]
    # the server says read-only; without trust_annotations that is a hint, not a trait
    assert (now.read_only_hint, now.read_only) is not None and (True, False) == (
        now.read_only_hint,
        now.read_only,
    )


async def test_git_server_reads_the_repository(manager, repo):
    status = await tool(manager, "git_status").call({"repo_path": str(repo)})
    assert "new.txt" in status
    log = await tool(manager, "git_log").call({"repo_path": str(repo)})
    assert "first" in log


async def test_git_servers_mutating_tool_asks_and_a_denial_leaves_the_repository_alone(
    manager, repo
):
    add = tool(manager, "git_add")
    asked: list[str] = []

    async def deny(request):
        asked.append(request.call.name)
        return Approval.deny("not now")

    call = ToolCall("c1", add.definition.name, {"repo_path": str(repo), "files": ["new.txt"]})
    agent = SimpleAgent(
        MockProvider(
            [
                AssistantTurn(None, [call], StopReason.TOOL_USE),
                AssistantTurn("ok", [], StopReason.STOP),
            ]
        ),
        gate=GatePipeline(permissions=PermissionEngine.for_mode("default"), approve=deny),
        tools=[add],
    )
    messages = [Message.User("stage it")]
    await agent.chat(messages)
    assert asked == ["mcp__git__git_add"]
    assert git(repo, "status", "--porcelain") == "?? new.txt\n"  # still untracked


async def test_git_tools_marked_read_only_by_the_user_run_without_asking(repo, tmp_path):
    trusted = entry(
        "git",
        command=sys.executable,
        args=["-m", "mcp_server_git", "--repository", str(repo)],
        read_only=["git_status"],
    )
    async with running(trusted, log_dir=tmp_path) as m:
        status = tool(m, "git_status")
        assert status.read_only and not tool(m, "git_add").read_only

        async def refuse(request):  # never asked
            raise AssertionError(f"asked about {request.call.name}")

        call = ToolCall("c1", status.definition.name, {"repo_path": str(repo)})
        agent = SimpleAgent(
            MockProvider(
                [
                    AssistantTurn(None, [call], StopReason.TOOL_USE),
                    AssistantTurn("ok", [], StopReason.STOP),
                ]
            ),
            gate=GatePipeline(permissions=PermissionEngine.for_mode("default"), approve=refuse),
            tools=[status],
        )
        messages = [Message.User("status?")]
        await agent.chat(messages)
        assert "new.txt" in messages[2].content  # the tool result


async def test_fetch_server_reads_a_local_page_and_offers_its_prompt(manager, page):
    text = await tool(manager, "fetch").call({"url": page})
    assert "Kestrel notes" in text and "The kestrel hovers." in text
    prompts = await manager.list_prompts("fetch")
    assert [p.name for _, p in prompts] == ["fetch"]


async def test_streamable_http_server_with_bearer_token_and_headers(tmp_path, monkeypatch):
    token = "tok-" + "9f3a" * 6
    monkeypatch.setenv("HTTP_TEST_TOKEN", token)
    monkeypatch.setenv("TEAM_NAME", "kestrels")
    with http_server(token) as url:
        server = entry(
            "web",
            url=url,
            bearer_token_env_var="HTTP_TEST_TOKEN",
            headers={"X-Team": "${TEAM_NAME}"},
        )
        async with running(server, log_dir=tmp_path) as m:
            assert m.start_lines == []
            # an SDK server wraps a plain return as {"result": …}: compact JSON, no second copy
            assert await tool(m, "add").call({"a": 2, "b": 3}) == '{"result":5}'
            assert await tool(m, "headers").call({}) == '{"result":"kestrels"}'
            # the server echoes the token: the model never sees it
            echoed = await tool(m, "echo_token").call({})
            assert token not in echoed and "***" in echoed


async def test_http_server_refusing_the_token_is_one_failed_line(tmp_path, monkeypatch):
    monkeypatch.setenv("HTTP_TEST_TOKEN", "wrong-token-value-123")
    with http_server("the-right-token-456") as url:
        bad = entry("web", url=url, bearer_token_env_var="HTTP_TEST_TOKEN")
        unset = entry("web2", url=url, bearer_token_env_var="NOT_SET_ANYWHERE")
        async with running(bad, unset, log_dir=tmp_path) as m:
            first, second = m.start_lines
    assert first.startswith("web: failed to start: ") and first.endswith("see `%claw mcp log web`")
    assert "401" in first
    assert second.startswith("web2: failed to start: bearer_token_env_var: $NOT_SET_ANYWHERE")
