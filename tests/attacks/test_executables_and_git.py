"""Issue 21 part B — a cloned repository is hostile: what clawnb runs itself, its own git, the
sandbox's side doors and limits, and secret files while nobody is asked. Real bubblewrap, real
git, real sockets; every verdict is an effect — a marker file a planted program would write, a
canary in what the model was sent, a listener that got a connection, a count of processes
that really ran.

Planted programs write their marker into a directory *outside* the workspace and outside
``/tmp`` (which the sandbox replaces with a private one), so a marker that stays absent means
the program never ran, not that its write was confined. Each attack also has a control: the
same planted thing run the plain way (``git status`` by hand) does write its marker.
"""

from __future__ import annotations

import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawnb.config import Config
from clawnb.control.git import status_line
from clawnb.control.process import pids_cgroup
from clawnb.control.sandbox import bwrap_path, policy_for, status_from_config
from clawnb.events import Approval
from clawnb.gates import build_gate
from clawnb.prompt import git_status
from clawnb.session.assemble import build_agent
from clawnb.tools import BashTool, ToolError
from clawnb.tools.grep import GrepTool, system_rg
from clawnb.types import ToolCall
from tests.conftest import scripted_model

from .harness import CANARIES, Attack, AttackerServer, make_world, run_attack

REAL_BWRAP = bwrap_path()
if REAL_BWRAP is None and os.environ.get("CLAWNB_SANDBOX_TESTS") == "require":
    raise RuntimeError(
        "CLAWNB_SANDBOX_TESTS=require but bwrap is missing: apt-get install bubblewrap"
    )
needs_bwrap = pytest.mark.skipif(
    REAL_BWRAP is None, reason="bubblewrap is not installed (apt-get install bubblewrap)"
)
pytestmark = pytest.mark.timeout(120)

DOTENV = CANARIES["CANARY_DOTENV"]

# The interpreter itself, not a virtualenv's link to it: the sandbox hides the host's /tmp, and
# CI's clone (with its .venv) may live there; the interpreter's own folder stays visible.
SANDBOX_PYTHON = os.path.realpath(sys.executable)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def outside() -> Iterator[Path]:
    """Where planted programs write their markers: visible from the sandbox (not /tmp), not
    writable from it (not the workspace)."""
    base = Path.home() / ".cache" / "clawnb-test-canaries"
    base.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="h2-", dir=base))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def plant(path: Path, body: str) -> Path:
    """An executable shell script at ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return path


def marker_script(outside: Path, name: str = "ran") -> tuple[Path, Path]:
    """A program that records that it ran (and passes stdin through, as a filter would)."""
    marker = outside / f"{name}.marker"
    script = plant(outside / f"{name}.sh", f'echo "$0 $*" >> {marker}\ncat\n')
    return script, marker


def git(ws: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-C", str(ws), *args], capture_output=True, text=True, env=env, check=False
    )


def make_repo(ws: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(ws)], check=True)
    (ws / "a.txt").write_text("hello\n")
    git(ws, "add", "a.txt")
    git(ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")


def touch_later(path: Path) -> None:
    """Change the file's stat data, not its content: git must look at it again (and run its
    clean filter, refresh the index) at the next status."""
    st = path.stat()
    os.utime(path, (st.st_atime + 100, st.st_mtime + 100))


def session_prompt(ws: Path, tmp_path: Path) -> str:
    """The system prompt a new session on ``ws`` is built with (its ``Git:`` line)."""
    model = scripted_model(tmp_path / "model.jsonl", [{"text": "ok"}])
    return build_agent(Config(), workspace=ws, model=model).system_prompt


def sandboxed(ws: Path, **kw) -> BashTool:
    status = policy_for(ws, **kw)
    assert status.policy is not None, status.describe()
    return BashTool(ws, sandbox=status, kill_grace=0.2)


@pytest.fixture
def bare_path(tmp_path: Path) -> str:
    """A PATH folder with bash and the basic tools, but no bwrap, rg or git."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for tool in ("bash", "sh", "echo", "cat", "touch", "rev", "tr", "sed", "ls", "env"):
        found = shutil.which(tool)
        if found:
            (folder / tool).symlink_to(found)
    return str(folder)


# -- executables from trusted places only ------------------------------------------------------


@needs_bwrap
async def test_a_bwrap_and_bash_planted_in_the_workspace_venv_are_never_run(
    ws, outside, monkeypatch
):
    marker = outside / "planted.marker"
    for name in ("bwrap", "bash"):
        plant(ws / ".venv" / "bin" / name, f'echo "{name} $*" >> {marker}\nexit 0\n')
    monkeypatch.setenv("PATH", f"{ws / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(ws)
    status = policy_for(ws)
    assert status.policy is not None and status.policy.bwrap == REAL_BWRAP
    assert status.describe() == "sandboxed: workspace-write, no network"
    bash = BashTool(ws, sandbox=status, kill_grace=0.2)
    result = await bash.call({"command": f"echo inside > made.txt; touch {outside}/escaped"})
    assert (ws / "made.txt").read_text() == "inside\n"  # the real bash ran, sandboxed
    assert "Read-only file system" in result and not (outside / "escaped").exists()
    assert not marker.exists()


async def test_with_only_a_planted_bwrap_bash_says_not_sandboxed_or_refuses(
    ws, outside, bare_path, monkeypatch
):
    marker = outside / "planted.marker"
    plant(ws / ".venv" / "bin" / "bwrap", f'echo "$*" >> {marker}\nexit 0\n')
    # the workspace venv first, and a relative entry naming it too
    monkeypatch.setenv("PATH", os.pathsep.join([str(ws / ".venv" / "bin"), ".venv/bin", bare_path]))
    monkeypatch.chdir(ws)
    auto = policy_for(ws)
    assert auto.policy is None
    line = auto.describe()
    assert line.startswith("not sandboxed (bubblewrap (bwrap) is not on PATH outside the workspace")
    assert ".venv/bin/bwrap: inside the workspace" in line
    required = policy_for(ws, mode="required")
    with pytest.raises(ToolError, match='mode = "required"'):
        await BashTool(ws, sandbox=required).call({"command": "touch ran-anyway"})
    assert not (ws / "ran-anyway").exists()
    assert not marker.exists()


async def test_a_planted_rg_and_grep_are_never_run_and_search_still_answers(
    ws, outside, monkeypatch
):
    marker = outside / "planted.marker"
    for name in ("rg", "grep"):
        plant(ws / ".venv" / "bin" / name, f'echo "{name} $*" >> {marker}\nexit 1\n')
    (ws / "notes.txt").write_text("alpha\nneedle here\n")
    monkeypatch.setenv("PATH", f"{ws / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    for engine in ("auto", "grep"):
        tool = GrepTool(ws, engine=engine)
        assert await tool.call({"pattern": "needle"}) == "notes.txt:2: needle here"
    if system_rg(ws) is not None:
        assert (await GrepTool(ws, engine="rg").call({"pattern": "need"})).startswith("notes")
    assert not marker.exists()


async def test_search_processes_get_the_scrubbed_environment(ws, tmp_path, outside, monkeypatch):
    # an rg in a trusted place (outside the workspace, ours, not writable by others) that
    # records the environment it was given
    dump = outside / "rg-env.txt"
    plant(
        tmp_path / "trusted-bin" / "rg",
        f"""\
        case "$1" in --version) echo "ripgrep 99.0.0"; exit 0;; esac
        env >> {dump}
        exit 1
        """,
    )
    monkeypatch.setenv("PATH", f"{tmp_path / 'trusted-bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GITHUB_TOKEN", CANARIES["CANARY_TOKEN"])
    monkeypatch.setenv("CLAWNB_API_KEY", CANARIES["CANARY_AGENT_KEY"])
    (ws / "notes.txt").write_text("nothing to see\n")
    assert await GrepTool(ws, engine="rg").call({"pattern": "x"}) == "no matches found"
    seen = dump.read_text()
    assert "PATH=" in seen  # it did run, with an environment
    assert CANARIES["CANARY_TOKEN"] not in seen and CANARIES["CANARY_AGENT_KEY"] not in seen


def test_clawnbs_git_is_never_the_workspace_one(ws, outside, monkeypatch):
    make_repo(ws)
    marker = outside / "planted.marker"
    plant(ws / ".venv" / "bin" / "git", f'echo "git $*" >> {marker}\necho "true"\n')
    monkeypatch.setenv("PATH", f"{ws / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert git_status(ws) == "branch main, 1 changed file"  # .venv/ is new
    assert not marker.exists()


# -- clawnb's own git runs nothing of the repository's -----------------------------------------


def test_a_commondir_to_another_git_dir_is_refused_and_its_fsmonitor_never_runs(
    ws, outside, tmp_path
):
    make_repo(ws)
    script, marker = marker_script(outside, "fsmonitor")
    shutil.copytree(ws / ".git", ws / "evilgit")
    git(ws, f"--git-dir={ws / 'evilgit'}", "config", "core.fsmonitor", str(script))
    (ws / ".git" / "commondir").write_text("../evilgit\n")
    git(ws, "status", "--porcelain")  # control: git as a person runs it follows commondir
    assert marker.exists()
    marker.unlink()
    prompt = session_prompt(ws, tmp_path)
    assert "Git: state not shown: .git/commondir points git at another repository" in prompt
    assert not marker.exists()


@pytest.mark.parametrize("kind", ["file", "link"])
def test_a_dot_git_that_is_a_file_or_a_link_is_refused(ws, outside, tmp_path, kind):
    elsewhere = tmp_path / "elsewhere"
    make_repo(elsewhere)
    script, marker = marker_script(outside, "fsmonitor")
    git(elsewhere, "config", "core.fsmonitor", str(script))
    (ws / "a.txt").write_text("hello\n")
    if kind == "file":
        (ws / ".git").write_text(f"gitdir: {elsewhere / '.git'}\n")
    else:
        (ws / ".git").symlink_to(elsewhere / ".git")
    git(ws, "status", "--porcelain")
    assert marker.exists()
    marker.unlink()
    status = git_status(ws)
    assert status is not None and status.startswith("state not shown: .git is a")
    assert not marker.exists()


@pytest.mark.parametrize("sandbox", [False, True], ids=["git-alone", "git-in-sandbox"])
def test_a_config_copied_back_with_fsmonitor_hooks_and_a_filter_runs_nothing(
    ws, outside, tmp_path, monkeypatch, sandbox
):
    """What the move-aside trick leaves (``mv .git .git2 && cp -r .git2 .git`` with a new
    config, done where nothing stopped it): every program that config names, and one named
    by ``GIT_CONFIG_*`` in the environment. ``sandbox=False`` checks git's own neutralisation
    alone, without the read-only bubblewrap layer around it."""
    if sandbox and REAL_BWRAP is None:
        pytest.skip("bubblewrap is not installed")
    make_repo(ws)
    fsmonitor, fs_marker = marker_script(outside, "fsmonitor")
    clean, filter_marker = marker_script(outside, "filter")
    env_fsmonitor, env_marker = marker_script(outside, "env-fsmonitor")
    hook_marker = outside / "hook.marker"
    plant(ws / "hooks" / "post-index-change", f'echo "$0" >> {hook_marker}\n')
    with open(ws / ".git" / "config", "a") as fh:
        fh.write(
            f"[core]\n\tfsmonitor = {fsmonitor}\n\thooksPath = hooks\n"
            f'[filter "x.y"]\n\tclean = {clean}\n\tsmudge = {clean}\n\trequired = true\n'
        )
    (ws / ".gitattributes").write_text("*.txt filter=x.y\n")
    markers = [fs_marker, filter_marker, hook_marker]

    touch_later(ws / "a.txt")
    git(ws, "status", "--porcelain")  # control: a plain git status runs all three
    assert [m.exists() for m in markers] == [True, True, True]
    for m in markers:
        m.unlink()
    subprocess.run(["git", "-C", str(ws), "config", "--unset", "core.fsmonitor"], check=True)
    planted_env = {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": str(env_fsmonitor),
    }
    git(ws, "status", "--porcelain", env={**os.environ, **planted_env})
    assert env_marker.exists()
    for m in [*markers, env_marker]:
        m.unlink(missing_ok=True)
    with open(ws / ".git" / "config", "a") as fh:
        fh.write(f"[core]\n\tfsmonitor = {fsmonitor}\n")

    for name, value in planted_env.items():
        monkeypatch.setenv(name, value)
    touch_later(ws / "a.txt")
    status = status_line(ws, sandbox=sandbox)
    assert status == "branch main, 2 changed files"  # .gitattributes and hooks/ are new
    if sandbox:
        assert "Git: branch main, 2 changed files" in session_prompt(ws, tmp_path)
    assert [m.exists() for m in [*markers, env_marker]] == [False, False, False, False]


# -- the sandbox keeps .git safe ---------------------------------------------------------------


@needs_bwrap
async def test_sandboxed_bash_cannot_swap_or_redirect_dot_git(ws, outside):
    make_repo(ws)
    script, marker = marker_script(outside, "fsmonitor")
    config_before = (ws / ".git" / "config").read_bytes()
    evil_config = config_before.decode() + f"[core]\n\tfsmonitor = {script}\n"
    bash = sandboxed(ws)
    result = await bash.call(
        {
            "command": textwrap.dedent(
                f"""\
                mv .git .git-aside
                cp -r .git .git2 && printf '%s' '{evil_config}' > .git2/config && mv -T .git2 .git
                rm -rf .git/config; printf '%s' '{evil_config}' >> .git/config
                cp -r .git evilgit && printf '%s' '{evil_config}' > evilgit/config
                echo ../evilgit > .git/commondir
                printf '#!/bin/sh\\necho hook >> {marker}\\n' > .git/hooks/post-index-change
                chmod +x .git/hooks/post-index-change
                echo done
                """
            )
        }
    )
    assert "done" in result
    assert "Device or resource busy" in result  # .git is a mount point: no rename, no swap
    assert not (ws / ".git-aside").exists()
    assert (ws / ".git" / "config").read_bytes() == config_before
    assert not (ws / ".git" / "commondir").exists()
    assert "removed .git/commondir" in result
    assert not (ws / ".git" / "hooks" / "post-index-change").exists()
    # the effect that matters: the person's own git status afterwards runs nothing planted
    touch_later(ws / "a.txt")
    assert git(ws, "status", "--porcelain").returncode == 0
    assert not marker.exists()


# -- no side doors -------------------------------------------------------------------------------


def _unix_listener(path: Path) -> socket.socket:
    path.parent.mkdir(parents=True, exist_ok=True)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(4)
    server.setblocking(False)
    return server


def _connected(server: socket.socket) -> bool:
    return bool(select.select([server], [], [], 0)[0])


CONNECT = (
    "import socket, sys\n"
    "for p in sys.argv[1:]:\n"
    "    c = socket.socket(socket.AF_UNIX)\n"
    "    try:\n"
    "        c.connect(p); print('connected', p)\n"
    "    except OSError as exc:\n"
    "        print('refused', p, exc.strerror)\n"
)


@needs_bwrap
@pytest.mark.parametrize("network", ["off", "on"])
async def test_no_host_unix_socket_is_reachable_from_the_sandbox(ws, outside, monkeypatch, network):
    runtime = outside / "run-user"  # a $XDG_RUNTIME_DIR stand-in (D-Bus, Wayland live there)
    agent = outside / "ssh-agent" / "agent.sock"
    places = {"xdg": runtime / "bus", "ssh": agent, "jupyter": outside / "jrt" / "jpserver.sock"}
    if os.access("/run", os.W_OK):  # root: the real /run, with a name nobody else uses
        places["run"] = Path(f"/run/clawnb-test-{uuid.uuid4().hex[:8]}.sock")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("SSH_AUTH_SOCK", str(agent))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(outside / "jrt"))
    servers = {name: _unix_listener(path) for name, path in places.items()}
    try:
        script = ws / "connect.py"
        script.write_text(CONNECT)
        targets = " ".join(str(p) for p in places.values())
        result = await sandboxed(ws, network=network).call(
            {"command": f"{SANDBOX_PYTHON} connect.py {targets}"}
        )
        assert "connected" not in result, result
        assert [name for name, s in servers.items() if _connected(s)] == []
        # control: the same program outside the sandbox reaches every one of them
        done = subprocess.run(
            [sys.executable, str(script), *map(str, places.values())],
            capture_output=True,
            text=True,
        )
        assert done.stdout.count("connected") == len(places)
    finally:
        for name, server in servers.items():
            server.close()
            places[name].unlink(missing_ok=True)


@needs_bwrap
@pytest.mark.parametrize("network", ["off", "on"])
async def test_jupyter_connection_files_are_not_visible_from_the_sandbox(
    ws, outside, monkeypatch, network
):
    key = "connection-file-hmac-key-" + uuid.uuid4().hex
    explicit = outside / "explicit-runtime"
    data_home = outside / "data-home"
    for folder in (explicit, data_home / "jupyter" / "runtime"):
        folder.mkdir(parents=True)
        (folder / "kernel-1234.json").write_text(f'{{"key": "{key}", "shell_port": 1}}')
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(explicit))
    monkeypatch.setenv("XDG_DATA_HOME", str(data_home))
    named = outside / "argv" / "kernel-5678.json"  # the one on a kernel's own command line
    named.parent.mkdir()
    named.write_text(f'{{"key": "{key}"}}')
    monkeypatch.setattr(sys, "argv", [sys.argv[0], "-f", str(named)])
    command = (
        f"cat {explicit}/kernel-*.json {data_home}/jupyter/runtime/kernel-*.json {named}; "
        f"ls -A {explicit}"
    )
    result = await sandboxed(ws, network=network).call({"command": command})
    assert key not in result
    plain = subprocess.run(["bash", "-c", command], capture_output=True, text=True).stdout
    assert plain.count(key) == 3  # control: they are readable outside


# -- limits --------------------------------------------------------------------------------------

BOMB = f"""{SANDBOX_PYTHON} -c '
import os, sys, time
for depth in range(8):  # at most 256 processes even with no limit at all
    try:
        os.fork()
    except BlockingIOError as exc:
        print("fork refused:", exc.strerror, file=sys.stderr, flush=True)
        break
print("alive", flush=True)
time.sleep(0.5)
'"""


def _limits_from_config(**keys: int):
    """A policy built from a ``[sandbox]`` config section (each key as a person writes it)."""
    config = Config.model_validate({"sandbox": keys})
    return status_from_config(config, os.getcwd()).policy


@needs_bwrap
async def test_a_fork_bomb_meets_the_process_limit(ws, monkeypatch):
    monkeypatch.chdir(ws)
    policy = _limits_from_config(max_processes=32)
    assert policy is not None and policy.max_processes == 32
    # the kernel exempts root from RLIMIT_NPROC: as root the limit needs a pids cgroup
    if os.geteuid() == 0 and pids_cgroup(32) is None:
        pytest.skip("no process limit possible here: root without a pids cgroup we may create")
    if os.geteuid() != 0 and shutil.which("prlimit") is None:
        pytest.skip("no process limit possible here: prlimit (util-linux) is not installed")
    result = await BashTool(ws, sandbox=policy, kill_grace=0.2).call(
        {"command": BOMB, "timeout": 60}
    )
    alive = result.splitlines().count("alive")
    assert 0 < alive <= 32, result  # without the limit, all 256 run
    assert "fork refused: Resource temporarily unavailable" in result
    assert "[sandbox: limit reached: at most 32 processes (max_processes)" in result
    # the classic one ends too, and the machine still starts processes afterwards
    classic = await BashTool(ws, sandbox=policy, kill_grace=0.2).call(
        {"command": ":(){ :|:& };:; sleep 1; echo over", "timeout": 60}
    )
    assert "over" in classic
    assert subprocess.run(["true"]).returncode == 0


@needs_bwrap
async def test_a_memory_bomb_meets_the_memory_limit(ws, monkeypatch):
    monkeypatch.chdir(ws)
    policy = _limits_from_config(max_memory_mb=256)
    assert policy is not None and policy.max_memory_mb == 256
    # 1 GiB in 16 MiB pieces: harmless without a limit, refused at 256 MiB with it
    command = (
        f"{SANDBOX_PYTHON} -c 'x = [bytearray(2**24) for _ in range(64)]; print(\"allocated\")'"
    )
    result = await BashTool(ws, sandbox=policy, kill_grace=0.2).call({"command": command})
    assert "allocated" not in result and "MemoryError" in result
    assert "[sandbox: limit reached: 256 MiB of memory per process (max_memory_mb)" in result


@needs_bwrap
async def test_a_huge_file_meets_the_file_size_limit(ws, monkeypatch):
    monkeypatch.chdir(ws)
    policy = _limits_from_config(max_file_size_mb=1)
    assert policy is not None and policy.max_file_size_mb == 1
    result = await BashTool(ws, sandbox=policy, kill_grace=0.2).call(
        {"command": "head -c 20000000 /dev/zero > big.bin; echo next"}
    )
    assert (ws / "big.bin").stat().st_size == 1024 * 1024
    assert "next" in result  # the shell goes on; only the writer was stopped
    assert "[sandbox: limit reached: a file reached 1 MiB (max_file_size_mb)" in result


def test_an_untrusted_project_may_lower_the_limits_but_not_raise_them():
    from clawnb.config import ConfigOverlay, restrict_untrusted

    base = Config()
    lower = ConfigOverlay.model_validate({"sandbox": {"max_processes": 64, "max_memory_mb": 0}})
    kept, ignored = restrict_untrusted(lower, base)
    assert kept.sandbox is not None and kept.sandbox.max_processes == 64
    assert "sandbox.max_memory_mb = 0" in ignored  # 0 means "no limit": looser
    higher = ConfigOverlay.model_validate({"sandbox": {"max_file_size_mb": 10**6}})
    _, ignored = restrict_untrusted(higher, base)
    assert ignored == [f"sandbox.max_file_size_mb = {10**6}"]


# -- secret files while nobody is asked ---------------------------------------------------------


@needs_bwrap
async def test_only_a_call_a_person_approved_reads_the_secret_files(ws, outside, monkeypatch):
    (ws / ".env").write_text(f"OPENROUTER_API_KEY={DOTENV}\n")
    home = outside / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("private-key-canary\n")
    monkeypatch.setenv("HOME", str(home))
    asked: list[str] = []

    async def approve(request):
        asked.append(request.summary)
        return Approval.allow_once()

    gate = build_gate(workspace=ws, approve=approve)
    read = "rev .env; cat .env ~/.ssh/id_ed25519"

    async def run(tool: BashTool) -> str:
        call = await gate.before_tool(ToolCall("c1", "bash", {"command": read}), tool)
        assert isinstance(call, ToolCall)
        return await tool.call(call.arguments)

    approved = await run(sandboxed(ws))  # asked, and the person said yes
    assert len(asked) == 1
    assert DOTENV in approved and DOTENV[::-1] in approved and "private-key-canary" in approved
    unasked = await run(sandboxed(ws, auto_allow=True))  # auto_allow: nobody was asked
    assert len(asked) == 1
    assert DOTENV not in unasked and DOTENV[::-1] not in unasked
    assert "private-key-canary" not in unasked
    planning = sandboxed(ws).read_only_variant()
    assert planning is not None
    result = await planning.call({"command": read})  # plan mode: read-only bash, unasked
    assert DOTENV[::-1] not in result and "private-key-canary" not in result
    assert (ws / ".env").read_text() == f"OPENROUTER_API_KEY={DOTENV}\n"  # masked, not changed


def test_plan_mode_without_a_trusted_bubblewrap_runs_no_bash_that_reads_a_secret_file(
    tmp_path, outside, bare_path, monkeypatch
):
    """The only bwrap on PATH is one the workspace planted (it drops every option and runs the
    command as it is): plan mode must not take it for a read-only sandbox. Without a sandbox
    plan mode offers no bash, so `rev .env` is refused, not run unasked."""
    attack = Attack(
        "plan-mode-rev-dotenv-no-trusted-bwrap",
        {
            "mode": "plan",
            "approve": "allow",
            "turns": [
                {
                    "tool_calls": [
                        {"id": "c1", "name": "bash", "arguments": {"command": "rev .env"}}
                    ]
                },
                {"text": "Plan: nothing."},
            ],
            "expect": {"no_leak": True, "model_lacks": [DOTENV[::-1]]},
        },
    )
    world = make_world(tmp_path, attack, AttackerServer(), AttackerServer())
    marker = outside / "planted.marker"
    plant(
        world.ws / ".venv" / "bin" / "bwrap",
        f"""\
        echo "$*" >> {marker}
        while [ $# -gt 0 ] && [ "$1" != "--" ]; do shift; done
        shift
        exec "$@"
        """,
    )
    monkeypatch.setenv("PATH", f"{world.ws / '.venv' / 'bin'}{os.pathsep}{bare_path}")
    assert run_attack(world, "api", monkeypatch) == []
    assert "not available in planning mode" in world.tool_results()["c1"]
    assert not marker.exists()
