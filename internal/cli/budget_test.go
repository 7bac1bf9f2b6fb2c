package cli

import (
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

// TestABudgetNeedsThePriceOfTheModel: a budget, given with --budget or in
// the config, with a model whose price azero does not know would count
// every call as free and never stop anything. Such a run does not start:
// the refusal names the model and the setting that prices it, before any
// run, worktree or model call exists. A budget set at resume is held to
// the same rule.
func TestABudgetNeedsThePriceOfTheModel(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "pytest")
	srv := newCoderServer(t, goodTests, goodCalc)
	env := []string{"OPENAI_BASE_URL=" + srv.URL + "/v1", "OPENAI_API_KEY=test-key-0123456789"}
	const local = "openai:qwen2.5-coder-local"
	refused := func(t *testing.T, res runResult) {
		t.Helper()
		for _, want := range []string{local, `[prices."` + local + `"]`, "input", "output"} {
			if !strings.Contains(res.stderr, want) {
				t.Errorf("the refusal does not say %q:\n%s", want, res.stderr)
			}
		}
		if res.code != ExitUsage {
			t.Errorf("exit %d, want %d", res.code, ExitUsage)
		}
	}
	noRun := func(t *testing.T, state, repo string) {
		t.Helper()
		st := openStore(t, state)
		defer st.Close()
		if runs, _ := st.ListRuns(t.Context(), store.Filter{}); len(runs) != 0 {
			t.Errorf("%d runs were created", len(runs))
		}
		if got := testenv.Git(t, repo, "branch", "--list", "azero/*"); got != "" {
			t.Errorf("a branch was made: %s", got)
		}
	}

	t.Run("--budget", func(t *testing.T) {
		t.Parallel()
		repo, state := calcRepo(t), t.TempDir()
		refused(t, runAzeroIn(t, state, repo, env, "implement", "--lld", "docs/design.md", "--coder", local, "--budget", "2"))
		noRun(t, state, repo)
	})
	t.Run("a configured budget", func(t *testing.T) {
		t.Parallel()
		repo, state := calcRepo(t), t.TempDir()
		testenv.WriteFiles(t, repo, map[string]string{".azero/config.toml": "[implement]\nbudget = 2.0\n"})
		refused(t, runAzeroIn(t, state, repo, env, "implement", "--lld", "docs/design.md", "--coder", local))
		noRun(t, state, repo)
		// Priced (a local model is free), the same run starts.
		testenv.WriteFiles(t, repo, map[string]string{".azero/config.toml": "[implement]\nbudget = 2.0\n\n[prices.\"" + local + "\"]\ninput = 0\noutput = 0\n"})
		if res := runAzeroIn(t, state, repo, env, "implement", "--lld", "docs/design.md", "--coder", local); res.code != ExitNeedsHuman {
			t.Fatalf("a priced model: exit %d, want 3 at the review\n%s", res.code, res.stderr)
		}
	})
	t.Run("resume --budget", func(t *testing.T) {
		t.Parallel()
		repo, state := calcRepo(t), t.TempDir()
		// No budget: an unpriced model is fine.
		if res := runAzeroIn(t, state, repo, env, "implement", "--lld", "docs/design.md", "--coder", local); res.code != ExitNeedsHuman {
			t.Fatalf("implement: exit %d, want 3\n%s", res.code, res.stderr)
		}
		r := onlyRun(t, state)
		refused(t, runAzeroIn(t, state, repo, env, "resume", r.ID, "--budget", "5"))
		if got := onlyRun(t, state); string(got.State) != string(r.State) || got.Status != r.Status {
			t.Errorf("the refused budget changed the run: %s %s", got.Status, got.State)
		}
	})
}

// TestResumeBudgetOnlyForWorkflowsWithABudget: `resume --budget` on a run
// of a workflow that has no budget (the governance workflow, selftest) is
// a usage error that changes nothing, not a budget silently ignored.
func TestResumeBudgetOnlyForWorkflowsWithABudget(t *testing.T) {
	t.Parallel()
	t.Run("issue", func(t *testing.T) {
		t.Parallel()
		w := newIssWorld(t, issScript([]string{issDraft1}, []string{issOK}))
		brief := w.brief("budget.md", "add a budget\n")
		res := w.runPiped(nil, "issue", "--brief", brief, "--json")
		if res.code != ExitNeedsHuman {
			t.Fatalf("issue: exit %d: %s", res.code, res.stderr)
		}
		id := w.outcome(res.stdout).RunID
		for _, budget := range []string{"1", "0"} {
			res = w.runPiped(nil, "resume", id, "--budget", budget)
			if res.code != ExitUsage || !strings.Contains(res.stderr, "runs of the issue workflow have no budget") {
				t.Errorf("resume --budget %s: exit %d, want 2 saying the workflow has no budget\n%s", budget, res.code, res.stderr)
			}
		}
	})
	t.Run("selftest", func(t *testing.T) {
		t.Parallel()
		state, dir := t.TempDir(), t.TempDir()
		if res := runAzeroIn(t, state, dir, nil, "selftest", "--dir", dir, "--steps", "1", "--delay", "1ms"); res.code != ExitNeedsHuman {
			t.Fatalf("selftest: exit %d\n%s", res.code, res.stderr)
		}
		r := onlyRun(t, state)
		res := runAzeroIn(t, state, dir, nil, "resume", r.ID, "--budget", "3", "--json")
		if res.code != ExitUsage || !strings.Contains(res.stderr, "runs of the selftest workflow have no budget") {
			t.Fatalf("resume --budget: exit %d, want 2\n%s", res.code, res.stderr)
		}
		jsonFailure(t, res)
		if got := onlyRun(t, state); got.Status != r.Status || got.Node != r.Node || string(got.State) != string(r.State) {
			t.Errorf("the run changed: %s at %s", got.Status, got.Node)
		}
	})
}
