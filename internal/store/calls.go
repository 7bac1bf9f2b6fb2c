package store

import (
	"context"
	"fmt"
	"time"
)

// Call is one model call made by a run.
type Call struct {
	RunID        string        `json:"-"`
	Node         string        `json:"node"`
	Role         string        `json:"role"`
	Purpose      string        `json:"purpose"`
	Model        string        `json:"model"`
	InputTokens  int           `json:"input_tokens"`
	OutputTokens int           `json:"output_tokens"`
	CostUSD      float64       `json:"cost_usd"`
	Latency      time.Duration `json:"-"`
	LatencyMS    int64         `json:"latency_ms"`
	Stop         string        `json:"stop,omitempty"`
	Error        string        `json:"error,omitempty"`
	At           time.Time     `json:"called_at"`
	// Attempt names the node execution that made the call (flow.Attempt).
	Attempt string `json:"-"`
}

// RecordCall stores one model call.
func (s *Store) RecordCall(ctx context.Context, c Call) error {
	if c.At.IsZero() {
		c.At = s.now()
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO calls (run_id, node, role, purpose, model, input_tokens, output_tokens, cost_usd, latency_ms, stop, error, at, attempt)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.RunID, c.Node, c.Role, c.Purpose, c.Model, c.InputTokens, c.OutputTokens, c.CostUSD,
		c.Latency.Milliseconds(), c.Stop, c.Error, c.At.UnixNano(), c.Attempt)
	if err != nil {
		return fmt.Errorf("record call of run %s: %w", c.RunID, err)
	}
	return nil
}

// Calls returns the run's model calls, oldest first.
func (s *Store) Calls(ctx context.Context, runID string) ([]Call, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT node, role, purpose, model, input_tokens, output_tokens, cost_usd, latency_ms, stop, error, at
		FROM calls WHERE run_id = ? ORDER BY id`, runID)
	if err != nil {
		return nil, fmt.Errorf("calls of run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []Call
	for rows.Next() {
		c := Call{RunID: runID}
		var latency, at int64
		if err := rows.Scan(&c.Node, &c.Role, &c.Purpose, &c.Model, &c.InputTokens, &c.OutputTokens, &c.CostUSD,
			&latency, &c.Stop, &c.Error, &at); err != nil {
			return nil, err
		}
		c.Latency, c.LatencyMS = time.Duration(latency)*time.Millisecond, latency
		c.At = time.Unix(0, at)
		out = append(out, c)
	}
	return out, rows.Err()
}

// Spent returns the total cost in USD of the run's model calls.
func (s *Store) Spent(ctx context.Context, runID string) (float64, error) {
	var total float64
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(SUM(cost_usd), 0) FROM calls WHERE run_id = ?`, runID).Scan(&total)
	if err != nil {
		return 0, fmt.Errorf("cost of run %s: %w", runID, err)
	}
	return total, nil
}

// Turns returns how many answered calls of role belong to the run's
// conversation so far: those of node executions that completed, and those
// of the execution attempt (in progress). A call made by an execution that
// was killed before its node completed does not count: that node runs
// again and asks the same turn again.
func (s *Store) Turns(ctx context.Context, runID, role, attempt string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM calls WHERE run_id = ? AND role = ? AND error = ''
		AND (attempt = '' OR attempt = ? OR attempt IN (SELECT attempt FROM history WHERE run_id = ? AND outcome = 'ok' AND attempt != ''))`,
		runID, role, attempt, runID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count turns of run %s: %w", runID, err)
	}
	return n, nil
}

// CallCount returns how many calls the run made in role that got an
// answer (no error).
func (s *Store) CallCount(ctx context.Context, runID, role string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM calls WHERE run_id = ? AND role = ? AND error = ''`, runID, role).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count calls of run %s: %w", runID, err)
	}
	return n, nil
}
