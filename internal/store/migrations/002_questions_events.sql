-- The question a run is waiting for (JSON of human.Question), '' when none.
ALTER TABLE runs ADD COLUMN question TEXT NOT NULL DEFAULT '';

-- What happened in a run, in order, for anyone who watches it later.
CREATE TABLE events (
    id     INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs (id),
    node   TEXT NOT NULL DEFAULT '',
    kind   TEXT NOT NULL,
    tone   TEXT NOT NULL DEFAULT '',
    text   TEXT NOT NULL DEFAULT '',
    data   TEXT NOT NULL DEFAULT '',
    at     INTEGER NOT NULL
);
CREATE INDEX events_by_run ON events (run_id, id);
