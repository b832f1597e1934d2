"""The layout shows the layers: the package root holds the book's modules and a handful of
folders, and the docs list every module and folder there is."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "clawnb"
FOLDERS = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists())


def test_the_package_root_holds_at_most_twenty_modules():
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= 20, modules


def test_the_architecture_doc_names_every_module_and_folder():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    missing = [f"{folder}/" for folder in FOLDERS if f"`{folder}/`" not in doc]
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if rel.name.startswith("_") or rel.parts[0] in ("course", "demo"):
            continue  # package markers; the course's suites are listed in docs/course.md
        stem = rel.stem
        if len(rel.parts) == 1:
            named = f"`{stem}.py`" in doc or f"{stem}.py" in doc
        else:
            named = f"`{stem}`" in doc or f"{stem}.py" in doc
        if not named:
            missing.append(str(rel))
    assert not missing, f"docs/architecture.md does not list: {missing}"


def test_the_readme_layout_names_every_folder():
    readme = (ROOT / "README.md").read_text()
    layout = readme[readme.index("## Layout") : readme.index("## Benchmarks")]
    assert [f for f in FOLDERS if f"`clawnb/{f}/`" not in layout] == []
