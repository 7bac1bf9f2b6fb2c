-- An answer given through another channel than the driving process's (the
-- web page), for the question the run asks or waits at (JSON of a
-- human.Answer naming the question's id); '' when none.
ALTER TABLE runs ADD COLUMN answer TEXT NOT NULL DEFAULT '';
