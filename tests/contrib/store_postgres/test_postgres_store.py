"""What the PostgreSQL backend does beyond the shared contract: it is found by its URL
scheme, keeps what PostgreSQL text cannot hold, refuses a newer schema and a server it
cannot reach with a clear error, and takes concurrent writers."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from callgate import store as st
from callgate._store.locations import forget

from tests.core.store.conftest import Writer


def test_the_url_scheme_finds_the_backend(pg_url: str) -> None:
    opened = st.open_store(pg_url)
    try:
        assert type(opened).__name__ == "PostgresStore"
        assert opened.integrity_check() == "ok"
        assert opened.sessions() == []
    finally:
        forget(pg_url)


def test_surrogates_nul_and_odd_paths_are_kept(store: Any, writer: Writer) -> None:
    sid = writer.session("s1")
    odd_path = "/ws/caf\udce9.txt"  # a file name with an undecodable byte
    writer.write(
        st.LedgerPut(sid, odd_path, {"digest": "x"}),
        st.StatePut(sid, "ns", "k", {"v": "a\x00b\udcff"}),
    )
    batch = writer.batch(sid)
    writer.call(sid, batch, "c1", "read_file", {"path": odd_path}, "line\x00one \udcff end")
    assert store.ledger(sid) == {odd_path: {"digest": "x"}}
    assert store.state(sid)[("ns", "k")] == {"v": "a\x00b\udcff"}
    [call] = store.calls(sid)
    assert call.arguments == {"path": odd_path}
    assert call.text == "line\ufffdone \ufffd end"
    assert store.integrity_check() == "ok"


def test_a_newer_schema_is_refused_and_nothing_changes(store: Any, pg_url: str) -> None:
    from callgate_store_postgres import PostgresStore

    store.write([st.RunStarted("r" * 16, 1, "h", None, time.time())])
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE callgate_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(st.StoreError, match="schema version 99"):
        PostgresStore.open(pg_url)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT value FROM callgate_meta").fetchone()[0] == "99"


def test_version_1_gains_principals_and_old_sessions_stay_the_local_users(
        pg_url: str) -> None:
    """Schema version 2 adds each session's principal: a version 1 database is migrated in
    place; its sessions keep none and are the local users', never a bearer token's."""
    import psycopg
    from callgate_store_postgres import SCHEMA, SCHEMA_VERSION, PostgresStore

    with psycopg.connect(pg_url, autocommit=True) as conn:
        for statement in (s.strip() for s in SCHEMA.split(";")):
            if statement:
                conn.execute(statement)
        conn.execute("INSERT INTO callgate_meta (key, value) VALUES ('schema_version', '1')")
        conn.execute("INSERT INTO callgate_sessions (id, workspace, started) "
                     "VALUES ('old', '/ws', 1.0)")
    store = PostgresStore.open(pg_url)
    try:
        assert SCHEMA_VERSION >= 2
        assert store.session("old").principal is None
        assert [i.id for i in store.sessions(principal="user:alice")] == ["old"]
        assert store.sessions(principal="token-0123456789ab") == []
        Writer(store).session("new", principal="token-0123456789ab")
        assert store.session("new").principal == "token-0123456789ab"
        assert store.integrity_check() == "ok"
    finally:
        store.close()


def test_version_2_gains_execution_facts_and_keeps_what_it_held(pg_url: str) -> None:
    """Schema version 3 keeps execution facts (issue 36.11): a version 2 database is
    migrated in place, keeps its sessions and timeline, has no facts for its old calls and
    keeps the facts written from now on."""
    import psycopg
    from callgate_store_postgres import SCHEMA, SCHEMA_VERSION, PostgresStore
    from callgate_store_postgres._store import MIGRATIONS

    with psycopg.connect(pg_url, autocommit=True) as conn:
        for statement in (s.strip() for s in (SCHEMA + MIGRATIONS[2]).split(";")):
            if statement:
                conn.execute(statement)
        conn.execute("INSERT INTO callgate_meta (key, value) VALUES ('schema_version', '2')")
        conn.execute("INSERT INTO callgate_sessions (id, workspace, started, last_seq, "
                     "principal) VALUES ('old', '/ws', 1.0, 1, 'user:alice')")
        conn.execute("INSERT INTO callgate_entries (session, seq, kind, role, at, text) "
                     "VALUES ('old', 1, 'message', 'user', 1.0, 'an old capacitor')")
        assert conn.execute("SELECT to_regclass('callgate_facts')").fetchone()[0] is None
    store = PostgresStore.open(pg_url)
    try:
        assert SCHEMA_VERSION == 3
        assert store.session("old").principal == "user:alice"
        assert store.entries("old")[0].text == "an old capacitor"
        assert store.facts("old") == []
        made = st.FactRecord("old", "c1", "write_file", None, 0, ("/ws/a.txt",), False, 2.0,
                             2.5, "ok")
        Writer(store).write(st.FactRecorded(made))
        assert store.facts("old") == [made]
        assert store.integrity_check() == "ok"
    finally:
        store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        version = conn.execute(
            "SELECT value FROM callgate_meta WHERE key = 'schema_version'").fetchone()[0]
        assert version == "3"


def test_an_unreachable_server_is_a_clear_error(tmp_path: Any) -> None:
    from callgate_store_postgres import PostgresStore

    url = f"postgresql://someone:secret@/nodb?host={tmp_path}&port=1&connect_timeout=2"
    store = PostgresStore(url)
    with pytest.raises(st.StoreError) as caught:
        store._get_pool()  # opening the pool is what fails
    assert "secret" not in str(caught.value)
    assert "cannot connect to" in str(caught.value)


def test_writers_in_threads_number_their_entries_without_gaps(store: Any) -> None:
    writers = [Writer(store) for _ in range(4)]
    sid = writers[0].session("shared")
    errors: list[BaseException] = []

    def record(w: Writer, n: int) -> None:
        try:
            for i in range(20):
                w.message(sid, "user", f"writer {n} message {i}")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=record, args=(w, n)) for n, w in enumerate(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [e.seq for e in store.entries(sid)] == list(range(1, 81))
