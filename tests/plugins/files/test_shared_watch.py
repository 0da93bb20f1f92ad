"""Sessions of one process on the same roots share one watcher thread (issue 38): a thread
per session woke every 50 ms for the GIL each, so a ``serve --http`` with 200 sessions on
one workspace ran 200 of them and every request of the server slowed down. Each session
still hears about outside changes to what it read, and the thread ends with the last one."""

from __future__ import annotations

import threading
import time

import callgate_files
from callgate_files import FILE_WATCH


def _watchers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "callgate-files-watch"]


def _until_noticed(s, path: str) -> str:
    deadline = time.monotonic() + 10
    text = ""
    while "changed outside" not in text and time.monotonic() < deadline:
        time.sleep(0.2)
        text = s.expect_ok("read_file", {"path": "c.txt"})
    assert f"[changed outside this session since it was last read: {path}" in text, text
    return text


def test_sessions_on_one_workspace_share_one_watcher_and_each_gets_notices(callgate_session):
    before = len(_watchers())
    first = callgate_session(plugins=[callgate_files], files={"a.txt": "one\n", "c.txt": "c"},
                             config={"files": {"watch": True}})
    others = [callgate_session(plugins=[callgate_files], workspace=first.workspace,
                               config={"files": {"watch": True}}) for _ in range(4)]
    sessions = [first, *others]
    for s in sessions:
        assert s.session.extension(FILE_WATCH).watching.wait(10)
    assert len(_watchers()) == before + 1  # five sessions, one thread
    for s in sessions:
        s.expect_ok("read_file", {"path": "a.txt"})
    first.path("a.txt").write_text("two\n")
    for s in sessions:
        _until_noticed(s, "a.txt")

    # a session leaving keeps the watcher for the others ...
    watcher = _watchers()[-1]
    first.close()
    assert watcher.is_alive()
    others[0].expect_ok("read_file", {"path": "a.txt"})
    first.path("a.txt").write_text("three\n")
    _until_noticed(others[0], "a.txt")
    # ... and the last one stops it
    for s in others:
        s.close()
    watcher.join(5)
    assert not watcher.is_alive()
    assert len(_watchers()) == before


def test_a_stopped_session_gets_nothing_from_the_shared_watcher(callgate_session):
    """A session that leaves while the shared watcher is delivering to it (the others keep
    the thread) returns from its stop only once that delivery is done, and no delivery
    reaches it afterwards: its feed stays cleared and its subscribers hear nothing."""
    first = callgate_session(plugins=[callgate_files], files={"a.txt": "one\n"},
                             config={"files": {"watch": True}})
    other = callgate_session(plugins=[callgate_files], workspace=first.workspace,
                             config={"files": {"watch": True}})
    watch = first.session.extension(FILE_WATCH)
    assert watch.watching.wait(10) and other.session.extension(FILE_WATCH).watching.wait(10)
    entered, release, heard = threading.Event(), threading.Event(), []
    feed = first.session.file_changes
    publish = feed.publish

    def slow_publish(batch):
        entered.set()
        release.wait(10)
        heard.append(batch)
        publish(batch)

    feed.publish = slow_publish
    change = [(1, str(first.path("a.txt")))]
    delivery = threading.Thread(target=watch._deliver, args=(change,))
    delivery.start()
    assert entered.wait(10)
    stopped = threading.Event()
    stopper = threading.Thread(target=lambda: (watch.stop(), stopped.set()))
    stopper.start()
    assert not stopped.wait(0.3)  # waits for the delivery under way
    release.set()
    assert stopped.wait(10)
    delivery.join(5)
    assert not feed.watched.is_set()
    watch._deliver(change)  # the watcher's next batch, after the stop
    assert len(heard) == 1 and not feed.watched.is_set()
    other.close()
