package cli

// End-to-end tests of `azero implement` (spec #87, TS-01 to TS-06): the
// real azero process (this test binary, see main_test.go), real git, real
// pytest and go test on small fixture projects, the offline scripted coder,
// and a real pseudo-terminal for the human's answers.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

const calcDesign = "# 7 - Feature: multiply\n\n## 2.1 Files Changed\n\n| File | Change Type | Description |\n|---|---|---|\n" +
	"| `test_calc.py` | Add | tests for multiply |\n| `calc.py` | Modify | add multiply |\n"

const calcPy = "\"\"\"A small calculator.\"\"\"\n\n\ndef add(a, b):\n    return a + b\n"

// Replies of the scripted coder.
const (
	goodTests = "```python\nimport calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n\n\ndef test_multiply():\n    assert calc.multiply(3, 4) == 12\n```\n"
	passTests = "```python\nimport calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n```\n"
	syntaxBad = "```python\ndef test_multiply(:\n    pass\n```\n"
	goodCalc  = "```python\n\"\"\"A small calculator.\"\"\"\n\n\ndef add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    return a * b\n```\n"
	badCalc   = "```python\n\"\"\"A small calculator.\"\"\"\n\n\ndef add(a, b):\n    return a + b\n\n\ndef multiply(a, b):\n    return a + b\n```\n"
)

// coderScript writes a mock:scripted script with the coder's replies in
// turn order.
func coderScript(t *testing.T, replies ...string) string {
	return testenv.WriteScript(t, testenv.ModelScript("coder", replies...))
}

// calcRepo is the user's checkout: the calculator committed, plus an
// uncommitted change and an untracked file that must survive everything.
func calcRepo(t *testing.T) string {
	t.Helper()
	dir := testenv.NewRepo(t, map[string]string{"calc.py": calcPy, "README.md": "# calc\n", "docs/design.md": calcDesign})
	testenv.WriteFiles(t, dir, map[string]string{"README.md": "# calc\n\nwork in progress\n", "notes.txt": "my notes\n"})
	return dir
}

func implementEnv(state, script string) []string {
	return []string{"AZERO_MOCK_LLM=1", "AZERO_MOCK_SCRIPT=" + script, "AZERO_STATE_DIR=" + state}
}

// runOf returns the only run in the state dir and its history.
func runOf(t *testing.T, state string) (store.Run, []store.Step) {
	t.Helper()
	st := openStore(t, state)
	defer st.Close()
	runs, err := st.ListRuns(t.Context(), store.Filter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs = %d, %v", len(runs), err)
	}
	hist, err := st.History(t.Context(), runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return runs[0], hist
}

func TestImplementOnATerminal(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	tests := []struct {
		name   string
		answer string
		code   int
		merged bool
	}{
		{"human approve merges (TS-01)", "approve", 0, true},
		{"TS-06 human abort cleans up", "abort", 4, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo, state := calcRepo(t), t.TempDir()
			before, beforeRefs := testenv.Checkout(t, repo), testenv.Refs(t, repo)
			env := azeroEnv(state, implementEnv(state, coderScript(t, goodTests, goodCalc))...)
			screen := startOnTerminal(t, repo, env, os.Args[0], "implement", "--lld", "docs/design.md")
			screen.WaitFor(t, "Nothing is committed unless you type approve", 1)
			// The whole change is on screen before the first approve: the
			// modified file and the new, untracked test file.
			for _, line := range []string{"+def multiply(a, b):", "+    assert calc.multiply(3, 4) == 12"} {
				if !strings.Contains(screen.Text(), line) {
					t.Errorf("the diff review did not show %q", line)
				}
			}
			if testenv.Checkout(t, repo) != before {
				t.Error("the checkout changed before the human approved")
			}
			screen.Type(t, "approve")
			screen.WaitFor(t, "to merge it", 1)
			screen.Type(t, "yes") // not the word: asked again
			screen.WaitFor(t, "in full", 1)
			screen.Type(t, tt.answer)
			if code := screen.exit(t); code != tt.code {
				t.Fatalf("exit %d, want %d\n%s", code, tt.code, screen.Text())
			}
			r, _ := runOf(t, state)
			if _, err := os.Stat(filepath.Join(state, "worktrees", r.ID)); !os.IsNotExist(err) {
				t.Error("worktree left behind")
			}
			if got := testenv.Refs(t, repo); got != beforeRefs {
				t.Errorf("branches or worktrees left behind:\n%s", got)
			}
			calc, _ := os.ReadFile(filepath.Join(repo, "calc.py"))
			readme, _ := os.ReadFile(filepath.Join(repo, "README.md"))
			notes, _ := os.ReadFile(filepath.Join(repo, "notes.txt"))
			if string(readme) != "# calc\n\nwork in progress\n" || string(notes) != "my notes\n" {
				t.Errorf("uncommitted work lost: README %q notes %q", readme, notes)
			}
			if !tt.merged {
				if after := testenv.Checkout(t, repo); after != before {
					t.Errorf("abort changed the checkout:\n%s\n---\n%s", before, after)
				}
				if r.Status != store.StatusAborted {
					t.Errorf("status %s", r.Status)
				}
				return
			}
			if !strings.Contains(string(calc), "def multiply") {
				t.Errorf("not merged: calc.py = %q", calc)
			}
			subject := strings.TrimSpace(testenv.Git(t, repo, "log", "-1", "--format=%s"))
			log := testenv.Git(t, repo, "log", "-1", "--format=%B")
			// The subject is the title alone; the issue is referred to once;
			// no path of this machine is in the history.
			if subject != "multiply" || strings.Count(log, "#7") != 1 || !strings.Contains(log, "Refs #7") ||
				!strings.Contains(log, "Azero-Run: "+r.ID) || strings.Contains(log, repo) || strings.Contains(log, "/tmp/") {
				t.Errorf("commit message:\n%s", log)
			}
			if st := testenv.Git(t, repo, "status", "--porcelain"); st != " M README.md\n?? notes.txt\n" {
				t.Errorf("status after merge:\n%s", st)
			}
			recs, _ := audit.Read(filepath.Join(state, audit.FileName))
			var decisions []string
			for _, rec := range recs {
				if rec["event"] == "gate_decision" {
					decisions = append(decisions, fmt.Sprint(rec["gate"], ":", rec["decision"]))
				}
			}
			if strings.Join(decisions, ",") != "diff_review:APPROVED,human_review:APPROVED" {
				t.Errorf("gate decisions in the audit log: %v", decisions)
			}
		})
	}
}

func TestImplementRefusesBadInputBeforeAnyModelCall(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	os.Mkdir(repo, 0o755)
	testenv.Git(t, repo, "init", "-q", "-b", "main")
	testenv.WriteFiles(t, repo, map[string]string{"calc.py": calcPy, "docs/design.md": calcDesign, ".env": "KEY=1\n",
		"certs/x.pem": "pem\n", "big.txt": strings.Repeat("x", 200<<10),
		"docs/bad.md":     "# 8 - T\n## Files Changed\n| File | Change Type |\n|--|--|\n| `missing.py` | Modify |\n| `test_m.py` | Add |\n",
		"docs/notests.md": "# 9 - T\n## Files Changed\n| File | Change Type |\n|--|--|\n| `calc.py` | Modify |\n"})
	testenv.Git(t, repo, "add", "calc.py", "docs")
	testenv.Git(t, repo, "commit", "-qm", "init")
	os.WriteFile(filepath.Join(base, "outside.py"), []byte("x\n"), 0o644)
	os.Symlink(filepath.Join(base, "outside.py"), filepath.Join(repo, "link.py"))
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"TS-03 secret file", []string{"--context", ".env"}, []string{".env", "no-secret-files"}},
		{"pem file", []string{"--context", "certs/x.pem"}, []string{"x.pem", "no-secret-files"}},
		{"TS-05 path traversal", []string{"--context", "../outside.py"}, []string{"../outside.py", "no-parent-traversal"}},
		{"symlink escape", []string{"--context", "link.py"}, []string{"link.py", "inside-repository"}},
		{"file over 100 KB", []string{"--context", "big.txt"}, []string{"big.txt", "max-100KB-per-file"}},
		{"design names a missing file", []string{"--lld", "docs/bad.md"}, []string{"missing.py", "must-exist"}},
		{"design without tests", []string{"--lld", "docs/notests.md"}, []string{"at least one test file"}},
		{"design document missing", []string{"--lld", "docs/nope.md"}, []string{"nope.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			state := t.TempDir()
			args := append([]string{"implement", "--runner", "pytest"}, tt.args...)
			if !strings.Contains(strings.Join(tt.args, " "), "--lld") {
				args = append(args, "--lld", "docs/design.md")
			}
			res := runAzeroIn(t, state, repo, []string{"AZERO_MOCK_LLM=1"}, args...)
			if res.code != 1 {
				t.Fatalf("exit %d, want 1\n%s", res.code, res.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.stderr, w) {
					t.Errorf("error does not mention %q:\n%s", w, res.stderr)
				}
			}
			if strings.Contains(res.stderr, "Data policy") {
				t.Error("refused input got as far as the data policy")
			}
			if _, err := os.Stat(filepath.Join(state, store.FileName)); err == nil {
				st, _ := store.Open(t.Context(), filepath.Join(state, store.FileName), store.Options{})
				defer st.Close()
				if runs, _ := st.ListRuns(t.Context(), store.Filter{}); len(runs) != 0 {
					t.Errorf("a run was created for refused input")
				}
			}
		})
	}
	if out := testenv.Git(t, repo, "branch", "--list", "azero/*"); out != "" {
		t.Errorf("branches created: %s", out)
	}
}
