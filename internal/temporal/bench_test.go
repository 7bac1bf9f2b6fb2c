//go:build temporalserver

package temporal

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporaltest"

	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/store"
)

// chain is a graph of n nodes that do nothing: what is measured is the
// engine's cost per node (checkpoint, history, scheduling).
type chainState struct {
	Count int `json:"count"`
}

const benchNodes = 20

func chainGraph() *flow.Graph[chainState] {
	g := flow.New[chainState]("chain", "n0")
	for i := range benchNodes {
		next := flow.End
		if i+1 < benchNodes {
			next = fmt.Sprintf("n%d", i+1)
		}
		g.Node(fmt.Sprintf("n%d", i), func(ctx context.Context, s *chainState) (string, error) {
			s.Count++
			return next, nil
		}, next)
	}
	return g
}

// BenchmarkNodeOverhead drives runs of 20 empty nodes on the local engine
// (SQLite checkpoints) and on Temporal (a real server in this process, one
// worker, every node an activity), and reports the cost per node.
func BenchmarkNodeOverhead(b *testing.B) {
	b.Run("local", func(b *testing.B) {
		ctx := context.Background()
		st, err := store.Open(ctx, filepath.Join(b.TempDir(), store.FileName), store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		eng := &flow.Engine{Store: st}
		g := chainGraph()
		start := time.Now()
		for b.Loop() {
			id, err := flow.Create(ctx, eng, g, &chainState{}, flow.CreateOptions{})
			if err != nil {
				b.Fatal(err)
			}
			s, err := flow.Drive(ctx, eng, g, id)
			if err != nil || s.Count != benchNodes {
				b.Fatalf("drive: %v (%d nodes)", err, s.Count)
			}
		}
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*benchNodes), "ns/node")
	})
	b.Run("temporal", func(b *testing.B) { benchTemporal(b) })
}

// benchTemporal drives runs of the chain on a server started in this
// process with opts, one worker, every node an activity.
//
// Where the time goes (read from the runs' histories here): about 45 ms
// from a task's scheduling to a worker starting it, once for the activity
// and once for the workflow task that takes its result, and a few ms in
// the activity (the worker's bookkeeping in its store). One partition per
// task queue, as `temporal server start-dev` runs, changed little (103
// against 105 ms a node).
func benchTemporal(b *testing.B, opts ...temporaltest.TestServerOption) {
	ctx := context.Background()
	srv := temporaltest.NewServer(opts...)
	defer srv.Stop()
	c := srv.NewClientWithOptions(client.Options{Logger: quiet{}})
	reg := NewRegistry()
	if err := Register(reg, Definition[chainState]{Shape: chainGraph(),
		Build: func(context.Context, Run, *chainState) (*flow.Graph[chainState], error) { return chainGraph(), nil }}); err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	st, err := store.Open(ctx, filepath.Join(dir, store.FileName), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	w, err := NewWorker(c, WorkerConfig{Registry: reg, Store: st, Audit: audit.New(io.Discard, nil), StateDir: dir, Identity: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	cl := &Client{C: c}
	raw, _ := json.Marshal(chainState{})
	n := 0
	start := time.Now()
	for b.Loop() {
		n++
		id := fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), n)
		if err := cl.Start(ctx, Input{RunID: id, Workflow: "chain", State: raw}); err != nil {
			b.Fatal(err)
		}
		var res Result
		if err := c.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil || res.Status != store.StatusDone {
			b.Fatalf("run %s: %v (%s)", id, err, res.Status)
		}
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*benchNodes), "ns/node")
}
