"""Book chapters 8 and 18: InstructionLoader — ``instructions.rs``, 8 tests.

Adapted from the book: the second file name is ``.claw/instructions.md`` (the book's
``.mini-claw/instructions.md``).
"""

from __future__ import annotations

from ._helpers import file_with, tree
from ._suite import Suite

suite = Suite("instructions", "InstructionLoader", chapters=["ch08", "ch18"])


def _loader(impl, project, text):
    """A loader for ``CLAUDE.md``, after writing ``text`` to the project's ``CLAUDE.md``."""
    file_with(project / "CLAUDE.md", text)
    return impl.InstructionLoader(["CLAUDE.md"])


@suite.test
def test_instructions_discover_in_current_dir(impl, tmp):
    found = _loader(impl, tmp, "# Instructions\nBe helpful.").discover(tmp)
    assert len(found) == 1
    assert str(found[0]).endswith("CLAUDE.md")


@suite.test
def test_instructions_discover_in_parent(impl, tmp):
    child = tmp / "subdir"
    child.mkdir()
    found = _loader(impl, tmp, "Parent instructions").discover(child)
    assert found
    assert any(str(p).endswith("CLAUDE.md") for p in found)


@suite.test
def test_instructions_no_files_found(impl, tmp):
    assert not impl.InstructionLoader(["NONEXISTENT.md"]).discover(tmp)


@suite.test
def test_instructions_load_content(impl, tmp):
    content = _loader(impl, tmp, "Be concise.").load(tmp)
    assert content is not None
    assert "Be concise." in content


@suite.test
def test_instructions_load_empty_file(impl, tmp):
    assert _loader(impl, tmp, "").load(tmp) is None


@suite.test
def test_instructions_multiple_file_names(impl, tmp):
    tree(tmp, {"CLAUDE.md": "Primary", ".claw/instructions.md": "Secondary"})
    text = impl.InstructionLoader(["CLAUDE.md", ".claw/instructions.md"]).load(tmp)
    assert text is not None
    assert "Primary" in text
    assert "Secondary" in text


@suite.test
def test_instructions_system_prompt_section(impl, tmp):
    section = _loader(impl, tmp, "Use Rust idioms.").system_prompt_section(tmp)
    assert section is not None
    assert "project instructions" in section
    assert "Use Rust idioms." in section


@suite.test
def test_instructions_default_files(impl, tmp):
    impl.InstructionLoader.default_files().discover("/tmp")  # must not raise
