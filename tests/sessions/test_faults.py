"""The session store under faults (issue 18): a host killed mid-batch again and again, eight
processes recording into one store at once, and stores this callgate must not touch."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from callgate_store_sqlite._store import LATEST, SqliteStore

from .conftest import replay, spawn, store_path

pytestmark = pytest.mark.skipif(os.name != "posix", reason="kill -9")


def fresh_store() -> SqliteStore:
    """The store as the next process opens it (which settles the runs of dead ones)."""
    return SqliteStore.open(str(store_path()))


def test_kill_9_mid_batch_loses_nothing_committed_and_marks_calls_interrupted(
        ws: Path, reliability: bool) -> None:
    rounds = 25 if reliability else 6
    rng = random.Random(18)
    committed: set[str] = set()  # call ids of batches the killed hosts reported committed
    interrupted = 0
    for round_ in range(rounds):
        proc = spawn("batches", str(ws), "looped")
        wanted = rng.randint(1, 3)
        seen = 0
        for line in proc.stdout:
            report = json.loads(line)
            committed.update(f"{proc.pid}-{report['batch']}-{s}" for s in "ab")
            seen += 1
            if seen == wanted:
                break
        assert seen == wanted, proc.stderr.read()
        time.sleep(rng.uniform(0.0, 0.09))  # somewhere inside the next batch
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        proc.stdout.close()
        proc.stderr.close()

        store = fresh_store()
        try:
            assert store.integrity_check() == "ok", f"round {round_}"
            info = store.session("looped", prefix=False)
            calls = store.calls(info.id)
            ids = {c.call_id for c in calls}
            assert committed <= ids, f"round {round_}: lost {sorted(committed - ids)}"
            outcomes = {c.outcome for c in calls}
            assert outcomes <= {"ok", "interrupted"}, outcomes
            assert "running" not in outcomes  # the dead host's calls were settled on open
            assert [c.seq for c in calls] == sorted(c.seq for c in calls)
            interrupted = sum(c.outcome == "interrupted" for c in calls)
            assert all(c.outcome == "ok" for c in calls if c.call_id in committed)
        finally:
            store.close()
    assert interrupted >= 1  # the kills did land inside batches


def test_eight_processes_record_into_one_store_at_once(ws: Path) -> None:
    count = 150
    procs = [spawn("hammer", str(ws), "crowd", str(count)) for _ in range(8)]
    outs = [p.communicate(timeout=300) for p in procs]
    for proc, (_out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, err
        assert "locked" not in err and "database" not in err.lower(), err
    pids = [json.loads(out.splitlines()[-1])["pid"] for out, _ in outs]
    store = fresh_store()
    try:
        info = store.session("crowd", prefix=False)
        calls = store.calls(info.id)
        assert len(calls) == 8 * count == info.calls
        assert {c.call_id for c in calls} == {f"{pid}-{i}" for pid in pids
                                              for i in range(count)}
        assert all(c.outcome == "ok" and c.text == "ok" for c in calls)
        entries = store.entries(info.id)
        assert [e.seq for e in entries] == list(range(1, len(entries) + 1))  # no gap, no twin
        assert sum(e.kind == "message" for e in entries) == 8
        assert store.integrity_check() == "ok"
    finally:
        store.close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_corrupt_store_stops_replay_with_its_name_and_is_left_alone(ws: Path) -> None:
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"SQLite format 3\x00" + os.urandom(8192))
    before = _digest(path)
    proc = replay(ws, [{"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}}])
    assert proc.returncode == 2, proc.stdout
    assert str(path) in proc.stderr and "nothing was changed" in proc.stderr
    assert proc.stdout == ""  # no call ran
    assert _digest(path) == before


def test_a_store_from_a_newer_callgate_stops_replay_and_is_left_alone(ws: Path,
                                                                      store: Any) -> None:
    store.sessions()  # creates it
    store.close()
    conn = sqlite3.connect(store_path())
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(LATEST + 7),))
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = _digest(store_path())
    proc = replay(ws, [{"id": "c1", "name": "read_file", "arguments": {"path": "notes.txt"}}])
    assert proc.returncode == 2
    assert f"schema version {LATEST + 7}" in proc.stderr and str(store_path()) in proc.stderr
    assert _digest(store_path()) == before
