// Package store keeps azero's runs in one SQLite file.
//
// The file is opened in WAL mode with a busy timeout, and every write
// transaction begins IMMEDIATE, so many processes can drive runs against one
// store without "database is locked" errors: writers queue instead of
// failing on a lock upgrade. Schema changes are embedded migrations applied
// on open.
//
// Invariants:
//   - A run's state, its current node and the history row recording how it
//     got there change together in one transaction (Checkpoint), and only
//     the holder of the run's lease can make that change.
//   - Every answer stored through PostAnswer is sealed (package answerkey)
//     for the run, the question and the question's nonce, with the key in
//     the store's directory. An answer in the answer column that does not
//     verify was not made by azero: CheckAnswer and PostedAnswer report it
//     as forged (ErrForged), and PostAnswer writes over it.
//   - Every write of a run's row seals it, in the same transaction, from
//     the values written: an HMAC (answerkey.SealRecord, the same key)
//     over every column that decides what the run does next: id,
//     workflow, key, status, node, steps, visits, error, meta,
//     created_at, and the state and the question (with its id and nonce)
//     through their sha256 digests, kept in columns of their own, and
//     the run's summary (what a list shows of the state and the
//     question, made from them at every write). A row
//     whose seal does not verify, or whose state or question is not what
//     its digest says, was changed outside azero (ErrRunForged): GetRun,
//     FindRun, PostAnswer and every write of a sealed column refuse it
//     (and so never seal a forgery), ListRuns leaves it out unless asked
//     (Filter.Unverified), and only Peek shows it; nothing acts on it.
//     A list that does not return the state and the question (ListHeads,
//     Filter.Brief) verifies the seal over the digests and the summary
//     without reading them, and shows of them only the summary, so a page
//     of runs costs a page of small rows (the large columns come last in
//     the table, so reading the others reads none of theirs); whatever
//     acts reads the run whole, digests checked.
//     The lease columns, updated_at and the answer are not sealed. The
//     rows an older azero made are sealed once, by the migration that
//     adds the seal (in Go, in the migration's transaction), and sealed
//     again over the digests by the migration that adds them, and with
//     their summaries by the one after, if their older seal verifies;
//     after that a
//     row without a seal is a forgery, never "legacy", and a marker file
//     beside the store keeps it so even if the schema is rolled back.
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/azero-dev/azero/internal/answerkey"
	"github.com/azero-dev/azero/internal/human"
)

// FileName is the store's name inside the state directory.
const FileName = "azero.db"

//go:embed migrations/*.sql
var migrations embed.FS

// Status is where a run stands.
type Status string

// Run statuses.
const (
	StatusRunning     Status = "running"     // a process is driving it (or was, until killed)
	StatusWaiting     Status = "waiting"     // stopped at a gate until a human answers
	StatusInterrupted Status = "interrupted" // stopped by SIGINT/SIGTERM; resumable
	StatusDone        Status = "done"
	StatusFailed      Status = "failed" // stopped by an error; resumable
	StatusAborted     Status = "aborted"
)

// Finished reports whether a run with this status can no longer resume.
func (s Status) Finished() bool { return s == StatusDone || s == StatusAborted }

// Errors returned by the store.
var (
	ErrNotFound  = errors.New("run not found")
	ErrLeaseLost = errors.New("lease lost: another process took over this run")
)

// Store is an open store.
type Store struct {
	db    *sql.DB
	path  string
	now   func() time.Time
	alive func(pid int) bool
	host  string

	keyMu sync.Mutex
	key   *answerkey.Key

	// readRun reads one run's row: prepared once, since every write
	// reads the row it seals anew.
	readRun *sql.Stmt
}

// Options tune a Store; the zero value is right for production.
type Options struct {
	Now   func() time.Time   // clock; time.Now by default
	Alive func(pid int) bool // whether a local process lives; signal 0 by default
}

// Open opens (creating if needed) the store at path and migrates it.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	dsn := "file:" + escapePath(path) +
		"?_pragma=busy_timeout(30000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)" +
		"&_pragma=foreign_keys(ON)&_txlock=immediate"
	// Switching a new database to WAL and migrating it take locks that
	// SQLite's busy handler does not always wait for; processes opening
	// the store at the same moment take turns instead.
	unlock, err := lockFile(path + ".lock")
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	defer unlock()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	s := &Store{db: db, path: path, now: opts.Now, alive: opts.Alive}
	if s.now == nil {
		s.now = time.Now
	}
	if s.alive == nil {
		s.alive = processAlive
	}
	s.host, _ = os.Hostname()
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate store %s: %w", path, err)
	}
	if s.readRun, err = db.PrepareContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// escapePath protects the characters SQLite's URI parser treats specially.
func escapePath(p string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(p)
}

// Path returns the store's file name.
func (s *Store) Path() string { return s.path }

// Close closes the store.
func (s *Store) Close() error { return errors.Join(s.readRun.Close(), s.db.Close()) }

func (s *Store) migrate(ctx context.Context) error {
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	// A migration that makes the runs table again drops it while history,
	// calls and events name it: SQLite asks for foreign keys off, which
	// only a connection outside a transaction can set, so the migrations
	// run on a connection of their own.
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA foreign_keys = OFF"); err != nil {
		return err
	}
	// Back on before the connection returns to the pool.
	defer conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA foreign_keys = ON")
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if version > len(names) {
		return fmt.Errorf("store schema version %d is newer than this azero (%d): upgrade azero", version, len(names))
	}
	// Go steps of a migration, run in its transaction after its SQL.
	after := map[string]func(context.Context, *sql.Tx) error{
		"migrations/005_seal.sql":         s.sealLegacy,
		"migrations/007_seal_digests.sql": s.sealDigests,
		"migrations/009_run_summary.sql":  s.sealSummaries,
	}
	for i := version; i < len(names); i++ {
		body, err := migrations.ReadFile(names[i])
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			return fmt.Errorf("%s: %w", names[i], err)
		}
		if step := after[names[i]]; step != nil {
			if err := step(ctx, tx); err != nil {
				return fmt.Errorf("%s: %w", names[i], err)
			}
		}
	}
	if version != len(names) {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(names))); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	// Made at every open, not only by the migration: a store sealed before
	// the marker existed gets one too.
	if err := s.mark(); err != nil {
		return fmt.Errorf("mark the store as sealed: %w", err)
	}
	return nil
}

// Run is one execution of a workflow.
type Run struct {
	ID       string            `json:"id"`
	Workflow string            `json:"workflow"`
	Key      string            `json:"key,omitempty"`
	Status   Status            `json:"status"`
	Node     string            `json:"node"`
	State    json.RawMessage   `json:"-"`
	Steps    int               `json:"steps"`
	Visits   map[string]int    `json:"visits,omitempty"`
	Error    string            `json:"error,omitempty"`
	Meta     map[string]string `json:"meta,omitempty"`
	// Question is the pending question (JSON of a human.Question) while a
	// gate asks or waits for an answer; nil otherwise.
	Question json.RawMessage `json:"-"`
	// Answer is an answer posted for Question by another channel, not yet
	// taken by a driver; nil otherwise.
	Answer    json.RawMessage `json:"-"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
	Lease     Lease           `json:"-"`
	// Unverified says why the run's stored row does not verify: a
	// *RunForgedError, or the error of an answer key that cannot be read.
	// Only Peek and ListRuns with Filter.Unverified return such a run,
	// for showing it; nothing may act on it.
	Unverified error `json:"-"`
}

// Lease records which process drives a run, until when.
type Lease struct {
	Token string
	PID   int
	Host  string
	Until time.Time
}

// LeaseHeldError reports that another live process drives the run.
type LeaseHeldError struct {
	RunID string
	PID   int
	Host  string
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("run %s is being driven by another azero process (pid %d on %s); wait for it to finish or stop it first", e.RunID, e.PID, e.Host)
}

// NewID returns a fresh run id: the date and six random characters, such as
// "261122-k3x9qa": sortable, short enough to type.
func NewID(now time.Time) string {
	const alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return now.UTC().Format("060102") + "-" + string(b)
}

// CreateRun inserts a new run. ID, Workflow, Node and State are required.
func (s *Store) CreateRun(ctx context.Context, r Run) error {
	if r.ID == "" || r.Workflow == "" || r.Node == "" {
		return errors.New("create run: id, workflow and node are required")
	}
	if r.Status == "" {
		r.Status = StatusRunning
	}
	visits, meta, err := encodeMaps(r.Visits, r.Meta)
	if err != nil {
		return err
	}
	key, err := s.AnswerKey()
	if err != nil {
		return fmt.Errorf("create run %s: %w", r.ID, err)
	}
	now := s.now().UnixNano()
	state := []byte(r.State)
	if state == nil {
		state = []byte{}
	}
	c := sealed{id: r.ID, workflow: r.Workflow, key: r.Key, status: string(r.Status), node: r.Node, state: state,
		visits: visits, meta: meta, created: now}
	sd, qd := digest(c.state), digest(nil)
	c.summary = summarize(c.state, "")
	_, err = s.db.ExecContext(ctx, `INSERT INTO runs (id, workflow, run_key, status, node, state, visits, meta, created_at, updated_at, seal,
		state_digest, question_digest, summary) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.id, c.workflow, c.key, c.status, c.node, c.state, c.visits, c.meta, now, now, key.SealRecord(runSealKind, c.fieldsWith(sd, qd)...), sd, qd, c.summary)
	if err != nil {
		return fmt.Errorf("create run %s: %w", r.ID, err)
	}
	return nil
}

func encodeMaps(visits map[string]int, meta map[string]string) (string, string, error) {
	if visits == nil {
		visits = map[string]int{}
	}
	if meta == nil {
		meta = map[string]string{}
	}
	v, err := json.Marshal(visits)
	if err != nil {
		return "", "", err
	}
	m, err := json.Marshal(meta)
	if err != nil {
		return "", "", err
	}
	return string(v), string(m), nil
}

// GetRun returns the run with exactly this id, once its stored row
// verifies: a *RunForgedError (ErrRunForged) when it does not.
func (s *Store) GetRun(ctx context.Context, id string) (Run, error) {
	rw, err := s.readRow(ctx, id)
	if err != nil {
		return Run{}, err
	}
	if err := s.verify(rw); err != nil {
		return Run{}, err
	}
	return rw.run()
}

func (s *Store) readRow(ctx context.Context, id string) (row, error) {
	rw, err := scanRow(s.readRun.QueryRowContext(ctx, id))
	if errors.Is(err, sql.ErrNoRows) {
		return row{}, fmt.Errorf("%w: %s (list runs with `azero runs`)", ErrNotFound, id)
	}
	if err != nil {
		return row{}, fmt.Errorf("load run %s: %w", id, err)
	}
	return rw, nil
}

// FindRun returns the run whose id is ref or uniquely starts with ref,
// once its stored row verifies, as GetRun.
func (s *Store) FindRun(ctx context.Context, ref string) (Run, error) {
	return s.find(ctx, ref, s.GetRun)
}

func (s *Store) find(ctx context.Context, ref string, get func(context.Context, string) (Run, error)) (Run, error) {
	if r, err := get(ctx, ref); err == nil || !errors.Is(err, ErrNotFound) {
		return r, err
	}
	if ref == "" {
		return Run{}, fmt.Errorf("%w: empty run id", ErrNotFound)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM runs WHERE substr(id, 1, ?) = ? LIMIT 3`, len(ref), ref)
	if err != nil {
		return Run{}, fmt.Errorf("find run %s: %w", ref, err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return Run{}, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	switch len(ids) {
	case 0:
		return Run{}, fmt.Errorf("%w: %s (list runs with `azero runs`)", ErrNotFound, ref)
	case 1:
		return get(ctx, ids[0])
	default:
		return Run{}, fmt.Errorf("run id %q is ambiguous (%s, ...): type more of it", ref, strings.Join(ids, ", "))
	}
}

// Filter selects runs; zero fields match everything.
type Filter struct {
	Workflow string
	Key      string
	Status   Status
	// Asking selects the runs that have not ended and ask a question now
	// or wait for an answer to one.
	Asking bool
	Limit  int
	// Offset skips this many of the runs selected, newest first.
	Offset int
	// Brief leaves the runs' state, question and answer out (nil), for
	// lists that do not show them. They are not read either: the seal is
	// verified over their digests. Without Brief, the state and question
	// returned are checked against their digests too.
	Brief bool
	// Unverified includes the runs whose stored row does not verify, with
	// Run.Unverified saying why: for showing them, never for acting on
	// them. Without it they are left out.
	Unverified bool
}

// ListRuns returns matching runs, newest first: those whose stored row
// verifies, and with f.Unverified the others too. Without f.Unverified,
// an answer key that cannot be read is an error.
func (s *Store) ListRuns(ctx context.Context, f Filter) ([]Run, error) {
	cond, order, args := where(f)
	cols := runColumns
	if f.Brief {
		cols = briefColumns
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+cols+` FROM runs`+cond+order, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		rw, err := scanRow(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		rw.brief = f.Brief
		verr := s.verify(rw)
		switch {
		case verr == nil, f.Unverified:
		case errors.Is(verr, ErrRunForged):
			continue
		default:
			return nil, fmt.Errorf("list runs: %w", verr)
		}
		r, err := rw.run()
		if err != nil {
			if !f.Unverified {
				return nil, fmt.Errorf("list runs: %w", err)
			}
			// A forged row may not even decode: it is shown as it is.
			r = Run{ID: rw.id, Workflow: rw.workflow, Key: rw.key, Status: Status(rw.status), Node: rw.node,
				CreatedAt: time.Unix(0, rw.created), UpdatedAt: time.Unix(0, rw.updated)}
		}
		r.Unverified = verr
		if f.Brief {
			r.State, r.Question, r.Answer = nil, nil, nil
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// LeaseLive reports whether r's lease is held by a process that still runs.
// A lease of a process on this host that no longer exists is dead even
// before it expires, so a run killed with SIGKILL can resume at once.
func (s *Store) LeaseLive(r Run) bool {
	if r.Lease.Token == "" || !s.now().Before(r.Lease.Until) {
		return false
	}
	if r.Lease.Host == s.host && r.Lease.PID > 0 && !s.alive(r.Lease.PID) {
		return false
	}
	return true
}

// Acquire takes the run's lease for ttl, unless a live process holds it.
func (s *Store) Acquire(ctx context.Context, runID string, l Lease, ttl time.Duration) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("acquire run %s: %w", runID, err)
	}
	defer tx.Rollback()
	rw, err := scanRow(tx.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, runID))
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %s", ErrNotFound, runID)
	}
	if err != nil {
		return fmt.Errorf("acquire run %s: %w", runID, err)
	}
	// The lease is not sealed: whoever drives the run verifies its row.
	r := Run{ID: rw.id, Lease: rw.lease}
	if rw.leaseTill != 0 {
		r.Lease.Until = time.Unix(0, rw.leaseTill)
	}
	if r.Lease.Token != l.Token && s.LeaseLive(r) {
		return &LeaseHeldError{RunID: runID, PID: r.Lease.PID, Host: r.Lease.Host}
	}
	if l.Host == "" {
		l.Host = s.host
	}
	_, err = tx.ExecContext(ctx, `UPDATE runs SET lease_token = ?, lease_pid = ?, lease_host = ?, lease_until = ? WHERE id = ?`,
		l.Token, l.PID, l.Host, s.now().Add(ttl).UnixNano(), runID)
	if err != nil {
		return fmt.Errorf("acquire run %s: %w", runID, err)
	}
	return tx.Commit()
}

// Renew extends a held lease. It fails with ErrLeaseLost if the lease is
// no longer held with token.
func (s *Store) Renew(ctx context.Context, runID, token string, ttl time.Duration) error {
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET lease_until = ? WHERE id = ? AND lease_token = ?`,
		s.now().Add(ttl).UnixNano(), runID, token)
	if err != nil {
		return fmt.Errorf("renew lease of run %s: %w", runID, err)
	}
	return expectOne(res, runID)
}

// Release gives the lease up.
func (s *Store) Release(ctx context.Context, runID, token string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE runs SET lease_token = '', lease_pid = 0, lease_host = '', lease_until = 0
		WHERE id = ? AND lease_token = ?`, runID, token)
	if err != nil {
		return fmt.Errorf("release run %s: %w", runID, err)
	}
	return nil
}

func expectOne(res sql.Result, runID string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("run %s: %w", runID, ErrLeaseLost)
	}
	return nil
}

// Checkpoint records the outcome of one node.
type Checkpoint struct {
	RunID    string
	Token    string // the lease token; the write fails unless it is held
	Node     string // the node that ran
	Next     string // where the run now stands (the next node, or Node when stopped at it)
	Status   Status
	State    json.RawMessage // nil keeps the stored state
	Question json.RawMessage // the pending question; nil clears it (and an answer posted for it)
	// KeepQuestion leaves the pending question and its posted answer as
	// they are (a run resumed at its gate).
	KeepQuestion bool
	Steps        int
	Visits       map[string]int
	Error        string
	Outcome      string // history outcome: ok, waiting, failed, interrupted, aborted, done
	Attempt      string // the node execution that completed (outcome ok)
	Started      time.Time
	Finished     time.Time
}

// Checkpoint writes the run's new position, state and a history row in one
// transaction, with the row's new seal. A row that does not verify is not
// written (*RunForgedError).
func (s *Store) Checkpoint(ctx context.Context, cp Checkpoint) error {
	visits, _, err := encodeMaps(cp.Visits, nil)
	if err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("checkpoint run %s: %w", cp.RunID, err)
	}
	defer tx.Rollback()
	rw, key, err := s.current(ctx, tx, cp.RunID)
	if err != nil {
		return forgedOr(err, "checkpoint run %s: %w", cp.RunID)
	}
	c := rw.sealed
	c.status, c.node, c.steps, c.visits, c.errText = string(cp.Status), cp.Next, int64(cp.Steps), visits, cp.Error
	also := ""
	switch {
	case cp.KeepQuestion:
	case cp.Question == nil:
		// No question, no answer to it.
		c.question, also = "", `answer = ''`
	default:
		c.question = string(cp.Question)
	}
	if cp.State != nil {
		c.state = cp.State
	}
	res, err := s.write(ctx, tx, key, c, also, nil, ` AND lease_token = ?`, cp.Token)
	if err != nil {
		return fmt.Errorf("checkpoint run %s: %w", cp.RunID, err)
	}
	if err := expectOne(res, cp.RunID); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO history (run_id, node, next, outcome, error, started_at, finished_at, attempt)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		cp.RunID, cp.Node, cp.Next, cp.Outcome, cp.Error, cp.Started.UnixNano(), cp.Finished.UnixNano(), cp.Attempt)
	if err != nil {
		return fmt.Errorf("checkpoint run %s: %w", cp.RunID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("checkpoint run %s: %w", cp.RunID, err)
	}
	return nil
}

// SetQuestion records the question the run's gate is asking; only the
// holder of the lease can. An answer posted for another question is
// dropped; one posted for this question (same id) stays.
func (s *Store) SetQuestion(ctx context.Context, runID, token, questionID string, question json.RawMessage) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("record the question of run %s: %w", runID, err)
	}
	defer tx.Rollback()
	rw, key, err := s.current(ctx, tx, runID)
	if err != nil {
		return forgedOr(err, "record the question of run %s: %w", runID)
	}
	answer := ""
	var posted struct {
		QuestionID string `json:"question_id"`
	}
	if rw.answer != "" && json.Unmarshal([]byte(rw.answer), &posted) == nil && posted.QuestionID == questionID {
		answer = rw.answer
	}
	c := rw.sealed
	c.question = string(question)
	res, err := s.write(ctx, tx, key, c, `answer = ?`, []any{answer}, ` AND lease_token = ?`, token)
	if err != nil {
		return fmt.Errorf("record the question of run %s: %w", runID, err)
	}
	if err := expectOne(res, runID); err != nil {
		return err
	}
	return tx.Commit()
}

// ErrNotAsked is returned when an answer is posted for a question the run
// is not asking (answered already, changed, or never asked).
var ErrNotAsked = errors.New("the run is not asking that question")

// ErrAnswered is returned when the question already has an answer.
var ErrAnswered = errors.New("the question was already answered")

// AnswerKey returns the key that seals the store's answers: the file
// answerkey.FileName in the store's directory (azero's state directory),
// created on first use. A key that cannot be read is an error every time
// it is needed, so that no answer is taken without it.
func (s *Store) AnswerKey() (*answerkey.Key, error) {
	s.keyMu.Lock()
	defer s.keyMu.Unlock()
	if s.key != nil {
		return s.key, nil
	}
	k, err := answerkey.Load(filepath.Dir(s.path))
	if err != nil {
		return nil, err
	}
	s.key = k
	return k, nil
}

// PostAnswer records answer (JSON of a human.Answer) for the question with
// id questionID, if the run asks it now and nobody answered it yet: the
// first answer wins. It seals the answer for the run, the question and
// the question's nonce, so only what azero's channels post through it
// counts as an answer. It returns ErrNotAsked or ErrAnswered otherwise;
// an answer already there that does not verify is not an answer, and is
// written over.
func (s *Store) PostAnswer(ctx context.Context, runID, questionID string, answer json.RawMessage) error {
	key, err := s.AnswerKey()
	if err != nil {
		return fmt.Errorf("answer run %s: %w", runID, err)
	}
	var a human.Answer
	if err := json.Unmarshal(answer, &a); err != nil {
		return fmt.Errorf("answer run %s: decode the answer: %w", runID, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("answer run %s: %w", runID, err)
	}
	defer tx.Rollback()
	// No answer is taken for a run whose row azero did not write: its
	// question may be a forgery too.
	rw, _, err := s.current(ctx, tx, runID)
	if err != nil {
		return forgedOr(err, "answer run %s: %w", runID)
	}
	q, old := rw.question, rw.answer
	var asked human.Question
	if q == "" || json.Unmarshal([]byte(q), &asked) != nil || asked.ID != questionID {
		return fmt.Errorf("run %s: %w", runID, ErrNotAsked)
	}
	if old != "" {
		if _, err := checkAnswer(key, runID, asked, json.RawMessage(old)); err == nil {
			return fmt.Errorf("run %s: %w", runID, ErrAnswered)
		}
	}
	raw, err := json.Marshal(key.Seal(runID, asked, a))
	if err != nil {
		return fmt.Errorf("answer run %s: %w", runID, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET answer = ?, updated_at = ? WHERE id = ?`, string(raw), s.now().UnixNano(), runID); err != nil {
		return fmt.Errorf("answer run %s: %w", runID, err)
	}
	return tx.Commit()
}

// ErrForged is matched by the error for an answer in the store that azero
// did not make: it does not decode, or its seal does not verify for the
// run, the question and the question's nonce.
var ErrForged = errors.New("an answer in the store was not made by azero")

// ForgedError reports a stored answer that is not one (ErrForged).
type ForgedError struct {
	RunID string
	// Claimed is the answer as it claims to be (its channel, who gave it),
	// for the record; it decides nothing.
	Claimed human.Answer
	Err     error // why it does not verify
}

func (e *ForgedError) Error() string {
	channel := e.Claimed.Channel
	if channel == "" {
		channel = "no"
	}
	return fmt.Sprintf("run %s: the stored answer (claiming the %s channel) was not made by azero: %v", e.RunID, channel, e.Err)
}

// Is makes ForgedError match ErrForged.
func (e *ForgedError) Is(target error) bool { return target == ErrForged }

// Unwrap returns why the answer does not verify.
func (e *ForgedError) Unwrap() error { return e.Err }

// CheckAnswer decodes raw, an answer stored for question q of run runID,
// and verifies its seal against q (its id and nonce): a *ForgedError
// when it was not made by azero. The answer returned has no seal.
func (s *Store) CheckAnswer(runID string, q human.Question, raw json.RawMessage) (human.Answer, error) {
	key, err := s.AnswerKey()
	if err != nil {
		return human.Answer{}, err
	}
	return checkAnswer(key, runID, q, raw)
}

func checkAnswer(key *answerkey.Key, runID string, q human.Question, raw json.RawMessage) (human.Answer, error) {
	var a human.Answer
	if err := json.Unmarshal(raw, &a); err != nil {
		return human.Answer{}, &ForgedError{RunID: runID, Err: fmt.Errorf("it is not an answer: %w", err)}
	}
	if err := key.Verify(runID, q, a); err != nil {
		a.MAC = ""
		return human.Answer{}, &ForgedError{RunID: runID, Claimed: a, Err: err}
	}
	a.MAC = ""
	return a, nil
}

// PostedAnswer returns the answer posted for the question r asks and not
// yet taken, verified against the question as stored: ok is false when
// there is none, the error a *ForgedError when the one there was not made
// by azero (never to be shown as an answer).
func (s *Store) PostedAnswer(r Run) (a human.Answer, ok bool, err error) {
	if len(r.Answer) == 0 {
		return human.Answer{}, false, nil
	}
	var q human.Question
	if len(r.Question) == 0 || json.Unmarshal(r.Question, &q) != nil {
		return human.Answer{}, false, &ForgedError{RunID: r.ID, Err: errors.New("the run asks no question")}
	}
	a, err = s.CheckAnswer(r.ID, q, r.Answer)
	if err != nil {
		return human.Answer{}, false, err
	}
	return a, true, nil
}

// DropAnswer removes the answer raw from the run, if it is still the one
// stored; only the holder of the run's lease can (the engine, refusing a
// forged answer).
func (s *Store) DropAnswer(ctx context.Context, runID, token string, raw json.RawMessage) error {
	_, err := s.db.ExecContext(ctx, `UPDATE runs SET answer = '', updated_at = ? WHERE id = ? AND lease_token = ? AND answer = ?`,
		s.now().UnixNano(), runID, token, string(raw))
	if err != nil {
		return fmt.Errorf("drop the answer of run %s: %w", runID, err)
	}
	return nil
}

// SetKey changes the run's workflow key (the governance slug, once the run
// has claimed it).
func (s *Store) SetKey(ctx context.Context, runID, key string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("set the key of run %s: %w", runID, err)
	}
	defer tx.Rollback()
	rw, seal, err := s.current(ctx, tx, runID)
	if err != nil {
		return forgedOr(err, "set the key of run %s: %w", runID)
	}
	c := rw.sealed
	c.key = key
	if _, err := s.write(ctx, tx, seal, c, "", nil, ""); err != nil {
		return fmt.Errorf("set the key of run %s: %w", runID, err)
	}
	return tx.Commit()
}

// UpdateMeta merges keys into the run's metadata.
func (s *Store) UpdateMeta(ctx context.Context, runID string, meta map[string]string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rw, key, err := s.current(ctx, tx, runID)
	if err != nil {
		return forgedOr(err, "update the metadata of run %s: %w", runID)
	}
	m := map[string]string{}
	if err := json.Unmarshal([]byte(rw.meta), &m); err != nil {
		return err
	}
	for k, v := range meta {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c := rw.sealed
	c.meta = string(b)
	if _, err := s.write(ctx, tx, key, c, "", nil, ""); err != nil {
		return fmt.Errorf("update the metadata of run %s: %w", runID, err)
	}
	return tx.Commit()
}

// Step is one history row.
type Step struct {
	Node       string        `json:"node"`
	Next       string        `json:"next,omitempty"`
	Outcome    string        `json:"outcome"`
	Error      string        `json:"error,omitempty"`
	Started    time.Time     `json:"started_at"`
	Finished   time.Time     `json:"finished_at"`
	Duration   time.Duration `json:"-"`
	DurationMS int64         `json:"duration_ms"`
}

// History returns the run's history, oldest first.
func (s *Store) History(ctx context.Context, runID string) ([]Step, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT node, next, outcome, error, started_at, finished_at
		FROM history WHERE run_id = ? ORDER BY id`, runID)
	if err != nil {
		return nil, fmt.Errorf("history of run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []Step
	for rows.Next() {
		var st Step
		var started, finished int64
		if err := rows.Scan(&st.Node, &st.Next, &st.Outcome, &st.Error, &started, &finished); err != nil {
			return nil, err
		}
		st.Started, st.Finished = time.Unix(0, started), time.Unix(0, finished)
		st.Duration = st.Finished.Sub(st.Started)
		st.DurationMS = st.Duration.Milliseconds()
		out = append(out, st)
	}
	return out, rows.Err()
}

// EditState changes a run's stored state with edit, unless a live process
// drives the run (its changes would be lost at its next checkpoint), and
// seals the row anew. A row that does not verify is not edited
// (*RunForgedError).
func (s *Store) EditState(ctx context.Context, runID string, edit func(json.RawMessage) (json.RawMessage, error)) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("edit run %s: %w", runID, err)
	}
	defer tx.Rollback()
	rw, key, err := s.current(ctx, tx, runID)
	if err != nil {
		return forgedOr(err, "edit run %s: %w", runID)
	}
	r, err := rw.run()
	if err != nil {
		return fmt.Errorf("edit run %s: %w", runID, err)
	}
	if s.LeaseLive(r) {
		return &LeaseHeldError{RunID: runID, PID: r.Lease.PID, Host: r.Lease.Host}
	}
	state, err := edit(r.State)
	if err != nil {
		return err
	}
	c := rw.sealed
	c.state = state
	if c.state == nil {
		c.state = []byte{}
	}
	if _, err := s.write(ctx, tx, key, c, "", nil, ""); err != nil {
		return fmt.Errorf("edit run %s: %w", runID, err)
	}
	return tx.Commit()
}

// forgedOr returns err as it is when it reports a forged row (its message
// says everything), else wrapped by format with runID.
func forgedOr(err error, format, runID string) error {
	if errors.Is(err, ErrRunForged) || errors.Is(err, ErrNotFound) {
		return err
	}
	return fmt.Errorf(format, runID, err)
}
