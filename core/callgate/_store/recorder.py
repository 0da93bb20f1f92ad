"""The store's writer: ops queued from any thread, applied in order by one thread.

The hot path only appends to a deque: an op, or what a call did as it is (`defer`: a
builder and its references, which the writer thread turns into ops in their place in the
queue, so the event loop builds, formats, encodes and hashes nothing for the record). The
writer thread wakes when a batch starts or ends (`kick`), waits a few milliseconds for
more to arrive, and hands everything queued to the backend in one short transaction, so a
turn of many calls costs one commit. `flush` waits until everything queued so far is
written (a plugin's state change, a session's close, an integrator who wants to know). A
group the store refuses is written again op by op, so one bad op costs only itself; what
still fails is logged, and the host goes on (recording never takes a session down). A
plugin's state change that fails is raised to it.
"""

from __future__ import annotations

import atexit
import logging
import os
import socket
import sys
import threading
import time
import uuid
import weakref
from collections import deque
from typing import Any

from . import records as m

log = logging.getLogger("callgate.store")

#: How long the writer lets ops gather after a wake-up before it commits them.
GATHER_S = 0.004
#: The most ops one transaction applies (transactions stay short under any load).
MAX_GROUP = 4096
FLUSH_TIMEOUT_S = 120.0


class _Flush:
    """A point in the queue: set once everything before it is written (or failed)."""

    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done = threading.Event()


class Recorder:
    """One store's writer thread and queue, shared by every session of this process that
    records into that store. `acquire`/`release` count its users; with none left, it
    commits what is queued, ends its run, and closes the store's connections."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._queue: deque[Any] = deque()
        self._wake = threading.Event()
        self._idle = True  # no kick since the writer last woke (`kick`)
        self._hurry = threading.Event()  # a flush cuts the gathering short
        self._urgent = False
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._users = 0
        self._warned = False
        self.run: m.RunStarted | None = None
        self._run_queued = True
        #: what to run once the current group is committed, by key (`after_commit`): the
        #: writer thread's only, so no lock
        self._after: dict[int, Any] = {}
        _LIVE.add(self)

    # --- users ---------------------------------------------------------------------------

    def acquire(self) -> m.RunStarted:
        """One more session records here; returns this process's run (started if needed)."""
        with self._lock:
            self._users += 1
            if self.run is None:
                if hasattr(self.store, "reopen"):
                    self.store.reopen()
                pid = os.getpid()
                from .kit import proc_start

                self.run = m.RunStarted(
                    uuid.uuid4().hex, pid, socket.gethostname(), proc_start(pid), time.time()
                )
                self._run_queued = False  # written with the first op: a failed open writes none
            return self.run

    def release(self) -> None:
        """One session fewer; the last one out commits, ends the run, closes the store."""
        with self._lock:
            self._users -= 1
            if self._users > 0:
                return
            run, self.run = self.run, None
            if run is not None and self._run_queued:
                self._queue.append(m.RunEnded(run, time.time()))
        self.flush()
        with self._lock:
            if self._users == 0 and self.run is None:
                self._stop()
                self.store.close()

    # --- the queue ------------------------------------------------------------------------

    def submit(self, op: Any) -> None:
        """Queue ``op`` (it is written at the next commit)."""
        if not self._run_queued:
            self._queue_run()
        self._queue.append(op)

    def defer(self, entry: tuple[Any, ...]) -> None:
        """Queue ``entry``, ``(build, *references)``: the writer thread calls
        ``build(*references)`` in the entry's place in the queue and writes the ops it
        returns, so the caller only appends a tuple, and asks the writer to commit soon
        (`kick`). ``build`` must read only what no one changes after the entry is
        queued."""
        if not self._run_queued:
            self._queue_run()
        self._queue.append(entry)
        if self._idle:  # `kick`, written out: a call's start and end each wake the writer
            self._idle = False
            if self._thread is None:
                self._start()
            self._wake.set()

    def after_commit(self, key: int, action: Any) -> None:
        """Run ``action()`` on the writer thread once the group being built is committed (or
        failed), before any flush waiting for it returns; one action per ``key`` per group.
        Only a builder of a deferred entry calls it (it runs on the writer thread): this is
        how a session's result store settles the results whose records were just committed
        without the event loop doing it per call (`ResultStore.settle`)."""
        self._after[key] = action

    def _queue_run(self) -> None:
        with self._lock:
            if not self._run_queued and self.run is not None:
                self._queue.append(self.run)
                self._run_queued = True

    def kick(self) -> None:
        """Ask the writer to commit what is queued soon (a batch started or ended). A plain
        flag says whether it was asked already (twice per batch on the event loop: no
        method call on the `threading.Event` unless it must wake)."""
        if self._idle:
            self._idle = False
            if self._thread is None:
                self._start()
            self._wake.set()

    def flush(self, timeout: float | None = FLUSH_TIMEOUT_S) -> None:
        """Wait until everything queued so far is written (or failed: see `_write`); raises
        `StoreError` only when the writer takes longer than ``timeout``."""
        marker = _Flush()
        self._queue.append(marker)
        self._urgent = True
        if self._thread is None:
            self._start()
        self._hurry.set()
        self._wake.set()
        if not marker.done.wait(timeout):
            raise m.StoreError(
                f"session store {self.store.location}: writing took longer than {timeout} s",
                self.store.location,
            )

    # --- the writer thread ---------------------------------------------------------------

    def _start(self) -> None:
        with self._lock:
            if self._thread is not None:
                return
            self._stopping = False
            thread = threading.Thread(target=self._loop, name="callgate-store-writer", daemon=True)
            self._thread = thread
        thread.start()

    def _stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stopping = True
            self._hurry.set()
            self._wake.set()
            if thread is not threading.current_thread():
                thread.join(FLUSH_TIMEOUT_S)

    def _loop(self) -> None:
        while True:
            self._wake.wait()
            if not self._urgent and not self._stopping:
                self._hurry.wait(GATHER_S)  # let the rest of a turn arrive: one commit
            self._wake.clear()
            self._idle = True  # from here on a kick wakes it again (what it queued is drained
            # below, or kicked after this)
            self._hurry.clear()
            self._urgent = False
            self._drain()
            if self._stopping and not self._queue:
                return

    def _drain(self) -> None:
        while self._queue:
            group: list[Any] = []
            markers: list[_Flush] = []
            while self._queue and len(group) < MAX_GROUP:
                op = self._queue.popleft()
                if type(op) is tuple:  # a deferred entry: its ops, built here
                    try:
                        group.extend(op[0](*op[1:]))
                    except Exception:
                        self._failed_build()
                    continue
                if isinstance(op, _Flush):
                    markers.append(op)
                    break  # everything before it goes in this commit
                group.append(op)
            if group:
                self._write(group)
            if self._after:
                self._run_after()
            for marker in markers:
                marker.done.set()

    def _failed_build(self) -> None:
        """A deferred entry whose builder failed (`_drain`) is logged (once per writer) and
        costs only itself."""
        if not self._warned:
            self._warned = True
            log.warning("the session store could not record a call", exc_info=True)

    def _run_after(self) -> None:
        after, self._after = self._after, {}
        for action in after.values():
            try:
                action()
            except Exception:
                log.warning("after a commit to the session store", exc_info=True)

    def _write(self, group: list[Any]) -> None:
        """One transaction for the group; if it fails, each op alone, so one op the store
        cannot take costs only itself. An op that still fails is logged (once per writer)
        and, if it has an ``error`` field, marked (its submitter raises from it)."""
        try:
            self.store.write(group)
            return
        except Exception:
            if len(group) == 1:
                failures = [(group[0], sys.exc_info()[1])]
            else:
                failures = []
                for op in group:
                    try:
                        self.store.write([op])
                    except Exception as exc:
                        failures.append((op, exc))
        for op, exc in failures:
            if hasattr(op, "error"):
                op.error = exc
        if failures and not self._warned:
            self._warned = True
            log.warning(
                "the session store could not record %d change(s): %s", len(failures), failures[0][1]
            )

    def close_now(self) -> None:
        """At interpreter exit: commit what is queued (a host that never closed its sessions
        still records what they did)."""
        if self._queue:
            try:
                self.flush(timeout=10.0)
            except Exception:
                log.warning("the session store could not record the last changes", exc_info=True)


_LIVE: weakref.WeakSet[Recorder] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    for recorder in list(_LIVE):
        recorder.close_now()
