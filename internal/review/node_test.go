package review_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/gitx"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/prompt"
	"github.com/azero-dev/azero/internal/review"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

// commitState is the state of a small workflow that changes a repository
// and commits.
type commitState struct {
	Repo      string         `json:"repo"`
	Review    review.Outcome `json:"review"`
	Committed string         `json:"committed"`
	Cleaned   bool           `json:"cleaned"`
}

// commitGraph is implement -> diff_review (gate) -> commit -> END, with
// the gate's reject path going to cleanup -> END.
func commitGraph(g *review.Gate) *flow.Graph[commitState] {
	return flow.New[commitState]("commit-demo", "implement").
		Node("implement", func(ctx context.Context, s *commitState) (string, error) {
			_, after := pr165()
			// Safe to repeat, as nodes must be.
			return "diff_review", os.WriteFile(filepath.Join(s.Repo, "state.py"), []byte(after), 0o644)
		}, "diff_review").
		Gate("diff_review", review.GateNode(g,
			func(s *commitState) review.GateOptions { return review.GateOptions{Repo: s.Repo} },
			func(s *commitState, o review.Outcome) { s.Review = o },
			review.Routes{Approved: "commit", Rejected: "cleanup"}), "commit", "cleanup").
		Node("commit", func(ctx context.Context, s *commitState) (string, error) {
			r := gitx.Repo{Dir: s.Repo}
			if _, err := r.Run(ctx, "add", "-A"); err != nil {
				return "", err
			}
			if _, err := r.Run(ctx, "commit", "-q", "-m", "replace state"); err != nil {
				return "", err
			}
			out, err := r.Run(ctx, "rev-parse", "HEAD")
			s.Committed = strings.TrimSpace(string(out))
			return flow.End, err
		}, flow.End).
		Node("cleanup", func(ctx context.Context, s *commitState) (string, error) {
			s.Cleaned = true
			return flow.End, nil
		}, flow.End).
		Finish(func(s *commitState) error {
			if s.Cleaned {
				return flow.ErrAborted
			}
			return nil
		})
}

func TestCommitIsUnreachableWithoutTheGate(t *testing.T) {
	t.Parallel()
	g := commitGraph(&review.Gate{})
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if !g.IsGate("diff_review") {
		t.Fatal("diff_review is not a gate node")
	}
	if path := g.PathAvoiding("commit", "diff_review"); path != nil {
		t.Fatalf("commit is reachable without the gate: %v", path)
	}
	if path := g.PathAvoiding("commit"); len(path) != 3 {
		t.Fatalf("commit should be reachable through the gate: %v", path)
	}
	// The check can fail: a graph with a shortcut around the gate is caught.
	leaky := flow.New[commitState]("leaky", "implement").
		Node("implement", func(context.Context, *commitState) (string, error) { return "commit", nil }, "diff_review", "commit").
		Gate("diff_review", func(context.Context, *commitState) (string, error) { return "commit", nil }, "commit").
		Node("commit", func(context.Context, *commitState) (string, error) { return flow.End, nil }, flow.End)
	if path := leaky.PathAvoiding("commit", "diff_review"); path == nil {
		t.Fatal("a shortcut around the gate went unnoticed")
	}
}

func newEngine(t *testing.T) *flow.Engine {
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "azero.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &flow.Engine{Store: st}
}

func commits(t *testing.T, repo string) int {
	return strings.Count(testenv.Git(t, repo, "log", "--format=%H"), "\n")
}

func TestGateNodeWaitsWithoutTerminalThenCommitsOnApprove(t *testing.T) {
	t.Parallel()
	before, _ := pr165()
	repo := testenv.NewRepo(t, map[string]string{"state.py": before})
	e := newEngine(t)
	logger, log := newAudit()

	// No terminal: the run waits at the gate; nothing is committed.
	piped, _, _, _ := iostreams.Test()
	nobody := &review.Gate{IO: piped, Prompter: prompt.New(piped, noEnv, exec.LookPath), Audit: logger}
	id, err := flow.Create(t.Context(), e, commitGraph(nobody), &commitState{Repo: repo}, flow.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = flow.Drive(t.Context(), e, commitGraph(nobody), id)
	// flow.ErrWaiting is what cli.ExitCode maps to exit 3.
	var waiting *flow.WaitingError
	if !errors.As(err, &waiting) || !errors.Is(err, flow.ErrWaiting) || waiting.Node != "diff_review" {
		t.Fatalf("Drive without a terminal: %v, want waiting at diff_review (exit 3)", err)
	}
	t.Logf("waiting after %v", time.Since(start))
	r, err := e.Store.GetRun(t.Context(), id)
	if err != nil || r.Status != store.StatusWaiting || r.Node != "diff_review" {
		t.Fatalf("run = %+v, %v; want waiting at diff_review", r, err)
	}
	if n := commits(t, repo); n != 1 {
		t.Fatalf("%d commits, want only the initial one", n)
	}

	// Resumed at a terminal, typing approve reaches the commit.
	term, tty := newTerminal(t)
	asker := &review.Gate{IO: tty, Prompter: prompt.New(tty, noEnv, exec.LookPath), Audit: logger}
	done := make(chan error, 1)
	var final *commitState
	go func() {
		s, err := flow.Drive(t.Context(), e, commitGraph(asker), id)
		final = s
		done <- err
	}()
	term.WaitFor(t, "Type 'approve' to proceed", 1)
	term.Type(t, "approve")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the run did not finish")
	}
	if n := commits(t, repo); n != 2 || final.Committed == "" || !final.Review.HumanApproved || final.Review.Decision != review.Approved {
		t.Fatalf("after approve: %d commits, state %+v", n, final)
	}
	var decisions []string
	for _, rec := range log.records(t) {
		if rec["event"] == "gate_decision" {
			decisions = append(decisions, rec["decision"].(string)+"@"+rec["run_id"].(string))
		}
	}
	if want := "ABORTED_NON_INTERACTIVE@" + id + " APPROVED@" + id; strings.Join(decisions, " ") != want {
		t.Errorf("audited decisions %v, want %s", decisions, want)
	}
}

func TestGateNodeRejectGoesToCleanup(t *testing.T) {
	t.Parallel()
	before, _ := pr165()
	repo := testenv.NewRepo(t, map[string]string{"state.py": before})
	e := newEngine(t)
	term, tty := newTerminal(t)
	g := &review.Gate{IO: tty, Prompter: prompt.New(tty, noEnv, exec.LookPath)}
	id, err := flow.Create(t.Context(), e, commitGraph(g), &commitState{Repo: repo}, flow.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	var final *commitState
	go func() {
		s, err := flow.Drive(t.Context(), e, commitGraph(g), id)
		final = s
		done <- err
	}()
	term.WaitFor(t, "Type 'approve' to proceed", 1)
	term.Type(t, "reject")
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the run did not finish")
	}
	// flow.ErrAborted is what cli.ExitCode maps to exit 4.
	if !errors.Is(err, flow.ErrAborted) || errors.Is(err, flow.ErrWaiting) {
		t.Fatalf("Drive after reject: %v, want aborted (exit 4)", err)
	}
	if !final.Cleaned || final.Committed != "" || final.Review.Decision != review.Rejected {
		t.Errorf("state = %+v, want cleanup and no commit", final)
	}
	if n := commits(t, repo); n != 1 {
		t.Errorf("%d commits after a rejection", n)
	}
	hist, _ := e.Store.History(t.Context(), id)
	var nodes []string
	for _, h := range hist {
		nodes = append(nodes, h.Node)
	}
	if strings.Contains(strings.Join(nodes, " "), "commit ") {
		t.Errorf("history %v passes through commit", nodes)
	}
}

func TestGateNodeWithoutRejectRouteAbortsTheRun(t *testing.T) {
	t.Parallel()
	before, after := pr165()
	repo := testenv.NewRepo(t, map[string]string{"state.py": before})
	write(t, repo, "state.py", after)
	term, tty := newTerminal(t)
	g := &review.Gate{IO: tty, Prompter: prompt.New(tty, noEnv, exec.LookPath)}
	var recorded bool
	graph := flow.New[commitState]("abort-demo", "diff_review").
		Gate("diff_review", review.GateNode(g,
			func(s *commitState) review.GateOptions { return review.GateOptions{Repo: s.Repo} },
			func(*commitState, review.Outcome) { recorded = true },
			review.Routes{Approved: "commit"}), "commit").
		Node("commit", func(context.Context, *commitState) (string, error) {
			return "", errors.New("commit reached")
		}, flow.End)
	e := newEngine(t)
	id, err := flow.Create(t.Context(), e, graph, &commitState{Repo: repo}, flow.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := flow.Drive(t.Context(), e, graph, id); done <- err }()
	term.WaitFor(t, "Type 'approve' to proceed", 1)
	term.Type(t, "reject")
	select {
	case err = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the run did not finish")
	}
	if !errors.Is(err, review.ErrRejected) || !errors.Is(err, flow.ErrAborted) || recorded {
		t.Fatalf("err = %v, recorded = %v; want the run aborted by the rejection", err, recorded)
	}
	if r, _ := e.Store.GetRun(t.Context(), id); r.Status != store.StatusAborted || r.Node != "diff_review" {
		t.Errorf("run = %s at %s, want aborted at diff_review", r.Status, r.Node)
	}
}
