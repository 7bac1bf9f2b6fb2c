-- The watcher of azero serve asks, at every poll, which runs changed since
-- its last look (Changes): without this index each look read every run.
CREATE INDEX IF NOT EXISTS runs_by_updated ON runs (updated_at);
