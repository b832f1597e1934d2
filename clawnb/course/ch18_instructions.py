"""Book chapters 8 and 18: InstructionLoader — ``instructions.rs``, 8 tests.

Adapted from the book: the second file name is ``.claw/instructions.md`` (the book's
``.mini-claw/instructions.md``).
"""

from __future__ import annotations

from ._suite import Suite

suite = Suite("instructions", "InstructionLoader", chapters=["ch08", "ch18"])


@suite.test
def test_instructions_discover_in_current_dir(impl, tmp):
    (tmp / "CLAUDE.md").write_text("# Instructions\nBe helpful.")
    found = impl.InstructionLoader(["CLAUDE.md"]).discover(tmp)
    assert len(found) == 1
    assert str(found[0]).endswith("CLAUDE.md")


@suite.test
def test_instructions_discover_in_parent(impl, tmp):
    child = tmp / "subdir"
    child.mkdir()
    (tmp / "CLAUDE.md").write_text("Parent instructions")
    found = impl.InstructionLoader(["CLAUDE.md"]).discover(child)
    assert found
    assert any(str(p).endswith("CLAUDE.md") for p in found)


@suite.test
def test_instructions_no_files_found(impl, tmp):
    assert not impl.InstructionLoader(["NONEXISTENT.md"]).discover(tmp)


@suite.test
def test_instructions_load_content(impl, tmp):
    (tmp / "CLAUDE.md").write_text("Be concise.")
    content = impl.InstructionLoader(["CLAUDE.md"]).load(tmp)
    assert content is not None
    assert "Be concise." in content


@suite.test
def test_instructions_load_empty_file(impl, tmp):
    (tmp / "CLAUDE.md").write_text("")
    assert impl.InstructionLoader(["CLAUDE.md"]).load(tmp) is None


@suite.test
def test_instructions_multiple_file_names(impl, tmp):
    (tmp / "CLAUDE.md").write_text("Primary")
    (tmp / ".claw").mkdir()
    (tmp / ".claw" / "instructions.md").write_text("Secondary")
    text = impl.InstructionLoader(["CLAUDE.md", ".claw/instructions.md"]).load(tmp)
    assert text is not None
    assert "Primary" in text
    assert "Secondary" in text


@suite.test
def test_instructions_system_prompt_section(impl, tmp):
    (tmp / "CLAUDE.md").write_text("Use Rust idioms.")
    section = impl.InstructionLoader(["CLAUDE.md"]).system_prompt_section(tmp)
    assert section is not None
    assert "project instructions" in section
    assert "Use Rust idioms." in section


@suite.test
def test_instructions_default_files(impl, tmp):
    impl.InstructionLoader.default_files().discover("/tmp")  # must not raise
