"""A sandbox for the safety tests and the corpora that run in it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


def load_paths(name: str) -> list[dict[str, str]]:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def load_commands(name: str) -> list[tuple[str, str]]:
    """``(category, command)`` pairs; lines without a tab have category ``-``."""
    rows = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        category, sep, command = line.partition("\t")
        rows.append((category, command) if sep else ("-", line))
    return rows


class Sandbox:
    """``root/`` holding the workspace ``ws/``, a sibling ``outside/`` with a secret, look-alike
    directories (``ws-evil``, ``wsevil``) and symlinks of every kind inside ``ws``."""

    def __init__(self, base: Path) -> None:
        self.root = base.resolve() / "root"
        self.ws = self.root / "ws"
        self.outside = self.root / "outside"
        for d in (
            self.ws / "sub" / "deep",
            self.ws / "a",
            self.ws / "b",
            self.outside,
            self.root / "ws-evil",
            self.root / "wsevil",
        ):
            d.mkdir(parents=True, exist_ok=True)
        (self.ws / "file.txt").write_text("inside")
        (self.outside / "secret.txt").write_text("secret")
        (self.root / "ws-evil" / "f.txt").write_text("evil")
        links = {
            "link_out": "../outside",
            "link_out_abs": str(self.outside),
            "link_etc": "/etc",
            "link_root": "/",
            "link_file_out": "../outside/secret.txt",
            "dangling_out": "../outside/missing/new.txt",
            "dangling_abs": "/nonexistent-clawnb-dir/x",
            "dangling_dir_out": "../outside/missing_dir",
            "loop_a": "loop_b",
            "loop_b": "loop_a",
            "self_loop": "self_loop",
            "chain1": "chain2",
            "chain2": "link_out",
            "evil_prefix": "../ws-evil",
            "link_in": "sub",
            "link_in_file": "file.txt",
            "link_in_abs": str(self.ws / "sub"),
            "dangling_in": "missing_inside.txt",
            "sub/upup": "../..",
            "sub/up": "..",
        }
        for name, target in links.items():
            os.symlink(target, self.ws / name)

    def expand(self, template: str) -> str:
        return (
            template.replace("{ws}", str(self.ws))
            .replace("{root}", str(self.root))
            .replace("{outside}", str(self.outside))
        )


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    box = Sandbox(tmp_path)
    monkeypatch.chdir(box.root)  # so /proc/self/cwd points outside the workspace
    return box
