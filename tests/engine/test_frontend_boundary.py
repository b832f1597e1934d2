"""Front ends (the notebook layer, the chat) use AgentSession's public API only: no private
names imported from other clawnb modules, no private attributes of other objects, no
assignments into a session's internals. Checked on the source, so a new shortcut fails here
before it can bypass the control plane."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "clawnb"
FRONT_ENDS = sorted((PACKAGE / "notebook").glob("*.py")) + [PACKAGE / "cli" / "chat.py"]

# Our own marks (``_clawnb_*``) on IPython's shell and on widgets, and ipywidgets' documented
# way to see a rendered view (ARCHITECTURE §4.5) — not clawnb internals.
FOREIGN_PRIVATE_OK = {"_view_count"}
# What build_agent wires once and every nested loop shares: a front end that assigned one of
# these would change the guarantees for the main path only.
SESSION_INTERNALS = {
    "agent",
    "gate",
    "approve",
    "system_prompt",
    "tools",
    "provider",
    "checks",
    "permissions",
    "result_limit",
}


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # modules imported whole that are not ours (``os._Environ`` is the standard library's
    # business, not a clawnb internal)
    foreign = {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if not alias.name.startswith("clawnb")
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            ours = node.level > 0 or (node.module or "").startswith("clawnb")
            for alias in node.names:
                if ours and alias.name.startswith("_"):
                    found.append(f"{node.lineno}: imports private {node.module}.{alias.name}")
        elif isinstance(node, ast.Attribute):
            private = node.attr.startswith("_") and not node.attr.startswith("__")
            on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            on_foreign_module = isinstance(node.value, ast.Name) and node.value.id in foreign
            ours = node.attr.startswith("_clawnb_") or node.attr in FOREIGN_PRIVATE_OK
            if private and not on_self and not on_foreign_module and not ours:
                found.append(f"{node.lineno}: reaches into {ast.unparse(node)}")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for sub in ast.walk(target):
                    if (
                        isinstance(sub, ast.Attribute)
                        and sub.attr in SESSION_INTERNALS
                        and not (isinstance(sub.value, ast.Name) and sub.value.id == "self")
                    ):
                        found.append(f"{node.lineno}: assigns {ast.unparse(sub)}")
    return found


@pytest.mark.parametrize("path", FRONT_ENDS, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_front_ends_use_only_the_public_session_api(path: Path) -> None:
    assert _violations(path) == []


def test_the_boundary_check_catches_what_the_old_runner_did(tmp_path: Path) -> None:
    # the shortcuts runner.py used to take, so the check above is known to bite
    old = tmp_path / "old_runner.py"
    old.write_text(
        "from ..providers.openai import _env_key\n"
        "bundle.agent.gate = gate\n"
        "inner.approve = approver\n"
        "bundle._plan_agent.gate = gate\n"
    )
    lines = {int(problem.split(":")[0]) for problem in _violations(old)}
    assert lines == {1, 2, 3, 4}
