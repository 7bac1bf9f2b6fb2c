package temporal

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/azero-dev/azero/internal/answerkey"
	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/event"
	"github.com/azero-dev/azero/internal/store"
)

// WorkerConfig is what a worker runs runs with.
type WorkerConfig struct {
	Registry  *Registry
	TaskQueue string // the shared task queue (default DefaultTaskQueue)
	// Identity names this worker in Temporal and in the audit log
	// (default: host-pid-random).
	Identity string
	Store    *store.Store  // this machine's store: model calls, scripted turns
	Audit    *audit.Logger // this machine's audit log; nil discards
	StateDir string        // worktrees go to StateDir/worktrees/<run>
	// Watch receives every event the runs' nodes report (the worker's
	// terminal shows them). Optional.
	Watch func(event.Event)
	Now   func() time.Time
	// StopTimeout is how long Stop lets the activities under way finish
	// before it cancels them (default DefaultStopTimeout: a node's own
	// default timeout). Without it Temporal's SDK cancels them at once.
	StopTimeout time.Duration
	// Key verifies the seals of answers sent by azero's terminal and page
	// (default: the key of StateDir, made if missing). An answer that
	// claims their channel without a seal it verifies is recorded as
	// coming through Temporal.
	Key *answerkey.Key
}

// DefaultStopTimeout is how long a stopping worker waits for the steps
// under way: a model call or a test run is not cut off because the worker
// was asked to stop.
const DefaultStopTimeout = 2 * time.Hour

// Worker runs azero's workflows and activities: on the shared task queue
// (workflow tasks and each run's first activity) and on a queue of its own
// (the activities of the runs it holds).
type Worker struct {
	me     WorkerRef
	shared worker.Worker
	own    worker.Worker
}

// NewWorker creates (does not start) a worker on c.
func NewWorker(c client.Client, cfg WorkerConfig) (*Worker, error) {
	if cfg.Registry == nil || cfg.Store == nil || cfg.StateDir == "" {
		return nil, errors.New("a Temporal worker needs a registry, a store and a state directory")
	}
	if cfg.TaskQueue == "" {
		cfg.TaskQueue = DefaultTaskQueue
	}
	if cfg.Identity == "" {
		cfg.Identity = DefaultIdentity()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = DefaultStopTimeout
	}
	if cfg.Key == nil {
		k, err := answerkey.Load(cfg.StateDir)
		if err != nil {
			return nil, err
		}
		cfg.Key = k
	}
	id := WorkerRef{Queue: OwnQueue(cfg.TaskQueue, cfg.Identity), Identity: cfg.Identity}
	acts := &activities{reg: cfg.Registry, store: cfg.Store, audit: cfg.Audit, stateDir: cfg.StateDir,
		me: id, watch: cfg.Watch, now: cfg.Now, key: cfg.Key, caller: updateCaller(c)}
	register := func(r worker.ActivityRegistry) {
		r.RegisterActivityWithOptions(acts.Node, activity.RegisterOptions{Name: activityNode})
		r.RegisterActivityWithOptions(acts.Ask, activity.RegisterOptions{Name: activityAsk})
		r.RegisterActivityWithOptions(acts.Decision, activity.RegisterOptions{Name: activityDecision})
		r.RegisterActivityWithOptions(acts.Finish, activity.RegisterOptions{Name: activityFinish})
	}
	shared := worker.New(c, cfg.TaskQueue, worker.Options{Identity: cfg.Identity, WorkerStopTimeout: cfg.StopTimeout})
	for _, name := range cfg.Registry.Names() {
		d, _ := cfg.Registry.get(name)
		shared.RegisterWorkflowWithOptions(workflowFunc(d), workflow.RegisterOptions{Name: name})
	}
	register(shared)
	own := worker.New(c, id.Queue, worker.Options{Identity: cfg.Identity, DisableWorkflowWorker: true, WorkerStopTimeout: cfg.StopTimeout})
	register(own)
	return &Worker{me: id, shared: shared, own: own}, nil
}

// OwnQueue is the task queue of the worker called identity.
func OwnQueue(shared, identity string) string { return shared + "@" + identity }

// DefaultIdentity names this process: host, pid and a random suffix, so
// two workers on one machine differ.
func DefaultIdentity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "host"
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Identity is the worker's identity.
func (w *Worker) Identity() string { return w.me.Identity }

// Queue is the worker's own task queue.
func (w *Worker) Queue() string { return w.me.Queue }

// Start starts polling both queues.
func (w *Worker) Start() error {
	if err := w.shared.Start(); err != nil {
		return fmt.Errorf("start the worker on the shared queue: %w", err)
	}
	if err := w.own.Start(); err != nil {
		w.shared.Stop()
		return fmt.Errorf("start the worker on its own queue %s: %w", w.me.Queue, err)
	}
	return nil
}

// Stop stops polling and waits for the activities under way (up to
// StopTimeout), on both queues at once.
func (w *Worker) Stop() {
	var wg sync.WaitGroup
	for _, x := range []worker.Worker{w.own, w.shared} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x.Stop()
		}()
	}
	wg.Wait()
}
