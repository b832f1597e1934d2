"""Files the workspace supplies and clawnb reads by itself (clawnb.control.files), and what
becomes of them in the system prompt: links out, /proc, FIFOs, sockets, sizes — judged by
what the reader returns and what the prompt holds, with real files, links and FIFOs."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from clawnb.control.files import INSTRUCTION_MAX_BYTES, read_workspace_text
from clawnb.errors import UnsafeFileError
from clawnb.instructions import InstructionLoader
from clawnb.prompt import SystemPromptBuilder
from tests.conftest import scripted_model

CANARY = "canary-outside-file-contents-7331"
CANARY_KEY = "sk-or-v1-canaryPROMPTkey0123456789abcdefABCDEF"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A workspace, with a directory beside it that holds a "private key"."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "id_rsa").write_text(CANARY + "\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def test_a_link_that_stays_inside_its_directory_is_read(repo: Path):
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("Use tabs.\n")
    (repo / "AGENTS.md").symlink_to("docs/guide.md")
    assert read_workspace_text(repo / "AGENTS.md", root=repo) == "Use tabs.\n"


def test_a_link_out_of_the_directory_is_refused(repo: Path):
    (repo / "CLAUDE.md").symlink_to("../outside/id_rsa")
    with pytest.raises(UnsafeFileError, match="link that leads out of") as refused:
        read_workspace_text(repo / "CLAUDE.md", root=repo)
    assert CANARY not in str(refused.value)


def test_a_link_to_proc_self_environ_is_refused(repo: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CLAWNB_API_KEY", CANARY_KEY)
    (repo / "AGENTS.md").symlink_to("/proc/self/environ")
    with pytest.raises(UnsafeFileError) as refused:
        read_workspace_text(repo / "AGENTS.md", root=repo)
    assert CANARY_KEY not in str(refused.value)


def test_proc_sys_and_dev_are_refused_even_inside_the_root():
    # a walk that reaches "/" puts every file "inside": the system's views are still refused
    for path in (
        "/proc/self/environ",
        "/proc/self/cmdline",
        "/dev/null",
        "/sys/kernel/uevent_seqnum",
    ):
        if os.path.exists(path):
            with pytest.raises(UnsafeFileError, match="view of the system"):
                read_workspace_text(path, root="/")


def test_a_fifo_is_refused_without_blocking(repo: Path):
    # Opening a FIFO for reading blocks until a writer comes, forever here: the read runs in
    # a child process with a deadline, so a regression fails the test instead of hanging it.
    os.mkfifo(repo / "AGENTS.md")
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")  # a link to it, inside: refused as well
    code = (
        "import sys\n"
        "from clawnb.control.files import read_workspace_text\n"
        "from clawnb.errors import UnsafeFileError\n"
        "from clawnb.instructions import InstructionLoader\n"
        "for name in ('AGENTS.md', 'CLAUDE.md'):\n"
        "    try:\n"
        f"        read_workspace_text({str(repo)!r} + '/' + name, root={str(repo)!r})\n"
        "    except UnsafeFileError as exc:\n"
        "        print('refused:', exc)\n"
        f"print('loaded:', InstructionLoader(['AGENTS.md', 'CLAUDE.md']).load({str(repo)!r}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=True
    )
    assert done.stdout.count("is a FIFO, not a regular file") == 2, done.stdout
    assert "loaded: None" in done.stdout  # the loader skips it: not a file to it either


def test_a_socket_and_a_directory_are_refused(repo: Path):
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(repo / "AGENTS.md"))
        with pytest.raises(UnsafeFileError, match="is a socket"):
            read_workspace_text(repo / "AGENTS.md", root=repo)
    finally:
        server.close()
    (repo / "CLAUDE.md").mkdir()
    with pytest.raises(UnsafeFileError, match="is a directory"):
        read_workspace_text(repo / "CLAUDE.md", root=repo)


def test_a_device_is_refused_before_it_is_opened(repo: Path):
    # a link inside the root to a device: refused by where it leads (/dev), never opened
    (repo / "AGENTS.md").symlink_to("/dev/zero")
    with pytest.raises(UnsafeFileError):
        read_workspace_text(repo / "AGENTS.md", root=repo, max_bytes=10)


def test_a_file_over_the_cap_is_refused_and_one_at_the_cap_is_read(repo: Path):
    (repo / "big.md").write_bytes(b"x" * (INSTRUCTION_MAX_BYTES + 1))
    with pytest.raises(UnsafeFileError, match="larger than 256 KiB"):
        read_workspace_text(repo / "big.md", root=repo)
    (repo / "ok.md").write_bytes(b"y" * INSTRUCTION_MAX_BYTES)
    assert len(read_workspace_text(repo / "ok.md", root=repo)) == INSTRUCTION_MAX_BYTES
    # a sparse 1 TiB file: refused from its size, without reading a byte of it
    with open(repo / "huge.md", "wb") as fh:
        fh.truncate(1 << 40)
    with pytest.raises(UnsafeFileError, match="larger than"):
        read_workspace_text(repo / "huge.md", root=repo)


def test_a_missing_file_is_not_found(repo: Path):
    with pytest.raises(FileNotFoundError):
        read_workspace_text(repo / "nope.md", root=repo)
    (repo / "AGENTS.md").symlink_to("gone.md")  # dangling, inside
    with pytest.raises(FileNotFoundError):
        read_workspace_text(repo / "AGENTS.md", root=repo)


# -- the instruction loader --------------------------------------------------------------------


def test_instruction_links_out_become_a_note_and_send_nothing(
    repo: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("CLAWNB_API_KEY", CANARY_KEY)
    (repo / "AGENTS.md").symlink_to("/proc/self/environ")
    (repo / "CLAUDE.md").symlink_to("../outside/id_rsa")
    loader = InstructionLoader.default_files()
    text = loader.load(repo) or ""
    assert CANARY not in text and CANARY_KEY not in text and "PATH=" not in text
    assert f"# Instructions from {repo / 'AGENTS.md'} (not loaded)" in text
    assert f"# Instructions from {repo / 'CLAUDE.md'} (not loaded)" in text
    assert [path for path, _why in loader.skipped] == [repo / "CLAUDE.md", repo / "AGENTS.md"]


def test_a_linked_claw_folder_that_leads_out_is_not_followed(repo: Path):
    (repo.parent / "outside" / "instructions.md").write_text(CANARY)
    (repo / ".claw").symlink_to("../outside")
    text = InstructionLoader([".claw/instructions.md"]).load(repo) or ""
    assert CANARY not in text
    assert "not loaded" in text


def test_a_parent_level_file_may_not_lead_out_of_its_own_directory(repo: Path):
    # the walk goes up from the workspace: the parent's CLAUDE.md is judged against the
    # parent, so a link from it into a sibling folder is out too
    child = repo / "sub"
    child.mkdir()
    (repo / "CLAUDE.md").symlink_to("../outside/id_rsa")
    (repo / "AGENTS.md").write_text("Parent rules.")
    text = InstructionLoader(["CLAUDE.md", "AGENTS.md"]).load(child) or ""
    assert CANARY not in text
    assert "Parent rules." in text


def test_a_linked_instruction_file_inside_the_workspace_still_loads(repo: Path):
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("Be careful.")
    (repo / "CLAUDE.md").symlink_to("docs/guide.md")
    assert "Be careful." in (InstructionLoader(["CLAUDE.md"]).load(repo) or "")


# -- the system prompt -------------------------------------------------------------------------


def test_the_system_prompt_is_redacted(repo: Path, monkeypatch: pytest.MonkeyPatch):
    # an instruction file that is safe to read yet quotes a key: the key never leaves
    monkeypatch.setenv("CLAWNB_API_KEY", CANARY_KEY)
    dotenv_key = "canary-dotenv-in-prompt-5150-qwertyuiop"
    (repo / ".env").write_text(f"OPENROUTER_API_KEY={dotenv_key}\n")
    (repo / "AGENTS.md").write_text(f"Use the key {CANARY_KEY} and {dotenv_key}.")
    builder = SystemPromptBuilder(repo, include_git=False)
    builder.section("extra", f"another {CANARY_KEY}", static=True)
    prompt = builder.build()
    assert "Use the key *** and ***." in prompt
    assert CANARY_KEY not in prompt and dotenv_key not in prompt


def test_build_agent_sends_a_redacted_prompt_with_no_linked_secret(
    repo: Path, monkeypatch: pytest.MonkeyPatch
):
    from clawnb.session.assemble import build_agent

    monkeypatch.setenv("CLAWNB_API_KEY", CANARY_KEY)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(repo.parent / "xdg"))
    (repo / "AGENTS.md").symlink_to("/proc/self/environ")
    (repo / "CLAUDE.md").symlink_to("../outside/id_rsa")
    model = scripted_model(repo.parent / "script.jsonl", [{"text": "done"}])
    session = build_agent(workspace=repo, model=model, gate=False, prompt_suffix=CANARY_KEY)
    prompt = session.system_prompt
    assert CANARY not in prompt and CANARY_KEY not in prompt
    assert "(not loaded)" in prompt
