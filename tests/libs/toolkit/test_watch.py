"""The one directory watcher plugins share (callgate_toolkit.watch): the memory index and
the skills catalog watch through one inotify instance, and neither steals the other's
events."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from callgate_toolkit.watch import DirectoryWatcher

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="inotify is Linux-only")


def test_two_watches_of_one_directory_each_see_every_change(tmp_path: Path) -> None:
    watcher = DirectoryWatcher()
    first, second = watcher.watch(str(tmp_path)), watcher.watch(str(tmp_path))
    assert first is not None and second is not None and first.wd == second.wd
    (tmp_path / "a.md").write_text("x")
    assert set(first.changes() or ()) == {"a.md"}  # reading the kernel for both ...
    (tmp_path / "b.md").write_text("y")
    assert set(second.changes() or ()) == {"a.md", "b.md"}  # ... loses nothing for either
    assert set(first.changes() or ()) == {"b.md"}
    first.close()  # the kernel watch stays while another Watch shares it
    (tmp_path / "c.md").write_text("z")
    assert set(second.changes() or ()) == {"c.md"}
    assert first.changes() is None and first.lost


def test_a_watch_of_a_removed_or_moved_directory_is_lost(tmp_path: Path) -> None:
    watcher = DirectoryWatcher()
    gone, moved = tmp_path / "gone", tmp_path / "moved"
    gone.mkdir()
    moved.mkdir()
    watches = [watcher.watch(str(gone)), watcher.watch(str(moved))]
    assert all(w is not None and w.changes() == [] for w in watches)
    os.rmdir(gone)
    os.rename(moved, tmp_path / "elsewhere")
    assert [w.changes() for w in watches if w is not None] == [None, None]


def test_what_cannot_be_watched_says_so(tmp_path: Path) -> None:
    watcher = DirectoryWatcher()
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "link")
    assert watcher.watch(str(tmp_path / "missing")) is None
    assert watcher.watch(str(tmp_path / "link")) is None  # not followed by default
    assert watcher.watch(str(tmp_path / "link"), follow_symlinks=True) is not None
    off = DirectoryWatcher(enabled=False)
    assert off.watch(str(tmp_path)) is None and not off.started


def test_memory_and_skills_share_the_process_watcher() -> None:
    from callgate_memory import _changes
    from callgate_skills import _watch
    from callgate_toolkit.watch import WATCHER

    assert _changes.FEED._watcher is WATCHER and _watch.WATCH._watcher is WATCHER
