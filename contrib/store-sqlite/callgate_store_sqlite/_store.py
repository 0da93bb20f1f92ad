"""The default session store: one SQLite file (stdlib ``sqlite3``), shared by every process.

- WAL journal, ``synchronous = NORMAL`` (a committed write survives the process being
  killed; only a power loss can take the last commits), ``busy_timeout`` 30 s, and
  every write group in one short ``BEGIN IMMEDIATE`` transaction, so any number of
  processes record at once without "database is locked".
- The schema is versioned (``meta.schema_version``) and migrated by the files in
  ``callgate_store_sqlite/migrations``; a newer store is refused, never downgraded.
- The directory is made 0700 and the file 0600 (created exclusively, never through a
  symlink); SQLite gives its ``-wal``/``-shm`` files the database's mode.
- A process that opens the store first settles the runs of processes that died:
  their running calls become ``interrupted``, their running jobs ``killed (host exited)``.

Search is FTS5 with bm25 over the timeline (external content: the index holds no copy).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import socket
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from typing import Any, ClassVar

from callgate import store as m
from callgate.store import (
    ENTRY_COLUMNS,
    entry_from_row,
    json_or_text,
    owned_by,
    preview_of,
    process_alive,
    result_facts,
)

log = logging.getLogger("callgate.store")

BACKEND = "sqlite"
BUSY_TIMEOUT_MS = 30_000
#: Each write group is retried this long when the lock stays taken past the busy timeout.
LOCKED_RETRY_S = 120.0
SNIPPET_TOKENS = 24
_WORD = re.compile(r"\w+", re.UNICODE)


def migrations() -> list[tuple[int, str]]:
    """``(version, sql)`` of every SQLite migration, in order."""
    found = []
    for item in resources.files("callgate_store_sqlite").joinpath("migrations").iterdir():
        match = re.fullmatch(r"sqlite_(\d{4})\.sql", item.name)
        if match:
            found.append((int(match.group(1)), item.read_text(encoding="utf-8")))
    found.sort()
    if [v for v, _ in found] != list(range(1, len(found) + 1)):
        raise RuntimeError("the SQLite migrations are not numbered 1..N")
    return found


LATEST = len(migrations())


#: ``json.dumps(value, ensure_ascii=..., separators=(",", ":"), default=repr)``, made once
#: (``json.dumps`` with arguments makes an encoder per call)
_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=repr).encode
_JSON_ASCII = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), default=repr).encode


def _dumps(value: Any) -> str:
    """JSON text of ``value``; a lone surrogate (an undecodable byte a path or argument
    carried) is kept as a ``\\udcxx`` escape, so the value comes back exactly."""
    text = _JSON(value)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return _JSON_ASCII(value)
    return text


def storable(value: Any) -> Any:
    """A text value SQLite can hold (UTF-8): a lone surrogate reads U+FFFD."""
    if isinstance(value, str) and not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return value


def _x(conn: sqlite3.Connection, sql: str, params: Iterable[Any] = ()) -> sqlite3.Cursor:
    """``conn.execute`` with every text parameter made storable."""
    return conn.execute(sql, tuple(storable(p) for p in params))


#: A ledger path that is not valid UTF-8 (a file name with undecodable bytes) is kept as
#: this prefix (which no path contains) and the path's JSON, so it comes back exactly.
_ESCAPED_PATH = "\x00json:"


def path_key(path: str) -> str:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return _ESCAPED_PATH + json.dumps(path, ensure_ascii=True)
    return path


def path_of(key: str) -> str:
    return json.loads(key[len(_ESCAPED_PATH) :]) if key.startswith(_ESCAPED_PATH) else key


def fts_query(text: str) -> str | None:
    """A user's words as an FTS5 query: every word quoted (no operator can be injected),
    any of them may match; bm25 ranks rows with more and rarer matches first."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))
    if not words:
        return None
    return " OR ".join(f'"{w}"' for w in words[:32])


#: Call rows one INSERT statement takes (23 parameters each: far under SQLite's limit).
CALL_ROWS = 256
_CALL_COLUMNS = (
    "INSERT INTO entries (session, seq, kind, role, at, run, batch, position, origin, call_id, "
    "name, tool, arguments, ended, outcome, is_error, signature, permission, decided_by, text, "
    "shown, result_seq, result_ref, result_bytes, result_sha256) VALUES "
)
_CALL_VALUES = "(?, ?, 'call', 'tool', " + ", ".join("?" * 21) + ")"


@functools.lru_cache(maxsize=64)
def _insert_calls(rows: int) -> str:
    return _CALL_COLUMNS + ", ".join([_CALL_VALUES] * rows)


class _Tally:
    """One session's counters within a write group."""

    __slots__ = ("batches", "calls", "last_batch", "last_seq", "preview", "seqs")

    def __init__(self, last_seq: int, last_batch: int, has_preview: bool) -> None:
        self.last_seq, self.last_batch = last_seq, last_batch
        self.seqs, self.batches = last_seq, last_batch  # as read
        self.calls = 0
        #: the preview of the group's first call, for a session that has none yet
        self.preview: str | None = "" if has_preview else None


class _Tallies(dict[str, _Tally]):
    """The counters of every session a write group touches: read once, written once."""

    def load(self, conn: sqlite3.Connection, session: str) -> _Tally | None:
        row = _x(
            conn,
            "SELECT last_seq, last_batch, preview IS NOT NULL FROM sessions WHERE id = ?",
            (session,),
        ).fetchone()
        if row is None:
            return None  # not cached: the group may open it yet
        tally = self[session] = _Tally(row[0], row[1], bool(row[2]))
        return tally

    def write(self, conn: sqlite3.Connection) -> None:
        for session, t in self.items():
            if t.calls:
                _x(
                    conn,
                    "UPDATE sessions SET last_seq = ?, last_batch = ?, calls = calls + ?, "
                    "preview = COALESCE(preview, ?), preview_from = COALESCE(preview_from, "
                    "'call') WHERE id = ?",
                    (t.last_seq, t.last_batch, t.calls, t.preview or None, session),
                )
            elif t.last_seq != t.seqs or t.last_batch != t.batches:
                _x(
                    conn,
                    "UPDATE sessions SET last_seq = ?, last_batch = ? WHERE id = ?",
                    (t.last_seq, t.last_batch, session),
                )


class SqliteStore:
    """A session store in one SQLite file (`callgate.store.SessionStore`)."""

    backend = BACKEND

    def __init__(self, path: str) -> None:
        self.path = path
        self.location = path
        # the read connection's lock (reads are short), then the write connection's; taken in
        # that order, and both by `close`, so closing never pulls a connection from under a
        # query or a transaction of another thread
        self._lock = threading.RLock()
        self._write_lock = threading.RLock()
        self._reader: sqlite3.Connection | None = None
        self._writer: sqlite3.Connection | None = None
        self._closed = False
        self._identity: tuple[int, int] | None = None
        #: inside `write`: each session's counters, and the call rows not inserted yet
        self._tallies: _Tallies | None = None
        self._calls: list[tuple[m.CallStarted, list[Any]]] = []

    # --- opening -----------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str) -> SqliteStore:
        """Open (creating, migrating) the store at ``path``; `StoreError` names the file."""
        store = cls(os.path.abspath(path))
        store._prepare_file()
        try:
            store._migrate()
            store.recover()
        except sqlite3.DatabaseError as exc:
            store.close()
            raise store._error(exc) from None
        except BaseException:
            store.close()
            raise
        return store

    def _error(self, exc: BaseException, doing: str = "open") -> m.StoreError:
        text = str(exc)
        if isinstance(exc, sqlite3.DatabaseError) and (
            "not a database" in text or "malformed" in text or "corrupt" in text
        ):
            why = f"is not a readable callgate session store ({text})"
        else:
            why = f"cannot be used ({type(exc).__name__}: {text})"
        return m.StoreError(
            f"session store {self.path} {why}; nothing was changed (move the "
            "file aside or set [sessions] store to use another)",
            self.path,
        )

    def _prepare_file(self) -> None:
        """Make the directory (0700) and, for a new store, the file (0600): a ready database
        of the latest schema, linked into place whole, so a process that loses the race to
        create it finds a complete store, never a half-written one."""
        directory = os.path.dirname(self.path)
        try:
            if not os.path.isdir(directory):
                os.makedirs(directory, mode=0o700, exist_ok=True)
                os.chmod(directory, 0o700)
            try:
                st = os.lstat(self.path)
            except FileNotFoundError:
                _create_from_template(self.path)
                st = os.lstat(self.path)
        except OSError as exc:
            raise m.StoreError(
                f"session store {self.path} cannot be created: {exc.strerror or exc}", self.path
            ) from None
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
            raise m.StoreError(
                f"session store {self.path} is not a regular file (a symlink "
                "or something else); nothing was changed",
                self.path,
            )
        self._identity = (st.st_dev, st.st_ino)

    def _connect(self) -> sqlite3.Connection:
        # the file was made 0600 above; the URI's nofollow keeps SQLite off a swapped-in link
        conn = sqlite3.connect(
            f"file:{self.path}?nofollow=1",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
            timeout=BUSY_TIMEOUT_MS / 1000,
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    def _writer_conn(self) -> sqlite3.Connection:
        with self._write_lock:
            if self._writer is None:
                self.reopen()
                self._writer = self._connect()
            return self._writer

    def _reader_conn(self) -> sqlite3.Connection:
        if self._reader is None:
            self.reopen()
            self._reader = self._connect()
            self._reader.execute("PRAGMA query_only = ON")
        return self._reader

    def _migrate(self) -> None:
        conn = self._writer_conn()
        version = self._version(conn)
        if version == LATEST:
            return
        if version > LATEST:
            raise m.StoreError(
                f"session store {self.path} has schema version {version}; this "
                f"callgate reads versions up to {LATEST} (upgrade callgate); "
                "nothing was changed",
                self.path,
            )
        if version == 0 and self._has_foreign_tables(conn):  # checked before anything changes
            raise m.StoreError(
                f"session store {self.path} is an SQLite database but not "
                "a callgate session store; nothing was changed",
                self.path,
            )
        if conn.execute("PRAGMA page_count").fetchone()[0] == 0:
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")  # only before the first table
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode.lower() != "wal":
            log.warning("session store %s: journal mode is %s, not wal", self.path, mode)
        with self._transaction(conn):
            version = self._version(conn)  # another process may have migrated meanwhile
            if version > LATEST:
                raise m.StoreError(
                    f"session store {self.path} has schema version {version}; "
                    f"this callgate reads versions up to {LATEST}",
                    self.path,
                )
            if version == 0 and self._has_foreign_tables(conn):
                raise m.StoreError(
                    f"session store {self.path} is an SQLite database but not "
                    "a callgate session store; nothing was changed",
                    self.path,
                )
            for number, sql in migrations()[version:]:
                for statement in _statements(sql):
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (str(number),),
                )

    @staticmethod
    def _version(conn: sqlite3.Connection) -> int:
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):
                return 0
            raise
        return int(row[0]) if row else 0

    @staticmethod
    def _has_foreign_tables(conn: sqlite3.Connection) -> bool:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        return bool(names - {"meta"})

    @contextlib.contextmanager
    def _transaction(self, conn: sqlite3.Connection) -> Any:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (rolled back on any error); takes the write lock
        first, so the busy timeout applies instead of a deadlock between two upgraders."""
        deadline = time.monotonic() + LOCKED_RETRY_S
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        try:
            yield conn
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def close(self) -> None:
        """Close the connections (a later use opens them again), once no other thread is
        reading or writing through them."""
        with self._lock, self._write_lock:
            self._close_connections()

    def _close_connections(self) -> None:
        self._closed = True
        for conn in (self._writer, self._reader):
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
        self._writer = self._reader = None

    def reopen(self) -> None:
        """Make a closed store usable again: the file made again if it went away, runs of
        processes that died meanwhile settled."""
        with self._write_lock:
            if not self._closed:
                return
            self._closed = False
            try:
                try:
                    st = os.lstat(self.path)
                except FileNotFoundError:
                    st = None
                if st is None or (st.st_dev, st.st_ino) != self._identity:
                    self._prepare_file()
                    self._migrate()
                self.recover()
            except sqlite3.DatabaseError as exc:
                self._close_connections()
                raise self._error(exc) from None

    # --- the runs of dead processes ---------------------------------------------------------

    def recover(self) -> int:
        """Settle the runs of processes on this machine that died without ending them:
        running calls become ``interrupted``, running jobs ``killed (host exited)``, open
        sessions ``interrupted``. Returns how many runs were settled."""
        with self._write_lock:
            return self._recover()

    def _recover(self) -> int:
        conn = self._writer_conn()
        here = socket.gethostname()
        live = conn.execute(
            "SELECT id, pid, hostname, proc_start FROM runs WHERE ended IS NULL"
        ).fetchall()
        dead = [r[0] for r in live if r[2] == here and not process_alive(r[1], r[3])]
        if not dead:
            return 0
        now = time.time()
        with self._transaction(conn):
            for run in dead:
                conn.execute(
                    "UPDATE entries SET outcome = ?, ended = ? WHERE run = ? AND outcome = ?",
                    (m.INTERRUPTED, now, run, m.RUNNING),
                )
                conn.execute(
                    "UPDATE jobs SET status = 'killed', reason = ?, ended = ? "
                    "WHERE run = ? AND status = 'running'",
                    (m.HOST_EXITED, now, run),
                )
                conn.execute(
                    "UPDATE sessions SET status = ?, ended = COALESCE(ended, ?) "
                    "WHERE run = ? AND status = 'open'",
                    (m.INTERRUPTED, now, run),
                )
                conn.execute("UPDATE runs SET ended = ? WHERE id = ?", (now, run))
        return len(dead)

    # --- writing ----------------------------------------------------------------------------

    def write(self, ops: Sequence[m.Op]) -> None:
        """Apply ``ops`` in order, in one transaction.

        Few statements for many calls: each session's counters (``last_seq``,
        ``last_batch``, ``calls``, the preview) are read once per group and written once
        at its end (`_Tallies`; the transaction holds the write lock, so no other process
        numbers entries meanwhile), and consecutive calls are inserted as one multi-row
        statement (`_flush_calls`). Every statement lets the GIL go and waits to take it
        back from a busy event loop, so the writer's cost in the loop's wall time is per
        statement, not per call."""
        appliers = self._appliers
        with self._write_lock:
            conn = self._writer_conn()
            try:
                with self._transaction(conn):
                    self._tallies, self._calls = _Tallies(), []
                    for op in ops:
                        appliers[type(op)](self, conn, op)
                    self._flush_calls(conn)
                    self._tallies.write(conn)
            except sqlite3.Error as exc:
                raise self._error(exc, "write") from exc
            finally:
                self._tallies, self._calls = None, []
        for op in ops:  # exact classes (no subclasses): a cheaper check per op
            if type(op) is m.CallEnded:
                op.committed = True
            elif type(op) is m.CallStarted and op.end is not None and op.end.merged:
                op.end.committed = True

    def _next_seq(self, conn: sqlite3.Connection, session: str) -> int | None:
        tally = self._tally(conn, session)
        if tally is None:
            return None
        tally.last_seq += 1
        return tally.last_seq

    def _tally(self, conn: sqlite3.Connection, session: str) -> _Tally | None:
        """The session's counters in this group (``None``: no such session)."""
        tallies = self._tallies
        assert tallies is not None  # only inside `write`
        tally = tallies.get(session)
        if tally is None:
            tally = tallies.load(conn, session)
        return tally

    def _run_started(self, conn: sqlite3.Connection, op: m.RunStarted) -> None:
        cur = _x(
            conn,
            "INSERT INTO runs (token, pid, hostname, proc_start, started) VALUES (?, ?, ?, ?, ?)",
            (op.token, op.pid, op.hostname, op.proc_start, op.at),
        )
        op.row = cur.lastrowid

    def _run_ended(self, conn: sqlite3.Connection, op: m.RunEnded) -> None:
        _x(conn, "UPDATE runs SET ended = ? WHERE id = ?", (op.at, op.run.row))

    def _session_opened(self, conn: sqlite3.Connection, op: m.SessionOpened) -> None:
        if op.resumed:
            _x(
                conn,
                "UPDATE sessions SET status = 'open', ended = NULL, run = ? WHERE id = ?",
                (op.run.row, op.id),
            )
            return
        _x(
            conn,
            "INSERT INTO sessions (id, name, workspace, parent, directory, started, status, "
            "surface, os, platform, record, run, principal) VALUES (?, ?, ?, ?, ?, ?, 'open', "
            "?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (
                op.id,
                op.name,
                op.workspace,
                op.parent,
                op.directory,
                op.started,
                op.surface,
                op.os,
                op.platform,
                op.record,
                op.run.row,
                op.principal,
            ),
        )

    def _session_closed(self, conn: sqlite3.Connection, op: m.SessionClosed) -> None:
        _x(
            conn,
            "UPDATE sessions SET status = 'closed', ended = ? WHERE id = ?",
            (op.at, op.session),
        )

    def _batch_started(self, conn: sqlite3.Connection, op: m.BatchStarted) -> None:
        tally = self._tally(conn, op.session)
        if tally is None:
            op.number = 0
            return
        tally.last_batch += 1
        op.number = tally.last_batch

    def _call_started(self, conn: sqlite3.Connection, op: m.CallStarted) -> None:
        """The call's row, whole when its end is known (else ``running``), queued for the
        group's next multi-row insert (`_flush_calls`)."""
        tally = self._tally(conn, op.session)
        if tally is None:
            return
        tally.last_seq += 1
        tally.calls += 1
        end = op.end
        arguments = _dumps(op.arguments)
        if tally.preview is None:
            tally.preview = preview_of(f"{op.name} {arguments}")
        if end is None:
            row = (
                op.session,
                tally.last_seq,
                op.started,
                op.run.row,
                op.batch.number,
                op.position,
                op.origin,
                op.call_id,
                op.name,
                None,
                arguments,
                None,
                m.RUNNING,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
                None,
            )
        else:
            ref, sha, size = result_facts(op.call_id, end)
            row = (
                op.session,
                tally.last_seq,
                op.started,
                op.run.row,
                op.batch.number,
                op.position,
                op.origin,
                op.call_id,
                op.name,
                end.tool,
                arguments,
                end.ended,
                end.outcome,
                int(end.is_error),
                end.signature,
                end.permission,
                end.decided_by,
                end.text,
                end.shown,
                end.result_seq,
                ref,
                size,
                sha,
            )
            end.merged = True
        self._calls.append(
            (op, [v if v.__class__ is not str or v.isascii() else storable(v) for v in row])
        )

    def _flush_calls(self, conn: sqlite3.Connection) -> None:
        """Insert the queued call rows, `CALL_ROWS` a statement, and give each its row id
        (one query per session: what a statement inserted cannot be read back by rowid
        without a step per row)."""
        pending = self._calls
        if not pending:
            return
        self._calls = []
        for start in range(0, len(pending), CALL_ROWS):
            chunk = pending[start : start + CALL_ROWS]
            conn.execute(_insert_calls(len(chunk)), [v for _op, row in chunk for v in row])
            by_session: dict[str, dict[int, m.CallStarted]] = {}
            for op, row in chunk:
                by_session.setdefault(op.session, {})[row[1]] = op
            for session, ops in by_session.items():
                found = conn.execute(
                    "SELECT group_concat(seq || ':' || id) FROM entries "
                    "WHERE session = ? AND seq BETWEEN ? AND ?",
                    (storable(session), min(ops), max(ops)),
                ).fetchone()[0]
                for pair in found.split(","):
                    seq, _, row_id = pair.partition(":")
                    op = ops.get(int(seq))
                    if op is not None:
                        op.row = int(row_id)

    def _call_ended(self, conn: sqlite3.Connection, op: m.CallEnded) -> None:
        if op.merged:
            return
        self._flush_calls(conn)
        if op.start.row is None:
            return
        ref, sha, size = result_facts(op.start.call_id, op)
        _x(
            conn,
            "UPDATE entries SET tool = ?, ended = ?, outcome = ?, is_error = ?, signature = ?, "
            "permission = ?, decided_by = ?, text = ?, shown = ?, result_seq = ?, "
            "result_ref = ?, result_bytes = ?, result_sha256 = ? WHERE id = ?",
            (
                op.tool,
                op.ended,
                op.outcome,
                int(op.is_error),
                op.signature,
                op.permission,
                op.decided_by,
                op.text,
                op.shown,
                op.result_seq,
                ref,
                size,
                sha,
                op.start.row,
            ),
        )

    def _message(self, conn: sqlite3.Connection, op: m.MessageRecorded) -> None:
        self._flush_calls(conn)  # the timeline in order, the group's calls in it
        seq = self._next_seq(conn, op.session)
        if seq is None:
            return
        _x(
            conn,
            "INSERT INTO entries (session, seq, kind, role, at, text) "
            "VALUES (?, ?, 'message', ?, ?, ?)",
            (op.session, seq, op.role, op.at, op.text),
        )
        if op.role == "user":
            _x(
                conn,
                "UPDATE sessions SET preview = ?, preview_from = 'user' WHERE id = ? "
                "AND (preview_from IS NULL OR preview_from <> 'user')",
                (preview_of(op.text), op.session),
            )

    def _notice(self, conn: sqlite3.Connection, op: m.NoticeRecorded) -> None:
        self._flush_calls(conn)  # the timeline in order, the group's calls in it
        seq = self._next_seq(conn, op.session)
        if seq is None:
            return
        _x(
            conn,
            "INSERT INTO entries (session, seq, kind, role, at, text) "
            "VALUES (?, ?, 'notice', 'host', ?, ?)",
            (op.session, seq, op.at, op.text),
        )

    def _fact(self, conn: sqlite3.Connection, op: m.FactRecorded) -> None:
        fact = op.fact
        _x(
            conn,
            "INSERT INTO facts (session, call_id, tool, profile, depth, paths, destructive, "
            "started, ended, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                fact.session,
                fact.call_id,
                fact.tool,
                fact.profile,
                fact.depth,
                _dumps(list(fact.paths)),  # a lone surrogate comes back exactly
                int(fact.destructive),
                fact.started,
                fact.ended,
                fact.outcome,
            ),
        )

    def _state(self, conn: sqlite3.Connection, op: m.StatePut) -> None:
        if op.value is None:
            _x(
                conn,
                "DELETE FROM state WHERE session = ? AND namespace = ? AND key = ?",
                (op.session, op.namespace, op.key),
            )
            return
        _x(
            conn,
            "INSERT INTO state (session, namespace, key, value) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (session, namespace, key) DO UPDATE SET value = excluded.value",
            (op.session, op.namespace, op.key, _dumps(op.value)),
        )

    def _ledger(self, conn: sqlite3.Connection, op: m.LedgerPut) -> None:
        if op.entry is None:
            _x(
                conn,
                "DELETE FROM ledger WHERE session = ? AND path = ?",
                (op.session, path_key(op.path)),
            )
            return
        _x(
            conn,
            "INSERT INTO ledger (session, path, entry) VALUES (?, ?, ?) "
            "ON CONFLICT (session, path) DO UPDATE SET entry = excluded.entry",
            (op.session, path_key(op.path), _dumps(op.entry)),
        )

    def _job(self, conn: sqlite3.Connection, op: m.JobPut) -> None:
        job = op.job
        values = (
            job.command,
            job.label,
            job.status,
            job.reason,
            job.exit_code,
            job.started,
            job.ended,
            job.cursor,
        )
        if op.log is not None:
            _x(
                conn,
                "INSERT INTO jobs (session, job_id, run, command, label, status, reason, "
                "exit_code, started, ended, cursor, log, log_bytes, log_dropped) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (session, job_id) DO UPDATE SET command = excluded.command, "
                "label = excluded.label, status = excluded.status, reason = excluded.reason, "
                "exit_code = excluded.exit_code, ended = excluded.ended, "
                "cursor = excluded.cursor, log = excluded.log, log_bytes = excluded.log_bytes, "
                "log_dropped = excluded.log_dropped",
                (
                    op.session,
                    job.job_id,
                    op.run.row,
                    *values,
                    op.log,
                    job.log_bytes,
                    job.log_dropped,
                ),
            )
            return
        _x(
            conn,
            "INSERT INTO jobs (session, job_id, run, command, label, status, reason, exit_code, "
            "started, ended, cursor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (session, job_id) DO UPDATE SET status = excluded.status, "
            "reason = excluded.reason, exit_code = excluded.exit_code, ended = excluded.ended, "
            "cursor = excluded.cursor",
            (op.session, job.job_id, op.run.row, *values),
        )

    def _job_cursor(self, conn: sqlite3.Connection, op: m.JobCursor) -> None:
        _x(
            conn,
            "UPDATE jobs SET cursor = MAX(cursor, ?) WHERE session = ? AND job_id = ?",
            (op.cursor, op.session, op.job_id),
        )

    def _trim(self, conn: sqlite3.Connection, op: m.ResultsTrimmed) -> None:
        self._flush_calls(conn)  # the timeline in order, the group's calls in it
        _x(
            conn,
            "UPDATE entries SET text = NULL WHERE id IN (SELECT id FROM (SELECT id, "
            "SUM(result_bytes) OVER (ORDER BY seq DESC) AS kept FROM entries WHERE session = ? "
            "AND kind = 'call' AND shown IS NOT NULL AND text IS NOT NULL) WHERE kept > ?)",
            (op.session, op.keep_bytes),
        )

    _appliers: ClassVar[dict[type, Callable[..., None]]] = {
        m.RunStarted: _run_started,
        m.RunEnded: _run_ended,
        m.SessionOpened: _session_opened,
        m.SessionClosed: _session_closed,
        m.BatchStarted: _batch_started,
        m.CallStarted: _call_started,
        m.CallEnded: _call_ended,
        m.MessageRecorded: _message,
        m.NoticeRecorded: _notice,
        m.FactRecorded: _fact,
        m.StatePut: _state,
        m.LedgerPut: _ledger,
        m.JobPut: _job,
        m.JobCursor: _job_cursor,
        m.ResultsTrimmed: _trim,
    }

    # --- reading ----------------------------------------------------------------------------

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            try:
                return self._reader_conn().execute(sql, tuple(params)).fetchall()
            except sqlite3.DatabaseError as exc:
                raise self._error(exc, "read") from exc

    _SESSION = (
        "SELECT id, name, workspace, parent, directory, started, ended, status, surface, "
        "os, platform, record, calls, preview, principal FROM sessions"
    )

    def session(
        self, key: str, *, prefix: bool = True, principal: str | None = None
    ) -> m.SessionInfo | None:
        """The session with this id or name, or (``prefix``) whose id starts with ``key``
        (8 characters or more, if only one does); of ``principal`` only, when given."""
        owned, owner = owned_by(principal)
        rows = self._query(
            self._SESSION + f" WHERE (id = ? OR name = ?){owned}", (key, key, *owner)
        )
        if not rows and prefix and len(key) >= 8 and re.fullmatch(r"[0-9a-f]+", key):
            rows = self._query(
                self._SESSION + f" WHERE id >= ? AND id < ?{owned} LIMIT 2",
                (key, key + "g", *owner),
            )
            if len(rows) > 1:
                return None
        byid = [r for r in rows if r[0] == key]
        row = (byid or rows or [None])[0]
        return m.SessionInfo(*row) if row else None

    def session_for_directory(self, directory: str, workspace: str) -> m.SessionInfo | None:
        rows = self._query(
            self._SESSION + " WHERE directory = ? AND workspace = ? AND "
            "parent IS NULL ORDER BY started DESC LIMIT 1",
            (directory, workspace),
        )
        return m.SessionInfo(*rows[0]) if rows else None

    def sessions(
        self,
        *,
        workspace: str | None = None,
        limit: int | None = None,
        children: bool = False,
        principal: str | None = None,
    ) -> list[m.SessionInfo]:
        """Sessions, newest first: of one workspace, top-level only unless ``children``,
        of ``principal`` only when given."""
        where: list[str] = []
        params: list[Any] = []
        if workspace is not None:
            where.append("workspace = ?")
            params.append(workspace)
        if principal is not None:
            owned, owner = owned_by(principal)
            where.append(owned.removeprefix(" AND "))
            params.extend(owner)
        if not children:
            where.append("parent IS NULL")
        sql = self._SESSION + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY started DESC, id"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [m.SessionInfo(*r) for r in self._query(sql, params)]

    def children(self, session: str) -> list[m.SessionInfo]:
        return [
            m.SessionInfo(*r)
            for r in self._query(self._SESSION + " WHERE parent = ? ORDER BY started", (session,))
        ]

    _ENTRY = f"SELECT {', '.join(ENTRY_COLUMNS)} FROM entries"

    def entries(
        self,
        session: str,
        *,
        after: int = 0,
        before: int | None = None,
        limit: int | None = None,
        kinds: Sequence[str] = m.ENTRY_KINDS,
    ) -> list[m.Entry]:
        """The session's timeline from seq ``after + 1`` (and under ``before``), in order."""
        sql = self._ENTRY + " WHERE session = ? AND seq > ?"
        params: list[Any] = [session, after]
        if before is not None:
            sql += " AND seq < ?"
            params.append(before)
        if tuple(kinds) != m.ENTRY_KINDS:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            params.extend(kinds)
        sql += " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [entry_from_row(r) for r in self._query(sql, params)]

    def calls(
        self, session: str, *, after: int = 0, limit: int | None = None
    ) -> list[m.CallRecord]:
        return self.entries(session, after=after, limit=limit, kinds=("call",))  # type: ignore[return-value]

    def call_results(self, session: str, call_id: str) -> list[tuple[int, str, int, str, bool]]:
        """``(row, result_ref, result_bytes, sha256, retained)`` of the session's finished
        calls with this id, oldest first (what ``session:tool_result`` can page)."""
        rows = self._query(
            "SELECT id, result_ref, result_bytes, result_sha256, "
            "text IS NOT NULL FROM entries WHERE session = ? AND call_id = ? "
            "AND result_ref IS NOT NULL ORDER BY seq",
            (session, call_id),
        )
        return [(r[0], r[1], r[2], r[3], bool(r[4])) for r in rows]

    def result_by_ref(self, session: str, ref: str) -> tuple[int, str, int, str, bool] | None:
        rows = self._query(
            "SELECT id, call_id, result_bytes, result_sha256, text IS NOT NULL "
            "FROM entries WHERE session = ? AND result_ref = ? LIMIT 1",
            (session, ref),
        )
        return (rows[0][0], rows[0][1], rows[0][2], rows[0][3], bool(rows[0][4])) if rows else None

    def result_text(self, row: int) -> str | None:
        rows = self._query("SELECT text FROM entries WHERE id = ?", (row,))
        return rows[0][0] if rows else None

    def restore(self, session: str) -> m.Restored:
        """What resuming ``session`` needs, read together (`UnknownSession` if absent)."""
        with self._lock:
            conn = self._reader_conn()
            try:
                conn.execute("BEGIN")
                try:
                    row = conn.execute(self._SESSION + " WHERE id = ?", (session,)).fetchone()
                    if row is None:
                        raise m.UnknownSession(
                            f"session store {self.path} holds no session {session}", self.path
                        )
                    state = {
                        (ns, key): json_or_text(value)
                        for ns, key, value in conn.execute(
                            "SELECT namespace, key, value FROM state WHERE session = ?", (session,)
                        )
                    }
                    ledger = {
                        path_of(path): json_or_text(entry)
                        for path, entry in conn.execute(
                            "SELECT path, entry FROM ledger WHERE session = ?", (session,)
                        )
                    }
                    jobs = [
                        m.JobRecord(session, *r)
                        for r in conn.execute(
                            "SELECT job_id, command, label, status, reason, exit_code, started, "
                            "ended, cursor, log_bytes, log_dropped FROM jobs WHERE session = ? "
                            "ORDER BY started, job_id",
                            (session,),
                        )
                    ]
                    seq, size = conn.execute(
                        "SELECT COALESCE(MAX(result_seq), 0), COALESCE(SUM(CASE WHEN shown IS "
                        "NOT NULL AND text IS NOT NULL THEN result_bytes ELSE 0 END), 0) FROM "
                        "entries WHERE session = ? AND kind = 'call'",
                        (session,),
                    ).fetchone()
                finally:
                    conn.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                raise self._error(exc, "read") from exc
        return m.Restored(m.SessionInfo(*row), state, ledger, jobs, seq, size)

    def state(self, session: str) -> dict[tuple[str, str], Any]:
        return {
            (ns, key): json_or_text(v)
            for ns, key, v in self._query(
                "SELECT namespace, key, value FROM state WHERE session = ?", (session,)
            )
        }

    def state_value(self, session: str, namespace: str, key: str) -> Any:
        rows = self._query(
            "SELECT value FROM state WHERE session = ? AND namespace = ? AND key = ?",
            (session, namespace, key),
        )
        return json_or_text(rows[0][0]) if rows else None

    def ledger(self, session: str) -> dict[str, Any]:
        return {
            path_of(p): json_or_text(e)
            for p, e in self._query("SELECT path, entry FROM ledger WHERE session = ?", (session,))
        }

    def jobs(self, session: str) -> list[m.JobRecord]:
        return [
            m.JobRecord(session, *r)
            for r in self._query(
                "SELECT job_id, command, label, status, reason, exit_code, started, ended, cursor, "
                "log_bytes, log_dropped FROM jobs WHERE session = ? ORDER BY started, job_id",
                (session,),
            )
        ]

    def facts(self, session: str) -> list[m.FactRecord]:
        """The execution facts of the calls this session ran, oldest first."""
        return [
            m.FactRecord(
                session,
                call_id,
                tool,
                profile,
                depth,
                tuple(json.loads(paths)),
                bool(destructive),
                started,
                ended,
                outcome,
            )
            for call_id, tool, profile, depth, paths, destructive, started, ended, outcome in (
                self._query(
                    "SELECT call_id, tool, profile, depth, paths, destructive, started, ended, "
                    "outcome FROM facts WHERE session = ? ORDER BY started, rowid",
                    (session,),
                )
            )
        ]

    def job_log(self, session: str, job_id: str) -> bytes | None:
        rows = self._query(
            "SELECT log FROM jobs WHERE session = ? AND job_id = ?", (session, job_id)
        )
        return bytes(rows[0][0]) if rows and rows[0][0] is not None else None

    # --- search -------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        workspaces: Sequence[str] | None = None,
        kinds: Sequence[str] = ("user_text", "assistant_text", "tool_input", "tool_error"),
        tool: str | None = None,
        sessions: Sequence[str] | None = None,
        limit: int = 8,
        principal: str | None = None,
    ) -> list[m.SearchHit]:
        """Ranked matches (bm25, best first) of ``query``'s words in the timelines of
        ``sessions`` or of the sessions of ``workspaces`` (``None``: every session), of
        ``principal``'s sessions only when given.

        Each index is ranked on its own first (FTS5 ``ORDER BY rank`` with a limit, no
        join), and only those candidates are joined and filtered; when too few survive the
        filters, more candidates are ranked (the limit grows fourfold until the index has
        no more)."""
        match = fts_query(query)
        if match is None or limit <= 0:
            return []
        filters: list[str] = ["(e.kind <> 'call' OR e.outcome <> 'running')"]  # not in flight
        params: list[Any] = []
        if workspaces is not None:
            filters.append(f"s.workspace IN ({','.join('?' * len(workspaces))})")
            params.extend(workspaces)
        if sessions is not None:
            filters.append(f"e.session IN ({','.join('?' * len(sessions))})")
            params.extend(sessions)
        if principal is not None:
            owned, owner = owned_by(principal, "s.principal")
            filters.append(owned.removeprefix(" AND "))
            params.extend(owner)
        if tool is not None:
            filters.append("(e.tool = ? OR e.name = ?)")
            params.extend([tool, tool])
        said = [k for k in ("user_text", "assistant_text", "tool_error") if k in kinds]
        plans: list[tuple[str, str, list[str]]] = []  # (index, columns, row conditions)
        talk: list[str] = []
        if "tool_input" in kinds:
            talk.append("e.kind = 'call'")
        talk += [
            {
                "user_text": "(e.kind = 'message' AND e.role = 'user')",
                "assistant_text": "(e.kind = 'message' AND e.role = 'assistant')",
                "tool_error": "(e.kind = 'call' AND e.is_error = 1)",
            }[k]
            for k in said
        ]
        if talk:
            columns = " ".join(
                c
                for c, wanted in (("arguments", "tool_input" in kinds), ("text", bool(said)))
                if wanted
            )
            plans.append(("search_talk", columns, talk))
        if "tool_output" in kinds:
            plans.append(("search_output", "text", ["e.kind = 'call'"]))
        found: list[tuple[float, int, str, tuple[Any, ...]]] = []
        for index, columns, talk_conditions in plans:
            expression = f"{{{columns}}} : ({match})"
            where = " AND ".join([f"({' OR '.join(talk_conditions)})", *filters])
            want = max(limit * 4, 32)
            while True:
                rows = self._query(
                    "SELECT c.rank, e.id, e.session, e.seq, e.kind, e.role, e.is_error, "
                    "COALESCE(e.tool, e.name), e.at, s.workspace FROM (SELECT rowid, rank "
                    f"FROM {index} WHERE {index} MATCH ? ORDER BY rank LIMIT ?) c "
                    "JOIN entries e ON e.id = c.rowid JOIN sessions s ON s.id = e.session "
                    f"WHERE {where} ORDER BY c.rank LIMIT ?",
                    [expression, want, *params, limit],
                )
                if len(rows) >= limit or want >= self._indexed(index):
                    break
                want *= 4
            found += [(row[0], row[1], index, row) for row in rows]
        found.sort(key=lambda f: (f[0], f[1]))
        return [self._hit(index, row, match, kinds) for _, _, index, row in found[:limit]]

    def _indexed(self, index: str) -> int:
        return int(self._query(f"SELECT COUNT(*) FROM {index}_docsize")[0][0])

    def _hit(
        self, index: str, row: tuple[Any, ...], match: str, kinds: Sequence[str]
    ) -> m.SearchHit:
        """One match: its kind (for an error call found in the talk index: ``tool_error``
        when its text matches, else ``tool_input``) and a snippet of the matching column."""
        score, row_id, session, seq, kind, role, is_error, name, at, workspace = row
        if index == "search_output":
            kind_name, number = "tool_output", 0
        elif kind == "message":
            kind_name, number = f"{role}_text", 1
        elif is_error and "tool_error" in kinds and self._matches(index, "text", match, row_id):
            kind_name, number = "tool_error", 1
        else:
            kind_name, number = "tool_input", 0
        column = ("arguments", "text")[number] if index == "search_talk" else "text"
        snippet = self._query(
            f"SELECT snippet({index}, {number}, '[', ']', '…', {SNIPPET_TOKENS}) FROM {index} "
            f"WHERE {index} MATCH ? AND rowid = ?",
            (f"{{{column}}} : ({match})", row_id),
        )
        text = " ".join((snippet[0][0] or "").split()) if snippet else ""
        return m.SearchHit(session, seq, kind_name, role or "", name, score, text, at, workspace)

    def _matches(self, index: str, column: str, match: str, row_id: int) -> bool:
        return bool(
            self._query(
                f"SELECT 1 FROM {index} WHERE {index} MATCH ? AND rowid = ?",
                (f"{{{column}}} : ({match})", row_id),
            )
        )

    # --- maintenance --------------------------------------------------------------------------

    def size_bytes(self) -> int:
        """Bytes in use (pages not on the free list), plus the WAL file."""
        rows = self._query(
            "SELECT (page_count - freelist_count) * page_size FROM "
            "pragma_page_count(), pragma_freelist_count(), pragma_page_size()"
        )
        wal = 0
        with contextlib.suppress(OSError):
            wal = os.stat(self.path + "-wal").st_size
        return int(rows[0][0]) + wal

    def integrity_check(self) -> str:
        return "; ".join(str(r[0]) for r in self._query("PRAGMA integrity_check"))

    def delete_session(self, conn: sqlite3.Connection, session: str) -> None:
        for child in [
            r[0] for r in conn.execute("SELECT id FROM sessions WHERE parent = ?", (session,))
        ]:
            self.delete_session(conn, child)
        for table in ("entries", "state", "ledger", "jobs", "facts"):
            conn.execute(f"DELETE FROM {table} WHERE session = ?", (session,))
        conn.execute("DELETE FROM sessions WHERE id = ?", (session,))

    def prune(
        self, *, keep_days: float | None, max_bytes: int | None, now: float | None = None
    ) -> m.PruneReport:
        """Delete sessions that ended more than ``keep_days`` ago, then the oldest ended ones
        until the store is within ``max_bytes``; open sessions are never deleted."""
        now = time.time() if now is None else now
        with self._write_lock:
            return self._prune(keep_days, max_bytes, now)

    def _prune(self, keep_days: float | None, max_bytes: int | None, now: float) -> m.PruneReport:
        before = self.size_bytes()
        conn = self._writer_conn()
        deleted = 0
        try:
            if keep_days is not None:
                cutoff = now - keep_days * 86400
                old = [
                    r[0]
                    for r in conn.execute(
                        "SELECT id FROM sessions WHERE parent IS NULL AND status <> 'open' AND "
                        "COALESCE(ended, started) < ?",
                        (cutoff,),
                    )
                ]
                for session in old:
                    with self._transaction(conn):
                        self.delete_session(conn, session)
                    deleted += 1
            if max_bytes is not None:
                oldest = [
                    r[0]
                    for r in conn.execute(
                        "SELECT id FROM sessions WHERE parent IS NULL AND status <> 'open' "
                        "ORDER BY COALESCE(ended, started)"
                    )
                ]
                for session in oldest:
                    if self._used(conn) <= max_bytes:
                        break
                    with self._transaction(conn):
                        self.delete_session(conn, session)
                    deleted += 1
            conn.execute("PRAGMA incremental_vacuum")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            raise self._error(exc, "prune") from exc
        return m.PruneReport(deleted, before, self.size_bytes())

    @staticmethod
    def _used(conn: sqlite3.Connection) -> int:
        row = conn.execute(
            "SELECT (page_count - freelist_count) * page_size FROM "
            "pragma_page_count(), pragma_freelist_count(), "
            "pragma_page_size()"
        ).fetchone()
        return int(row[0])


_TEMPLATE: bytes | None = None
_TEMPLATE_LOCK = threading.Lock()


class SqliteReader(SqliteStore):
    """A store opened only to read (`callgate.store.open_reader`): the file is opened by
    SQLite read-only (``mode=ro``), nothing is created, migrated or recovered, and every
    write is refused. Its connections see what writers commit, as any reader does."""

    @classmethod
    def open(cls, path: str) -> SqliteReader:
        """Open the existing store at ``path`` to read; `StoreError` if it is missing, not a
        regular file, not a callgate store, or of another schema version."""
        store = cls(os.path.abspath(path))
        try:
            st = os.lstat(store.path)
        except OSError as exc:
            raise m.StoreError(
                f"session store {store.path} cannot be read: {exc.strerror or exc}", store.path
            ) from None
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
            raise m.StoreError(
                f"session store {store.path} is not a regular file (a symlink or something else)",
                store.path,
            )
        store._identity = (st.st_dev, st.st_ino)
        try:
            with store._lock:
                version = store._version(store._reader_conn())
        except sqlite3.DatabaseError as exc:
            store.close()
            raise store._error(exc) from None
        if version != LATEST:
            store.close()
            raise m.StoreError(
                f"session store {store.path} has schema version {version}; this "
                f"callgate reads version {LATEST} (open it once with callgate "
                "to migrate it)",
                store.path,
            )
        return store

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            f"file:{self.path}?mode=ro&nofollow=1",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
            timeout=BUSY_TIMEOUT_MS / 1000,
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return conn

    def reopen(self) -> None:
        self._closed = False

    def _refuse(self, *_: Any, **__: Any) -> Any:
        raise m.StoreError(f"session store {self.path} is open read-only", self.path)

    write = recover = prune = _refuse  # type: ignore[assignment]


def template() -> bytes:
    """An empty store of the latest schema, as bytes (built once per process, in memory):
    creating a store is then one file write instead of a dozen synced schema changes.
    Its header says WAL (file format bytes 18-19 = 2), as a database switched to WAL does."""
    global _TEMPLATE
    with _TEMPLATE_LOCK:
        if _TEMPLATE is None:
            conn = sqlite3.connect(":memory:", isolation_level=None)
            try:
                conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
                conn.execute("BEGIN")
                for number, sql in migrations():
                    for statement in _statements(sql):
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO meta (key, value) VALUES ('schema_version', ?) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        (str(number),),
                    )
                conn.execute("COMMIT")
                data = bytearray(conn.serialize())
            finally:
                conn.close()
            data[18:20] = b"\x02\x02"
            _TEMPLATE = bytes(data)
        return _TEMPLATE


def _create_from_template(path: str) -> None:
    """Write the template to a private temp file beside ``path`` and link it into place
    (fails harmlessly when another process got there first)."""
    directory = os.path.dirname(path)
    temp = os.path.join(
        directory, f".{os.path.basename(path)}.{os.getpid()}.{os.urandom(4).hex()}.new"
    )
    flags = (
        os.O_WRONLY
        | os.O_CREAT
        | os.O_EXCL
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_CLOEXEC", 0)
    )
    fd = os.open(temp, flags, 0o600)
    try:
        data = memoryview(template())
        while data:
            data = data[os.write(fd, data) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(temp, path)
    except FileExistsError:
        pass
    finally:
        os.unlink(temp)


def _statements(sql: str) -> list[str]:
    """The statements of a migration file (``sqlite3.complete_statement`` finds their ends,
    so a trigger's inner semicolons stay inside it)."""
    out, buf = [], ""
    for line in sql.splitlines(keepends=True):
        if not buf and (not line.strip() or line.lstrip().startswith("--")):
            continue
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
