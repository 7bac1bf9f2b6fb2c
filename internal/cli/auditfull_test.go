package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

// fullDisk points the state directory's audit log at /dev/full, where
// every write fails with "no space left on device", as on a full disk.
func fullDisk(t *testing.T, state string) {
	t.Helper()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("needs /dev/full")
	}
	log := filepath.Join(state, audit.FileName)
	if err := os.Remove(log); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/full", log); err != nil {
		t.Fatal(err)
	}
}

// TestAGateDecisionTheAuditLogCannotTakeIsNotActedOn: on a full disk no
// gate passes, whatever the human typed or however little there is to
// review: the diff gate at a terminal, the pre-commit hook with nothing
// flagged, and a workflow's gate answered at a terminal. The error says
// why; once the disk has room, the same question is asked again.
func TestAGateDecisionTheAuditLogCannotTakeIsNotActedOn(t *testing.T) {
	t.Parallel()
	const why = "no space left on device"

	t.Run("azero gate, approved at a terminal", func(t *testing.T) {
		t.Parallel()
		state := t.TempDir()
		repo := testenv.NewRepo(t, map[string]string{"big.py": numberedLines("line", 200)})
		testenv.WriteFiles(t, repo, map[string]string{"big.py": "line 1\n"})
		fullDisk(t, state)
		screen := startAzero(t, state, repo, []string{"NO_COLOR=1"}, "gate")
		screen.WaitFor(t, "Type 'approve' to proceed", 1)
		screen.Type(t, "approve")
		if code := screen.exit(t); code != ExitError {
			t.Fatalf("exit %d, want 1\n%s", code, screen.Text())
		}
		text := screen.Text()
		if !strings.Contains(text, "could not be recorded") || !strings.Contains(text, why) || strings.Contains(text, "Diff review: APPROVED") {
			t.Errorf("the gate passed or did not say why:\n%s", text)
		}
	})

	t.Run("the pre-commit hook, nothing flagged", func(t *testing.T) {
		t.Parallel()
		state := t.TempDir()
		repo := testenv.NewRepo(t, map[string]string{"a.txt": "a\n"})
		if res := runAzeroIn(t, state, repo, nil, "gate", "--install-hook"); res.code != 0 {
			t.Fatalf("install: exit %d\n%s", res.code, res.stderr)
		}
		head := testenv.Git(t, repo, "rev-parse", "HEAD")
		testenv.WriteFiles(t, repo, map[string]string{"b.txt": "b\n"})
		testenv.Git(t, repo, "add", "b.txt")
		fullDisk(t, state)
		commit := withoutTerminal(exec.Command("git", "commit", "-m", "b"))
		commit.Dir, commit.Env = repo, azeroEnv(state)
		out, err := commit.CombinedOutput()
		if err == nil || !strings.Contains(string(out), why) {
			t.Fatalf("the commit went through an unrecorded review: %v\n%s", err, out)
		}
		if got := testenv.Git(t, repo, "rev-parse", "HEAD"); got != head {
			t.Error("a commit was made")
		}
	})

	t.Run("a workflow's gate, approved at a terminal", func(t *testing.T) {
		t.Parallel()
		state, dir := t.TempDir(), t.TempDir()
		if res := runAzeroIn(t, state, dir, nil, "selftest", "--dir", dir, "--steps", "1", "--delay", "1ms"); res.code != ExitNeedsHuman {
			t.Fatalf("selftest: exit %d\n%s", res.code, res.stderr)
		}
		r := onlyRun(t, state)
		fullDisk(t, state)
		screen := startAzero(t, state, dir, []string{"NO_COLOR=1"}, "resume", r.ID)
		screen.WaitFor(t, "Type 'approve' to proceed", 1)
		screen.Type(t, "approve")
		if code := screen.exit(t); code != ExitError {
			t.Fatalf("exit %d, want 1\n%s", code, screen.Text())
		}
		if text := screen.Text(); !strings.Contains(text, "could not be recorded") || !strings.Contains(text, why) {
			t.Errorf("the terminal does not say why:\n%s", text)
		}
		got := onlyRun(t, state)
		if got.Node != r.Node || got.Status == store.StatusDone || slicesContain(effects(t, dir), "finish") {
			t.Fatalf("the unrecorded approval was acted on: run %s at %s, effects %v", got.Status, got.Node, effects(t, dir))
		}
		// Room again: the question is asked again and the approval taken.
		if err := os.Remove(filepath.Join(state, audit.FileName)); err != nil {
			t.Fatal(err)
		}
		screen = startAzero(t, state, dir, []string{"NO_COLOR=1"}, "resume", r.ID)
		screen.WaitFor(t, "Type 'approve' to proceed", 1)
		screen.Type(t, "approve")
		if code := screen.exit(t); code != ExitOK {
			t.Fatalf("exit %d after the disk had room\n%s", code, screen.Text())
		}
		if got := onlyRun(t, state); got.Status != store.StatusDone {
			t.Errorf("run %s, want done", got.Status)
		}
	})
}

func slicesContain(list []string, s string) bool {
	for _, x := range list {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}
