package governance

import "testing"

// The messages are git's own (refs/files-backend.c, lockfile.c).
func TestContended(t *testing.T) {
	t.Parallel()
	for stderr, want := range map[string]bool{
		"fatal: Unable to create '/r/.git/index.lock': File exists.\n\nAnother git process seems to be running":   true,
		"fatal: cannot lock ref 'HEAD': is at 4b825dc but expected 9d1f2e3\n":                                     true,
		"error: cannot lock ref 'refs/heads/main': Unable to create '/r/.git/refs/heads/main.lock': File exists.": true,
		"fatal: pathspec 'docs/audit/x.lock' did not match any files\n":                                           false,
		"error: pathspec 'a' did not match any file(s) known to git\n":                                            false,
		"": false,
	} {
		if got := contended(stderr); got != want {
			t.Errorf("contended(%q) = %v, want %v", stderr, got, want)
		}
	}
}
