"""The store's writer: one transaction per gathered group, and a group the store refuses
written again op by op, so one op the store cannot take costs only itself."""

from __future__ import annotations

import time
from typing import Any

from callgate import store as st
from callgate._store.recorder import Recorder


class Picky:
    """A store that refuses any group holding the state key "bad"."""

    location = "picky://"

    def __init__(self) -> None:
        self.groups: list[list[Any]] = []
        self.closed = False

    def write(self, ops: list[Any]) -> None:
        if any(isinstance(op, st.StatePut) and op.key == "bad" for op in ops):
            raise st.StoreError("no room for that", self.location)
        self.groups.append(list(ops))

    def close(self) -> None:
        self.closed = True


def test_a_refused_op_costs_only_itself_and_its_submitter_hears_of_it() -> None:
    store = Picky()
    recorder = Recorder(store)
    run = recorder.acquire()
    good = st.StatePut("s", "ns", "good", 1)
    bad = st.StatePut("s", "ns", "bad", 2)
    message = st.MessageRecorded("s", "user", "hello", time.time())
    for op in (good, bad, message):
        recorder.submit(op)
    recorder.flush()  # never raises for what the store refused
    written = [op for group in store.groups for op in group]
    assert written == [run, good, message]
    assert bad.error is not None and good.error is None
    recorder.release()
    assert store.closed


def test_everything_queued_goes_in_one_transaction() -> None:
    store = Picky()
    recorder = Recorder(store)
    recorder.acquire()
    for i in range(50):
        recorder.submit(st.StatePut("s", "ns", f"k{i}", i))
    recorder.flush()
    assert len(store.groups) == 1 and len(store.groups[0]) == 51  # the run and 50 puts
    recorder.release()


def test_a_session_that_writes_nothing_writes_no_run() -> None:
    store = Picky()
    recorder = Recorder(store)
    recorder.acquire()
    recorder.release()
    assert store.groups == [] and store.closed
