"""CommandFilter: normalisation, no false positives, the measured coverage table, and the
permission engine asking for every bash call whatever the filter says."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from conftest import load_commands

from clawnb.control.shell import normalize_command
from clawnb.permissions import Permission, PermissionEngine
from clawnb.safety import DEFAULT_BLOCKED_COMMANDS, CommandFilter, SafetyViolation
from clawnb.tools.bash import BashTool

DANGEROUS = load_commands("dangerous_commands.txt")
SAFE = [c for _, c in load_commands("safe_commands.txt")]
FILTERS = {
    "book": CommandFilter.default_filters(),
    "book-raw": CommandFilter.default_filters(normalize=False),
    "config": CommandFilter(DEFAULT_BLOCKED_COMMANDS),
    "recommended": CommandFilter.recommended(),
}


def test_corpus_is_big_enough():
    assert len(DANGEROUS) >= 50
    assert len({category for category, _ in DANGEROUS}) >= 8


@pytest.mark.parametrize("name", list(FILTERS))
@pytest.mark.parametrize("command", SAFE)
def test_ordinary_commands_are_not_blocked(name, command):
    assert FILTERS[name].is_blocked(command) is None


@pytest.mark.parametrize(("category", "command"), DANGEROUS)
def test_default_mode_asks_for_every_bash_call(category, command):
    engine = PermissionEngine.for_mode("default")
    assert engine.evaluate(BashTool(), {"command": command}) is Permission.Ask


def test_default_mode_asks_for_safe_bash_too():
    engine = PermissionEngine.for_mode("default")
    assert all(engine.evaluate(BashTool(), {"command": c}) is Permission.Ask for c in SAFE)


def test_coverage_table():
    """Prints the measured table (run pytest with -s to see it); asserts only its shape."""
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "command_filter_coverage.py"
    spec = importlib.util.spec_from_file_location("command_filter_coverage", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    table, totals, n, _ = module.coverage()
    print("\n" + module.render())
    assert n == len(DANGEROUS)
    assert sum(c["shapes"] for c in table.values()) == n
    # normalisation only ever adds catches to the book's raw matching
    assert totals["book-raw"] <= totals["book"] <= n
    assert all(not fps for fps in module.false_positives().values())


@pytest.mark.parametrize(
    "command",
    [
        "rm  -rf   /",
        "   rm -rf /   ",
        "/bin/rm -rf /",
        "\\rm -rf /",
        "'rm' -rf /",
        "r''m -rf /",
        "echo hi; rm -rf /",
        "ls && sudo reboot",
        "FOO=1 BAR=2 sudo ls",
        "env -i sudo ls",
        "nice -n 5 sudo ls",
        "echo $(sudo id)",
        "echo `sudo id`",
        "true\nsudo id",
    ],
)
def test_normalisation_catches_spelling_variants(command):
    assert CommandFilter.default_filters().is_blocked(command) is not None
    assert CommandFilter.default_filters(normalize=False).is_blocked(command) in (
        None,
        "rm -rf /",
    )


def test_normalize_command_forms():
    assert normalize_command("FOO=1 /usr/bin/env 'sudo'  ls; echo  'a  b'") == [
        "FOO=1 /usr/bin/env 'sudo' ls; echo 'a b'",
        "FOO=1 /usr/bin/env 'sudo' ls",
        "env sudo ls",  # each wrapper's own form, then what it runs
        "sudo ls",
        "ls",
        "echo 'a b'",
        "echo a  b",
    ]
    assert normalize_command("echo 'unclosed") == ["echo 'unclosed"]


def test_quoted_operators_are_not_split():
    f = CommandFilter.default_filters()
    assert f.is_blocked("git commit -m 'x; sudo rm -rf /'") is None
    assert f.is_blocked('echo "a | sudo b"') is None


def test_is_blocked_returns_the_first_pattern_in_list_order():
    f = CommandFilter(["npm publish*", "sudo *", "*"])
    assert f.is_blocked("sudo npm-publish") == "sudo *"
    assert f.is_blocked("sudo npm publish") == "npm publish*"  # what sudo runs matches first
    assert f.is_blocked("npm publish --tag x") == "npm publish*"


def test_check_message_and_scope():
    f = CommandFilter.default_filters()
    with pytest.raises(SafetyViolation) as err:
        f.check("bash", {"command": "sudo reboot"})
    assert str(err.value) == "blocked command matching pattern `sudo *`"
    f.check("write", {"command": "sudo reboot"})  # only bash is checked
    f.check("bash", {"command": 42})
    f.check("bash", None)


def test_invalid_patterns_are_dropped():
    f = CommandFilter(["[oops", "", "   ", "ok *"])
    assert f.patterns == ["ok *"]


def test_star_matches_slash_and_matching_is_case_sensitive():
    f = CommandFilter.default_filters()
    assert f.is_blocked("rm -rf /home/x") == "rm -rf /*"
    assert f.is_blocked("SUDO ls") is None


def test_scripts_given_to_a_shell_or_eval_are_looked_into():
    f = CommandFilter.default_filters()
    assert f.is_blocked("bash -c 'sudo id'") == "sudo *"
    assert f.is_blocked('sh -xc "rm -rf /"') == "rm -rf /"
    assert f.is_blocked("eval 'sudo reboot'") == "sudo *"
    assert f.is_blocked("bash -c \"bash -c 'sudo id'\"") == "sudo *"
    assert f.is_blocked("bash -c 'echo sudo'") is None
    assert f.is_blocked("bash --norc script.sh") is None
