"""clawnb.control.imports.load: clawnb's own imports come from the installed environment,
never from the current folder or a workspace. Judged by effect: a planted module writes a
marker file when it runs; real interpreters in real folders."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from clawnb.control import imports
from clawnb.control.imports import distrust, load
from clawnb.errors import ShadowedModuleError


def plant(folder: Path, name: str, marks: Path, extra: str = "") -> Path:
    """``folder/name.py`` that leaves ``marks/name`` behind when it is imported."""
    folder.mkdir(parents=True, exist_ok=True)
    marks.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(f"with open({str(marks / name)!r}, 'w') as f:\n    f.write('ran')\n{extra}")
    return path


ROOT = Path(__file__).resolve().parents[2]


def python(code: str, cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``python -c code`` (or ``python ARGV``) in ``cwd`` — which Python puts first on
    sys.path — with this checkout's clawnb."""
    return subprocess.run(
        [sys.executable, *(argv or ("-c", code))],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_load_takes_the_installed_module_over_one_in_the_current_folder(tmp_path: Path):
    repo, marks = tmp_path / "repo", tmp_path / "marks"
    plant(repo, "pathspec", marks)
    # the control: Python's own rule imports the repository's file ('' is first on sys.path)
    assert python("import pathspec", repo).returncode == 0
    assert (marks / "pathspec").exists()
    (marks / "pathspec").unlink()
    done = python(
        "import sys\n"
        "from clawnb.control.imports import load\n"
        "before = list(sys.path)\n"
        "print(load('pathspec').__file__)\n"
        "assert sys.path == before, (before, sys.path)\n",
        repo,
    )
    assert done.returncode == 0, done.stderr
    assert "site-packages" in done.stdout
    assert not (marks / "pathspec").exists()


def test_the_installed_environment_stays_usable_when_it_lies_inside_the_current_folder():
    # "/" holds every install directory (and a venv inside the project is the same case):
    # install directories are kept even though they are inside the current folder
    done = python(
        "from clawnb.control.imports import load; print(load('pathspec').__name__)", Path("/")
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "pathspec"


def test_a_module_already_imported_from_the_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # the person's own cell imported the repository's pathspec.py: clawnb will not use it
    monkeypatch.chdir(tmp_path)
    fake = types.ModuleType("pathspec")
    fake.__file__ = str(tmp_path / "pathspec.py")
    monkeypatch.setitem(sys.modules, "pathspec", fake)
    with pytest.raises(ShadowedModuleError) as refused:
        load("pathspec")
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"pathspec.py in {tmp_path} shadows the module 'pathspec'")
    assert "did not use it" in message


def test_glob_says_which_file_shadows_its_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import asyncio

    from clawnb.executor import ToolExecutor
    from clawnb.tools.glob import GlobTool
    from clawnb.types import ToolCall, ToolSet

    monkeypatch.chdir(tmp_path)
    (tmp_path / ".gitignore").write_text("*.log\n")
    fake = types.ModuleType("pathspec")
    fake.__file__ = str(tmp_path / "pathspec.py")
    monkeypatch.setitem(sys.modules, "pathspec", fake)
    executor = ToolExecutor(ToolSet([GlobTool(tmp_path)]))
    [result] = asyncio.run(executor.run([ToolCall("g1", "glob", {"pattern": "*"})]))
    assert result.startswith("error: pathspec.py in ")
    assert "shadows the module 'pathspec'" in result


def test_a_dependency_only_the_folder_has_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    marks = tmp_path / "marks"
    plant(tmp_path / "repo", "clawnb_dependency_nobody_installed", marks)
    monkeypatch.chdir(tmp_path / "repo")
    monkeypatch.setattr(sys, "path", ["", *sys.path])
    with pytest.raises(ShadowedModuleError, match="is not installed; clawnb did not import it"):
        load("clawnb_dependency_nobody_installed")
    assert not (marks / "clawnb_dependency_nobody_installed").exists()
    assert sys.path[0] == ""  # put back


def test_a_workspace_on_sys_path_is_left_out_once_a_session_distrusts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # e.g. the project installed in editable mode: /proj/src is on sys.path, the notebook
    # runs in /proj/notebooks; the agent writes /proj/src/<module>.py
    project, marks = tmp_path / "proj", tmp_path / "marks"
    plant(project / "src", "clawnb_workspace_only_module", marks)
    (project / "notebooks").mkdir()
    monkeypatch.chdir(project / "notebooks")
    monkeypatch.setattr(sys, "path", [*sys.path, str(project / "src")])
    distrust(project)
    with pytest.raises(ShadowedModuleError):
        load("clawnb_workspace_only_module")
    assert not (marks / "clawnb_workspace_only_module").exists()


def test_entries_a_module_adds_while_it_loads_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # a library outside the workspace that puts its vendored folder first on sys.path
    lib, marks = tmp_path / "lib", tmp_path / "marks"
    vendored = str(tmp_path / "lib" / "_vendor")
    plant(
        lib, "clawnb_test_vendoring_lib", marks, f"import sys\nsys.path.insert(0, {vendored!r})\n"
    )
    (tmp_path / "ws").mkdir()
    monkeypatch.chdir(tmp_path / "ws")  # the library is beside the workspace, not in it
    monkeypatch.setattr(sys, "path", ["", *sys.path, str(lib)])
    before = list(sys.path)
    try:
        load("clawnb_test_vendoring_lib")
    finally:
        sys.modules.pop("clawnb_test_vendoring_lib", None)
    assert (marks / "clawnb_test_vendoring_lib").exists()  # outside the workspace: allowed
    assert sys.path == [vendored, *before]


def test_the_rule_keeps_install_directories_and_drops_the_folder(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    site = next(p for p in sys.path if p.endswith("site-packages"))
    assert imports.is_trusted_entry(site)
    assert not imports.is_trusted_entry("")
    assert not imports.is_trusted_entry(".")
    assert not imports.is_trusted_entry(str(tmp_path))
    assert not imports.is_trusted_entry(str(tmp_path / "src"))
    assert imports.is_trusted_entry(str(tmp_path.parent / "elsewhere"))


def test_python_m_clawnb_does_not_import_from_the_current_folder(tmp_path: Path):
    repo, marks = tmp_path / "repo", tmp_path / "marks"
    for name in ("typing", "pydantic", "argparse", "tempfile"):
        plant(repo, name, marks)
    # the control: importing clawnb from this folder the ordinary way runs the planted typing
    python("import clawnb", repo)
    assert (marks / "typing").exists()
    (marks / "typing").unlink()
    done = python("", repo, "-m", "clawnb", "--help")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in marks.iterdir()) == []


def test_the_guard_acts_for_clawnb_and_leaves_the_persons_imports_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    # an installed library (beside the workspace) that imports a dependency inside a
    # function, as httpx imports httpcore in its first client; the workspace shadows the
    # dependency and has a module of its own
    lib, ws, marks = tmp_path / "lib", tmp_path / "ws", tmp_path / "marks"
    lib.mkdir()
    (lib / "clawnb_t_lib.py").write_text(
        "def lazy():\n    import clawnb_t_dep\n    return clawnb_t_dep.WHERE\n"
    )
    (lib / "clawnb_t_dep.py").write_text("WHERE = 'installed'\n")
    plant(ws, "clawnb_t_dep", marks, "WHERE = 'workspace'\n")
    plant(ws, "clawnb_t_own", marks)
    monkeypatch.chdir(ws)
    monkeypatch.setattr(sys, "path", ["", *sys.path, str(lib)])
    names = ("clawnb_t_lib", "clawnb_t_dep", "clawnb_t_own")
    imports.guard()

    def run(code: str, module: str) -> dict[str, object]:
        # a frame of `module` (clawnb's, or the person's __main__) doing the import
        scope: dict[str, object] = {"__name__": module}
        exec(compile(code, f"<{module}>", "exec"), scope)
        return scope

    try:
        assert (
            run("import clawnb_t_lib\nwhere = clawnb_t_lib.lazy()", "clawnb.tools.x")["where"]
            == "installed"
        )
        assert not marks.exists() or not any(marks.iterdir())
        with pytest.raises(ModuleNotFoundError, match="in the installed environment"):
            run("import clawnb_t_own", "clawnb.tools.x")  # only the workspace has it
        # clawnb's --agent loader imports the person's own module on purpose
        run("import clawnb_t_own", "clawnb.session.custom")
        assert (marks / "clawnb_t_own").exists()
        # the person's own cell: Python's rule, the notebook's folder first
        for name in names:
            sys.modules.pop(name, None)
        assert (
            run("import clawnb_t_lib\nwhere = clawnb_t_lib.lazy()", "__main__")["where"]
            == "workspace"
        )
    finally:
        for name in names:
            sys.modules.pop(name, None)
