"""Every attack in corpus/ against every front end it names, judged by its effects.

An attack whose ``status`` starts with ``open`` is a known, still-unfixed finding: it runs and is
expected to fail (strict xfail), so the day it is fixed the test says so and the mark goes.
"""

from __future__ import annotations

import pytest

from .harness import AttackerServer, corpus, make_world, run_attack

pytestmark = pytest.mark.timeout(90)

CASES = [
    pytest.param(
        attack,
        frontend,
        id=f"{attack.id}[{frontend}]",
        marks=[pytest.mark.xfail(strict=True, reason=attack.data["status"])]
        if str(attack.data.get("status", "")).startswith("open")
        else [],
    )
    for attack in corpus()
    for frontend in attack.frontends
]


@pytest.mark.parametrize(("attack", "frontend"), CASES)
def test_attack_has_no_effect(attack, frontend, tmp_path, monkeypatch):
    if frontend == "chat":
        pytest.importorskip("pexpect")
    world = make_world(tmp_path, attack, AttackerServer(), AttackerServer())
    problems = run_attack(world, frontend, monkeypatch)
    assert not problems, f"{attack.data.get('finding')}: " + "; ".join(problems)
