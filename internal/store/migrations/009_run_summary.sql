-- A list shows of a run only what its sealed summary holds (seal kind
-- "azero run v3", seal.go): the question's gate, title, prompt and
-- flagged files, and the issue the state names, in the small column
-- summary, so that a list reads neither the state nor the question.
-- The table is made again with its large columns last: SQLite stores a
-- row's columns in order, and a column after a large one can only be
-- read by walking the large one's overflow pages, which is what made a
-- list slow. The Go step of this migration fills summary and seals again
-- every row whose v2 seal verifies (its state and question matching their
-- digests); a row whose seal did not verify stays refused. The migration
-- runs with foreign keys off (history, calls and events name runs), as
-- SQLite asks for a table made again.
CREATE TABLE runs_v9 (
    id              TEXT PRIMARY KEY,
    workflow        TEXT NOT NULL,
    run_key         TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL,
    node            TEXT NOT NULL,
    steps           INTEGER NOT NULL DEFAULT 0,
    visits          TEXT NOT NULL DEFAULT '{}',
    error           TEXT NOT NULL DEFAULT '',
    meta            TEXT NOT NULL DEFAULT '{}',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    lease_token     TEXT NOT NULL DEFAULT '',
    lease_pid       INTEGER NOT NULL DEFAULT 0,
    lease_host      TEXT NOT NULL DEFAULT '',
    lease_until     INTEGER NOT NULL DEFAULT 0,
    seal            TEXT,
    state_digest    TEXT NOT NULL DEFAULT '',
    question_digest TEXT NOT NULL DEFAULT '',
    summary         TEXT NOT NULL DEFAULT '',
    answer          TEXT NOT NULL DEFAULT '',
    question        TEXT NOT NULL DEFAULT '',
    state           BLOB NOT NULL
);
INSERT INTO runs_v9 (id, workflow, run_key, status, node, steps, visits, error, meta, created_at, updated_at,
        lease_token, lease_pid, lease_host, lease_until, seal, state_digest, question_digest, answer, question, state)
    SELECT id, workflow, run_key, status, node, steps, visits, error, meta, created_at, updated_at,
        lease_token, lease_pid, lease_host, lease_until, seal, state_digest, question_digest, answer, question, state
    FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v9 RENAME TO runs;
CREATE INDEX runs_by_key ON runs (workflow, run_key);
CREATE INDEX runs_by_created ON runs (created_at);
CREATE INDEX runs_by_status ON runs (status, created_at);
CREATE INDEX runs_by_updated ON runs (updated_at);
