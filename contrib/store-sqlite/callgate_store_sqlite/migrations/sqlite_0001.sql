-- version 1: sessions, their timeline (messages, calls, notices), plugin state, the
-- observation ledger, background jobs, and the processes (runs) that wrote them.

CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    token TEXT NOT NULL UNIQUE,
    pid INTEGER NOT NULL,
    hostname TEXT NOT NULL,
    proc_start TEXT,
    started REAL NOT NULL,
    ended REAL
);
CREATE INDEX runs_live ON runs (ended) WHERE ended IS NULL;

CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    name TEXT UNIQUE,
    workspace TEXT NOT NULL,
    parent TEXT,
    directory TEXT,
    started REAL NOT NULL,
    ended REAL,
    status TEXT NOT NULL DEFAULT 'open',
    surface TEXT,
    os TEXT,
    platform TEXT,
    record TEXT NOT NULL DEFAULT 'all',
    last_seq INTEGER NOT NULL DEFAULT 0,
    last_batch INTEGER NOT NULL DEFAULT 0,
    calls INTEGER NOT NULL DEFAULT 0,
    preview TEXT,
    preview_from TEXT,
    run INTEGER
);
CREATE INDEX sessions_workspace ON sessions (workspace, started);
CREATE INDEX sessions_started ON sessions (started);
CREATE INDEX sessions_directory ON sessions (directory) WHERE directory IS NOT NULL;

-- One row per timeline entry: kind 'message' (role, text), 'call' (the rest) or 'notice'.
CREATE TABLE entries (
    id INTEGER PRIMARY KEY,
    session TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    role TEXT,
    at REAL NOT NULL,
    run INTEGER,
    batch INTEGER,
    position INTEGER,
    origin TEXT,
    call_id TEXT,
    name TEXT,
    tool TEXT,
    arguments TEXT,
    ended REAL,
    outcome TEXT,
    is_error INTEGER,
    signature TEXT,
    permission TEXT,
    decided_by TEXT,
    text TEXT,
    shown TEXT,
    result_seq INTEGER,
    result_ref TEXT,
    result_bytes INTEGER,
    result_sha256 TEXT,
    UNIQUE (session, seq)
);
CREATE INDEX entries_call ON entries (session, call_id) WHERE call_id IS NOT NULL;
CREATE INDEX entries_running ON entries (run) WHERE outcome = 'running';

CREATE TABLE state (
    session TEXT NOT NULL,
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (session, namespace, key)
);

CREATE TABLE ledger (
    session TEXT NOT NULL,
    path TEXT NOT NULL,
    entry TEXT NOT NULL,
    PRIMARY KEY (session, path)
);

CREATE TABLE jobs (
    session TEXT NOT NULL,
    job_id TEXT NOT NULL,
    run INTEGER,
    command TEXT NOT NULL,
    label TEXT,
    status TEXT NOT NULL,
    reason TEXT,
    exit_code INTEGER,
    started REAL NOT NULL,
    ended REAL,
    cursor INTEGER NOT NULL DEFAULT 0,
    log BLOB,
    log_bytes INTEGER NOT NULL DEFAULT 0,
    log_dropped INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session, job_id)
);
