"""The SQLite backend's own promises: where and how its file is made, what it refuses to
open (and leaves untouched), its migrations, and many processes creating it at once."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from callgate import store as st
from callgate_store_sqlite._store import LATEST, SqliteStore, _statements, migrations, template

from .conftest import Writer


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_directory_is_0700_and_the_database_0600_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "state" / "sessions" / "sessions.sqlite3"
    store = SqliteStore.open(str(path))
    Writer(store).session("s1")
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    wal = Path(str(path) + "-wal")
    assert wal.exists() and stat.S_IMODE(wal.stat().st_mode) == 0o600
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental
    conn.close()
    store.close()


def test_a_symlink_in_the_stores_place_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.db"
    target.write_bytes(b"")
    link = tmp_path / "sessions.sqlite3"
    link.symlink_to(target)
    with pytest.raises(st.StoreError) as err:
        SqliteStore.open(str(link))
    assert str(link) in str(err.value) and "not a regular file" in str(err.value)
    assert target.read_bytes() == b""


@pytest.mark.parametrize("content", [b"this is not a database at all" * 100,
                                     b"SQLite format 3\x00" + b"\xff" * 4000])
def test_a_corrupt_file_is_named_and_left_as_it_was(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "sessions.sqlite3"
    path.write_bytes(content)
    before = digest(path)
    with pytest.raises(st.StoreError) as err:
        SqliteStore.open(str(path))
    assert str(path) in str(err.value) and "nothing was changed" in str(err.value)
    assert digest(path) == before
    assert not Path(str(path) + "-wal").exists()


def test_a_newer_schema_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite3"
    SqliteStore.open(str(path)).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(LATEST + 1),))
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    before = digest(path)
    with pytest.raises(st.StoreError) as err:
        SqliteStore.open(str(path))
    message = str(err.value)
    assert str(path) in message and f"schema version {LATEST + 1}" in message
    assert f"up to {LATEST}" in message
    assert digest(path) == before


def test_another_applications_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE users (id INTEGER)")
    conn.commit()
    conn.close()
    before = digest(path)
    with pytest.raises(st.StoreError, match="not a callgate session store"):
        SqliteStore.open(str(path))
    assert digest(path) == before


def test_version_1_migrates_to_the_latest_and_keeps_what_it_held(tmp_path: Path) -> None:
    """A store written by the previous schema (version 1: no search index) opens, is
    migrated in place, and what it recorded becomes searchable."""
    path = tmp_path / "sessions.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    version, sql = migrations()[0]
    assert version == 1
    conn.execute("BEGIN")
    for statement in _statements(sql):
        conn.execute(statement)
    conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', '1')")
    conn.execute("INSERT INTO sessions (id, workspace, started, last_seq) "
                 "VALUES ('old', '/ws', 1.0, 1)")
    conn.execute("INSERT INTO entries (session, seq, kind, role, at, text) "
                 "VALUES ('old', 1, 'message', 'user', 1.0, 'migrate the flux capacitor')")
    conn.execute("COMMIT")
    conn.close()
    store = SqliteStore.open(str(path))
    assert store._version(store._writer_conn()) == LATEST
    [hit] = store.search("capacitor")
    assert (hit.session, hit.seq, hit.kind) == ("old", 1, "user_text")
    assert store.entries("old")[0].text == "migrate the flux capacitor"
    Writer(store).message("old", "user", "a capacitor again")
    assert len(store.search("capacitor")) == 2
    assert store.integrity_check() == "ok"
    store.close()


def test_version_2_gains_principals_and_old_sessions_stay_the_local_users(
        tmp_path: Path) -> None:
    """Version 3 adds each session's principal: a store of version 2 is migrated in place,
    its sessions keep no principal and are the local users' (never a bearer token's), and
    new sessions record theirs."""
    path = tmp_path / "sessions.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("BEGIN")
    for number, sql in migrations()[:2]:
        for statement in _statements(sql):
            conn.execute(statement)
        conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
                     "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (str(number),))
    conn.execute("INSERT INTO sessions (id, workspace, started, last_seq) "
                 "VALUES ('old', '/ws', 1.0, 1)")
    conn.execute("INSERT INTO entries (session, seq, kind, role, at, text) "
                 "VALUES ('old', 1, 'message', 'user', 1.0, 'an old capacitor')")
    conn.execute("COMMIT")
    conn.close()
    store = SqliteStore.open(str(path))
    assert store._version(store._writer_conn()) == LATEST >= 3
    assert store.session("old").principal is None
    assert [i.id for i in store.sessions(principal="user:alice")] == ["old"]
    assert store.sessions(principal="token-0123456789ab") == []
    assert store.search("capacitor", principal="token-0123456789ab") == []
    Writer(store).session("new", principal="token-0123456789ab")
    assert store.session("new").principal == "token-0123456789ab"
    assert store.integrity_check() == "ok"
    store.close()


def test_version_3_gains_execution_facts_and_keeps_what_it_held(tmp_path: Path) -> None:
    """Version 4 keeps execution facts (issue 36.11): a store of version 3 is migrated in
    place, keeps its sessions and timeline, has no facts for its old calls (they lived in
    their host's memory) and keeps the facts written from now on."""
    path = tmp_path / "sessions.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("BEGIN")
    for number, sql in migrations()[:3]:
        for statement in _statements(sql):
            conn.execute(statement)
        conn.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
                     "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (str(number),))
    conn.execute("INSERT INTO sessions (id, workspace, started, last_seq, principal) "
                 "VALUES ('old', '/ws', 1.0, 1, 'user:alice')")
    conn.execute("INSERT INTO entries (session, seq, kind, role, at, text) "
                 "VALUES ('old', 1, 'message', 'user', 1.0, 'an old capacitor')")
    conn.execute("COMMIT")
    conn.close()
    store = SqliteStore.open(str(path))
    assert store._version(store._writer_conn()) == LATEST == 4
    assert store.session("old").principal == "user:alice"
    assert store.entries("old")[0].text == "an old capacitor"
    assert store.facts("old") == []
    made = st.FactRecord("old", "c1", "write_file", None, 0, ("/ws/a.txt",), False, 2.0,
                         2.5, "ok")
    Writer(store).write(st.FactRecorded(made))
    assert store.facts("old") == [made]
    assert store.integrity_check() == "ok"
    store.close()
    store = SqliteStore.open(str(path))  # opened again: nothing more to migrate, still there
    assert store.facts("old") == [made]
    store.close()


def test_the_template_is_the_migrations_applied_in_order(tmp_path: Path) -> None:
    made = tmp_path / "made.sqlite3"
    SqliteStore.open(str(made)).close()
    conn = sqlite3.connect(":memory:")
    data = bytearray(template())
    assert data[18:20] == b"\x02\x02"  # its header says WAL
    data[18:20] = b"\x01\x01"  # (an in-memory database cannot be WAL)
    conn.deserialize(bytes(data))
    from_template = sorted(conn.execute("SELECT type, name, sql FROM sqlite_master"))
    conn.close()
    migrated = tmp_path / "migrated.sqlite3"
    mconn = sqlite3.connect(migrated, isolation_level=None)
    mconn.execute("BEGIN")
    for _, sql in migrations():
        for statement in _statements(sql):
            mconn.execute(statement)
    mconn.execute("COMMIT")
    assert sorted(mconn.execute("SELECT type, name, sql FROM sqlite_master")) == from_template
    mconn.close()


CREATE = """
import sys, time
from callgate_store_sqlite._store import SqliteStore
from callgate import store as st
s = SqliteStore.open(sys.argv[1])
run = st.RunStarted(sys.argv[2], 1, "h", None, time.time())
s.write([run, st.SessionOpened(run, sys.argv[2], None, "/ws", None, None, time.time(),
                               None, None, None, "all")])
print(s.integrity_check())
"""


def test_many_processes_creating_the_store_at_once_all_succeed(tmp_path: Path) -> None:
    path = tmp_path / "fresh" / "sessions.sqlite3"
    procs = [subprocess.Popen([sys.executable, "-c", CREATE, str(path), f"p{i}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i in range(6)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, [o[1] for o in outs]
    assert all(o[0].strip() == "ok" for o in outs)
    store = SqliteStore.open(str(path))
    assert sorted(i.id for i in store.sessions()) == [f"p{i}" for i in range(6)]
    assert [n for n in os.listdir(path.parent) if n.endswith(".new")] == []
    store.close()


def test_a_store_whose_file_was_removed_is_made_again(tmp_path: Path) -> None:
    path = tmp_path / "sessions.sqlite3"
    store = SqliteStore.open(str(path))
    Writer(store).session("s1")
    store.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    assert store.sessions() == []  # reopened on use: a new, empty store
    assert path.exists() and store.integrity_check() == "ok"
    store.close()
