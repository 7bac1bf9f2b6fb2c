CREATE TABLE runs (
    id          TEXT PRIMARY KEY,
    workflow    TEXT NOT NULL,
    run_key     TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL,
    node        TEXT NOT NULL,
    state       BLOB NOT NULL,
    steps       INTEGER NOT NULL DEFAULT 0,
    visits      TEXT NOT NULL DEFAULT '{}',
    error       TEXT NOT NULL DEFAULT '',
    meta        TEXT NOT NULL DEFAULT '{}',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    lease_token TEXT NOT NULL DEFAULT '',
    lease_pid   INTEGER NOT NULL DEFAULT 0,
    lease_host  TEXT NOT NULL DEFAULT '',
    lease_until INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_key ON runs (workflow, run_key);
CREATE INDEX runs_by_created ON runs (created_at);

CREATE TABLE history (
    id          INTEGER PRIMARY KEY,
    run_id      TEXT NOT NULL REFERENCES runs (id),
    node        TEXT NOT NULL,
    next        TEXT NOT NULL DEFAULT '',
    outcome     TEXT NOT NULL,
    error       TEXT NOT NULL DEFAULT '',
    started_at  INTEGER NOT NULL,
    finished_at INTEGER NOT NULL
);
CREATE INDEX history_by_run ON history (run_id, id);

CREATE TABLE calls (
    id            INTEGER PRIMARY KEY,
    run_id        TEXT NOT NULL REFERENCES runs (id),
    node          TEXT NOT NULL DEFAULT '',
    role          TEXT NOT NULL DEFAULT '',
    purpose       TEXT NOT NULL DEFAULT '',
    model         TEXT NOT NULL DEFAULT '',
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd      REAL NOT NULL DEFAULT 0,
    latency_ms    INTEGER NOT NULL DEFAULT 0,
    stop          TEXT NOT NULL DEFAULT '',
    error         TEXT NOT NULL DEFAULT '',
    at            INTEGER NOT NULL
);
CREATE INDEX calls_by_run ON calls (run_id, role);
