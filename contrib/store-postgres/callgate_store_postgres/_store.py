"""The PostgreSQL session store (`PostgresStore`): its schema, writes, reads, search and
upkeep. What it promises is in the package's docstring (``callgate_store_postgres``)."""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

from callgate import store as st

log = logging.getLogger("callgate.store.postgres")

BACKEND = "postgresql"
SCHEMA_VERSION = 3
SNIPPET_WORDS = 24
POOL_MAX = 8
_WORD = re.compile(r"\w+", re.UNICODE)
_SURROGATE = re.compile("[\ud800-\udfff]")
_LOCK_KEY = 0x6361_6C6C_6761_7465 & 0x7FFF_FFFF_FFFF_FFFF  # "callgate", as a bigint

SCHEMA = """
CREATE TABLE IF NOT EXISTS callgate_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS callgate_runs (
    id BIGSERIAL PRIMARY KEY, token TEXT NOT NULL UNIQUE, pid BIGINT NOT NULL,
    hostname TEXT NOT NULL, proc_start TEXT, started DOUBLE PRECISION NOT NULL,
    ended DOUBLE PRECISION);
CREATE INDEX IF NOT EXISTS callgate_runs_live ON callgate_runs (ended) WHERE ended IS NULL;
CREATE TABLE IF NOT EXISTS callgate_sessions (
    id TEXT PRIMARY KEY, name TEXT UNIQUE, workspace TEXT NOT NULL, parent TEXT,
    directory TEXT, started DOUBLE PRECISION NOT NULL, ended DOUBLE PRECISION,
    status TEXT NOT NULL DEFAULT 'open', surface TEXT, os TEXT, platform TEXT,
    record TEXT NOT NULL DEFAULT 'all', last_seq BIGINT NOT NULL DEFAULT 0,
    last_batch BIGINT NOT NULL DEFAULT 0, calls BIGINT NOT NULL DEFAULT 0, preview TEXT,
    preview_from TEXT, run BIGINT);
CREATE INDEX IF NOT EXISTS callgate_sessions_workspace ON callgate_sessions (workspace, started);
CREATE INDEX IF NOT EXISTS callgate_sessions_started ON callgate_sessions (started);
CREATE INDEX IF NOT EXISTS callgate_sessions_parent ON callgate_sessions (parent)
    WHERE parent IS NOT NULL;
CREATE INDEX IF NOT EXISTS callgate_sessions_directory ON callgate_sessions (directory)
    WHERE directory IS NOT NULL;
CREATE TABLE IF NOT EXISTS callgate_entries (
    id BIGSERIAL PRIMARY KEY, session TEXT NOT NULL, seq BIGINT NOT NULL, kind TEXT NOT NULL,
    role TEXT, at DOUBLE PRECISION NOT NULL, run BIGINT, batch BIGINT, position BIGINT,
    origin TEXT, call_id TEXT, name TEXT, tool TEXT, arguments TEXT,
    ended DOUBLE PRECISION, outcome TEXT, is_error SMALLINT, signature TEXT, permission TEXT,
    decided_by TEXT, text TEXT, shown TEXT, result_seq BIGINT, result_ref TEXT,
    result_bytes BIGINT, result_sha256 TEXT,
    args_words TEXT, talk_words TEXT, out_words TEXT,
    args_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple', COALESCE(args_words, '')))
        STORED,
    talk_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple', COALESCE(talk_words, '')))
        STORED,
    out_tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple', COALESCE(out_words, '')))
        STORED,
    UNIQUE (session, seq));
CREATE INDEX IF NOT EXISTS callgate_entries_call ON callgate_entries (session, call_id)
    WHERE call_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS callgate_entries_ref ON callgate_entries (session, result_ref)
    WHERE result_ref IS NOT NULL;
CREATE INDEX IF NOT EXISTS callgate_entries_running ON callgate_entries (run)
    WHERE outcome = 'running';
CREATE INDEX IF NOT EXISTS callgate_entries_args_tsv ON callgate_entries USING GIN (args_tsv);
CREATE INDEX IF NOT EXISTS callgate_entries_talk_tsv ON callgate_entries USING GIN (talk_tsv);
CREATE INDEX IF NOT EXISTS callgate_entries_out_tsv ON callgate_entries USING GIN (out_tsv);
CREATE TABLE IF NOT EXISTS callgate_state (
    session TEXT NOT NULL, namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (session, namespace, key));
CREATE TABLE IF NOT EXISTS callgate_ledger (
    session TEXT NOT NULL, path BYTEA NOT NULL, entry TEXT NOT NULL,
    PRIMARY KEY (session, path));
CREATE TABLE IF NOT EXISTS callgate_jobs (
    session TEXT NOT NULL, job_id TEXT NOT NULL, run BIGINT, command TEXT NOT NULL,
    label TEXT, status TEXT NOT NULL, reason TEXT, exit_code BIGINT,
    started DOUBLE PRECISION NOT NULL, ended DOUBLE PRECISION,
    cursor BIGINT NOT NULL DEFAULT 0, log BYTEA, log_bytes BIGINT NOT NULL DEFAULT 0,
    log_dropped BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (session, job_id));
"""

#: what each later schema version changes, applied in order on top of `SCHEMA` (version 1);
#: an applied version never changes
MIGRATIONS: dict[int, str] = {
    # every session records the principal that opened it; sessions recorded before keep
    # NULL and count as the local users' (`callgate.store.visible_to`)
    2: """
ALTER TABLE callgate_sessions ADD COLUMN IF NOT EXISTS principal TEXT;
CREATE INDEX IF NOT EXISTS callgate_sessions_principal
    ON callgate_sessions (principal, workspace, started);
""",
    # the execution facts of the writer and destructive calls that ran (issue 36.11); a
    # database of an earlier version keeps what it held and gains an empty table
    3: """
CREATE TABLE IF NOT EXISTS callgate_facts (
    id BIGSERIAL PRIMARY KEY, session TEXT NOT NULL, call_id TEXT NOT NULL,
    tool TEXT NOT NULL, profile TEXT, depth BIGINT NOT NULL DEFAULT 0, paths TEXT NOT NULL,
    destructive SMALLINT NOT NULL DEFAULT 0, started DOUBLE PRECISION NOT NULL,
    ended DOUBLE PRECISION NOT NULL, outcome TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS callgate_facts_session ON callgate_facts (session, started);
""",
}

TABLES = (
    "callgate_meta",
    "callgate_runs",
    "callgate_sessions",
    "callgate_entries",
    "callgate_state",
    "callgate_ledger",
    "callgate_jobs",
    "callgate_facts",
)
#: the tables whose rows belong to one session (its ``session`` column)
SESSION_TABLES = TABLES[TABLES.index("callgate_entries") :]


# --- values PostgreSQL can hold -------------------------------------------------------------


def storable(value: Any) -> Any:
    """Text PostgreSQL can hold: each lone surrogate and NUL reads U+FFFD."""
    if isinstance(value, str):
        if "\x00" in value:
            value = value.replace("\x00", "\ufffd")
        if not value.isascii():
            value = _SURROGATE.sub("\ufffd", value)
    return value


def _dumps(value: Any) -> str:
    """JSON text of ``value`` (lone surrogates kept as ``\\udcxx`` escapes, so they return)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)
    if "\x00" in text or not text.isascii():
        try:
            text.encode("utf-8")
            if "\x00" not in text:
                return text
        except UnicodeEncodeError:
            pass
        return json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=repr)
    return text


def path_key(path: str) -> bytes:
    """A ledger path as bytes that give back exactly the same string (surrogates too)."""
    return path.encode("utf-8", "surrogatepass")


def path_of(key: bytes | memoryview) -> str:
    return bytes(key).decode("utf-8", "surrogatepass")


def words(text: str | None) -> str | None:
    """The searchable words of ``text``, lower-cased and space-separated (``\\w+``)."""
    if text is None:
        return None
    return " ".join(w.lower() for w in _WORD.findall(storable(text)))


def ts_query(text: str) -> tuple[str, list[str]] | None:
    """A user's words as a ``tsquery`` source (each word quoted: no operator gets in; any
    may match) and the words themselves."""
    found = list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))[:32]
    if not found:
        return None
    return " | ".join("'" + w.replace("'", "") + "'" for w in found), found


def snippet(text: str | None, wanted: Sequence[str]) -> str:
    """About `SNIPPET_WORDS` words of ``text`` around its first match, matches in brackets."""
    if not text:
        return ""
    spans = [(m.start(), m.end(), m.group().lower() in wanted) for m in _WORD.finditer(text)]
    if not spans:
        return ""
    first = next((i for i, s in enumerate(spans) if s[2]), 0)
    lo = max(0, first - SNIPPET_WORDS // 3)
    hi = min(len(spans), lo + SNIPPET_WORDS)
    out, pos = [], spans[lo][0]
    for start, end, hit in spans[lo:hi]:
        out.append(text[pos:start])
        out.append(f"[{text[start:end]}]" if hit else text[start:end])
        pos = end
    body = "".join(out)
    return ("…" if lo > 0 else "") + " ".join(body.split()) + ("…" if hi < len(spans) else "")


def _redact(location: str) -> str:
    """The URL without its password (it names the store in messages)."""
    return re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", location)


def _call_words(kind: str, is_error: bool, text: str | None) -> tuple[str | None, str | None]:
    """``(talk_words, out_words)`` of an entry's text: messages and error results are talk,
    other results are output."""
    if kind != "call":
        return words(text), None
    return (words(text), None) if is_error else (None, words(text))


# --- the store ------------------------------------------------------------------------------


class PostgresStore:
    """A session store in a PostgreSQL database (`callgate.store.SessionStore`)."""

    backend = BACKEND

    def __init__(self, url: str, *, pool_max: int = POOL_MAX) -> None:
        self.url = url
        self.location = _redact(url)
        self.pool_max = pool_max
        self._pool: Any = None
        self._pool_lock = threading.Lock()

    # --- connections ----------------------------------------------------------------------

    @classmethod
    def open(cls, url: str) -> PostgresStore:
        """Connect, create or check the schema, settle dead runs; `StoreError` says why not."""
        store = cls(url)
        try:
            store._migrate()
            store.recover()
        except BaseException:
            store.close()
            raise
        return store

    def _error(self, exc: BaseException, doing: str = "use") -> st.StoreError:
        return st.StoreError(
            f"session store {self.location}: cannot {doing} it "
            f"({type(exc).__name__}: {str(exc).strip()})",
            self.location,
        )

    def _get_pool(self) -> Any:
        with self._pool_lock:
            if self._pool is None:
                import psycopg
                from psycopg_pool import ConnectionPool

                try:  # one plain connection first: a bad URL or a dead server fails at once,
                    # with libpq's own message (the pool would retry until its timeout)
                    psycopg.connect(self.url, autocommit=True).close()
                except psycopg.Error as exc:
                    raise self._error(exc, "connect to") from None
                pool = ConnectionPool(
                    self.url,
                    min_size=1,
                    max_size=self.pool_max,
                    kwargs={"autocommit": True},
                    open=False,
                    name="callgate-store",
                )
                try:
                    pool.open(wait=True, timeout=30.0)
                except Exception as exc:
                    pool.close()
                    raise self._error(exc, "connect to") from None
                self._pool = pool
            return self._pool

    @contextmanager
    def _conn(self, doing: str) -> Iterator[Any]:
        import psycopg

        try:
            with self._get_pool().connection() as conn:
                yield conn
        except psycopg.Error as exc:
            raise self._error(exc, doing) from exc

    def close(self) -> None:
        """Close the pool (a later call opens a new one)."""
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def _migrate(self) -> None:
        with self._conn("create the schema of") as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            found = conn.execute("SELECT to_regclass('callgate_meta') IS NOT NULL").fetchone()
            version = 0
            if found and found[0]:
                row = conn.execute(
                    "SELECT value FROM callgate_meta WHERE key = 'schema_version'"
                ).fetchone()
                version = int(row[0]) if row else 0
            if version > SCHEMA_VERSION:
                raise st.StoreError(
                    f"session store {self.location} has schema version {version}; this "
                    f"backend reads versions up to {SCHEMA_VERSION} (upgrade "
                    "callgate-store-postgres); nothing was changed",
                    self.location,
                )
            if version == SCHEMA_VERSION:
                return
            steps = [SCHEMA] if version == 0 else []
            steps += [MIGRATIONS[v] for v in range(max(version, 1) + 1, SCHEMA_VERSION + 1)]
            for sql in steps:
                for statement in (s.strip() for s in sql.split(";")):
                    if statement:
                        conn.execute(statement)
            conn.execute(
                "INSERT INTO callgate_meta (key, value) VALUES ('schema_version', %s) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(SCHEMA_VERSION),),
            )

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        with self._conn("read") as conn:
            return conn.execute(sql, tuple(params)).fetchall()

    # --- the runs of dead processes ---------------------------------------------------------

    def recover(self) -> int:
        """Settle the runs of processes on this machine that died without ending them."""
        here = socket.gethostname()
        live = self._query(
            "SELECT id, pid, proc_start FROM callgate_runs WHERE ended IS NULL AND hostname = %s",
            (here,),
        )
        dead = [r[0] for r in live if not st.process_alive(r[1], r[2])]
        if not dead:
            return 0
        now = time.time()
        with self._conn("write") as conn, conn.transaction():
            for run in dead:
                conn.execute(
                    "UPDATE callgate_entries SET outcome = %s, ended = %s WHERE "
                    "run = %s AND outcome = %s",
                    (st.INTERRUPTED, now, run, st.RUNNING),
                )
                conn.execute(
                    "UPDATE callgate_jobs SET status = 'killed', reason = %s, "
                    "ended = %s WHERE run = %s AND status = 'running'",
                    (st.HOST_EXITED, now, run),
                )
                conn.execute(
                    "UPDATE callgate_sessions SET status = %s, ended = COALESCE(ended, "
                    "%s) WHERE run = %s AND status = 'open'",
                    (st.INTERRUPTED, now, run),
                )
                conn.execute("UPDATE callgate_runs SET ended = %s WHERE id = %s", (now, run))
        return len(dead)

    # --- writing ----------------------------------------------------------------------------

    def write(self, ops: Sequence[st.Op]) -> None:
        """Apply ``ops`` in order, in one transaction."""
        import psycopg

        appliers = self._appliers
        filled: list[tuple[Any, str, Any]] = []  # what the ops asked for, set once committed
        try:
            with self._get_pool().connection() as conn, conn.transaction():
                cur = conn.cursor()
                for op in ops:
                    appliers[type(op)](self, cur, op, filled)
        except psycopg.Error as exc:
            raise self._error(exc, "write to") from exc
        for target, attr, value in filled:
            setattr(target, attr, value)
        for op in ops:
            if isinstance(op, st.CallEnded):
                op.committed = True
            elif isinstance(op, st.CallStarted) and op.end is not None and op.end.merged:
                op.end.committed = True

    @staticmethod
    def _x(cur: Any, sql: str, params: Iterable[Any] = ()) -> Any:
        cur.execute(sql, tuple(storable(p) for p in params))
        return cur

    def _next_seq(self, cur: Any, session: str) -> int | None:
        row = self._x(
            cur,
            "UPDATE callgate_sessions SET last_seq = last_seq + 1 WHERE id = %s RETURNING last_seq",
            (session,),
        ).fetchone()
        return row[0] if row else None

    def _run_started(self, cur: Any, op: st.RunStarted, filled: list[Any]) -> None:
        row = self._x(
            cur,
            "INSERT INTO callgate_runs (token, pid, hostname, proc_start, "
            "started) VALUES (%s, %s, %s, %s, %s) RETURNING id",
            (op.token, op.pid, op.hostname, op.proc_start, op.at),
        ).fetchone()
        op.row = row[0]  # later ops of this group refer to it

    def _run_ended(self, cur: Any, op: st.RunEnded, filled: list[Any]) -> None:
        self._x(cur, "UPDATE callgate_runs SET ended = %s WHERE id = %s", (op.at, op.run.row))

    def _session_opened(self, cur: Any, op: st.SessionOpened, filled: list[Any]) -> None:
        if op.resumed:
            self._x(
                cur,
                "UPDATE callgate_sessions SET status = 'open', ended = NULL, run = %s "
                "WHERE id = %s",
                (op.run.row, op.id),
            )
            return
        self._x(
            cur,
            "INSERT INTO callgate_sessions (id, name, workspace, parent, directory, "
            "started, status, surface, os, platform, record, run, principal) VALUES (%s, %s, "
            "%s, %s, %s, %s, 'open', %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
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

    def _session_closed(self, cur: Any, op: st.SessionClosed, filled: list[Any]) -> None:
        self._x(
            cur,
            "UPDATE callgate_sessions SET status = 'closed', ended = %s WHERE id = %s",
            (op.at, op.session),
        )

    def _batch_started(self, cur: Any, op: st.BatchStarted, filled: list[Any]) -> None:
        row = self._x(
            cur,
            "UPDATE callgate_sessions SET last_batch = last_batch + 1 WHERE "
            "id = %s RETURNING last_batch",
            (op.session,),
        ).fetchone()
        op.number = row[0] if row else 0

    def _call_started(self, cur: Any, op: st.CallStarted, filled: list[Any]) -> None:
        seq = self._next_seq(cur, op.session)
        if seq is None:
            return
        end = op.end
        arguments = _dumps(op.arguments)
        if end is None:
            row = self._x(
                cur,
                "INSERT INTO callgate_entries (session, seq, kind, role, at, run, batch, "
                "position, origin, call_id, name, arguments, outcome, args_words) VALUES (%s, "
                "%s, 'call', 'tool', %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (
                    op.session,
                    seq,
                    op.started,
                    op.run.row,
                    op.batch.number,
                    op.position,
                    op.origin,
                    op.call_id,
                    op.name,
                    arguments,
                    st.RUNNING,
                    words(arguments),
                ),
            ).fetchone()
        else:
            ref, sha, size = st.result_facts(op.call_id, end)
            talk, out = _call_words("call", end.is_error, end.text)
            row = self._x(
                cur,
                "INSERT INTO callgate_entries (session, seq, kind, role, at, run, batch, "
                "position, origin, call_id, name, tool, arguments, ended, outcome, is_error, "
                "signature, permission, decided_by, text, shown, result_seq, result_ref, "
                "result_bytes, result_sha256, args_words, talk_words, out_words) VALUES (%s, "
                "%s, 'call', 'tool', %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
                "%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                (
                    op.session,
                    seq,
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
                    words(arguments),
                    talk,
                    out,
                ),
            ).fetchone()
            end.merged = True
        op.row = row[0]
        self._x(
            cur,
            "UPDATE callgate_sessions SET calls = calls + 1, preview = "
            "COALESCE(preview, %s), preview_from = COALESCE(preview_from, 'call') "
            "WHERE id = %s",
            (st.preview_of(f"{op.name} {arguments}"), op.session),
        )

    def _call_ended(self, cur: Any, op: st.CallEnded, filled: list[Any]) -> None:
        if op.merged or op.start.row is None:
            return
        ref, sha, size = st.result_facts(op.start.call_id, op)
        talk, out = _call_words("call", op.is_error, op.text)
        self._x(
            cur,
            "UPDATE callgate_entries SET tool = %s, ended = %s, outcome = %s, is_error = %s, "
            "signature = %s, permission = %s, decided_by = %s, text = %s, shown = %s, "
            "result_seq = %s, result_ref = %s, result_bytes = %s, result_sha256 = %s, "
            "talk_words = %s, out_words = %s WHERE id = %s",
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
                talk,
                out,
                op.start.row,
            ),
        )

    def _message(self, cur: Any, op: st.MessageRecorded, filled: list[Any]) -> None:
        seq = self._next_seq(cur, op.session)
        if seq is None:
            return
        self._x(
            cur,
            "INSERT INTO callgate_entries (session, seq, kind, role, at, text, "
            "talk_words) VALUES (%s, %s, 'message', %s, %s, %s, %s)",
            (op.session, seq, op.role, op.at, op.text, words(op.text)),
        )
        if op.role == "user":
            self._x(
                cur,
                "UPDATE callgate_sessions SET preview = %s, preview_from = 'user' "
                "WHERE id = %s AND (preview_from IS NULL OR preview_from <> 'user')",
                (st.preview_of(op.text), op.session),
            )

    def _notice(self, cur: Any, op: st.NoticeRecorded, filled: list[Any]) -> None:
        seq = self._next_seq(cur, op.session)
        if seq is None:
            return
        self._x(
            cur,
            "INSERT INTO callgate_entries (session, seq, kind, role, at, text) "
            "VALUES (%s, %s, 'notice', 'host', %s, %s)",
            (op.session, seq, op.at, op.text),
        )

    def _fact(self, cur: Any, op: st.FactRecorded, filled: list[Any]) -> None:
        fact = op.fact
        self._x(
            cur,
            "INSERT INTO callgate_facts (session, call_id, tool, profile, depth, paths, "
            "destructive, started, ended, outcome) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, "
            "%s, %s)",
            (
                fact.session,
                fact.call_id,
                fact.tool,
                fact.profile,
                fact.depth,
                # ASCII JSON: an undecodable byte's lone surrogate comes back exactly
                json.dumps(list(fact.paths), ensure_ascii=True),
                int(fact.destructive),
                fact.started,
                fact.ended,
                fact.outcome,
            ),
        )

    def _state(self, cur: Any, op: st.StatePut, filled: list[Any]) -> None:
        if op.value is None:
            self._x(
                cur,
                "DELETE FROM callgate_state WHERE session = %s AND namespace = %s AND key = %s",
                (op.session, op.namespace, op.key),
            )
            return
        self._x(
            cur,
            "INSERT INTO callgate_state (session, namespace, key, value) VALUES "
            "(%s, %s, %s, %s) ON CONFLICT (session, namespace, key) DO UPDATE SET "
            "value = excluded.value",
            (op.session, op.namespace, op.key, _dumps(op.value)),
        )

    def _ledger(self, cur: Any, op: st.LedgerPut, filled: list[Any]) -> None:
        if op.entry is None:
            self._x(
                cur,
                "DELETE FROM callgate_ledger WHERE session = %s AND path = %s",
                (op.session, path_key(op.path)),
            )
            return
        self._x(
            cur,
            "INSERT INTO callgate_ledger (session, path, entry) VALUES (%s, %s, %s) "
            "ON CONFLICT (session, path) DO UPDATE SET entry = excluded.entry",
            (op.session, path_key(op.path), _dumps(op.entry)),
        )

    def _job(self, cur: Any, op: st.JobPut, filled: list[Any]) -> None:
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
            self._x(
                cur,
                "INSERT INTO callgate_jobs (session, job_id, run, command, label, status, "
                "reason, exit_code, started, ended, cursor, log, log_bytes, log_dropped) VALUES "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (session, "
                "job_id) DO UPDATE SET command = excluded.command, label = excluded.label, "
                "status = excluded.status, reason = excluded.reason, exit_code = "
                "excluded.exit_code, ended = excluded.ended, cursor = excluded.cursor, log = "
                "excluded.log, log_bytes = excluded.log_bytes, log_dropped = "
                "excluded.log_dropped",
                (
                    op.session,
                    job.job_id,
                    op.run.row,
                    *values,
                    bytes(op.log),
                    job.log_bytes,
                    job.log_dropped,
                ),
            )
            return
        self._x(
            cur,
            "INSERT INTO callgate_jobs (session, job_id, run, command, label, status, reason, "
            "exit_code, started, ended, cursor) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
            "%s) ON CONFLICT (session, job_id) DO UPDATE SET status = excluded.status, reason = "
            "excluded.reason, exit_code = excluded.exit_code, ended = excluded.ended, cursor = "
            "excluded.cursor",
            (op.session, job.job_id, op.run.row, *values),
        )

    def _job_cursor(self, cur: Any, op: st.JobCursor, filled: list[Any]) -> None:
        self._x(
            cur,
            "UPDATE callgate_jobs SET cursor = GREATEST(cursor, %s) WHERE session = %s "
            "AND job_id = %s",
            (op.cursor, op.session, op.job_id),
        )

    def _trim(self, cur: Any, op: st.ResultsTrimmed, filled: list[Any]) -> None:
        self._x(
            cur,
            "UPDATE callgate_entries SET text = NULL, talk_words = NULL, out_words = NULL "
            "WHERE id IN (SELECT id FROM (SELECT id, SUM(result_bytes) OVER (ORDER BY seq "
            "DESC) AS kept FROM callgate_entries WHERE session = %s AND kind = 'call' AND "
            "shown IS NOT NULL AND text IS NOT NULL) k WHERE kept > %s)",
            (op.session, op.keep_bytes),
        )

    _appliers: ClassVar[dict[type, Callable[..., None]]] = {
        st.RunStarted: _run_started,
        st.RunEnded: _run_ended,
        st.SessionOpened: _session_opened,
        st.SessionClosed: _session_closed,
        st.BatchStarted: _batch_started,
        st.CallStarted: _call_started,
        st.CallEnded: _call_ended,
        st.MessageRecorded: _message,
        st.NoticeRecorded: _notice,
        st.FactRecorded: _fact,
        st.StatePut: _state,
        st.LedgerPut: _ledger,
        st.JobPut: _job,
        st.JobCursor: _job_cursor,
        st.ResultsTrimmed: _trim,
    }

    # --- reading ----------------------------------------------------------------------------

    _SESSION = (
        "SELECT id, name, workspace, parent, directory, started, ended, status, "
        "surface, os, platform, record, calls, preview, principal FROM callgate_sessions"
    )

    def session(
        self, key: str, *, prefix: bool = True, principal: str | None = None
    ) -> st.SessionInfo | None:
        owned, owner = st.owned_by(principal, placeholder="%s")
        rows = self._query(
            self._SESSION + f" WHERE (id = %s OR name = %s){owned}", (key, key, *owner)
        )
        if not rows and prefix and len(key) >= 8 and re.fullmatch(r"[0-9a-f]+", key):
            rows = self._query(
                self._SESSION + f" WHERE id >= %s AND id < %s{owned} ORDER BY id LIMIT 2",
                (key, key + "g", *owner),
            )
            if len(rows) > 1:
                return None
        byid = [r for r in rows if r[0] == key]
        row = (byid or rows or [None])[0]
        return st.SessionInfo(*row) if row else None

    def session_for_directory(self, directory: str, workspace: str) -> st.SessionInfo | None:
        rows = self._query(
            self._SESSION + " WHERE directory = %s AND workspace = %s AND "
            "parent IS NULL ORDER BY started DESC LIMIT 1",
            (directory, workspace),
        )
        return st.SessionInfo(*rows[0]) if rows else None

    def sessions(
        self,
        *,
        workspace: str | None = None,
        limit: int | None = None,
        children: bool = False,
        principal: str | None = None,
    ) -> list[st.SessionInfo]:
        where: list[str] = []
        params: list[Any] = []
        if workspace is not None:
            where.append("workspace = %s")
            params.append(workspace)
        if principal is not None:
            owned, owner = st.owned_by(principal, placeholder="%s")
            where.append(owned.removeprefix(" AND "))
            params.extend(owner)
        if not children:
            where.append("parent IS NULL")
        sql = self._SESSION + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY started DESC, id"
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)
        return [st.SessionInfo(*r) for r in self._query(sql, params)]

    def children(self, session: str) -> list[st.SessionInfo]:
        return [
            st.SessionInfo(*r)
            for r in self._query(self._SESSION + " WHERE parent = %s ORDER BY started", (session,))
        ]

    _ENTRY = f"SELECT {', '.join(st.ENTRY_COLUMNS)} FROM callgate_entries"

    def entries(
        self,
        session: str,
        *,
        after: int = 0,
        before: int | None = None,
        limit: int | None = None,
        kinds: Sequence[str] = st.ENTRY_KINDS,
    ) -> list[st.Entry]:
        sql = self._ENTRY + " WHERE session = %s AND seq > %s"
        params: list[Any] = [session, after]
        if before is not None:
            sql += " AND seq < %s"
            params.append(before)
        if tuple(kinds) != st.ENTRY_KINDS:
            sql += " AND kind = ANY(%s)"
            params.append(list(kinds))
        sql += " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)
        return [st.entry_from_row(r) for r in self._query(sql, params)]

    def calls(
        self, session: str, *, after: int = 0, limit: int | None = None
    ) -> list[st.CallRecord]:
        return self.entries(session, after=after, limit=limit, kinds=("call",))  # type: ignore[return-value]

    def call_results(self, session: str, call_id: str) -> list[tuple[int, str, int, str, bool]]:
        rows = self._query(
            "SELECT id, result_ref, result_bytes, result_sha256, text IS NOT "
            "NULL FROM callgate_entries WHERE session = %s AND call_id = %s AND "
            "result_ref IS NOT NULL ORDER BY seq",
            (session, call_id),
        )
        return [(r[0], r[1], r[2], r[3], bool(r[4])) for r in rows]

    def result_by_ref(self, session: str, ref: str) -> tuple[int, str, int, str, bool] | None:
        rows = self._query(
            "SELECT id, call_id, result_bytes, result_sha256, text IS NOT NULL "
            "FROM callgate_entries WHERE session = %s AND result_ref = %s "
            "LIMIT 1",
            (session, ref),
        )
        if not rows:
            return None
        r = rows[0]
        return (r[0], r[1], r[2], r[3], bool(r[4]))

    def result_text(self, row: int) -> str | None:
        rows = self._query("SELECT text FROM callgate_entries WHERE id = %s", (row,))
        return rows[0][0] if rows else None

    def restore(self, session: str) -> st.Restored:
        """What resuming ``session`` needs, read in one snapshot (`UnknownSession` if absent)."""
        with self._conn("read") as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            row = conn.execute(self._SESSION + " WHERE id = %s", (session,)).fetchone()
            if row is None:
                raise st.UnknownSession(
                    f"session store {self.location} holds no session {session}", self.location
                )
            state = {
                (ns, key): st.json_or_text(value)
                for ns, key, value in conn.execute(
                    "SELECT namespace, key, value FROM callgate_state WHERE session = %s",
                    (session,),
                )
            }
            ledger = {
                path_of(path): st.json_or_text(entry)
                for path, entry in conn.execute(
                    "SELECT path, entry FROM callgate_ledger WHERE session = %s", (session,)
                )
            }
            jobs = [
                st.JobRecord(session, *r)
                for r in conn.execute(
                    "SELECT job_id, command, label, status, reason, exit_code, started, ended, "
                    "cursor, log_bytes, log_dropped FROM callgate_jobs WHERE session = %s "
                    "ORDER BY started, job_id",
                    (session,),
                )
            ]
            seq, size = conn.execute(
                "SELECT COALESCE(MAX(result_seq), 0), COALESCE(SUM(CASE WHEN shown IS NOT NULL "
                "AND text IS NOT NULL THEN result_bytes ELSE 0 END), 0) FROM callgate_entries "
                "WHERE session = %s AND kind = 'call'",
                (session,),
            ).fetchone()
        return st.Restored(st.SessionInfo(*row), state, ledger, jobs, int(seq), int(size))

    def state(self, session: str) -> dict[tuple[str, str], Any]:
        return {
            (ns, key): st.json_or_text(v)
            for ns, key, v in self._query(
                "SELECT namespace, key, value FROM callgate_state WHERE session = %s", (session,)
            )
        }

    def state_value(self, session: str, namespace: str, key: str) -> Any:
        rows = self._query(
            "SELECT value FROM callgate_state WHERE session = %s AND namespace = %s AND key = %s",
            (session, namespace, key),
        )
        return st.json_or_text(rows[0][0]) if rows else None

    def ledger(self, session: str) -> dict[str, Any]:
        return {
            path_of(p): st.json_or_text(e)
            for p, e in self._query(
                "SELECT path, entry FROM callgate_ledger WHERE session = %s", (session,)
            )
        }

    def jobs(self, session: str) -> list[st.JobRecord]:
        return [
            st.JobRecord(session, *r)
            for r in self._query(
                "SELECT job_id, command, label, status, reason, exit_code, started, ended, cursor, "
                "log_bytes, log_dropped FROM callgate_jobs WHERE session = %s ORDER BY started, "
                "job_id",
                (session,),
            )
        ]

    def facts(self, session: str) -> list[st.FactRecord]:
        """The execution facts of the calls this session ran, oldest first."""
        return [
            st.FactRecord(
                session,
                call_id,
                tool,
                profile,
                int(depth),
                tuple(json.loads(paths)),
                bool(destructive),
                started,
                ended,
                outcome,
            )
            for call_id, tool, profile, depth, paths, destructive, started, ended, outcome in (
                self._query(
                    "SELECT call_id, tool, profile, depth, paths, destructive, started, ended, "
                    "outcome FROM callgate_facts WHERE session = %s ORDER BY started, id",
                    (session,),
                )
            )
        ]

    def job_log(self, session: str, job_id: str) -> bytes | None:
        rows = self._query(
            "SELECT log FROM callgate_jobs WHERE session = %s AND job_id = %s", (session, job_id)
        )
        return bytes(rows[0][0]) if rows and rows[0][0] is not None else None

    # --- search -----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        workspaces: Sequence[str] | None = None,
        kinds: Sequence[str] = st.DEFAULT_SEARCH_KINDS,
        tool: str | None = None,
        sessions: Sequence[str] | None = None,
        limit: int = 8,
        principal: str | None = None,
    ) -> list[st.SearchHit]:
        """Ranked matches (best first: ``score`` is minus ``ts_rank``) of any of ``query``'s
        words in the timelines of ``sessions`` or of the sessions of ``workspaces``, of
        ``principal``'s sessions only when given."""
        parsed = ts_query(query)
        if parsed is None or limit <= 0:
            return []
        source, wanted = parsed
        filters = ["(e.kind <> 'call' OR e.outcome <> 'running')"]  # not in flight
        params: list[Any] = []
        if workspaces is not None:
            filters.append("s.workspace = ANY(%s)")
            params.append(list(workspaces))
        if sessions is not None:
            filters.append("e.session = ANY(%s)")
            params.append(list(sessions))
        if principal is not None:
            owned, owner = st.owned_by(principal, "s.principal", "%s")
            filters.append(owned.removeprefix(" AND "))
            params.extend(owner)
        if tool is not None:
            filters.append("(e.tool = %s OR e.name = %s)")
            params.extend([tool, tool])
        said = {
            "user_text": "(e.kind = 'message' AND e.role = 'user')",
            "assistant_text": "(e.kind = 'message' AND e.role = 'assistant')",
            "tool_error": "(e.kind = 'call' AND e.is_error = 1)",
        }
        plans: list[tuple[str, str]] = []  # (tsvector expression, row condition)
        talk_kinds = [said[k] for k in said if k in kinds]
        if "tool_input" in kinds and talk_kinds:
            plans.append(
                ("(e.args_tsv || e.talk_tsv)", f"(e.kind = 'call' OR {' OR '.join(talk_kinds)})")
            )
        elif "tool_input" in kinds:
            plans.append(("e.args_tsv", "e.kind = 'call'"))
        elif talk_kinds:
            plans.append(("e.talk_tsv", f"({' OR '.join(talk_kinds)})"))
        if "tool_output" in kinds:
            plans.append(("e.out_tsv", "e.kind = 'call'"))
        found: list[tuple[float, int, bool, tuple[Any, ...]]] = []
        for vector, condition in plans:
            where = " AND ".join([f"{vector} @@ q", condition, *filters])
            rows = self._query(
                "SELECT -ts_rank(" + vector + ", q) AS score, e.id, e.session, e.seq, e.kind, "
                "e.role, e.is_error, COALESCE(e.tool, e.name), e.at, s.workspace, e.arguments, "
                "e.text, e.talk_tsv @@ q FROM callgate_entries e JOIN callgate_sessions s ON "
                "s.id = e.session, to_tsquery('simple', %s) q WHERE "
                + where
                + " ORDER BY score, e.id LIMIT %s",
                [source, *params, limit],
            )
            found += [(row[0], row[1], vector == "e.out_tsv", row) for row in rows]
        found.sort(key=lambda f: (f[0], f[1]))
        return [self._hit(row, output, wanted, kinds) for _, _, output, row in found[:limit]]

    @staticmethod
    def _hit(
        row: tuple[Any, ...], output: bool, wanted: Sequence[str], kinds: Sequence[str]
    ) -> st.SearchHit:
        (
            score,
            _id,
            session,
            seq,
            kind,
            role,
            is_error,
            name,
            at,
            workspace,
            arguments,
            text,
            text_matches,
        ) = row
        if output:
            kind_name, column = "tool_output", text
        elif kind == "message":
            kind_name, column = f"{role}_text", text
        elif is_error and "tool_error" in kinds and text_matches:
            kind_name, column = "tool_error", text
        else:
            kind_name, column = "tool_input", arguments
        return st.SearchHit(
            session,
            seq,
            kind_name,
            role or "",
            name,
            float(score),
            snippet(column, wanted),
            at,
            workspace,
        )

    # --- upkeep -----------------------------------------------------------------------------

    def size_bytes(self) -> int:
        """Bytes the store's tables and indexes take on disk."""
        rows = self._query(
            "SELECT COALESCE(SUM(pg_total_relation_size(to_regclass(t))), 0) "
            "FROM unnest(%s::text[]) t",
            (list(TABLES),),
        )
        return int(rows[0][0])

    def integrity_check(self) -> str:
        """``"ok"``, or what is inconsistent: the schema version, entries or parts of sessions
        that do not exist, sequence numbers past a session's counter."""
        problems = []
        version = self._query("SELECT value FROM callgate_meta WHERE key = 'schema_version'")
        if not version or int(version[0][0]) != SCHEMA_VERSION:
            problems.append(f"schema version {version[0][0] if version else None}")
        for table in SESSION_TABLES:
            orphans = self._query(
                f"SELECT COUNT(*) FROM {table} x WHERE NOT EXISTS (SELECT 1 "
                "FROM callgate_sessions s WHERE s.id = x.session)"
            )[0][0]
            if orphans:
                problems.append(f"{orphans} rows of {table} name no session")
        ahead = self._query(
            "SELECT COUNT(*) FROM callgate_sessions s WHERE last_seq < "
            "(SELECT COALESCE(MAX(seq), 0) FROM callgate_entries e WHERE "
            "e.session = s.id)"
        )[0][0]
        if ahead:
            problems.append(f"{ahead} sessions with entries past their last_seq")
        return "; ".join(problems) or "ok"

    def _delete_session(self, cur: Any, session: str) -> None:
        for (child,) in cur.execute(
            "SELECT id FROM callgate_sessions WHERE parent = %s", (session,)
        ).fetchall():
            self._delete_session(cur, child)
        for table in SESSION_TABLES:
            cur.execute(f"DELETE FROM {table} WHERE session = %s", (session,))
        cur.execute("DELETE FROM callgate_sessions WHERE id = %s", (session,))

    def prune(
        self, *, keep_days: float | None, max_bytes: int | None, now: float | None = None
    ) -> st.PruneReport:
        """Delete sessions that ended more than ``keep_days`` ago, then the oldest ended ones
        while the store takes more than ``max_bytes`` (measured after a ``VACUUM``, which
        makes deleted rows' space reusable); open sessions are never deleted."""
        now = time.time() if now is None else now
        before = self.size_bytes()
        deleted = 0
        with self._conn("prune") as conn:
            if keep_days is not None:
                cutoff = now - keep_days * 86400
                old = conn.execute(
                    "SELECT id FROM callgate_sessions WHERE parent IS NULL AND "
                    "status <> 'open' AND COALESCE(ended, started) < %s",
                    (cutoff,),
                ).fetchall()
                for (session,) in old:
                    with conn.transaction():
                        self._delete_session(conn.cursor(), session)
                    deleted += 1
            if max_bytes is not None:
                oldest = conn.execute(
                    "SELECT id FROM callgate_sessions WHERE parent IS NULL "
                    "AND status <> 'open' ORDER BY COALESCE(ended, started)"
                ).fetchall()
                for (session,) in oldest:
                    if self._live_bytes(conn) <= max_bytes:
                        break
                    with conn.transaction():
                        self._delete_session(conn.cursor(), session)
                    deleted += 1
            for table in TABLES:
                conn.execute(f"VACUUM {table}")  # autocommit: outside any transaction
        return st.PruneReport(deleted, before, self.size_bytes())

    @staticmethod
    def _live_bytes(conn: Any) -> int:
        """Bytes of the rows the sessions still hold (what ``max_bytes`` bounds)."""
        row = conn.execute(
            "SELECT COALESCE((SELECT SUM(pg_column_size(e.*)) FROM callgate_entries e), 0) + "
            "COALESCE((SELECT SUM(pg_column_size(j.*)) FROM callgate_jobs j), 0) + "
            "COALESCE((SELECT SUM(pg_column_size(l.*)) FROM callgate_ledger l), 0) + "
            "COALESCE((SELECT SUM(pg_column_size(x.*)) FROM callgate_state x), 0) + "
            "COALESCE((SELECT SUM(pg_column_size(f.*)) FROM callgate_facts f), 0)"
        ).fetchone()
        return int(row[0])


__all__ = ["BACKEND", "SCHEMA", "SCHEMA_VERSION", "PostgresStore"]
