"""The kernel's change reports that stand for a stat (clawnb.control.watch), with real inotify:
every change a stat of the path would see is seen, changes beside it are not, and where the
kernel cannot promise that there is no mark at all (the caller keeps its stat)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from clawnb.control.watch import Watch

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="inotify is Linux's")


@pytest.fixture
def watch() -> Iterator[Watch]:
    own = Watch()
    yield own
    own.close()


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    path = tmp_path / "ws" / ".claw" / "skills" / "review" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text("first\n", encoding="utf-8")
    return path


def test_nothing_done_to_a_marked_file_leaves_its_mark_standing(watch, skill) -> None:
    mark = watch.mark(skill)
    assert mark is not None
    skill.read_text(encoding="utf-8")  # reading changes nothing
    assert watch.unchanged(mark) and watch.unchanged(mark)


def test_an_edit_in_place_a_save_by_rename_a_chmod_and_a_deletion_are_each_seen(
    watch, skill
) -> None:
    def changed(act) -> bool:
        mark = watch.mark(skill)
        assert watch.unchanged(mark)
        act()
        return not watch.unchanged(mark)

    def append() -> None:
        with skill.open("a", encoding="utf-8") as f:
            f.write("appended\n")

    def save_by_rename() -> None:
        new = skill.with_name("SKILL.md.tmp")
        new.write_text("saved\n", encoding="utf-8")
        os.replace(new, skill)

    assert changed(append)
    assert changed(save_by_rename)
    assert changed(lambda: os.chmod(skill, 0o600))
    assert changed(skill.unlink)


def test_a_folder_on_the_way_moved_or_swapped_for_a_link_is_seen(watch, skill, tmp_path) -> None:
    skills = skill.parent.parent
    mark = watch.mark(skill)
    skills.rename(skills.with_name("skills-old"))  # the folder two levels up
    assert not watch.unchanged(mark)

    elsewhere = tmp_path / "elsewhere" / "review"
    elsewhere.mkdir(parents=True)
    (elsewhere / "SKILL.md").write_text("another\n", encoding="utf-8")
    mark = watch.mark(skill)  # the path names nothing now
    skills.symlink_to(elsewhere.parent)  # and now another file, through a link
    assert not watch.unchanged(mark)

    workspace = skill.parents[3]
    mark = watch.mark(skill)
    os.chmod(workspace, 0o700)  # the workspace folder's own permissions
    assert not watch.unchanged(mark)


def test_an_edit_through_another_hard_link_is_seen(watch, skill, tmp_path) -> None:
    other = tmp_path / "other-name"
    os.link(skill, other)
    mark = watch.mark(skill)
    with open(other, "a", encoding="utf-8") as f:
        f.write("edited through the other name\n")
    assert not watch.unchanged(mark)


def test_changes_beside_the_path_leave_its_mark_standing(watch, skill) -> None:
    mark = watch.mark(skill)
    (skill.parent / "notes.md").write_text("a reference file\n", encoding="utf-8")
    (skill.parents[3] / "analysis.ipynb").write_text("{}", encoding="utf-8")  # an autosave
    (skill.parents[2] / "other-skill").mkdir()
    assert watch.unchanged(mark)


def test_a_file_created_where_a_marked_path_named_nothing_is_seen(watch, skill) -> None:
    missing = skill.parent / "later.md"
    mark = watch.mark(missing)
    assert mark is not None and watch.unchanged(mark)
    missing.write_text("here now\n", encoding="utf-8")
    assert not watch.unchanged(mark)


def test_a_marked_folder_changes_with_any_entry_of_its_own(watch, skill) -> None:
    folder = skill.parents[3]
    mark = watch.mark(folder)
    (skill.parent / "deep.txt").write_text("not an entry of the folder\n", encoding="utf-8")
    assert watch.unchanged(mark)
    (folder / ".env").write_text("DB_PASSWORD=pw-0123456789\n", encoding="utf-8")
    assert not watch.unchanged(mark)


def test_a_path_on_a_filesystem_not_known_to_be_local_gets_no_mark(watch) -> None:
    # /proc's files change with no event; NFS, SMB and FUSE ones change on other machines
    assert watch.mark("/proc/self/status") is None
    assert not watch.unchanged(None)


def test_an_overflowing_event_queue_counts_as_every_path_changed(watch, skill, tmp_path) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    assert limit <= 100_000, f"max_queued_events is {limit}: raise the count below"
    busy = tmp_path / "busy"
    busy.mkdir()
    mark_skill = watch.mark(skill)
    mark_busy = watch.mark(busy)
    for i in range(limit + 10):  # distinct names: the kernel merges only repeated events
        (busy / f"f{i}").touch()
    assert not watch.unchanged(mark_busy)
    assert not watch.unchanged(mark_skill)  # untouched, but its events may have been lost
    assert watch.unchanged(watch.mark(skill))  # marked again, it stands


def test_a_forked_child_has_a_watch_of_its_own(skill) -> None:
    from clawnb.control.watch import watch

    mark = watch.mark(skill)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the parent's mark is not its own; a new one works
        try:
            own = watch.mark(skill)
            ok = not watch.unchanged(mark) and own is not None and watch.unchanged(own)
            skill.write_text("edited in the child\n", encoding="utf-8")
            ok = ok and not watch.unchanged(own)
            os.write(write, b"ok" if ok else b"no")
        finally:
            os._exit(0)
    os.close(write)
    answer = os.read(read, 2)
    os.waitpid(pid, 0)
    assert answer == b"ok"
    # the parent's queue was not read by the child: the child's edit is seen here too
    assert not watch.unchanged(mark)


def test_a_path_that_is_a_link_gets_no_mark(watch, skill, tmp_path) -> None:
    # a .env that links to another file: that file can change with no event on the link
    link = tmp_path / ".env"
    link.symlink_to(skill)
    assert watch.mark(link) is None
