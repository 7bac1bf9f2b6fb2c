-- Which attempt of a node made a call, and which attempt completed a node:
-- a call made by an attempt that was killed before its node completed is
-- not a turn of the conversation (the node runs again and asks again).
ALTER TABLE calls ADD COLUMN attempt TEXT NOT NULL DEFAULT '';
ALTER TABLE history ADD COLUMN attempt TEXT NOT NULL DEFAULT '';
