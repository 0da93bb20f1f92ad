-- version 4: the execution facts of the writer and destructive calls that ran (issue 36.11):
-- which paths a call's gate leased, from when to when, and how it ended. A call the gate
-- refused never ran and has none. Stores of earlier versions keep what they held and
-- gain an empty table (their calls' facts lived only in their host's memory).

CREATE TABLE facts (
    session TEXT NOT NULL,
    call_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    profile TEXT,
    depth INTEGER NOT NULL DEFAULT 0,
    paths TEXT NOT NULL,
    destructive INTEGER NOT NULL DEFAULT 0,
    started REAL NOT NULL,
    ended REAL NOT NULL,
    outcome TEXT NOT NULL
);
CREATE INDEX facts_session ON facts (session, started);
