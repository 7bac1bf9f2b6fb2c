package web_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

// lockedBuffer is a log both the server and the test use.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The service says which runs it continues (azero serve names them when
// told to stop), and a run it stops continuing is said to be saved.
func TestTheRunsContinuedAreNamedAndSaved(t *testing.T) {
	t.Parallel()
	log := &lockedBuffer{}
	started := make(chan string, 1)
	// The run is driven until the service stops: the engine saves it as
	// interrupted.
	f := newFixtureConfig(t, fixtureConfig{log: log, graph: blockingGraph,
		onDrive: func(runID string) { started <- runID }})
	if got := f.runs.Driving(); len(got) != 0 {
		t.Fatalf("Driving = %v before any answer", got)
	}
	id := f.waitingRun(state{})
	if code, doc := f.api("POST", "/api/runs/"+id+"/answer", `{"gate":"review","answer":"approve"}`); code != http.StatusOK || doc["continued"] != true {
		t.Fatal(code, doc)
	}
	select {
	case <-started:
	case <-time.After(testenv.Patience):
		t.Fatal("the run was never continued")
	}
	if got := f.runs.Driving(); !slices.Equal(got, []string{id}) {
		t.Errorf("Driving = %v, want [%s]", got, id)
	}
	// The page says who drives it.
	if _, page := f.request("GET", "/runs/"+id, "", bearer); !strings.Contains(page, "azero serve is driving this run") {
		t.Errorf("the run's page does not say azero serve drives it")
	}
	// Stopped while the run works (not before its drive took it up).
	f.waitFor(id, "working at edit", func(r store.Run) bool { return r.Node == "edit" })
	f.stopContinuing()
	if got := f.runs.Driving(); len(got) != 0 {
		t.Errorf("Driving = %v after the service stopped", got)
	}
	if !strings.Contains(log.String(), "run "+id+" is saved at ") {
		t.Errorf("the log does not say the run is saved:\n%s", log)
	}
}

// blockingGraph is the fixture's workflow whose step after the review
// works until it is interrupted.
func blockingGraph() *flow.Graph[state] {
	return flow.New[state]("webtest", "work").
		Node("work", func(ctx context.Context, s *state) (string, error) { return "review", nil }, "review").
		Gate("review", reviewQuestion, decideReview, "edit", "work").
		Node("edit", func(ctx context.Context, s *state) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}, flow.End)
}
