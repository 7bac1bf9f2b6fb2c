package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/azero-dev/azero/internal/event"
)

// AppendEvent records e in its run's history of events and returns its
// sequence number.
func (s *Store) AppendEvent(ctx context.Context, e event.Event) (int64, error) {
	at := e.At
	if at.IsZero() {
		at = s.now()
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO events (run_id, node, kind, tone, text, data, at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		e.RunID, e.Node, string(e.Kind), string(e.Tone), e.Text, string(e.Data), at.UnixNano())
	if err != nil {
		return 0, fmt.Errorf("record event of run %s: %w", e.RunID, err)
	}
	return res.LastInsertId()
}

// Events returns the run's events after sequence number after (0: all),
// oldest first, at most limit of them (0: all).
func (s *Store) Events(ctx context.Context, runID string, after int64, limit int) ([]event.Event, error) {
	q := `SELECT id, node, kind, tone, text, data, at FROM events WHERE run_id = ? AND id > ? ORDER BY id`
	args := []any{runID, after}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("events of run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []event.Event
	for rows.Next() {
		var (
			e          event.Event
			kind, tone string
			data       string
			at         int64
		)
		if err := rows.Scan(&e.Seq, &e.Node, &kind, &tone, &e.Text, &data, &at); err != nil {
			return nil, fmt.Errorf("events of run %s: %w", runID, err)
		}
		e.RunID, e.Kind, e.Tone, e.At = runID, event.Kind(kind), event.Tone(tone), time.Unix(0, at)
		if data != "" {
			e.Data = json.RawMessage(data)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
