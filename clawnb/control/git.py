"""clawnb's own git calls: one runner that runs nothing the repository chose.

Git runs programs its repository names: ``core.fsmonitor`` on every ``git status``, hooks
(``post-index-change`` when status refreshes the index), ``filter.<name>.clean`` for files
``.gitattributes`` assigns to a filter, pagers, external diff and textconv drivers, ssh
commands and credential helpers. Sandboxed bash can write the workspace, so a planted
``.git/commondir -> ../evilgit`` (git then reads *that* config) or a new ``.git`` would make
the next session's own ``git status`` — the system prompt's git state — run the attacker's
program outside the sandbox, with the agent's keys in its environment.

:func:`run_git` is the one way clawnb runs git (:func:`status_line` is the system prompt's
``Git:`` line). It

* finds the repository itself (:func:`find_repository`) and **refuses** — "not a repository"
  plus one line saying why — when ``.git`` is a link or a file (a worktree or submodule
  checkout pointing elsewhere), when ``.git/commondir`` exists (a main repository has none;
  it points git at another repository's config), when ``.git/config`` is a link, or when
  ``.git`` belongs to another user; then pins git to what it checked (``--git-dir``,
  ``--work-tree``), so git does no discovery of its own;
* runs the **trusted** git (:func:`clawnb.control.executables.trusted_executable`) with
  fsmonitor off, hooks pointed at ``/dev/null``, ``--no-pager``, ``--no-optional-locks``
  (no index write, so no index hooks), no transports (``protocol.allow=never``: no ssh
  command, no credential helper is ever started), submodules ignored (their own configs are
  never read), and every ``filter.<name>`` driver the configuration defines emptied with
  ``-c`` (they are listed first by ``git config --list``, which runs nothing);
  ``--no-ext-diff --no-textconv`` for the commands that diff;
* gives it the **scrubbed environment** (:func:`clawnb.control.process.child_env`) without any
  ``GIT_*`` variable (``GIT_DIR``, ``GIT_CONFIG_*``, ``GIT_EXEC_PATH``, ``GIT_SSH_COMMAND`` …)
  and a ``PATH`` without the workspace (:func:`~clawnb.control.executables.trusted_path`);
* and, where bubblewrap works, runs it **inside a read-only sandbox** (no writes but a private
  ``/tmp``, no network, no host sockets) — a second layer for whatever git may run one day
  that this list does not name. Measured: about 10 ms more per call (one call per session
  start).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .executables import trusted_executable, trusted_path

__all__ = ["NEUTRAL_CONFIG", "Refused", "Repository", "find_repository", "run_git", "status_line"]

# -c settings for every call: nothing the repository configures can start a program.
NEUTRAL_CONFIG: tuple[str, ...] = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "protocol.allow=never",  # no transport at all: no ssh command, no remote helper
    "credential.helper=",  # an empty value empties the list of helpers
    "submodule.recurse=false",
    "diff.ignoreSubmodules=all",
    "status.submoduleSummary=false",
    "log.showSignature=false",  # gpg.program
    "gc.auto=0",
    "maintenance.auto=false",
)
# Subcommands that diff (external diff drivers and textconv run there).
_DIFFING = frozenset({"diff", "log", "show", "whatchanged", "format-patch", "blame"})
_FILTER_KEYS = ("clean", "smudge", "process")

DEFAULT_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class Repository:
    """A repository clawnb may run git on: ``top`` holds ``git_dir`` (``top/.git``)."""

    top: Path
    git_dir: Path


class Refused(Exception):
    """The repository is not one clawnb runs git on; the message says why, in a line."""


def find_repository(workspace: str | os.PathLike[str]) -> Repository | None:
    """The repository ``workspace`` is in (``None``: none), found as git would — the nearest
    ``.git`` above, not across a file-system boundary — and checked; raises :class:`Refused`
    when its ``.git`` could make git read another repository's configuration."""
    start = Path(os.path.realpath(workspace))
    try:
        device = start.stat().st_dev
    except OSError:
        return None
    for folder in (start, *start.parents):
        try:
            if folder.stat().st_dev != device:
                return None
        except OSError:
            return None
        dot_git = folder / ".git"
        if not os.path.lexists(dot_git):
            continue
        if dot_git.is_symlink():
            raise Refused(".git is a symbolic link")
        if dot_git.is_file():
            raise Refused(".git is a file that points git at another folder")
        if not dot_git.is_dir():
            return None
        try:
            if dot_git.stat().st_uid != os.geteuid():
                raise Refused(".git belongs to another user")
        except OSError:
            return None
        if os.path.lexists(dot_git / "commondir"):
            raise Refused(".git/commondir points git at another repository")
        if os.path.islink(dot_git / "config"):
            raise Refused(".git/config is a symbolic link")
        return Repository(folder, dot_git)
    return None


def _environment(workspace: str | os.PathLike[str], repo: Repository) -> dict[str, str]:
    from .process import child_env

    env = {k: v for k, v in child_env().items() if not k.startswith("GIT_")}
    env.update(
        {
            "PATH": trusted_path(workspace, also_untrusted=[str(repo.top)]),
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "PAGER": "cat",
            "LC_ALL": "C",
        }
    )
    return env


def _filter_overrides(base: list[str], env: dict[str, str], timeout: float) -> list[str]:
    """``-c filter.NAME.clean=`` … for every filter driver the configuration (all scopes,
    includes followed) defines; listing the configuration runs no program."""
    done = subprocess.run(
        [*base, "config", "--null", "--name-only", "--list"],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        env=env,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise Refused("git could not read the repository's configuration")
    names: set[str] = set()
    for entry in done.stdout.split(b"\0"):
        key = entry.decode("utf-8", "surrogateescape")
        section, _, rest = key.partition(".")
        if section.lower() != "filter" or "." not in rest:
            continue
        name = rest.rsplit(".", 1)[0]
        if "=" in name or "\n" in name:
            raise Refused(f"a filter driver git's -c cannot override ({name!r})")
        names.add(name)
    out: list[str] = []
    for name in sorted(names):
        for key in _FILTER_KEYS:
            out += ["-c", f"filter.{name}.{key}="]
        out += ["-c", f"filter.{name}.required=false"]
    return out


def _sandboxed(argv: list[str], repo: Repository, cwd: str) -> list[str]:
    """``argv`` inside a read-only sandbox where bubblewrap works here, else as it is."""
    from .sandbox import SandboxPolicy, working_bwrap

    bwrap = working_bwrap()
    if bwrap is None:
        return argv
    policy = SandboxPolicy(repo.top, writable=False, bwrap=bwrap, max_processes=0)
    return policy.wrap(argv, cwd=cwd)


def run_git(
    workspace: str | os.PathLike[str],
    *args: str,
    timeout: float = DEFAULT_TIMEOUT_S,
    sandbox: bool = True,
) -> subprocess.CompletedProcess[bytes] | None:
    """Run ``git ARGS`` on the repository ``workspace`` is in, in ``workspace``, by the rules
    in the module docstring. ``None`` outside a repository, without a trusted git, or when it
    could not run; raises :class:`Refused` for a repository clawnb does not run git on.
    ``sandbox=False`` leaves out the bubblewrap layer (the tests check the other layers
    alone)."""
    repo = find_repository(workspace)
    if repo is None:
        return None
    git = trusted_executable("git", workspace=workspace, also_untrusted=[str(repo.top)])
    if git is None:
        return None
    env = _environment(workspace, repo)
    base = [
        git,
        "--no-pager",
        "--no-optional-locks",
        f"--git-dir={repo.git_dir}",
        f"--work-tree={repo.top}",
    ]
    for setting in NEUTRAL_CONFIG:
        base += ["-c", setting]
    try:
        command = list(args)
        if command and command[0] in _DIFFING:
            command[1:1] = ["--no-ext-diff", "--no-textconv"]
        argv = base + _filter_overrides(base, env, timeout) + command
        cwd = os.path.realpath(workspace)
        if sandbox:
            argv = _sandboxed(argv, repo, cwd)
        return subprocess.run(
            argv,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
            timeout=timeout,
        )
    except (OSError, subprocess.SubprocessError):
        return None


def status_line(
    workspace: str | os.PathLike[str], timeout: float = DEFAULT_TIMEOUT_S, *, sandbox: bool = True
) -> str | None:
    """``"branch main, 3 changed files"``, ``"detached HEAD, clean"``, ``"state not shown:
    .git/commondir points git at another repository"``, or ``None`` outside a repository
    (or without a trusted git). One git call: ``status --porcelain=v2 --branch``."""
    try:
        done = run_git(
            workspace,
            "status",
            "--porcelain=v2",
            "--branch",
            "--ignore-submodules=all",
            timeout=timeout,
            sandbox=sandbox,
        )
    except Refused as exc:
        return f"state not shown: {exc}"
    if done is None or done.returncode != 0:
        return None
    branch = ""
    changed = 0
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("# branch.head "):
            head = line.removeprefix("# branch.head ").strip()
            branch = "" if head == "(detached)" else head
        elif line.strip() and not line.startswith("#"):
            changed += 1
    state = "clean" if changed == 0 else f"{changed} changed file{'s' if changed != 1 else ''}"
    return f"{'branch ' + branch if branch else 'detached HEAD'}, {state}"
