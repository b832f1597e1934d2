"""Chapter 22: two-stage skills — ``SKILL.md`` files whose name and description are listed
(stage one) and whose body is read only when the skill is used (stage two). Not a book test
file: the book has no skills."""

from __future__ import annotations

from pathlib import Path

from ._suite import Suite

suite = Suite("skills", "SkillIndex, SkillTool, substitute, add_skill_commands", chapters=["ch22"])

REVIEW = """---
name: review
description: Review a file for bugs and unclear names
---
Review $0 with care ($ARGUMENTS).
Report each problem with its line number.
"""


def _skill(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _many(root: Path, count: int) -> Path:
    for i in range(count):
        _skill(
            root,
            f"skill-{i:02}",
            f"---\nname: skill-{i:02}\ndescription: Does task number {i} of a long list, "
            f"whenever the user asks for exactly that task and nothing else\n---\n"
            f"BODY-{i:02}: the secret steps of task {i}.\n" + "More steps.\n" * 40,
        )
    return root


@suite.test
def test_skills_frontmatter_gives_name_and_description(impl, tmp):
    # name and description come from the frontmatter; without a name, the folder's.
    _skill(tmp, "review", REVIEW)
    _skill(tmp, "tidy", "---\ndescription: 'Tidy imports'\n---\nSort the imports.\n")
    index = impl.SkillIndex(tmp)
    assert sorted(index.skills) == ["review", "tidy"]
    assert index.skills["review"].description == "Review a file for bugs and unclear names"
    assert index.skills["tidy"].description == "Tidy imports"
    assert index.problems == []


@suite.test
def test_skills_a_bad_file_is_one_problem_and_the_rest_load(impl, tmp):
    # A skill without a description (the model could never choose it) or without
    # frontmatter is one line in problems naming the file; the others still load.
    _skill(tmp, "review", REVIEW)
    _skill(tmp, "nodesc", "---\nname: nodesc\n---\nBody.\n")
    _skill(tmp, "plain", "Just a body, no frontmatter.\n")
    index = impl.SkillIndex(tmp)
    assert list(index.skills) == ["review"]
    assert len(index.problems) == 2
    nodesc = next(p for p in index.problems if "nodesc" in p)
    assert "SKILL.md" in nodesc
    assert "description" in nodesc


@suite.test
def test_skills_listing_stays_within_the_budget_with_60_skills(impl, tmp):
    # Stage one costs at most its budget, however many skills there are.
    index = impl.SkillIndex(_many(tmp, 60))
    for budget in (300, 1000, 2000):
        listing = index.listing(budget)
        assert len(listing) <= budget
        assert len(listing) > 0
        assert "skill-00" in listing  # the first always has its place


@suite.test
def test_skills_listing_never_contains_a_body(impl, tmp):
    # Bodies are stage two: not one of them is in the listing, whatever the budget.
    index = impl.SkillIndex(_many(tmp, 60))
    listing = index.listing(100_000)
    assert "BODY-" not in listing
    assert "secret steps" not in listing
    assert all(f"skill-{i:02}" in listing for i in range(60))
    assert "Does task number 59" in listing


@suite.test
def test_skills_listing_names_the_ones_whose_description_does_not_fit(impl, tmp):
    # When the descriptions run out of room, the rest are still named (if the names fit),
    # so the model knows they exist.
    index = impl.SkillIndex(_many(tmp, 60))
    listing = index.listing(1500)
    assert "Does task number 0 " in listing
    assert "Does task number 59" not in listing
    assert "skill-59" in listing


@suite.test
def test_skills_body_is_read_when_the_skill_is_used(impl, tmp):
    # The index keeps no body: an edit to SKILL.md after indexing is what load() returns.
    path = _skill(tmp, "review", REVIEW)
    index = impl.SkillIndex(tmp)
    path.write_text(REVIEW.replace("with care", "twice"), encoding="utf-8")
    assert "Review a.py twice" in index.load("review", "a.py")


@suite.test
async def test_skills_tool_loads_a_body(impl, tmp):
    # The model's way to stage two: the skill tool returns the body, its arguments put in.
    _skill(tmp, "review", REVIEW)
    tool = impl.SkillTool(impl.SkillIndex(tmp))
    assert tool.definition.name == "skill"
    assert "name" in tool.definition.parameters["required"]
    body = await tool.call({"name": "review", "arguments": "src/app.py fast"})
    assert body == (
        "Review src/app.py with care (src/app.py fast).\n"
        "Report each problem with its line number.\n"
    )


@suite.test
async def test_skills_tool_unknown_skill_names_the_nearest(impl, tmp):
    _skill(tmp, "review", REVIEW)
    tool = impl.SkillTool(impl.SkillIndex(tmp))
    try:
        await tool.call({"name": "reveiw"})
    except Exception as exc:
        assert "reveiw" in str(exc)
        assert "review" in str(exc).replace("reveiw", "")
    else:
        raise AssertionError("an unknown skill loaded")


@suite.test
def test_skills_substitution_fills_arguments_and_positions(impl, tmp):
    # $ARGUMENTS is the whole line; $0, $1 … its words, counted from 0; quotes keep words
    # together.
    s = impl.substitute
    assert s("Fix $ARGUMENTS now", "the login bug") == "Fix the login bug now"
    assert s("from $0 to $1", '"New York" Tokyo') == "from New York to Tokyo"
    assert s("$1 before $0", "a b") == "b before a"


@suite.test
def test_skills_substitution_keeps_what_it_cannot_fill(impl, tmp):
    # A $N with no word for it stays as written ("costs $5"); arguments the body never used
    # are added at the end, so nothing typed is lost; one pass, so $1 inside an argument stays.
    s = impl.substitute
    assert s("It costs $5 for $0", "tea") == "It costs $5 for tea"
    assert s("Tidy the imports.\n", "src/").rstrip("\n").endswith("ARGUMENTS: src/")
    assert s("Say $0", "$1") == "Say $1"
    assert s("No arguments here.\n", "") == "No arguments here.\n"


@suite.test
async def test_skills_slash_command_runs_a_skill(impl, tmp):
    # The person's way to stage two: each skill is a command, /NAME arguments, in /help too.
    _skill(tmp, "review", REVIEW)
    registry = impl.CommandRegistry()
    impl.add_skill_commands(registry, impl.SkillIndex(tmp))
    said = await registry.dispatch("/review a.py")
    assert said.startswith("Review a.py with care (a.py).")
    assert any(
        line.startswith("/review") for line in (await registry.dispatch("/help")).splitlines()
    )
