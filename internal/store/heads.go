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
		// The question's digest says whether there is one without reading it.
		cond += ` AND status IN ('running', 'waiting', 'interrupted', 'failed') AND question_digest != '` + noQuestion + `'`
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

// noQuestion is the digest of no question.
var noQuestion = digest(nil)

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
// and answer (nil), with what a list shows of them (its summary, which
// the seal covers) and its cost. A run whose stored row does not verify
// is listed with Run.Unverified saying why, and nothing of its summary:
// shown, never acted on.
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
// list shows of a run's state and question is its summary, which every
// write makes from them and the seal covers: a page of runs costs a page
// of small rows, in one query, however many runs there are and however
// large their state and question. A run whose row does not verify shows
// nothing of its summary.
func (s *Store) ListHeads(ctx context.Context, f Filter) ([]Head, error) {
	cond, order, args := where(f)
	rows, err := s.db.QueryContext(ctx, `SELECT `+briefColumns+`, answer != '',
		(SELECT TOTAL(cost_usd) FROM calls WHERE calls.run_id = runs.id) FROM runs`+cond+order, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []Head
	for rows.Next() {
		var h Head
		sum, err := s.scanHead(rows, &h.Run, &h.Answered, &h.CostUSD)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		if h.Unverified == nil {
			h.Asks, h.Issue, h.Slug, h.Filed = sum.asking(), sum.Issue, sum.Slug, sum.Filed
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	return out, nil
}

// summary is what a list shows of a run's state and question (Head), as
// the summary column keeps it: made by summarize at every write, covered
// by the seal.
type summary struct {
	Asks    bool     `json:"asks,omitempty"`
	Gate    string   `json:"gate,omitempty"`
	Title   string   `json:"title,omitempty"`
	Prompt  string   `json:"prompt,omitempty"`
	Flagged []string `json:"flagged,omitempty"`
	Issue   string   `json:"issue,omitempty"`
	Slug    string   `json:"slug,omitempty"`
	Filed   int      `json:"filed,omitempty"`
}

func (sum summary) asking() *Asking {
	if !sum.Asks {
		return nil
	}
	return &Asking{Gate: sum.Gate, Title: sum.Title, Prompt: sum.Prompt, Flagged: sum.Flagged}
}

// summarize makes the summary of a run's state and question: the
// question's "gate", "title", "prompt" and "facts"."flagged_files", the
// state's "issue" (a string, or a number as written), "slug" and
// "filed"."number", the keys azero's workflows keep them under. A value
// of another type, or in a state or question that is not JSON, is left
// out.
func summarize(state []byte, question string) string {
	var sum summary
	if question != "" {
		sum.Asks = true
		var q struct {
			Gate, Title, Prompt, Facts json.RawMessage
		}
		if json.Unmarshal([]byte(question), &q) == nil {
			_ = json.Unmarshal(q.Gate, &sum.Gate)
			_ = json.Unmarshal(q.Title, &sum.Title)
			_ = json.Unmarshal(q.Prompt, &sum.Prompt)
			var facts struct {
				Flagged json.RawMessage `json:"flagged_files"`
			}
			if json.Unmarshal(q.Facts, &facts) == nil && json.Unmarshal(facts.Flagged, &sum.Flagged) != nil {
				sum.Flagged = nil
			}
		}
	}
	var st struct {
		Issue, Slug, Filed json.RawMessage
	}
	if json.Unmarshal(state, &st) == nil {
		if json.Unmarshal(st.Issue, &sum.Issue) != nil && len(st.Issue) > 0 && string(st.Issue) != "null" {
			sum.Issue = string(st.Issue) // a number
		}
		_ = json.Unmarshal(st.Slug, &sum.Slug)
		var filed struct{ Number json.RawMessage }
		if json.Unmarshal(st.Filed, &filed) == nil && json.Unmarshal(filed.Number, &sum.Filed) != nil {
			sum.Filed = 0
		}
	}
	b, err := json.Marshal(sum)
	if err != nil {
		return "{}" // strings, numbers and a bool always encode
	}
	return string(b)
}

// scanHead scans a row of briefColumns followed by more columns into r
// and more, with its seal verified (Run.Unverified says why it is not)
// and its state, question and answer left out, and returns its summary
// (empty when it does not decode).
func (s *Store) scanHead(rows *sql.Rows, r *Run, more ...any) (summary, error) {
	rw, err := scanRow(rowScanner{rows, more})
	if err != nil {
		return summary{}, err
	}
	rw.brief = true
	verr := s.verify(rw)
	run, err := rw.run()
	if err != nil {
		if verr == nil {
			return summary{}, err
		}
		// A forged row may not even decode: it is shown as it is.
		run = Run{ID: rw.id, Workflow: rw.workflow, Key: rw.key, Status: Status(rw.status), Node: rw.node,
			CreatedAt: time.Unix(0, rw.created), UpdatedAt: time.Unix(0, rw.updated)}
	}
	run.Unverified = verr
	run.State, run.Question, run.Answer = nil, nil, nil
	*r = run
	var sum summary
	_ = json.Unmarshal([]byte(rw.summary), &sum)
	return sum, nil
}

// rowScanner scans a row into what scanRow asks for, then more.
type rowScanner struct {
	rows *sql.Rows
	more []any
}

func (s rowScanner) Scan(dest ...any) error { return s.rows.Scan(append(dest, s.more...)...) }
