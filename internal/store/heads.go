package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"
)

// where is the WHERE clause (with its arguments) and the ORDER, LIMIT
// and OFFSET of the runs f selects.
func where(f Filter) (cond string, order string, args []any) {
	cond = ` WHERE 1=1`
	if f.Workflow != "" {
		cond += ` AND workflow = ?`
		args = append(args, f.Workflow)
	}
	if f.Key != "" {
		cond += ` AND run_key = ?`
		args = append(args, f.Key)
	}
	if f.Status != "" {
		cond += ` AND status = ?`
		args = append(args, string(f.Status))
	}
	if f.Asking {
		// Only a run that has not ended can ask (runs_by_status finds them).
		cond += ` AND status IN ('running', 'waiting', 'interrupted', 'failed') AND question != ''`
	}
	order = ` ORDER BY created_at DESC, id DESC`
	switch {
	case f.Limit > 0:
		order += fmt.Sprintf(` LIMIT %d`, f.Limit)
	case f.Offset > 0:
		order += ` LIMIT -1`
	}
	if f.Offset > 0 {
		order += fmt.Sprintf(` OFFSET %d`, f.Offset)
	}
	return cond, order, args
}

// CountRuns returns how many runs f selects, whatever its Limit and
// Offset.
func (s *Store) CountRuns(ctx context.Context, f Filter) (int, error) {
	f.Limit, f.Offset = 0, 0
	cond, _, args := where(f)
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs`+cond, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count runs: %w", err)
	}
	return n, nil
}

// Head is a run as a list shows it: the run without its state, question
// and answer (nil), with what a list shows of them and its cost. A run
// whose stored row does not verify is listed with Run.Unverified saying
// why: shown, never acted on.
type Head struct {
	Run
	// Asks is what the run asks a human now or waits for; nil when
	// nothing.
	Asks *Asking
	// Answered says an answer is posted for that question and not yet
	// taken. It is not verified (PostedAnswer verifies one).
	Answered bool
	// CostUSD is what the run's model calls cost.
	CostUSD float64
	// Issue, Slug and Filed are what the run's state names of the issue it
	// works on: its "issue", "slug" and "filed.number", the keys azero's
	// workflows keep them under; empty when it has none.
	Issue, Slug string
	Filed       int
}

// Asking is what a list shows of a question: its gate, headline and
// prompt, and the files it flags (its "flagged_files" fact).
type Asking struct {
	Gate, Title, Prompt string
	Flagged             []string
}

// ListHeads returns the heads of the runs f selects, newest first. What a
// list shows of a run's state, question and cost is read inside the
// database, for the rows returned only: a page of runs costs a page of
// rows, in one query, however many runs there are.
func (s *Store) ListHeads(ctx context.Context, f Filter) ([]Head, error) {
	heads, err := s.listHeads(ctx, f, false)
	if err != nil {
		// A question or state that is not JSON (a row changed by hand)
		// fails the quick query; the careful one checks each first.
		heads, err = s.listHeads(ctx, f, true)
	}
	return heads, err
}

// headColumns are what ListHeads reads besides runColumns: the
// question's gate, title, prompt and flagged files, and the state's
// issue, slug and filed issue, each as a JSON array; whether the run asks
// and has an answer posted; and its cost. Careful, each JSON value is
// checked before it is read, which costs a second parse.
func headColumns(careful bool) string {
	question, state := `question != ''`, `state != x''`
	if careful {
		question, state = `json_valid(question)`, `json_valid(CAST(state AS TEXT))`
	}
	return `CASE WHEN ` + question + ` THEN json_extract(question, '$.gate', '$.title', '$.prompt', '$.facts.flagged_files') END,
		CASE WHEN ` + state + ` THEN json_extract(CAST(state AS TEXT), '$.issue', '$.slug', '$.filed.number') END,
		question != '', answer != '',
		(SELECT TOTAL(cost_usd) FROM calls WHERE calls.run_id = runs.id)`
}

func (s *Store) listHeads(ctx context.Context, f Filter, careful bool) ([]Head, error) {
	cond, order, args := where(f)
	// Only the page's rows are read, without their state and question
	// (the seal covers their digests), and nothing of them is decoded but
	// the few values the database extracts.
	rows, err := s.db.QueryContext(ctx, `SELECT `+briefColumns+`, `+headColumns(careful)+` FROM runs`+cond+order, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []Head
	for rows.Next() {
		var (
			h             Head
			asked, stated sql.NullString
			asks          bool
		)
		if err := s.scanHead(rows, &h.Run, &asked, &stated, &asks, &h.Answered, &h.CostUSD); err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		if asks {
			h.Asks = &Asking{}
			// A value of another type than the question's is not shown.
			if v := jsonValues(asked.String, 4); v != nil {
				_ = json.Unmarshal(v[0], &h.Asks.Gate)
				_ = json.Unmarshal(v[1], &h.Asks.Title)
				_ = json.Unmarshal(v[2], &h.Asks.Prompt)
				_ = json.Unmarshal(v[3], &h.Asks.Flagged)
			}
		}
		if v := jsonValues(stated.String, 3); v != nil {
			if json.Unmarshal(v[0], &h.Issue) != nil && len(v[0]) > 0 && v[0][0] != 'n' {
				h.Issue = string(v[0]) // a number
			}
			_ = json.Unmarshal(v[1], &h.Slug)
			_ = json.Unmarshal(v[2], &h.Filed)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// jsonValues decodes the JSON array of n values json_extract returns for
// n paths; nil when there is none.
func jsonValues(array string, n int) []json.RawMessage {
	var v []json.RawMessage
	if array == "" || json.Unmarshal([]byte(array), &v) != nil || len(v) != n {
		return nil
	}
	return v
}

// scanHead scans a row of runColumns followed by more columns into r and
// more, with its seal verified (Run.Unverified says why it is not) and
// its state, question and answer left out.
func (s *Store) scanHead(rows *sql.Rows, r *Run, more ...any) error {
	rw, err := scanRow(rowScanner{rows, more})
	if err != nil {
		return err
	}
	rw.brief = true
	verr := s.verify(rw)
	run, err := rw.run()
	if err != nil {
		if verr == nil {
			return err
		}
		// A forged row may not even decode: it is shown as it is.
		run = Run{ID: rw.id, Workflow: rw.workflow, Key: rw.key, Status: Status(rw.status), Node: rw.node,
			CreatedAt: time.Unix(0, rw.created), UpdatedAt: time.Unix(0, rw.updated)}
	}
	run.Unverified = verr
	run.State, run.Question, run.Answer = nil, nil, nil
	*r = run
	return nil
}

// rowScanner scans a row into what scanRow asks for, then more.
type rowScanner struct {
	rows *sql.Rows
	more []any
}

func (s rowScanner) Scan(dest ...any) error { return s.rows.Scan(append(dest, s.more...)...) }
