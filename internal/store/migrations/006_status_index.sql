-- Lists select runs by status (the runs waiting for a human, on every page
-- of azero serve) newest first: without this index each such list read
-- every run.
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status, created_at);
