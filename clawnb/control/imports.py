"""clawnb's own imports never come from the workspace: :func:`load` and the guard behind it.

Python looks for a module along ``sys.path``, and in the places clawnb runs the first entry
is the folder a stranger's repository lives in: a kernel puts ``''`` (the notebook's folder)
there, ``python -m`` the current folder. clawnb imports much on first use — pydantic at the
first ``%%claw`` cell, httpx (and, inside httpx, httpcore and certifi) at the first request,
pathspec at the first ``glob``, nbformat at the first notebook edit — so a ``pydantic.py`` or
``httpcore.py`` that a repository ships (or that the agent itself writes in ``accept_edits``)
would run inside the kernel, with the person's keys in its environment, without anyone having
run it.

**The guard.** The first :func:`load` puts a finder on ``sys.meta_path`` (just before Python's
own path finder) that looks at each top-level module about to be searched for, and at who is
importing it: the frames on the stack, nearest first. When the importer is clawnb — a clawnb
frame comes before any of the person's code (a cell, ``__main__``, a file in the workspace) —
the module is searched for only along the *trusted* entries of ``sys.path``. Anyone else's
import is left exactly as Python does it: the person's own ``import`` in their own cell, the
code they approved (``run_python``), their ``--agent`` module. The guard therefore covers
everything clawnb's code sets off: its own lazy imports, what a dependency imports while it
loads, and what a dependency imports later inside a function clawnb called (httpx's
``import httpcore`` in its first client). Submodules are found through their package, never
through ``sys.path``, and are not the guard's business.

**The rule** for a trusted entry: an entry is left out when it is

* relative — ``''``, ``'.'`` or any other: it means "wherever the process happens to be";
* the current folder or inside it, or a folder registered with :func:`distrust` (a session's
  workspace) or inside one;

unless it is one of the interpreter's install directories (the standard library, the
environment's site-packages, the user site) or inside one, or the folder clawnb itself was
imported from. Everything else (``PYTHONPATH`` entries elsewhere, other editable installs)
stays, in its order. The exceptions keep working set-ups working: a virtual environment
inside the project (``./.venv``) is the installed environment, not a stranger's file, and a
person who runs clawnb from its own checkout (an editable install) already trusts that folder
with clawnb's own code.

A module that exists *only* in a left-out place (a dependency the environment lacks, or an
optional one) is not made up by the repository: the import fails as if it were absent
(``ModuleNotFoundError``, so ``try: import brotli`` in a dependency still works), and
:func:`load` says so with :class:`~clawnb.errors.ShadowedModuleError`. The one exception is
:mod:`clawnb.session.custom`, which imports the person's ``--agent`` module from the current
folder on purpose: a module that is not installed may come from there.

:func:`load` imports a module through the guard and refuses one that is **already loaded**
from a left-out place (a cell imported the workspace's ``pathspec.py`` before clawnb needed
it) with :class:`~clawnb.errors.ShadowedModuleError`, whose one line names the file. It returns
the module, so ``widgets = load("ipywidgets")`` replaces ``import ipywidgets as widgets``;
where the names should keep their types, call ``load("nbformat")`` first and import as usual
right after — the import then finds the module in ``sys.modules``. A module loaded once is
checked again only by a dictionary look-up. Every front end's entry (``%load_ext``, the
public names of :mod:`clawnb`, ``python -m clawnb``) calls it or :func:`guard`, so the guard is
in place before the engine loads, and ``build_agent`` calls :func:`distrust` (which puts it in
place too) for every session.

What this does not cover: imports the person makes (above); a module the person's own code
loaded from the workspace before clawnb needed it — :func:`load` refuses the ones it is asked
for by name, but a dependency's own dependency (an ``idna.py`` the person imported) is in
``sys.modules``, where Python hands it to everyone; and ``python -m clawnb`` in a folder that
has a ``clawnb`` package of its own
(Python picks the module to run before any of clawnb runs; the ``clawnb`` command does not
have this problem).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
import threading
from collections.abc import Sequence
from types import FrameType, ModuleType

from ..errors import ShadowedModuleError

__all__ = ["distrust", "guard", "is_trusted_entry", "load", "trusted_path"]

# Folders whose modules clawnb never imports (a session's workspace), besides the current one.
_distrusted: set[str] = set()
# Names load() has checked, with the module object it checked (a replacement is checked again).
_checked: dict[str, int] = {}
_lock = threading.Lock()  # for distrust() and guard(), which change shared state
_install_dirs: tuple[str, ...] | None = None
# (sys.path, current folder, distrusted folders) -> the trusted entries of that sys.path
_trusted_cache: tuple[tuple[object, ...], list[str]] | None = None

# clawnb modules that import the person's own code from the current folder on purpose
_DELIBERATE = frozenset({"clawnb.session.custom"})
# the guard is searching on this thread: what it imports itself is not guarded again
_searching = threading.local()


def distrust(directory: str | os.PathLike[str]) -> None:
    """Never import clawnb's modules from ``directory`` or below it (a session's workspace,
    which may not be the current folder), and put the guard in place if it is not yet:
    ``build_agent`` calls this, so every session has it, whichever module was imported
    first."""
    real = os.path.realpath(directory)
    with _lock:
        if real not in _distrusted:
            _distrusted.add(real)
            _checked.clear()  # a module checked before may live there
    guard()  # a session is being built: from here on its imports go through the guard


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _installed() -> tuple[str, ...]:
    """The interpreter's install directories and clawnb's own folder (links resolved).

    Worked out without :mod:`sysconfig`, whose first use costs more than the rest of
    ``%load_ext clawnb``: the standard library is where ``os`` came from (lib-dynload is
    inside it), site-packages are what :mod:`site` (loaded at every start) added."""
    global _install_dirs
    if _install_dirs is None:
        import site

        dirs = {os.path.dirname(os.path.abspath(os.__file__))}
        getsitepackages = getattr(site, "getsitepackages", None)  # missing in old virtualenvs
        if getsitepackages is not None:
            dirs.update(getsitepackages())
        if site.ENABLE_USER_SITE and site.USER_SITE:
            dirs.add(site.USER_SITE)
        # the zipped standard library, where an interpreter has one (pythonXY.zip)
        version = f"{sys.version_info.major}{sys.version_info.minor}"
        for prefix in {sys.prefix, sys.base_prefix}:
            dirs.add(os.path.join(prefix, sys.platlibdir, f"python{version}.zip"))
        # the folder clawnb was imported from: an editable install's checkout
        dirs.add(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        _install_dirs = tuple(sorted(os.path.realpath(d) for d in dirs))
    return _install_dirs


def _untrusted_roots() -> list[str]:
    try:
        here = [os.path.realpath(os.getcwd())]
    except OSError:  # the current folder was deleted: nothing can be found through it
        here = []
    return here + sorted(_distrusted)


def is_trusted_entry(entry: str) -> bool:
    """May clawnb import from this ``sys.path`` entry? (The rule in the module docstring.)"""
    if not entry or not os.path.isabs(entry):
        return False
    real = os.path.realpath(entry)
    if any(_inside(real, d) for d in _installed()):
        return True
    return not any(_inside(real, root) for root in _untrusted_roots())


def trusted_path() -> list[str]:
    """``sys.path`` without the entries clawnb does not import from."""
    global _trusted_cache
    try:
        here = os.getcwd()
    except OSError:
        here = ""
    key = (tuple(sys.path), here, tuple(sorted(_distrusted)))
    cached = _trusted_cache
    if cached is not None and cached[0] == key:
        return list(cached[1])
    kept = [entry for entry in sys.path if isinstance(entry, str) and is_trusted_entry(entry)]
    _trusted_cache = (key, kept)
    return list(kept)


# -- the guard ---------------------------------------------------------------------------------


def _importer(frame: FrameType | None) -> str | None:
    """Who is importing: ``"clawnb"`` when a clawnb frame comes before any of the person's
    code on the stack, ``"deliberate"`` when that frame is one that imports the person's
    code on purpose, ``None`` for anyone else."""
    roots: list[str] | None = None
    for _ in range(500):  # deeper than any real stack; a runaway walk gives up, unguarded
        if frame is None:
            return None
        code = frame.f_code.co_filename
        # importlib's machinery and the frozen standard library (os, runpy, importlib.util)
        # stand between an import and whoever asked for it
        if not code.startswith("<frozen "):
            name = frame.f_globals.get("__name__")
            if isinstance(name, str) and (name == "clawnb" or name.startswith("clawnb.")):
                return "deliberate" if name in _DELIBERATE else "clawnb"
            if name == "__main__" or not os.path.isabs(code):
                return None  # a cell, a script, exec'd code: the person's own
            roots = roots if roots is not None else _untrusted_roots()
            if any(_inside(code, root) for root in roots):
                if not any(_inside(code, d) for d in _installed()):
                    return None  # code from the workspace: it imports as it likes
        frame = frame.f_back
    return None


class _Guard:
    """The meta path finder (see the module docstring); inert for imports not clawnb's."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if path is not None or getattr(_searching, "on", False):
            return None  # a submodule: its package's own folders decide
        _searching.on = True
        try:
            return self._find(fullname, sys._getframe(1))
        finally:
            _searching.on = False

    def _find(self, fullname: str, frame: FrameType) -> importlib.machinery.ModuleSpec | None:
        who = _importer(frame)
        if who is None:
            return None
        kept = trusted_path()
        spec = _installed_spec(fullname, kept)
        if spec is not None or who == "deliberate":
            return spec
        left_out = [e for e in sys.path if isinstance(e, str) and e not in kept]
        if left_out and importlib.machinery.PathFinder.find_spec(fullname, left_out):
            # only the workspace has it: absent, as far as clawnb is concerned
            raise ModuleNotFoundError(
                f"No module named {fullname!r} in the installed environment (clawnb does not "
                "import the one in the workspace or the current folder)",
                name=fullname,
            )
        return None


_GUARD = _Guard()


def _installed_spec(fullname: str, kept: list[str]) -> importlib.machinery.ModuleSpec | None:
    """Where the installed environment has ``fullname``: along the trusted entries, or
    through a finder that comes after Python's path finder (setuptools' editable installs
    map their packages that way, outside ``sys.path``)."""
    spec = importlib.machinery.PathFinder.find_spec(fullname, kept)
    if spec is not None:
        return spec
    finders = list(sys.meta_path)
    after = [
        f
        for i, f in enumerate(finders)
        if any(g is importlib.machinery.PathFinder for g in finders[:i])
    ]
    for finder in after:
        find = getattr(finder, "find_spec", None)
        found = find(fullname, None) if find is not None else None
        if found is not None:
            return found  # type: ignore[no-any-return]
    return None


def guard() -> None:
    """Put the guard on ``sys.meta_path`` (once): just before Python's path finder, so the
    built-in and frozen modules and any finder an installer added keep their turn."""
    with _lock:
        if any(finder is _GUARD for finder in sys.meta_path):
            return
        _installed()  # computed once, before the guard can be asked anything
        at = next(
            (i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder),
            len(sys.meta_path),
        )
        sys.meta_path.insert(at, _GUARD)


# -- load ----------------------------------------------------------------------------------------


def _where(module: ModuleType) -> list[str]:
    """The files or folders a loaded module came from (none for built-in and frozen ones)."""
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None) or getattr(module, "__file__", None)
    places = [origin] if isinstance(origin, str) and os.path.isabs(origin) else []
    if not places:  # a namespace package: only its folders say where it is
        places = [p for p in getattr(module, "__path__", None) or () if isinstance(p, str)]
    return places


def _untrusted_origin(module: ModuleType) -> str | None:
    """The place ``module`` came from when clawnb would not have imported it from there."""
    for place in _where(module):
        real = os.path.realpath(place)
        if any(_inside(real, d) for d in _installed()):
            continue
        if not is_trusted_entry(os.path.dirname(real)):
            return place
    return None


def _shadowed(name: str, place: str, *, loaded: bool) -> ShadowedModuleError:
    """The one line a person reads: which file, where, and what to do."""
    path = os.path.abspath(place)
    if os.path.basename(path).startswith("__init__."):  # a package: name its folder
        path = os.path.dirname(path)
    shown, folder = os.path.basename(path), os.path.dirname(path)
    if os.path.isdir(path):
        shown += "/"
    if loaded:
        return ShadowedModuleError(
            f"{shown} in {folder} shadows the module {name!r} that clawnb needs, and it was "
            "already imported from there; clawnb did not use it (rename or remove it, then "
            "restart the kernel)"
        )
    return ShadowedModuleError(
        f"{shown} in {folder} would stand in for the module {name!r} that clawnb needs, which "
        f"is not installed; clawnb did not import it (install {name}, or rename or remove it)"
    )


def _check_loaded(name: str) -> None:
    """Refuse ``name`` or one of its parent packages when already loaded from a place
    clawnb does not import from."""
    parts = name.split(".")
    for n in range(1, len(parts) + 1):
        module = sys.modules.get(".".join(parts[:n]))
        if module is None:
            return
        if module.__name__ == "clawnb" or module.__name__.startswith("clawnb."):
            return  # found through the package itself; never through sys.path
        place = _untrusted_origin(module)
        if place is not None:
            raise _shadowed(parts[0], place, loaded=True)


def load(name: str) -> ModuleType:
    """Import ``name`` (``"pathspec"``, ``"IPython.display"``, ``"clawnb.config"``) from
    the installed environment only, through the guard (see the module docstring).

    Raises :class:`~clawnb.errors.ShadowedModuleError` when the module is already loaded from
    the workspace or the current folder, or exists only there; ``ModuleNotFoundError`` when
    it exists nowhere (an optional dependency not installed)."""
    module = sys.modules.get(name)
    if module is not None and _checked.get(name) == id(module):
        return module
    guard()
    _check_loaded(name)
    top = name.partition(".")[0]
    if top not in sys.modules:
        kept = trusted_path()
        if _installed_spec(top, kept) is None:
            left_out = [e for e in sys.path if isinstance(e, str) and e not in kept]
            spec = importlib.machinery.PathFinder.find_spec(top, left_out)
            if spec is not None:
                place = spec.origin or next(iter(spec.submodule_search_locations or ()), top)
                raise _shadowed(top, str(place), loaded=False)
    # No lock held here: Python's own import locks order concurrent imports, and a module
    # that starts a thread which calls load() must not wait for itself.
    module = importlib.import_module(name)  # this frame is clawnb's: the guard applies
    _check_loaded(name)  # a finder ahead of the guard could still have cheated
    _checked[name] = id(module)
    return module
