-- The seal covers the state and the question through their digests
-- (seal.go, kind "azero run v2"), so that a list verifies a row's seal
-- without reading either. The Go step of this migration adds the columns
-- state_digest and question_digest (sha256 in hex; a schema rolled back by
-- hand may have kept them) and seals again every row whose v1 seal
-- verifies; a row whose seal did not verify stays refused.
SELECT 1;
