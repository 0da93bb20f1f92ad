"""A sub-agent's session on its parent's roots follows the parent's watcher instead of
starting its own (a child opens and closes in about a millisecond), and still hears about
outside changes to what it read (issue 22)."""

from __future__ import annotations

import time

import callgate_files
from callgate_files import FILE_WATCH


def _wait(watch, attr="watching"):
    deadline = time.monotonic() + 10
    while not getattr(watch, attr).is_set() and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_child_follows_its_parents_watcher_and_gets_notices(callgate_session):
    s = callgate_session(
        plugins=[callgate_files],
        files={"a.txt": "one\n", "c.txt": "c"},
        config={"files": {"watch": True}},
    )
    _wait(s.session.extension(FILE_WATCH))
    child = s.child()
    watch = child.session.extension(FILE_WATCH)
    assert watch._threads == [] and watch._following is s.session.extension(FILE_WATCH)
    child.expect_ok("read_file", {"path": "a.txt"})
    s.path("a.txt").write_text("two\n")
    deadline = time.monotonic() + 10
    text = ""
    while "changed outside" not in text and time.monotonic() < deadline:
        time.sleep(0.2)
        text = child.expect_ok("read_file", {"path": "c.txt"})
    assert "[changed outside this session since it was last read: a.txt" in text
    child.close()
    assert s.session.extension(FILE_WATCH)._followers == []
