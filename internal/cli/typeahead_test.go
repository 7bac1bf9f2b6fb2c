package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/testenv"
)

// startTypedAhead types lines into a new terminal, waits until the
// terminal has taken them in (their echo), and only then starts azero on
// it: the lines are pending input typed before any diff was shown.
func startTypedAhead(t *testing.T, state, dir string, ahead []string, args ...string) *session {
	t.Helper()
	s := newSession(t)
	for _, line := range ahead {
		s.Type(t, line)
	}
	s.WaitFor(t, ahead[len(ahead)-1]+"\r\n", 1)
	return s.run(t, dir, azeroEnv(state, "NO_COLOR=1"), os.Args[0], args...)
}

// TestTypedAheadApprovalNeverApproves: the real azero on a real terminal.
// An "approve" typed before the diff was on the screen (here: before azero
// even started) is discarded when the question is asked; only what the
// human types after seeing it answers. Here that is a refusal, so a
// typed-ahead word that got through would show as an approval.
func TestTypedAheadApprovalNeverApproves(t *testing.T) {
	t.Parallel()

	t.Run("azero gate", func(t *testing.T) {
		t.Parallel()
		state := t.TempDir()
		repo := testenv.NewRepo(t, map[string]string{"big.py": numberedLines("line", 200)})
		testenv.WriteFiles(t, repo, map[string]string{"big.py": "line 1\n"})
		s := startTypedAhead(t, state, repo, []string{"approve", "approve"}, "gate")
		s.WaitFor(t, "Type 'approve' to proceed", 1)
		s.Type(t, "reject")
		if code := s.exit(t); code != ExitRejected {
			t.Fatalf("exit %d, want %d (rejected)\n%s", code, ExitRejected, s.Text())
		}
		if recs := gateDecisions(t, state); len(recs) != 1 || recs[0]["decision"] != "REJECTED" {
			t.Errorf("decisions = %v, want one REJECTED", recs)
		}
	})

	t.Run("a workflow's diff review", func(t *testing.T) {
		t.Parallel()
		state, base := t.TempDir(), t.TempDir()
		id, _ := waitingDemo(t, state, base)
		proj := filepath.Join(base, "textkit")
		head := testenv.Git(t, proj, "rev-parse", "HEAD")
		s := startTypedAhead(t, state, proj, []string{"approve"}, "resume", id)
		s.WaitFor(t, "to merge it", 1)
		s.WaitFor(t, "'abort'", 1)
		s.Type(t, "abort")
		if code := s.exit(t); code != ExitRejected {
			t.Fatalf("exit %d, want %d (aborted)\n%s", code, ExitRejected, s.Text())
		}
		if got := testenv.Git(t, proj, "rev-parse", "HEAD"); got != head || strings.Contains(s.Text(), "Merged ") {
			t.Errorf("merged on a typed-ahead approval:\n%s", s.Text())
		}
	})
}
