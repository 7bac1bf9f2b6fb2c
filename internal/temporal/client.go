package temporal

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"

	"github.com/azero-dev/azero/internal/answerkey"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
)

// ConnectOptions say how to reach a Temporal cluster.
type ConnectOptions struct {
	Address   string // HOST:PORT of the frontend
	Namespace string // default "default"
	// TLS: a client certificate and key (mTLS, as Temporal Cloud and most
	// self-hosted clusters ask), a CA to trust instead of the system's,
	// and the server name to verify. Any of them turns TLS on.
	TLSCert, TLSKey, TLSCA, ServerName string
	// APIKey authenticates with an API key (Temporal Cloud); it implies
	// TLS.
	APIKey string
	Logger sdklog.Logger // nil: quiet
}

// ErrNoAddress: the Temporal engine was chosen without saying where the
// cluster is.
var ErrNoAddress = errors.New("the Temporal engine needs the cluster's address: --temporal HOST:PORT, or address in the [engine] table of the config")

// Dial connects to the cluster.
func Dial(ctx context.Context, o ConnectOptions) (client.Client, error) {
	if o.Address == "" {
		return nil, ErrNoAddress
	}
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	opts := client.Options{HostPort: o.Address, Namespace: o.Namespace, Logger: o.Logger}
	if opts.Logger == nil {
		opts.Logger = quiet{}
	}
	tlsCfg, err := o.tlsConfig()
	if err != nil {
		return nil, err
	}
	opts.ConnectionOptions.TLS = tlsCfg
	if o.APIKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(o.APIKey)
	}
	c, err := client.DialContext(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("connect to Temporal at %s (namespace %s): %w; check the address, that the cluster runs, and its TLS settings", o.Address, o.Namespace, err)
	}
	return c, nil
}

func (o ConnectOptions) tlsConfig() (*tls.Config, error) {
	if o.TLSCert == "" && o.TLSKey == "" && o.TLSCA == "" && o.ServerName == "" && o.APIKey == "" {
		return nil, nil
	}
	cfg := &tls.Config{ServerName: o.ServerName, MinVersion: tls.VersionTLS12}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, errors.New("temporal mTLS needs both tls_cert and tls_key (the client certificate and its key)")
	}
	if o.TLSCert != "" {
		pair, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("load the Temporal client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if o.TLSCA != "" {
		pem, err := os.ReadFile(o.TLSCA)
		if err != nil {
			return nil, fmt.Errorf("read the Temporal CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the Temporal CA %s holds no PEM certificate", o.TLSCA)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}

// quiet drops the SDK's log lines: azero reports what matters itself.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}

// Client starts runs on Temporal and answers their questions.
type Client struct {
	C         client.Client
	TaskQueue string // the shared task queue (default DefaultTaskQueue)
	// Poll is how often Follow asks where a run stands (default 250 ms).
	Poll time.Duration
	// Key seals the answers Answer sends, proving to a worker holding the
	// same key that they come from azero's terminal or page; nil sends
	// them unsealed, and they are recorded as coming through Temporal.
	Key *answerkey.Key

	mu    sync.Mutex
	ended map[string]Status // runs List saw ended, as it lists them: they never change
}

func (c *Client) queue() string {
	if c.TaskQueue == "" {
		return DefaultTaskQueue
	}
	return c.TaskQueue
}

// Start starts a run: one workflow execution whose id is the run's id.
func (c *Client) Start(ctx context.Context, in Input) error {
	if in.RunID == "" || in.Workflow == "" {
		return errors.New("start a Temporal run: run id and workflow are required")
	}
	_, err := c.C.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: in.RunID, TaskQueue: c.queue(),
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
	}, in.Workflow, in)
	if err != nil {
		return fmt.Errorf("start run %s on Temporal: %w", in.RunID, err)
	}
	return nil
}

// ErrUnknownRun: no Temporal run has this id.
var ErrUnknownRun = errors.New("no such run on Temporal")

// Status reports where a run stands: the workflow's answer to the status
// query while it runs, its result once it finished.
func (c *Client) Status(ctx context.Context, runID string) (Status, error) {
	desc, err := c.C.DescribeWorkflowExecution(ctx, runID, "")
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return Status{}, fmt.Errorf("%w: %s (list runs with `azero runs --engine temporal`)", ErrUnknownRun, runID)
		}
		return Status{}, fmt.Errorf("describe run %s: %w", runID, err)
	}
	info := desc.GetWorkflowExecutionInfo()
	switch info.GetStatus() {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		v, err := c.C.QueryWorkflow(ctx, runID, "", QueryStatus)
		if err != nil {
			return Status{}, fmt.Errorf("ask run %s where it stands (is a worker running?): %w", runID, err)
		}
		var st Status
		if err := v.Get(&st); err != nil {
			return Status{}, fmt.Errorf("decode the status of run %s: %w", runID, err)
		}
		return st, nil
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		var res Result
		if err := c.C.GetWorkflow(ctx, runID, "").Get(ctx, &res); err != nil {
			return Status{}, fmt.Errorf("read the result of run %s: %w", runID, err)
		}
		return res, nil
	default:
		// Terminated, cancelled, timed out or failed by Temporal itself.
		st := Status{RunID: runID, Workflow: info.GetType().GetName(), Status: store.StatusFailed, Ended: true,
			Error: "the Temporal workflow is " + info.GetStatus().String()}
		if t := info.GetStartTime(); t != nil {
			st.Started = t.AsTime()
		}
		return st, nil
	}
}

// List lists runs, newest first, with where each stands (limit 0: all),
// without their state, steps, calls and events (Status has them).
func (c *Client) List(ctx context.Context, limit int) ([]Status, error) {
	out, err := c.list(ctx, limit)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.After(out[j].Started) })
	return out, err
}

func (c *Client) list(ctx context.Context, limit int) ([]Status, error) {
	var out []Status
	var token []byte
	// A run that continued as new is listed once per execution; its
	// Status is its latest execution's.
	seen := map[string]bool{}
	for {
		resp, err := c.C.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			PageSize: 100, NextPageToken: token,
			// Not every visibility store can ORDER BY: they list newest
			// first anyway, and the list is sorted below.
			Query: fmt.Sprintf("TaskQueue = %q", c.queue()),
		})
		if err != nil {
			return nil, fmt.Errorf("list Temporal runs: %w", err)
		}
		for _, e := range resp.GetExecutions() {
			id := e.GetExecution().GetWorkflowId()
			if seen[id] {
				continue
			}
			seen[id] = true
			if st, ok := c.endedRun(id, e.GetStatus()); ok {
				out = append(out, st)
				if limit > 0 && len(out) >= limit {
					return out, nil
				}
				continue
			}
			st, err := c.Status(ctx, id)
			if err != nil {
				st = Status{RunID: id, Workflow: e.GetType().GetName(), Error: err.Error()}
			}
			if st.Started.IsZero() && e.GetStartTime() != nil {
				st.Started = e.GetStartTime().AsTime()
			}
			st.State, st.History, st.Calls, st.Events = nil, nil, nil, nil
			if err == nil && st.Ended {
				c.keepEnded(st)
			}
			out = append(out, st)
			if limit > 0 && len(out) >= limit {
				return out, nil
			}
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return out, nil
		}
	}
}

// endedRun returns the run as an earlier List saw it ended, when the
// cluster still lists it closed: a page listing a team's runs every
// second reads each finished run's result once, not every time.
func (c *Client) endedRun(id string, status enumspb.WorkflowExecutionStatus) (Status, bool) {
	if status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING || status == enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW {
		return Status{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.ended[id]
	return st, ok
}

// keepEnded remembers an ended run as List reports it.
func (c *Client) keepEnded(st Status) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended == nil {
		c.ended = map[string]Status{}
	}
	c.ended[st.RunID] = st
}

// ErrRefused: the run's validator refused an answer its question does not
// allow; it never reached the run's history.
var ErrRefused = errors.New("answer refused")

// Answer sends a human's answer to the run's pending question. It returns
// once the decision is recorded and acted on. The workflow's validator
// refuses, before the history, an answer to no waiting question
// (store.ErrNotAsked), one after another answer (store.ErrAnswered) and
// one the question does not allow (ErrRefused); the error says why, and
// is not retryable. With a Key, the answer is sealed for the question
// the run asks now (its id and nonce).
func (c *Client) Answer(ctx context.Context, runID string, a human.Answer) (AnswerReply, error) {
	if c.Key != nil {
		st, err := c.Status(ctx, runID)
		if err != nil {
			return AnswerReply{}, fmt.Errorf("answer run %s: %w", runID, err)
		}
		// An answer to another question than the one asked now is sent
		// as it is, for the run to refuse.
		if q := st.Question; q != nil && (a.QuestionID == "" || a.QuestionID == q.ID) {
			if a.At.IsZero() {
				a.At = time.Now().UTC()
			}
			a = c.Key.Seal(runID, *q, a)
		}
	}
	h, err := c.C.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: runID, UpdateName: UpdateAnswer, Args: []any{a},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return AnswerReply{}, answerError(runID, err)
	}
	var r AnswerReply
	if err := h.Get(ctx, &r); err != nil {
		return AnswerReply{}, answerError(runID, err)
	}
	return r, nil
}

// answerError says why an answer was not taken, as the store would.
func answerError(runID string, err error) error {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		switch app.Type() {
		case errTypeNotAsked:
			return fmt.Errorf("answer run %s: %s: %w", runID, app.Message(), store.ErrNotAsked)
		case errTypeAnswered:
			return fmt.Errorf("answer run %s: %s: %w", runID, app.Message(), store.ErrAnswered)
		case errTypeInvalid:
			return fmt.Errorf("answer run %s: %s: %w", runID, app.Message(), ErrRefused)
		}
		return fmt.Errorf("answer run %s: %s", runID, app.Message())
	}
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("answer run %s: %w", runID, ErrUnknownRun)
	}
	return fmt.Errorf("answer run %s: %w", runID, err)
}

// Resume retries the node a failed run stopped at.
func (c *Client) Resume(ctx context.Context, runID string) error {
	h, err := c.C.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: runID, UpdateName: UpdateResume, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return fmt.Errorf("resume run %s: %w", runID, err)
	}
	var node string
	if err := h.Get(ctx, &node); err != nil {
		return fmt.Errorf("resume run %s: %w", runID, err)
	}
	return nil
}

// Settled reports whether a run needs someone or has ended: it waits at a
// question, stopped failed or waiting, or finished.
func Settled(st Status) bool {
	return st.Question != nil || st.Status != store.StatusRunning
}

// Follow waits until the run settles (see Settled), calling seen with
// every new step and whenever the node changes.
func (c *Client) Follow(ctx context.Context, runID string, seen func(Status)) (Status, error) {
	poll := c.Poll
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	last := ""
	for {
		st, err := c.Status(ctx, runID)
		if err != nil {
			return st, err
		}
		if mark := fmt.Sprintf("%s/%d/%s/%v", st.Node, st.Steps, st.Status, st.Question != nil); mark != last && seen != nil {
			last = mark
			seen(st)
		}
		if Settled(st) {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(poll):
		}
	}
}
