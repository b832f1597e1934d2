"""``import clawnb`` must stay cheap: no HTTP, IPython or widget libraries."""

import subprocess
import sys

HEAVY = ["httpx", "IPython", "ipywidgets", "ipykernel", "pydantic", "openai"]


def test_import_clawnb_is_cheap():
    code = f"import sys, clawnb; print([m for m in {HEAVY!r} if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_engine_loops_import_no_jupyter():
    code = (
        "import sys, clawnb.agent, clawnb.executor, clawnb.providers.replay, clawnb.tools; "
        "print([m for m in ('IPython', 'ipywidgets', 'ipykernel') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_lazy_exports_resolve():
    import clawnb

    assert clawnb.MockProvider.__name__ == "MockProvider"
    assert "SimpleAgent" in dir(clawnb)


def test_every_public_name_resolves():
    import clawnb

    for name in clawnb._EXPORTS:
        assert getattr(clawnb, name) is not None, name


def _import_graph() -> dict[str, set[str]]:
    """Module → the package modules it imports, at module level or inside functions (a lazy
    import still needs the other module; only ``if TYPE_CHECKING:`` blocks are left out, and
    imports of one's own parent package, which Python has always loaded first)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    modules: dict[str, tuple[Path, bool]] = {}
    for path in (root / "clawnb").rglob("*.py"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)

    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        type_only = {
            id(node)
            for block in ast.walk(tree)
            if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
            for node in ast.walk(block)
        }
        here = name.split(".") if is_package else name.split(".")[:-1]
        deps: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in type_only:
                continue
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = here[: len(here) - node.level + 1] if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in targets:
                if target in modules and target != name and not name.startswith(target + "."):
                    deps.add(target)
        graph[name] = deps
    return graph


def test_the_package_has_no_import_cycles():
    graph = _import_graph()
    assert "clawnb.control.shell" in graph and "clawnb.agent" in graph  # the walk found the package
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycle = path[path.index(module) :] + [module]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if module in done:
            return
        for dep in sorted(graph[module]):
            visit(dep, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])


def test_the_type_checking_block_mirrors_the_lazy_exports():
    # Type checkers read the TYPE_CHECKING imports, the interpreter _EXPORTS: one list each,
    # so they must name the same things from the same modules.
    import ast
    from pathlib import Path

    import clawnb

    tree = ast.parse(Path(clawnb.__file__).read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    aliases = [
        (alias, "clawnb." + node.module)
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    ]
    assert {alias.name: module for alias, module in aliases} == clawnb._EXPORTS
    # ``X as X``: re-exported, so ``clawnb.X`` type-checks under --strict too
    assert all(alias.asname == alias.name for alias, _ in aliases)


def test_the_package_says_it_is_typed():
    from pathlib import Path

    import clawnb

    assert (Path(clawnb.__file__).parent / "py.typed").is_file()
