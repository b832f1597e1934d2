"""InstructionLoader: order, format, file names."""

from clawnb.instructions import PREAMBLE, InstructionLoader


def test_root_first_and_list_order_within_a_directory(tmp_path):
    child = tmp_path / "a" / "b"
    child.mkdir(parents=True)
    (tmp_path / "CLAUDE.md").write_text("root rules")
    (tmp_path / "a" / "AGENTS.md").write_text("a agents")
    (tmp_path / "a" / "CLAUDE.md").write_text("a claude")
    (child / ".claw").mkdir()
    (child / ".claw" / "instructions.md").write_text("b claw")
    found = InstructionLoader.default_files().discover(child)
    # discover() walks to the filesystem root; only look at our tree
    ours = [p for p in found if str(p).startswith(str(tmp_path))]
    assert ours == [
        tmp_path / "CLAUDE.md",
        tmp_path / "a" / "CLAUDE.md",
        tmp_path / "a" / "AGENTS.md",
        child / ".claw" / "instructions.md",
    ]


def test_sections_headers_and_separators(tmp_path):
    child = tmp_path / "sub"
    child.mkdir()
    (tmp_path / "CLAUDE.md").write_text("  outer  \n")
    (child / "AGENTS.md").write_text("inner")
    (child / "CLAUDE.md").write_text("   \n")  # blank: skipped
    text = InstructionLoader(["CLAUDE.md", "AGENTS.md"]).load(child)
    assert text == (
        f"# Instructions from {tmp_path / 'CLAUDE.md'}\n\nouter"
        "\n\n---\n\n"
        f"# Instructions from {child / 'AGENTS.md'}\n\ninner"
    )


def test_system_prompt_section_has_the_preamble(tmp_path):
    (tmp_path / "AGENTS.md").write_text("Use tabs.")
    section = InstructionLoader(["AGENTS.md"]).system_prompt_section(tmp_path)
    assert section.startswith(PREAMBLE)
    assert section.endswith("Use tabs.")
    assert InstructionLoader(["NOPE.md"]).system_prompt_section(tmp_path) is None


def test_directories_named_like_files_are_ignored(tmp_path):
    (tmp_path / "CLAUDE.md").mkdir()
    assert InstructionLoader(["CLAUDE.md"]).load(tmp_path) is None


def test_non_utf8_content_does_not_fail(tmp_path):
    (tmp_path / "CLAUDE.md").write_bytes(b"caf\xe9 rules")
    assert "caf" in InstructionLoader(["CLAUDE.md"]).load(tmp_path)
