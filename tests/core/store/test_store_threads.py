"""One store object shared by threads: closing it (a reader done with it, the last session
gone) while another thread writes or reads never pulls a connection from under it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from callgate import store as st
from callgate_store_sqlite._store import SqliteStore


def test_closing_while_other_threads_write_and_read_is_safe(tmp_path: Path) -> None:
    store = SqliteStore.open(str(tmp_path / "sessions.sqlite3"))
    run = st.RunStarted("r", 1, "h", None, time.time())
    store.write([run, st.SessionOpened(run, "s", None, "/ws", None, None, time.time(), None,
                                       None, None, "all")])
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            while not stop.is_set():
                store.write([st.MessageRecorded("s", "user", "x" * 2000, time.time())])
        except BaseException as exc:
            errors.append(exc)

    def reader() -> None:
        try:
            while not stop.is_set():
                store.entries("s", limit=5)
                store.search("x")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer), threading.Thread(target=reader)]
    for thread in threads:
        thread.start()
    # A fixed number of closes, not a time window: on a loaded machine a window holds
    # fewer closes, and the count is what the test is about.
    for _ in range(80):
        store.close()  # what the fixture or the last session's release does
        time.sleep(0.002)
    stop.set()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert store.integrity_check() == "ok"
    assert len(store.entries("s", kinds=("message",))) > 10
    store.close()
