-- The seal of a run's row (seal.go): an HMAC, keyed by the state
-- directory's answer key, over every column that decides what the run does
-- next. NULL: never sealed, which after this migration only a row written
-- by something other than azero can be: the rows there are now, made by an
-- older azero, are sealed by Go code in this migration's transaction.
ALTER TABLE runs ADD COLUMN seal TEXT;

-- The forged rows recorded in the audit log, so that each is recorded
-- once: digest is the seal the forged row's content would have, which only
-- azero can make, so nothing else can mark a forgery as recorded already.
CREATE TABLE IF NOT EXISTS forgeries (
    run_id TEXT NOT NULL,
    digest TEXT NOT NULL,
    at     INTEGER NOT NULL,
    PRIMARY KEY (run_id, digest)
);
