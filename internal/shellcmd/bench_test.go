package shellcmd_test

import (
	"testing"

	"github.com/azero-dev/azero/internal/shellcmd"
)

// claudeCommit is the shape of the commit commands Claude Code runs.
const claudeCommit = "git add src/state.py big.py && git commit -m \"$(cat <<'EOF'\nShrink the state module\n\nIt held values nobody reads.\n\nCo-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\""

func BenchmarkCommits(b *testing.B) {
	sc := shellcmd.CommitScanner{Cwd: "/work/repo", Home: "/home/u"}
	for b.Loop() {
		if len(sc.Commits(claudeCommit)) != 1 {
			b.Fatal("commit not found")
		}
	}
}
