"""The session store keeps execution facts (issue 36.11): a contract every backend passes
(tests/contrib/store_postgres/test_facts.py runs these against PostgreSQL too)."""

from __future__ import annotations

import time
from typing import Any

from callgate import store as st

from .conftest import Writer

ODD = "/ws/odd-\udcff-name.txt"  # an undecodable byte of a file name, as Python keeps it


def fact(session: str, call_id: str, *paths: str, started: float = 0.0,
         outcome: str = "ok", profile: str | None = None) -> st.FactRecord:
    at = started or time.time()
    return st.FactRecord(session, call_id, "write_file", profile, 1 if profile else 0,
                         paths, False, at, at + 0.25, outcome)


def test_facts_come_back_as_written_oldest_first(store: Any, writer: Writer) -> None:
    sid = writer.session("s1")
    other = writer.session("s2")
    now = time.time()
    second = fact(sid, "c2", "/ws/b.txt", ODD, started=now + 1, outcome="tool_error",
                  profile="explore")
    first = fact(sid, "c1", "/ws/a.txt", started=now)
    writer.write(st.FactRecorded(second), st.FactRecorded(first),
                 st.FactRecorded(fact(other, "c9", "/ws/z.txt")))
    assert store.facts(sid) == [first, second]
    assert store.facts(sid)[1].paths == ("/ws/b.txt", ODD)  # exactly, surrogate and all
    assert [f.call_id for f in store.facts(other)] == ["c9"]
    assert store.facts("nobody") == []
    assert store.integrity_check() == "ok"


def test_a_pruned_session_takes_its_facts_with_it(store: Any, writer: Writer) -> None:
    now = time.time()
    old = writer.session("old", started=now - 400 * 86400)
    writer.write(st.FactRecorded(fact(old, "c1", "/ws/a.txt")),
                 st.SessionClosed(old, now - 400 * 86400))
    kept = writer.session("kept")
    writer.write(st.FactRecorded(fact(kept, "c1", "/ws/a.txt")))
    assert store.prune(keep_days=100, max_bytes=None, now=now).sessions == 1
    assert store.facts(old) == []
    assert [f.session for f in store.facts(kept)] == ["kept"]
    assert store.integrity_check() == "ok"
