"""Chapter 23: the small language of configured hooks — ``if`` conditions and context
variables quoted for the shell. Not a book test file: the book's hooks are Python objects,
with no conditions and no commands."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ._suite import Suite

suite = Suite("hook_rules", "parse_condition, expand_command, expand_text", chapters=["ch23"])


def _holds(impl, text, tool, args=None):
    return impl.parse_condition(text).holds(tool, args or {})


def _refusal(impl, text):
    """What the ValueError parsing ``text`` said, or that it was accepted."""
    try:
        impl.parse_condition(text)
    except ValueError as exc:
        return f"ValueError: {exc}"
    return "accepted (no ValueError)"


def _sh(command, cwd: Path) -> str:
    """What ``sh -c command`` prints, run in ``cwd``."""
    done = subprocess.run(["sh", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=5)
    return done.stdout


@suite.test
def test_hook_rules_each_operator_compares_as_documented(impl, tmp):
    # == and != compare the whole value; =~ searches a regular expression anywhere in it
    # (re.search, not re.match); ~= matches a glob against the whole value.
    assert _holds(impl, "tool == 'bash'", "bash"), "== 'bash' holds for bash"
    assert not _holds(impl, "tool == 'bash'", "bash2"), "== compares the whole name"
    assert _holds(impl, "tool != 'read'", "bash"), "!= 'read' holds for bash"
    push = {"command": "git push origin"}
    assert _holds(impl, "args.command =~ 'push'", "bash", push), "=~ 'push' is found in 'git push'"
    assert not _holds(impl, "args.command =~ '^push'", "bash", push), "^ anchors at the start"
    lock = {"path": "poetry.lock"}
    assert _holds(impl, 'args.path ~= "*.lock"', "write", lock), "~= '*.lock': poetry.lock"
    bak = {"path": "poetry.lock.bak"}
    assert not _holds(impl, "args.path ~= '*.lock'", "write", bak), "~= matches the whole value"


@suite.test
def test_hook_rules_a_glob_star_stays_in_its_folder(impl, tmp):
    # * and ? never cross a /; ** crosses any number of folders, none included.
    one, deep = "args.path ~= 'src/*.py'", "args.path ~= 'src/**/*.py'"
    for condition, path, expected in [
        (one, "src/app.py", True),
        (one, "src/pkg/app.py", False),
        (deep, "src/pkg/sub/app.py", True),
        (deep, "src/app.py", True),
        (deep, "tests/app.py", False),
    ]:
        got = _holds(impl, condition, "write", {"path": path})
        assert got is expected, f"{condition} on the path {path!r}: expected {expected}, got {got}"


@suite.test
def test_hook_rules_and_needs_all_or_needs_any(impl, tmp):
    both = "tool == 'bash' && args.command =~ '^git '"
    assert _holds(impl, both, "bash", {"command": "git status"}), "&&: both sides hold"
    assert not _holds(impl, both, "bash", {"command": "ls"}), "&&: the second side fails"
    assert not _holds(impl, both, "read", {"command": "git status"}), "&&: the first side fails"
    either = "args.path ~= '*.lock' || args.path == 'package-lock.json'"
    paths = ["package-lock.json", "Cargo.lock", "main.rs"]
    held = [path for path in paths if _holds(impl, either, "write", {"path": path})]
    assert held == ["package-lock.json", "Cargo.lock"], (
        f"||: one side is enough; it held for {held}"
    )


@suite.test
def test_hook_rules_mixing_and_with_or_is_refused(impl, tmp):
    # "a && b || c" has two readings; the rule is to refuse it and say to split the hook.
    said = _refusal(impl, "tool == 'bash' && args.command =~ 'rm' || tool == 'write'")
    assert "mixed" in said


@suite.test
def test_hook_rules_a_bad_condition_is_one_readable_error(impl, tmp):
    # An unquoted value, a lone =, an unknown subject, a broken regular expression, a
    # dangling &&: each a ValueError (the config error's one line) that quotes the condition.
    for bad in (
        "tool == bash",
        "tool = 'bash'",
        "name == 'bash'",
        "args.x =~ '('",
        "tool == 'a' &&",
    ):
        said = _refusal(impl, bad)
        assert said.startswith("ValueError"), bad
        assert bad in said


@suite.test
def test_hook_rules_a_missing_argument_matches_only_not_equal(impl, tmp):
    # A call without that argument: == and =~ and ~= are false, != is true. A number or a
    # list compares as its JSON text.
    assert not _holds(impl, "args.path == ''", "bash", {"command": "ls"})
    assert not _holds(impl, "args.path =~ '.*'", "bash", {"command": "ls"})
    assert _holds(impl, "args.path != 'a.txt'", "bash", {"command": "ls"})
    assert not _holds(impl, "tool == 'bash'", None)
    assert _holds(impl, "args.timeout == '30'", "bash", {"timeout": 30})
    assert _holds(impl, 'args.paths == \'["a", "b"]\'', "x", {"paths": ["a", "b"]})


@suite.test
def test_hook_rules_a_file_name_is_one_word_to_the_shell(impl, tmp):
    # The model chose the name "x; touch pwned". Put in bare, unquoted, the shell would run
    # `touch pwned` as a second command; quoted, it is one file name.
    values = {"FILE_PATH": "x; touch pwned", "TOOL_NAME": "write"}
    command = impl.expand_command("touch $FILE_PATH", values)
    _sh(command, tmp)
    assert sorted(p.name for p in tmp.iterdir()) == ["x; touch pwned"]


@suite.test
def test_hook_rules_quoting_holds_inside_double_and_single_quotes(impl, tmp):
    # Inside "…" the shell still expands $( ) and `…`; inside '…' a value's own ' would end
    # the quote. Either way the value must come out exactly as it was.
    evil = {"FILE_PATH": "$(touch pwned)`touch pwned2`.py"}
    said = _sh(impl.expand_command('echo "changed: $FILE_PATH"', evil), tmp)
    assert said == "changed: $(touch pwned)`touch pwned2`.py\n"
    quote = {"MESSAGE": "it's done'; touch pwned; echo '"}
    said = _sh(impl.expand_command("echo 'said: $MESSAGE'", quote), tmp)
    assert said == "said: it's done'; touch pwned; echo '\n"
    assert list(tmp.iterdir()) == []


@suite.test
def test_hook_rules_tool_arguments_missing_values_and_other_dollars(impl, tmp):
    # $TOOL_ARGS.key is one argument; a variable the event lacks is empty (still one word:
    # ''); a $NAME that is not ours is left for the shell.
    values = {"TOOL_ARGS": {"command": "git push", "n": 3}, "TOOL_NAME": "bash"}
    assert _sh(impl.expand_command("echo $TOOL_ARGS.command/$TOOL_ARGS.n", values), tmp) == (
        "git push/3\n"
    )
    assert _sh(impl.expand_command("printf '[%s]' $MESSAGE", values), tmp) == "[]"
    assert impl.expand_command("echo $HOME $TOOL_NAME", values) == "echo $HOME bash"


@suite.test
def test_hook_rules_a_prompt_gets_the_values_as_they_are(impl, tmp):
    # A prompt goes to a model, not a shell: no quotes added.
    values = {"FILE_PATH": "notes/it's here.md", "TOOL_ARGS": {"command": "ls -la"}}
    text = impl.expand_text("Check $FILE_PATH after `$TOOL_ARGS.command`.", values)
    assert text == "Check notes/it's here.md after `ls -la`."
    assert impl.expand_text("No $MESSAGE here", values) == "No  here"
