package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/azero-dev/azero/internal/answerkey"
)

// runSealKind names what a run's seal covers. Sealing more or other
// columns is a new kind, and a migration that seals every row again.
// v3 covers the state and the question through their digests (sha256,
// kept in columns of their own), and the run's summary (what a list shows
// of them, made from them at every write), so that a list verifies a
// row's seal and shows only what it covers without reading either;
// whatever reads the state or the question to act on it checks them
// against their digests too.
const runSealKind = "azero run v3"

// digestSealKind is the kind of seal before the summary: v2 covered the
// state and the question through their digests, and no summary. Migration
// 009 seals again, with v3, every row whose v2 seal verifies.
const digestSealKind = "azero run v2"

// legacySealKind is the kind of seal before the digests: v1 covered the
// state and the question themselves. Migration 007 seals again, with v2,
// every row whose v1 seal verifies (with v2; 009 then with v3).
const legacySealKind = "azero run v1"

// sealed is what a run's seal covers, as stored: every column that
// decides what the run does next. Not sealed: the lease (forging it can
// only make azero refuse to drive a run, or drive one whose row it then
// verifies), updated_at (shown, never acted on), and the posted answer,
// which has a seal of its own bound to the question's nonce.
type sealed struct {
	id, workflow, key, status, node string
	state                           []byte
	steps                           int64
	visits, errText, meta, question string
	created                         int64
	// summary is what a list shows of the state and the question
	// (summarize), made from them by every write.
	summary string
}

// digest is the hex of the sha256 of a large sealed column, as stored in
// its digest column.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// fieldsWith are what the v3 seal covers, with the digests of the state
// and the question as given.
func (c sealed) fieldsWith(stateDigest, questionDigest string) [][]byte {
	return append(c.digestFields(stateDigest, questionDigest), []byte(c.summary))
}

// digestFields are what the v2 seal covered: the v3 fields but the
// summary.
func (c sealed) digestFields(stateDigest, questionDigest string) [][]byte {
	return [][]byte{
		[]byte(c.id), []byte(c.workflow), []byte(c.key), []byte(c.status), []byte(c.node), []byte(stateDigest),
		strconv.AppendInt(nil, c.steps, 10), []byte(c.visits), []byte(c.errText), []byte(c.meta), []byte(questionDigest),
		strconv.AppendInt(nil, c.created, 10),
	}
}

// fields are what the v3 seal covers, the digests made from the content.
func (c sealed) fields() [][]byte {
	return c.fieldsWith(digest(c.state), digest([]byte(c.question)))
}

// legacyFields are what the v1 seal covered: the state and the question
// themselves.
func (c sealed) legacyFields() [][]byte {
	return [][]byte{
		[]byte(c.id), []byte(c.workflow), []byte(c.key), []byte(c.status), []byte(c.node), c.state,
		strconv.AppendInt(nil, c.steps, 10), []byte(c.visits), []byte(c.errText), []byte(c.meta), []byte(c.question),
		strconv.AppendInt(nil, c.created, 10),
	}
}

// row is a run's row as stored.
type row struct {
	sealed
	// The digests of the state and the question as stored, which the
	// seal covers.
	stateDigest, questionDigest string
	// brief: the state and the question were not read (a list's row);
	// only the seal over their digests and the summary can be verified.
	brief     bool
	seal      sql.NullString
	answer    string
	updated   int64
	lease     Lease
	leaseTill int64
}

const runColumns = `id, workflow, run_key, status, node, state, steps, visits, error, meta, question, created_at, seal, answer, updated_at, lease_token, lease_pid, lease_host, lease_until, state_digest, question_digest, summary`

// briefColumns are runColumns without the state and the question (read
// as empty): what a list reads to show a run and verify its seal. They
// come before the state and the question in the table (migration 009),
// so reading them reads no overflow page of either.
const briefColumns = `id, workflow, run_key, status, node, x'', steps, visits, error, meta, '', created_at, seal, answer, updated_at, lease_token, lease_pid, lease_host, lease_until, state_digest, question_digest, summary`

type scanner interface{ Scan(dest ...any) error }

func scanRow(sc scanner) (row, error) {
	var rw row
	err := sc.Scan(&rw.id, &rw.workflow, &rw.key, &rw.status, &rw.node, &rw.state, &rw.steps, &rw.visits, &rw.errText, &rw.meta,
		&rw.question, &rw.created, &rw.seal, &rw.answer, &rw.updated, &rw.lease.Token, &rw.lease.PID, &rw.lease.Host, &rw.leaseTill,
		&rw.stateDigest, &rw.questionDigest, &rw.summary)
	if rw.state == nil {
		rw.state = []byte{}
	}
	return rw, err
}

// run decodes the row.
func (rw row) run() (Run, error) {
	r := Run{ID: rw.id, Workflow: rw.workflow, Key: rw.key, Status: Status(rw.status), Node: rw.node, State: rw.state,
		Steps: int(rw.steps), Error: rw.errText, CreatedAt: time.Unix(0, rw.created), UpdatedAt: time.Unix(0, rw.updated), Lease: rw.lease}
	if rw.question != "" {
		r.Question = json.RawMessage(rw.question)
	}
	if rw.answer != "" {
		r.Answer = json.RawMessage(rw.answer)
	}
	if rw.leaseTill != 0 {
		r.Lease.Until = time.Unix(0, rw.leaseTill)
	}
	if err := json.Unmarshal([]byte(rw.visits), &r.Visits); err != nil {
		return Run{}, fmt.Errorf("run %s visits: %w", r.ID, err)
	}
	if err := json.Unmarshal([]byte(rw.meta), &r.Meta); err != nil {
		return Run{}, fmt.Errorf("run %s meta: %w", r.ID, err)
	}
	return r, nil
}

// ErrRunForged is matched by the error for a run whose stored row azero
// did not write: its seal is missing or does not match what it holds.
var ErrRunForged = errors.New("a run's stored row was changed outside azero")

// RunForgedError reports a run whose stored row does not verify
// (ErrRunForged): azero acts on nothing it holds.
type RunForgedError struct {
	RunID string
	Store string // the store's file
	// What the row claims, for the record; none of it is acted on.
	Workflow, Status, Node string
	Err                    error // why the row does not verify
	// digest is the seal the row's content would have: it tells one
	// forgery from another, and only azero can make it.
	digest string
}

func (e *RunForgedError) Error() string {
	return fmt.Sprintf("run %s: its stored row in %s was changed outside azero (%v), so azero will not act on it: "+
		"none of its steps runs, nothing of it is merged, answered or cleaned up. "+
		"Something other than azero wrote to azero's store: find out what before you trust this machine's runs. "+
		"`azero runs show %s` shows the row as it stands; start the work again in a new run, "+
		"and remove the run's worktree and branch, if it has any, yourself with git",
		e.RunID, e.Store, e.Err, e.RunID)
}

// Is makes RunForgedError match ErrRunForged.
func (e *RunForgedError) Is(target error) bool { return target == ErrRunForged }

// Unwrap returns why the row does not verify.
func (e *RunForgedError) Unwrap() error { return e.Err }

// verify checks the row's seal: nil, a *RunForgedError, or the error of
// a key that cannot be read (then nothing verifies).
func (s *Store) verify(rw row) error {
	key, err := s.AnswerKey()
	if err != nil {
		return fmt.Errorf("verify run %s: %w", rw.id, err)
	}
	return s.verifyWith(key, rw)
}

func (s *Store) verifyWith(key *answerkey.Key, rw row) error {
	err := key.VerifyRecord(rw.seal.String, runSealKind, rw.fieldsWith(rw.stateDigest, rw.questionDigest)...)
	switch {
	case err == nil && rw.brief:
		return nil
	case err == nil:
		// The seal covers the digests; the content must be theirs.
		if digest(rw.state) != rw.stateDigest {
			err = errors.New("its state does not match the digest its seal covers")
		} else if digest([]byte(rw.question)) != rw.questionDigest {
			err = errors.New("its question does not match the digest its seal covers")
		} else {
			return nil
		}
	case !rw.seal.Valid:
		// Not "legacy": the migration sealed every row an older azero
		// made.
		err = errors.New("it carries no seal")
	case errors.Is(err, answerkey.ErrRecordSeal):
		err = errors.New("its seal does not match what it holds")
	}
	fields := rw.fieldsWith(rw.stateDigest, rw.questionDigest)
	if !rw.brief {
		fields = rw.fields()
	}
	return &RunForgedError{RunID: rw.id, Store: s.path, Workflow: rw.workflow, Status: rw.status, Node: rw.node, Err: err,
		digest: key.SealRecord(runSealKind, fields...)}
}

// current reads the run's row in tx for a write, and verifies it: azero
// never writes over a row it did not make, since its write would seal
// what was forged.
func (s *Store) current(ctx context.Context, tx *sql.Tx, runID string) (row, *answerkey.Key, error) {
	rw, err := scanRow(tx.StmtContext(ctx, s.readRun).QueryRowContext(ctx, runID))
	if errors.Is(err, sql.ErrNoRows) {
		return row{}, nil, fmt.Errorf("%w: %s", ErrNotFound, runID)
	}
	if err != nil {
		return row{}, nil, err
	}
	key, err := s.AnswerKey()
	if err != nil {
		return row{}, nil, fmt.Errorf("verify run %s: %w", runID, err)
	}
	if err := s.verifyWith(key, rw); err != nil {
		return row{}, nil, err
	}
	return rw, key, nil
}

// write stores c, the run's sealed columns, with their seal in tx. also
// sets more columns (not sealed) with alsoArgs; where narrows the row
// further with whereArgs.
func (s *Store) write(ctx context.Context, tx *sql.Tx, key *answerkey.Key, c sealed, also string, alsoArgs []any, where string, whereArgs ...any) (sql.Result, error) {
	q := `UPDATE runs SET run_key = ?, status = ?, node = ?, state = ?, steps = ?, visits = ?, error = ?, meta = ?, question = ?, seal = ?, updated_at = ?,
		state_digest = ?, question_digest = ?, summary = ?`
	sd, qd := digest(c.state), digest([]byte(c.question))
	c.summary = summarize(c.state, c.question)
	args := []any{c.key, c.status, c.node, c.state, c.steps, c.visits, c.errText, c.meta, c.question,
		key.SealRecord(runSealKind, c.fieldsWith(sd, qd)...), s.now().UnixNano(), sd, qd, c.summary}
	if also != "" {
		q += `, ` + also
		args = append(args, alsoArgs...)
	}
	q += ` WHERE id = ?` + where
	args = append(append(args, c.id), whereArgs...)
	return tx.ExecContext(ctx, q, args...)
}

// Peek returns the run FindRun would, and also one whose stored row does
// not verify (its Unverified says why): for showing a run, never for
// acting on it.
func (s *Store) Peek(ctx context.Context, ref string) (Run, error) {
	return s.find(ctx, ref, s.peek)
}

func (s *Store) peek(ctx context.Context, id string) (Run, error) {
	rw, err := s.readRow(ctx, id)
	if err != nil {
		return Run{}, err
	}
	r, err := rw.run()
	if err != nil {
		return Run{}, err
	}
	r.Unverified = s.verify(rw)
	return r, nil
}

// Recorder writes one record of the audit log (*audit.Logger is one).
type Recorder interface {
	Event(ctx context.Context, event, runID string, attrs ...slog.Attr) error
}

// ReportForged records err in rec as a run_forged event when it is (or
// wraps) a *RunForgedError, once for each forgery: the same forged row
// found again (a second resume, every gc) is not recorded again, a row
// forged anew is. by names what refused to act on it. It reports whether
// err was a forgery. A nil rec records nothing, and remembers nothing.
func (s *Store) ReportForged(ctx context.Context, rec Recorder, by string, err error) bool {
	var f *RunForgedError
	if !errors.As(err, &f) {
		return false
	}
	if rec == nil {
		return true
	}
	ctx = context.WithoutCancel(ctx)
	if f.digest != "" {
		res, ierr := s.db.ExecContext(ctx, `INSERT OR IGNORE INTO forgeries (run_id, digest, at) VALUES (?, ?, ?)`,
			f.RunID, f.digest, s.now().UnixNano())
		if ierr == nil {
			if n, _ := res.RowsAffected(); n == 0 {
				return true // recorded already
			}
		}
	}
	aerr := rec.Event(ctx, "run_forged", f.RunID, slog.String("by", by), slog.String("reason", f.Err.Error()),
		slog.String("claimed_workflow", f.Workflow), slog.String("claimed_status", f.Status), slog.String("claimed_node", f.Node))
	if aerr != nil && f.digest != "" {
		// Not recorded: the next refusal tries again.
		_, _ = s.db.ExecContext(ctx, `DELETE FROM forgeries WHERE run_id = ? AND digest = ?`, f.RunID, f.digest)
	}
	return true
}

// sealLegacy seals, once, the rows that exist when the seal column is
// added: an older azero made them, and the user trusts it. A store whose
// marker says it was sealed before had its schema rolled back by
// something else: its unsealed rows are forgeries, and stay unsealed.
func (s *Store) sealLegacy(ctx context.Context, tx *sql.Tx) error {
	legacy, err := allRows(ctx, tx, legacyColumns, scanLegacyRow)
	if err != nil {
		return err
	}
	if len(legacy) == 0 {
		return nil
	}
	if _, err := os.Stat(s.markerPath()); err == nil {
		return nil
	}
	key, err := s.AnswerKey()
	if err != nil {
		return fmt.Errorf("seal the runs an older azero made: %w", err)
	}
	for _, rw := range legacy {
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET seal = ? WHERE id = ?`, key.SealRecord(legacySealKind, rw.legacyFields()...), rw.id); err != nil {
			return fmt.Errorf("seal run %s: %w", rw.id, err)
		}
	}
	return nil
}

// legacyColumns are the columns of a run's row before migration 007 added
// the digests.
const legacyColumns = `id, workflow, run_key, status, node, state, steps, visits, error, meta, question, created_at, seal`

func scanLegacyRow(sc scanner) (row, error) {
	var rw row
	err := sc.Scan(&rw.id, &rw.workflow, &rw.key, &rw.status, &rw.node, &rw.state, &rw.steps, &rw.visits, &rw.errText, &rw.meta,
		&rw.question, &rw.created, &rw.seal)
	if rw.state == nil {
		rw.state = []byte{}
	}
	return rw, err
}

// sealDigests is migration 007's Go step: it adds the digest columns
// (unless a schema rolled back kept them) and seals again, with v2, every
// row whose v1 seal verifies (009 then seals it with v3). A row whose v1
// seal does not verify (a forgery, or a row left unsealed after a
// rollback) gets no v2 seal and stays refused.
func (s *Store) sealDigests(ctx context.Context, tx *sql.Tx) error {
	have := map[string]bool{}
	cols, err := tx.QueryContext(ctx, `SELECT name FROM pragma_table_info('runs')`)
	if err != nil {
		return err
	}
	for cols.Next() {
		var name string
		if err := cols.Scan(&name); err != nil {
			cols.Close()
			return err
		}
		have[name] = true
	}
	cols.Close()
	if err := cols.Err(); err != nil {
		return err
	}
	for _, col := range []string{"state_digest", "question_digest"} {
		if !have[col] {
			if _, err := tx.ExecContext(ctx, `ALTER TABLE runs ADD COLUMN `+col+` TEXT NOT NULL DEFAULT ''`); err != nil {
				return err
			}
		}
	}
	old, err := allRows(ctx, tx, legacyColumns, scanLegacyRow)
	if err != nil {
		return err
	}
	if len(old) == 0 {
		return nil
	}
	key, err := s.AnswerKey()
	if err != nil {
		return fmt.Errorf("seal the runs again over their digests: %w", err)
	}
	for _, rw := range old {
		if key.VerifyRecord(rw.seal.String, legacySealKind, rw.legacyFields()...) != nil {
			continue
		}
		sd, qd := digest(rw.state), digest([]byte(rw.question))
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET seal = ?, state_digest = ?, question_digest = ? WHERE id = ?`,
			key.SealRecord(digestSealKind, rw.digestFields(sd, qd)...), sd, qd, rw.id); err != nil {
			return fmt.Errorf("seal run %s: %w", rw.id, err)
		}
	}
	return nil
}

// allRows reads every run row of the store as a migration finds it: the
// columns named by columns, scanned by scan.
func allRows(ctx context.Context, tx *sql.Tx, columns string, scan func(scanner) (row, error)) ([]row, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+columns+` FROM runs`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []row
	for rows.Next() {
		rw, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, rw)
	}
	return out, rows.Err()
}

// markerPath is the file that says the store's runs are sealed: once it
// exists, no row is ever sealed as an older azero's again. It lives beside
// the answer key, out of reach of what can only write the store.
func (s *Store) markerPath() string { return s.path + ".sealed" }

const markerText = `azero seals the runs of the store beside this file. While this file exists, a run
without a seal is refused as changed outside azero, even after the store's schema was rolled back.
Delete it only to make azero trust, once, the runs of an older store you restored yourself.
`

// mark creates the marker when it is missing.
func (s *Store) mark() error {
	f, err := os.OpenFile(s.markerPath(), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(markerText)
	return errors.Join(err, f.Close())
}

// sealSummaries is migration 009's Go step: it fills the summary of every
// row and seals again, with v3, every row whose v2 seal verifies and
// whose state and question match their digests. A row that does not
// verify gets no v3 seal and stays refused.
func (s *Store) sealSummaries(ctx context.Context, tx *sql.Tx) error {
	old, err := allRows(ctx, tx, runColumns, scanRow)
	if err != nil {
		return err
	}
	if len(old) == 0 {
		return nil
	}
	key, err := s.AnswerKey()
	if err != nil {
		return fmt.Errorf("seal the runs again with their summaries: %w", err)
	}
	for _, rw := range old {
		sd, qd := digest(rw.state), digest([]byte(rw.question))
		if sd != rw.stateDigest || qd != rw.questionDigest ||
			key.VerifyRecord(rw.seal.String, digestSealKind, rw.digestFields(sd, qd)...) != nil {
			continue
		}
		rw.summary = summarize(rw.state, rw.question)
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET seal = ?, summary = ? WHERE id = ?`,
			key.SealRecord(runSealKind, rw.fieldsWith(sd, qd)...), rw.summary, rw.id); err != nil {
			return fmt.Errorf("seal run %s: %w", rw.id, err)
		}
	}
	return nil
}
