package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/web"
)

// bigStore is a store as a busy user's looks after a while: n runs, the
// newest waiting of them at a diff review whose report shows a long
// diff, each run with a few model calls and a state of a few kilobytes.
func bigStore(tb testing.TB, n, waiting int) *store.Store {
	tb.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(tb.TempDir(), store.FileName), store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	state, _ := json.Marshal(map[string]any{"issue": "#42", "repo": "/tmp/repo", "lld": strings.Repeat("a design line\n", 400)})
	report := diffReport + strings.Repeat("+a line the coder added to the file\n", 1000)
	start := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("250301-%06d", i)
		if err := st.CreateRun(ctx, store.Run{ID: id, Workflow: "implement", Node: "work", State: state}); err != nil {
			tb.Fatal(err)
		}
		for c := range 3 {
			if err := st.RecordCall(ctx, store.Call{RunID: id, Node: "code", Role: "coder", Model: "mock:scripted", InputTokens: 1000,
				OutputTokens: 200, CostUSD: 0.01, At: start.Add(time.Duration(c) * time.Second)}); err != nil {
				tb.Fatal(err)
			}
		}
		cp := store.Checkpoint{RunID: id, Token: "t-" + id, Node: "work", Next: "review", Status: store.StatusDone, Outcome: "done",
			Steps: 5, Started: start, Finished: start}
		if i >= n-waiting {
			q := human.Question{Gate: "diff_review", Kind: human.Word, Title: "Diff review", Format: "diff-report", Report: report,
				Prompt:  "!! 1 file is flagged above. Commit the changes to 3 files? Nothing is committed unless you type approve.",
				Options: []human.Option{{Key: "approve", Decision: "APPROVED"}, {Key: "reject", Decision: "REJECTED"}},
				Facts:   map[string]any{"flagged_files": []string{"textkit/slug.go"}}, AskedAt: start}
			q.ID = human.Fingerprint(q)
			raw, _ := json.Marshal(q)
			cp.Status, cp.Outcome, cp.Next, cp.Question = store.StatusWaiting, "waiting", "diff_review", raw
		}
		if err := st.Acquire(ctx, id, store.Lease{Token: cp.Token, PID: -1}, time.Minute); err != nil {
			tb.Fatal(err)
		}
		if err := st.Checkpoint(ctx, cp); err != nil {
			tb.Fatal(err)
		}
		if err := st.Release(ctx, id, cp.Token); err != nil {
			tb.Fatal(err)
		}
	}
	return st
}

// benchHandler is the handler of a server over a store of 1,000 runs, 50
// of them waiting.
func benchHandler(b *testing.B) http.Handler {
	b.Helper()
	st := bigStore(b, 1000, 50)
	srv, err := web.New(web.Options{Runs: reader{st}, Token: testToken, StateDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(srv.Close)
	h, err := srv.Handler("127.0.0.1:7077", "127.0.0.1:7077")
	if err != nil {
		b.Fatal(err)
	}
	return h
}

func benchGet(b *testing.B, path string) {
	h := benchHandler(b)
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest("GET", "http://127.0.0.1:7077"+path, nil)
		req.Header.Set("Authorization", "Bearer "+testToken)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("GET %s = %d\n%s", path, rec.Code, rec.Body)
		}
	}
}

// The list of runs, as a page and as JSON, over 1,000 runs of which 50
// wait: the page costs about what the API does.
func BenchmarkRunsPage(b *testing.B) { benchGet(b, "/") }
func BenchmarkAPIRuns(b *testing.B)  { benchGet(b, "/api/runs") }
