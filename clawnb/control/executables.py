"""The programs clawnb runs itself, found only where the workspace cannot have put them.

A cloned repository is hostile, and sandboxed bash may write anything inside the workspace:
a ``.venv/bin/bwrap`` that runs commands unsandboxed, a ``.venv/bin/rg`` that reads the agent's
environment, a ``.venv/bin/git``. A workspace virtualenv early on ``PATH`` is common, so
``shutil.which`` would find them first. :func:`trusted_executable` finds a helper clawnb
starts itself — ``bwrap``, ``rg``, ``grep``, ``git``, ``bash``, ``sh``, ``prlimit`` … — only

* on an **absolute** ``PATH`` entry (``""`` and relative entries mean "the current
  directory", which the workspace decides);
* **outside the workspace** (the ``workspace`` argument, else the current directory), both
  as written on ``PATH`` and after following symbolic links — which also rules out every
  virtualenv inside the workspace, and a ``PATH`` entry that is a link into it;
* as a regular, executable file **owned by root or by us and writable by nobody else**, in a
  folder with the same owners and no group or world write bit (so nobody else can swap it);
* that says what it is: ``bwrap --version`` starts with ``bubblewrap``, ``rg --version`` with
  ``ripgrep``, ``git --version`` with ``git version`` … (run once per file, with the scrubbed
  environment, in ``/``; the answer is cached per path, size and modification time).

A helper that cannot be found this way is treated as absent: ``[sandbox] mode = "required"``
then refuses with its usual line, grep falls back to the next engine, the system prompt shows
no git state. :func:`resolve` also says which candidates it passed over, and why, for the
status line. :func:`trusted_path` is ``PATH`` with the same directory rules, for the children
of clawnb's own git.
"""

from __future__ import annotations

import os
import stat
import subprocess
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["VERSION_PREFIXES", "Resolution", "resolve", "trusted_executable", "trusted_path"]

# What ``NAME --version`` prints first, for the helpers that have a version flag. A helper
# not named here (``sh``: dash has no --version; ``sandbox-exec``) is checked by place only.
VERSION_PREFIXES: dict[str, str] = {
    "bwrap": "bubblewrap",
    "rg": "ripgrep",
    "git": "git version",
    "grep": "grep ",  # "grep (GNU grep) 3.8", "grep (BSD grep, GNU compatible) 2.6.0"
    "bash": "GNU bash",
    "prlimit": "prlimit from util-linux",
}

_PROBE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Resolution:
    """Where ``name`` was found (``path``; ``None``: nowhere trusted) and the candidates that
    were passed over, each as ``"PATH: why"``."""

    name: str
    path: str | None
    passed_over: tuple[str, ...] = field(default=())

    def why_not(self) -> str:
        """``"/ws/.venv/bin/bwrap: inside the workspace"`` — what was passed over, in a line."""
        return "; ".join(self.passed_over)


def _roots(workspace: str | os.PathLike[str] | None, extra: Iterable[str]) -> list[str]:
    """The folders nothing may be run from: the workspace (else the current directory), as
    given and resolved, and any ``extra`` (a repository root above the workspace)."""
    base = os.fspath(workspace) if workspace is not None else os.getcwd()
    out: list[str] = []
    for folder in (base, *extra):
        for form in (os.path.abspath(folder), os.path.realpath(folder)):
            if form not in out:
                out.append(form)
    return out


def _inside(path: str, roots: list[str]) -> bool:
    for root in roots:
        if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
            return True
    return False


def _safe_owner(st: os.stat_result) -> bool:
    """Owned by root or by us, and not writable by group or others."""
    return st.st_uid in (0, os.geteuid()) and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _directory_problem(folder: str, roots: list[str]) -> str | None:
    if not os.path.isabs(folder):
        return "a relative PATH entry"
    if _inside(os.path.abspath(folder), roots):
        return "inside the workspace"
    real = os.path.realpath(folder)
    if _inside(real, roots):
        return "a link into the workspace"
    try:
        st = os.stat(real)
    except OSError:
        return "not found"
    if not _safe_owner(st):
        return "its folder is writable by others or owned by another user"
    return None


def _file_problem(candidate: str, roots: list[str]) -> str | None:
    real = os.path.realpath(candidate)
    if _inside(real, roots):
        return "a link into the workspace"
    try:
        st = os.stat(real)
        parent = os.stat(os.path.dirname(real))
    except OSError:
        return "not found"
    if not stat.S_ISREG(st.st_mode) or not os.access(real, os.X_OK):
        return "not an executable file"
    if not _safe_owner(st):
        return "writable by others or owned by another user"
    if not _safe_owner(parent):
        return "its folder is writable by others or owned by another user"
    return None


# (real path, device, inode, size, mtime) -> does it say what it is
_claims: dict[tuple[str, int, int, int, int], bool] = {}
_claims_lock = threading.Lock()


def _says_it_is(name: str, path: str) -> bool:
    """Does ``path --version`` print what ``name`` should print? Run with the scrubbed
    environment in ``/`` (a git there reads no repository), cached per file version."""
    prefix = VERSION_PREFIXES.get(name)
    if prefix is None:
        return True
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return False
    key = (real, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    with _claims_lock:
        known = _claims.get(key)
    if known is not None:
        return known
    from .secrets import scrubbed_env  # process.py's child_env, without importing process

    env = {k: v for k, v in scrubbed_env(None).items() if not k.startswith("GIT_")}
    env["LC_ALL"] = "C"
    try:
        done = subprocess.run(
            [real, "--version"],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd="/",
            timeout=_PROBE_TIMEOUT_S,
        )
        ok = done.stdout.decode("utf-8", "replace").lstrip().startswith(prefix)
    except (OSError, subprocess.SubprocessError):
        ok = False
    with _claims_lock:
        _claims[key] = ok
    return ok


def resolve(
    name: str,
    *,
    workspace: str | os.PathLike[str] | None = None,
    also_untrusted: Iterable[str] = (),
    path: str | None = None,
) -> Resolution:
    """Find ``name`` on ``path`` (default ``$PATH``) by the rules in the module docstring.
    ``also_untrusted``: more folders whose programs are never run (a repository's root)."""
    if not name or os.sep in name:
        raise ValueError(f"a program name, not a path: {name!r}")
    roots = _roots(workspace, also_untrusted)
    search = os.environ.get("PATH", os.defpath) if path is None else path
    passed: list[str] = []
    seen: set[str] = set()
    for folder in search.split(os.pathsep):
        candidate = os.path.join(folder, name)
        if candidate in seen:
            continue
        seen.add(candidate)
        if not folder:
            if os.path.lexists(name):
                passed.append(f"{name}: an empty PATH entry (the current directory)")
            continue
        if not os.path.lexists(candidate):
            continue
        problem = _directory_problem(folder, roots) or _file_problem(candidate, roots)
        if problem is None and not _says_it_is(name, candidate):
            problem = f"`{name} --version` does not say {VERSION_PREFIXES[name]!r}"
        if problem is not None:
            passed.append(f"{candidate}: {problem}")
            continue
        return Resolution(name, os.path.abspath(candidate), tuple(passed))
    return Resolution(name, None, tuple(passed))


def trusted_executable(
    name: str,
    *,
    workspace: str | os.PathLike[str] | None = None,
    also_untrusted: Iterable[str] = (),
) -> str | None:
    """The absolute path of ``name`` from a trusted place (module docstring), or ``None``."""
    return resolve(name, workspace=workspace, also_untrusted=also_untrusted).path


def trusted_path(
    workspace: str | os.PathLike[str] | None = None, *, also_untrusted: Iterable[str] = ()
) -> str:
    """``$PATH`` without the entries a program could not be trusted from (relative, empty,
    inside the workspace or linking into it, writable by others) — for the children of a
    helper that looks programs up itself (git runs ``sh`` for what its config names)."""
    roots = _roots(workspace, also_untrusted)
    kept: list[str] = []
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if folder and folder not in kept and _directory_problem(folder, roots) is None:
            kept.append(folder)
    return os.pathsep.join(kept)
