"""The store under test, and a small writer that builds the ops a host would write.

``store`` is parametrized by backend: a second backend (PostgreSQL) adds its opener to
``BACKENDS`` and every contract test runs against it too.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from callgate import store as st
from callgate_store_sqlite._store import SqliteStore


def _sqlite(tmp_path: Path) -> Any:
    return SqliteStore.open(str(tmp_path / "store" / "sessions.sqlite3"))


BACKENDS: dict[str, Callable[[Path], Any]] = {"sqlite": _sqlite}


@pytest.fixture(params=sorted(BACKENDS))
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    opened = BACKENDS[request.param](tmp_path)
    yield opened
    opened.close()


class Writer:
    """Builds and writes ops the way the host's recorder does (one ``write`` per call)."""

    def __init__(self, store: Any, pid: int | None = None) -> None:
        self.store = store
        self.run = st.RunStarted(os.urandom(8).hex(), os.getpid() if pid is None else pid,
                                 socket.gethostname(), None, time.time())
        store.write([self.run])

    def session(self, session_id: str, workspace: str = "/ws", *, name: str | None = None,
                parent: str | None = None, directory: str | None = None,
                started: float | None = None, principal: str | None = None) -> str:
        self.store.write([st.SessionOpened(self.run, session_id, name, workspace, parent,
                                           directory, started or time.time(), "full",
                                           "posix", "linux", "all", principal=principal)])
        return session_id

    def batch(self, session: str) -> st.BatchStarted:
        op = st.BatchStarted(session)
        self.store.write([op])
        return op

    def call(self, session: str, batch: st.BatchStarted, call_id: str, name: str,
             arguments: Any, text: str | None = "ok", *, position: int = 0,
             error: str | None = None, shown: str | None = None, merged: bool = False,
             seq: int = 1, origin: str = "human") -> st.CallStarted:
        start = st.CallStarted(session, batch, position, call_id, name, arguments, origin,
                               time.time(), self.run)
        if text is None:  # still running
            self.store.write([start])
            return start
        end = st.CallEnded(start, None, error or "ok", error is not None,
                           f"{error}:x" if error else None, "allow", "read_only", text, shown,
                           time.time(), seq)
        if merged:
            start.end = end
            self.store.write([start, end])
        else:
            self.store.write([start])
            self.store.write([end])
        return start

    def message(self, session: str, role: str, text: str) -> None:
        self.store.write([st.MessageRecorded(session, role, text, time.time())])

    def write(self, *ops: Any) -> None:
        self.store.write(list(ops))


@pytest.fixture
def writer(store: Any) -> Writer:
    return Writer(store)
