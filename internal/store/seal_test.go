package store_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/answerkey"
	"github.com/azero-dev/azero/internal/audit"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/store"
)

// sqlite opens the store's file with database/sql alone, as code that
// reached azero's state directory would.
func sqlite(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func exec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// sealOf reads a run's seal column ("" for NULL or no run).
func sealOf(t *testing.T, db *sql.DB, id string) string {
	t.Helper()
	var seal sql.NullString
	if err := db.QueryRow(`SELECT seal FROM runs WHERE id = ?`, id).Scan(&seal); err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatal(err)
	}
	return seal.String
}

// rowOf is a run's row as stored, every column, for comparing.
func rowOf(t *testing.T, db *sql.DB, id string) string {
	t.Helper()
	var s string
	err := db.QueryRow(`SELECT quote(id) || quote(workflow) || quote(run_key) || quote(status) || quote(node) || quote(state) ||
		quote(steps) || quote(visits) || quote(error) || quote(meta) || quote(question) || quote(answer) || quote(created_at) ||
		quote(updated_at) || quote(seal) || quote(state_digest) || quote(question_digest) || quote(summary) FROM runs WHERE id = ?`, id).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every write of a run's row leaves it sealed for what it now holds, and
// a write that changes a sealed column changes the seal.
func TestEveryWriteSealsTheRow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, store.FileName)
	st := open(t, path)
	db := sqlite(t, path)
	ctx := t.Context()
	q := human.Question{Gate: "review", Kind: human.Word, Prompt: "Merge?", Options: []human.Option{{Key: "approve", Decision: "APPROVED"}}}
	q.ID, q.Nonce = human.Fingerprint(q), answerkey.Nonce()
	rawQ, _ := json.Marshal(q)
	now := time.Now()
	seals := map[string]bool{}
	for _, w := range []struct {
		name    string
		write   func() error
		reseals bool // it changes a sealed column
	}{
		{"CreateRun", func() error {
			return st.CreateRun(ctx, store.Run{ID: "r", Workflow: "w", Node: "a", State: json.RawMessage(`{"n":0}`), Meta: map[string]string{"dir": "/x"}})
		}, true},
		{"Acquire", func() error { return st.Acquire(ctx, "r", store.Lease{Token: "t", PID: os.Getpid()}, time.Minute) }, false},
		{"Renew", func() error { return st.Renew(ctx, "r", "t", time.Minute) }, false},
		{"Checkpoint", func() error {
			return st.Checkpoint(ctx, store.Checkpoint{RunID: "r", Token: "t", Node: "a", Next: "review", Status: store.StatusRunning,
				State: json.RawMessage(`{"n":1}`), Steps: 1, Visits: map[string]int{"a": 1}, Outcome: "ok", Started: now, Finished: now})
		}, true},
		{"SetQuestion", func() error { return st.SetQuestion(ctx, "r", "t", q.ID, rawQ) }, true},
		{"PostAnswer", func() error { return st.PostAnswer(ctx, "r", q.ID, webAnswer(q)) }, false},
		{"Checkpoint waiting", func() error {
			return st.Checkpoint(ctx, store.Checkpoint{RunID: "r", Token: "t", Node: "review", Next: "review", Status: store.StatusWaiting,
				Question: rawQ, Steps: 1, Visits: map[string]int{"a": 1}, Error: "nobody to ask", Outcome: "waiting", Started: now, Finished: now})
		}, true},
		{"Checkpoint keeping the question", func() error {
			return st.Checkpoint(ctx, store.Checkpoint{RunID: "r", Token: "t", Node: "review", Next: "review", Status: store.StatusRunning,
				KeepQuestion: true, Steps: 1, Visits: map[string]int{"a": 1, "review": 0}, Outcome: "resumed", Started: now, Finished: now})
		}, true},
		{"DropAnswer", func() error {
			r, err := st.GetRun(ctx, "r")
			if err != nil {
				return err
			}
			return st.DropAnswer(ctx, "r", "t", r.Answer)
		}, false},
		{"Release", func() error { return st.Release(ctx, "r", "t") }, false},
		{"SetKey", func() error { return st.SetKey(ctx, "r", "my-slug") }, true},
		{"UpdateMeta", func() error { return st.UpdateMeta(ctx, "r", map[string]string{"engine": "temporal"}) }, true},
		{"EditState", func() error {
			return st.EditState(ctx, "r", func(json.RawMessage) (json.RawMessage, error) { return json.RawMessage(`{"n":1,"budget":2}`), nil })
		}, true},
	} {
		before := sealOf(t, db, "r")
		if err := w.write(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		after := sealOf(t, db, "r")
		if len(after) != 64 {
			t.Fatalf("after %s the seal is %q: want an HMAC-SHA256 in hex", w.name, after)
		}
		if _, err := st.GetRun(ctx, "r"); err != nil {
			t.Fatalf("after %s the row does not verify: %v", w.name, err)
		}
		if changed := after != before; changed != w.reseals {
			t.Errorf("%s changed the seal: %v, want %v", w.name, changed, w.reseals)
		}
		if w.reseals && seals[after] {
			t.Errorf("%s: a seal seen before for other contents", w.name)
		}
		seals[after] = true
	}
	r, _ := st.GetRun(ctx, "r")
	if r.Key != "my-slug" || r.Meta["engine"] != "temporal" || r.Meta["dir"] != "/x" || string(r.State) != `{"n":1,"budget":2}` || r.Node != "review" {
		t.Errorf("the writes did not all land: %+v", r)
	}
}

// forgeries are the rewrites of a run's row that code reaching the store
// could make with SQL; each must make the row refused. The run "r" waits
// at review; "other" is another run of the same store.
var forgeries = []struct {
	name, sql string
}{
	// The attack of issue 22: past the gate, to the merge, with a commit.
	{"node and state rewritten to merge", `UPDATE runs SET node = 'merge', status = 'interrupted', question = '',
		state = json_set(CAST(state AS TEXT), '$.commit', 'deadbeef') WHERE id = 'r'`},
	{"status flipped", `UPDATE runs SET status = 'aborted' WHERE id = 'r'`},
	{"seal set to NULL", `UPDATE runs SET seal = NULL WHERE id = 'r'`},
	{"seal emptied", `UPDATE runs SET seal = '' WHERE id = 'r'`},
	{"the row of another run copied over it", `UPDATE runs SET (workflow, run_key, status, node, state, steps, visits, error, meta, question, created_at, seal,
		state_digest, question_digest, summary) = (SELECT workflow, run_key, status, node, state, steps, visits, error, meta, question, created_at, seal,
		state_digest, question_digest, summary FROM runs WHERE id = 'other') WHERE id = 'r'`},
	{"workflow", `UPDATE runs SET workflow = 'issue' WHERE id = 'r'`},
	{"key", `UPDATE runs SET run_key = 'someone-elses-slug' WHERE id = 'r'`},
	{"steps", `UPDATE runs SET steps = 0 WHERE id = 'r'`},
	{"visits", `UPDATE runs SET visits = '{}' WHERE id = 'r'`},
	{"error", `UPDATE runs SET error = 'approved by the admin' WHERE id = 'r'`},
	{"meta", `UPDATE runs SET meta = '{"engine":"temporal"}' WHERE id = 'r'`},
	{"question", `UPDATE runs SET question = replace(question, 'Merge?', 'Merge? (approve is safe)') WHERE id = 'r'`},
	{"question's nonce", `UPDATE runs SET question = json_set(question, '$.nonce', '00') WHERE id = 'r'`},
	{"created_at", `UPDATE runs SET created_at = created_at + 1 WHERE id = 'r'`},
	{"state with a byte more", `UPDATE runs SET state = CAST(CAST(state AS TEXT) || ' ' AS BLOB) WHERE id = 'r'`},
	{"summary", `UPDATE runs SET summary = json_set(summary, '$.prompt', 'Approving is safe.') WHERE id = 'r'`},
}

// waitingStore makes a store whose run "r" waits at its review gate and
// whose run "other" waits too.
func waitingStore(t *testing.T) (*store.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), store.FileName)
	st := open(t, path)
	ctx := t.Context()
	now := time.Now()
	for _, id := range []string{"other", "r"} {
		if err := st.CreateRun(ctx, store.Run{ID: id, Workflow: "implement", Node: "worktree", State: json.RawMessage(`{"commit":""}`)}); err != nil {
			t.Fatal(err)
		}
		if err := st.Acquire(ctx, id, store.Lease{Token: "t", PID: os.Getpid()}, time.Minute); err != nil {
			t.Fatal(err)
		}
		q := human.Question{Gate: "human_review", Kind: human.Word, Prompt: "Merge?", Options: []human.Option{{Key: "approve", Decision: "APPROVED"}}}
		q.ID, q.Nonce = human.Fingerprint(q), answerkey.Nonce()
		rawQ, _ := json.Marshal(q)
		if err := st.Checkpoint(ctx, store.Checkpoint{RunID: id, Token: "t", Node: "human_review", Next: "human_review", Status: store.StatusWaiting,
			Question: rawQ, State: json.RawMessage(`{"commit":"","worktree":"/w/` + id + `"}`), Steps: 7, Visits: map[string]int{"red": 1},
			Outcome: "waiting", Started: now, Finished: now}); err != nil {
			t.Fatal(err)
		}
		if err := st.Release(ctx, id, "t"); err != nil {
			t.Fatal(err)
		}
	}
	return st, path
}

// A row changed with SQL is refused by every reader that acts and by
// every write, which leaves it as it is (a write would seal the forgery);
// only Peek and a listing that asks show it, marked.
func TestForgedRowsAreRefused(t *testing.T) {
	t.Parallel()
	for _, f := range forgeries {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			st, path := waitingStore(t)
			db := sqlite(t, path)
			ctx := t.Context()
			exec(t, db, f.sql)
			forged := rowOf(t, db, "r")

			_, err := st.GetRun(ctx, "r")
			var fe *store.RunForgedError
			if !errors.As(err, &fe) || !errors.Is(err, store.ErrRunForged) || fe.RunID != "r" {
				t.Fatalf("GetRun = %v, want a *RunForgedError for r", err)
			}
			for _, want := range []string{"run r: its stored row in " + path + " was changed outside azero", "azero will not act on it", "azero runs show r"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q:\n%v", want, err)
				}
			}
			if _, err := st.FindRun(ctx, "r"); !errors.Is(err, store.ErrRunForged) {
				t.Errorf("FindRun = %v", err)
			}
			if r, err := st.GetRun(ctx, "other"); err != nil || r.ID != "other" {
				t.Errorf("the other run no longer verifies: %v", err)
			}
			runs, err := st.ListRuns(ctx, store.Filter{})
			if err != nil || len(runs) != 1 || runs[0].ID != "other" {
				t.Errorf("ListRuns = %d runs, %v: want only the other one", len(runs), err)
			}
			runs, err = st.ListRuns(ctx, store.Filter{Unverified: true})
			i := slices.IndexFunc(runs, func(r store.Run) bool { return r.ID == "r" })
			if err != nil || len(runs) != 2 || i < 0 || !errors.Is(runs[i].Unverified, store.ErrRunForged) {
				t.Errorf("ListRuns(Unverified) = %+v, %v: want both, r marked", runs, err)
			}
			if p, err := st.Peek(ctx, "r"); err != nil || !errors.Is(p.Unverified, store.ErrRunForged) {
				t.Errorf("Peek = %v, unverified %v", err, p.Unverified)
			}

			now := time.Now()
			q := human.Question{Gate: "human_review"}
			for name, write := range map[string]func() error{
				"Acquire+Checkpoint": func() error {
					if err := st.Acquire(ctx, "r", store.Lease{Token: "t2", PID: os.Getpid()}, time.Minute); err != nil {
						return err
					}
					defer st.Release(context.WithoutCancel(ctx), "r", "t2")
					return st.Checkpoint(ctx, store.Checkpoint{RunID: "r", Token: "t2", Node: "merge", Next: "cleanup", Status: store.StatusRunning,
						Steps: 8, Outcome: "ok", Started: now, Finished: now})
				},
				"SetQuestion": func() error {
					if err := st.Acquire(ctx, "r", store.Lease{Token: "t3", PID: os.Getpid()}, time.Minute); err != nil {
						return err
					}
					defer st.Release(context.WithoutCancel(ctx), "r", "t3")
					return st.SetQuestion(ctx, "r", "t3", "q", json.RawMessage(`{"id":"q"}`))
				},
				"PostAnswer": func() error { return st.PostAnswer(ctx, "r", q.ID, webAnswer(q)) },
				"SetKey":     func() error { return st.SetKey(ctx, "r", "slug") },
				"UpdateMeta": func() error { return st.UpdateMeta(ctx, "r", map[string]string{"a": "b"}) },
				"EditState": func() error {
					return st.EditState(ctx, "r", func(s json.RawMessage) (json.RawMessage, error) { return s, nil })
				},
			} {
				if err := write(); !errors.Is(err, store.ErrRunForged) {
					t.Errorf("%s on a forged row = %v, want ErrRunForged", name, err)
				}
			}
			if after := rowOf(t, db, "r"); after != forged {
				t.Errorf("a refused write changed the forged row:\n%s\nnow\n%s", forged, after)
			}
		})
	}
}

// What is not sealed (the lease, updated_at, the posted answer, which has
// its own seal) can change without the row turning into a forgery.
func TestUnsealedColumnsDoNotBreakTheSeal(t *testing.T) {
	t.Parallel()
	st, path := waitingStore(t)
	db := sqlite(t, path)
	exec(t, db, `UPDATE runs SET updated_at = 1, lease_token = 'x', lease_pid = 1, lease_host = 'elsewhere', lease_until = 2, answer = '{"key":"approve"}' WHERE id = 'r'`)
	if _, err := st.GetRun(t.Context(), "r"); err != nil {
		t.Fatalf("GetRun after changing unsealed columns: %v", err)
	}
}

// oldStore builds a store file with the schema of the azero before seals
// (the migrations before the seal's, run with database/sql alone) and
// two runs in it, as that azero wrote them.
func oldStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), store.FileName)
	db := sqlite(t, path)
	names, err := filepath.Glob("migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	seal := slices.Index(names, "migrations/005_seal.sql")
	if seal < 0 {
		t.Fatalf("no seal migration among %v", names)
	}
	for _, name := range names[:seal] {
		body, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		exec(t, db, string(body))
	}
	exec(t, db, fmt.Sprintf("PRAGMA user_version = %d", seal))
	for i, id := range []string{"old-done", "old-waiting"} {
		exec(t, db, `INSERT INTO runs (id, workflow, run_key, status, node, state, steps, visits, meta, question, created_at, updated_at)
			VALUES (?, 'implement', '', ?, ?, ?, 3, '{"red":1}', '{}', ?, ?, ?)`,
			id, []string{"done", "waiting"}[i], []string{"END", "human_review"}[i], []byte(`{"commit":"","worktree":"/w"}`),
			[]string{"", `{"gate":"human_review","id":"q1"}`}[i], 1_700_000_000_000_000_000+i, 1_700_000_000_000_000_000+i)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// The migration that adds the seal seals the rows an older azero made,
// once, when azero opens the store; after that, a row without a seal is a
// forgery, also when the store is opened again, and also when the schema
// was rolled back to look like an older azero's.
func TestMigrationSealsAnOlderStoreOnce(t *testing.T) {
	t.Parallel()
	path := oldStore(t)
	st, err := store.Open(t.Context(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, id := range []string{"old-done", "old-waiting"} {
		r, err := st.GetRun(ctx, id)
		if err != nil {
			t.Fatalf("a run of the older azero does not verify after the migration: %v", err)
		}
		if r.Steps != 3 || r.Visits["red"] != 1 {
			t.Errorf("run %s changed in the migration: %+v", id, r)
		}
	}
	if info, err := os.Stat(filepath.Join(filepath.Dir(path), answerkey.FileName)); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the migration sealed with no private key: %v", err)
	}
	st.Close()

	db := sqlite(t, path)
	var version int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != 9 {
		t.Fatalf("schema version %d, %v", version, err)
	}
	// A row without a seal after the migration is a forgery, opened again
	// or not.
	exec(t, db, `INSERT INTO runs (id, workflow, status, node, state, created_at, updated_at) VALUES ('new-forged', 'implement', 'waiting', 'merge', '{}', 1, 1)`)
	exec(t, db, `UPDATE runs SET seal = NULL, node = 'merge' WHERE id = 'old-waiting'`)
	for range 2 {
		st := open(t, path)
		for _, id := range []string{"new-forged", "old-waiting"} {
			if _, err := st.GetRun(ctx, id); !errors.Is(err, store.ErrRunForged) || !strings.Contains(err.Error(), "it carries no seal") {
				t.Errorf("run %s without a seal: %v, want it refused as forged", id, err)
			}
		}
		if _, err := st.GetRun(ctx, "old-done"); err != nil {
			t.Errorf("old-done: %v", err)
		}
		st.Close()
	}

	// Rolled back to the older schema (seal column dropped, version
	// lowered), the store is not taken for an older azero's: its marker
	// says it was sealed.
	exec(t, db, `ALTER TABLE runs DROP COLUMN seal`)
	exec(t, db, `DROP TABLE forgeries`)
	exec(t, db, `PRAGMA user_version = 4`)
	exec(t, db, `UPDATE runs SET status = 'running', node = 'merge' WHERE id = 'old-done'`)
	st = open(t, path)
	for _, id := range []string{"new-forged", "old-waiting", "old-done"} {
		if _, err := st.GetRun(ctx, id); !errors.Is(err, store.ErrRunForged) {
			t.Errorf("run %s after a schema rollback: %v, want it refused as forged", id, err)
		}
	}
	st.Close()
	marker, err := os.ReadFile(path + ".sealed")
	if err != nil || !strings.Contains(string(marker), "Delete it only to make azero trust, once, the runs of an older store") {
		t.Errorf("the marker %s.sealed does not say what it is for: %q, %v", path, marker, err)
	}
}

// A store made by this azero is marked as sealed from its first open, so
// that its rows are never taken for an older azero's.
func TestANewStoreIsMarkedSealed(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), store.FileName)
	st := open(t, path)
	if err := st.CreateRun(t.Context(), store.Run{ID: "r", Workflow: "w", Node: "a", State: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	db := sqlite(t, path)
	exec(t, db, `ALTER TABLE runs DROP COLUMN seal`)
	exec(t, db, `PRAGMA user_version = 4`)
	exec(t, db, `UPDATE runs SET node = 'merge' WHERE id = 'r'`)
	st = open(t, path)
	if _, err := st.GetRun(t.Context(), "r"); !errors.Is(err, store.ErrRunForged) {
		t.Errorf("GetRun after a rollback of a new store: %v, want ErrRunForged", err)
	}
}

// ReportForged records a forgery once, however often it is found, in
// this process or another; a row forged anew is recorded again.
func TestReportForgedRecordsEachForgeryOnce(t *testing.T) {
	t.Parallel()
	st, path := waitingStore(t)
	db := sqlite(t, path)
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.Open(logPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	ctx := t.Context()
	report := func(st *store.Store) {
		_, err := st.GetRun(ctx, "r")
		if !st.ReportForged(ctx, log, "resume", err) {
			t.Fatalf("ReportForged(%v) = false", err)
		}
	}
	if st.ReportForged(ctx, log, "resume", store.ErrNotFound) {
		t.Error("a missing run was reported as forged")
	}
	exec(t, db, `UPDATE runs SET node = 'merge' WHERE id = 'r'`)
	report(st)
	report(st)
	report(open(t, path)) // another process
	exec(t, db, `UPDATE runs SET node = 'commit' WHERE id = 'r'`)
	report(st)
	recs, err := audit.Read(logPath)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	for _, r := range recs {
		if r["event"] != "run_forged" || r["run_id"] != "r" || r["by"] != "resume" || r["reason"] != "its seal does not match what it holds" {
			t.Errorf("record %v", r)
		}
		nodes = append(nodes, fmt.Sprint(r["claimed_node"]))
	}
	if !slices.Equal(nodes, []string{"merge", "commit"}) {
		t.Errorf("run_forged recorded for the nodes %v, want once for each forgery (merge, commit)", nodes)
	}
}

// The seal covers the state and the question through their digests: a
// row whose state or question changed while its digest stayed is refused
// by whatever reads it whole (a list that reads only the digests cannot
// see it, and acts on nothing); one whose digest changed with it breaks
// the seal, which every list sees.
func TestDigestMismatchIsForged(t *testing.T) {
	t.Parallel()
	sum := func(s string) string {
		h := sha256.Sum256([]byte(s))
		return hex.EncodeToString(h[:])
	}
	forgedState := `{"commit":"deadbeef","worktree":"/w/r"}`
	tests := []struct {
		name, sql string
		args      []any
		reason    string
		listed    bool // a list that reads only the digests still shows it unmarked
	}{
		{"state changed, digest kept", `UPDATE runs SET state = CAST(? AS BLOB) WHERE id = 'r'`, []any{forgedState},
			"its state does not match the digest its seal covers", true},
		{"question changed, digest kept", `UPDATE runs SET question = replace(question, 'Merge?', 'Merge? (approve is safe)') WHERE id = 'r'`, nil,
			"its question does not match the digest its seal covers", true},
		{"state and its digest changed", `UPDATE runs SET state = CAST(? AS BLOB), state_digest = ? WHERE id = 'r'`, []any{forgedState, sum(forgedState)},
			"its seal does not match what it holds", false},
		{"digest alone changed", `UPDATE runs SET question_digest = ? WHERE id = 'r'`, []any{sum("")},
			"its seal does not match what it holds", false},
		// What a list shows of the question: its seal breaks, so a list
		// marks the run and shows none of it.
		{"summary changed", `UPDATE runs SET summary = json_set(summary, '$.title', 'Safe to approve', '$.flagged', json('[]')) WHERE id = 'r'`, nil,
			"its seal does not match what it holds", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st, path := waitingStore(t)
			db := sqlite(t, path)
			ctx := t.Context()
			exec(t, db, tt.sql, tt.args...)
			forged := rowOf(t, db, "r")
			_, err := st.GetRun(ctx, "r")
			var fe *store.RunForgedError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("GetRun = %v, want a *RunForgedError saying %q", err, tt.reason)
			}
			if runs, err := st.ListRuns(ctx, store.Filter{}); err != nil || len(runs) != 1 || runs[0].ID != "other" {
				t.Errorf("ListRuns = %d runs, %v: want only the other one", len(runs), err)
			}
			if err := st.PostAnswer(ctx, "r", "q", json.RawMessage(`{"question_id":"q","key":"approve"}`)); !errors.Is(err, store.ErrRunForged) {
				t.Errorf("PostAnswer = %v, want ErrRunForged", err)
			}
			if err := st.UpdateMeta(ctx, "r", map[string]string{"a": "b"}); !errors.Is(err, store.ErrRunForged) {
				t.Errorf("UpdateMeta = %v, want ErrRunForged", err)
			}
			if after := rowOf(t, db, "r"); after != forged {
				t.Errorf("a refused write changed the forged row")
			}
			heads, err := st.ListHeads(ctx, store.Filter{})
			i := slices.IndexFunc(heads, func(h store.Head) bool { return h.ID == "r" })
			if err != nil || i < 0 || (heads[i].Unverified == nil) != tt.listed {
				t.Fatalf("ListHeads = %+v, %v: want r listed, marked unverified: %v", heads, err, !tt.listed)
			}
			// A list shows what the seal covers: the question as asked, or
			// nothing of a row that does not verify.
			if h := heads[i]; tt.listed && (h.Asks == nil || h.Asks.Prompt != "Merge?" || h.Asks.Gate != "human_review") ||
				!tt.listed && (h.Asks != nil || h.Issue != "" || h.Slug != "") {
				t.Errorf("ListHeads shows r asking %+v, issue %q, slug %q", h.Asks, h.Issue, h.Slug)
			}
			brief, err := st.ListRuns(ctx, store.Filter{Brief: true})
			if err != nil || slices.ContainsFunc(brief, func(r store.Run) bool { return r.ID == "r" }) != tt.listed {
				t.Errorf("ListRuns(Brief) = %+v, %v: want r listed: %v", brief, err, tt.listed)
			}
		})
	}
}

// closedStore is waitingStore closed, for a test that rewrites it as an
// older azero left it: its path, its answer key and the database opened
// directly.
func closedStore(t *testing.T) (string, *answerkey.Key, *sql.DB) {
	t.Helper()
	st, path := waitingStore(t)
	st.Close()
	key, err := answerkey.Load(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	return path, key, sqlite(t, path)
}

// A store sealed with the seal before the digests (v1, schema 6) is
// sealed again over the digests when azero opens it: each row whose v1
// seal verifies, and no other.
func TestMigrationSealsV1RowsOverTheirDigests(t *testing.T) {
	t.Parallel()
	path, key, db := closedStore(t)
	for _, id := range []string{"r", "other"} {
		var (
			wf, rk, status, node, visits, errText, meta, question string
			state                                                 []byte
			steps, created                                        int64
		)
		if err := db.QueryRow(`SELECT workflow, run_key, status, node, state, steps, visits, error, meta, question, created_at FROM runs WHERE id = ?`, id).
			Scan(&wf, &rk, &status, &node, &state, &steps, &visits, &errText, &meta, &question, &created); err != nil {
			t.Fatal(err)
		}
		v1 := key.SealRecord("azero run v1", []byte(id), []byte(wf), []byte(rk), []byte(status), []byte(node), state,
			[]byte(fmt.Sprint(steps)), []byte(visits), []byte(errText), []byte(meta), []byte(question), []byte(fmt.Sprint(created)))
		exec(t, db, `UPDATE runs SET seal = ? WHERE id = ?`, v1, id)
	}
	exec(t, db, `UPDATE runs SET node = 'merge' WHERE id = 'other'`) // forged under v1
	exec(t, db, `ALTER TABLE runs DROP COLUMN state_digest`)
	exec(t, db, `ALTER TABLE runs DROP COLUMN question_digest`)
	exec(t, db, `PRAGMA user_version = 6`)
	st := open(t, path)
	if r, err := st.GetRun(t.Context(), "r"); err != nil || r.Node != "human_review" {
		t.Errorf("GetRun(r) after the migration = %+v, %v", r, err)
	}
	if _, err := st.GetRun(t.Context(), "other"); !errors.Is(err, store.ErrRunForged) {
		t.Errorf("GetRun(other), forged under v1, = %v: want it refused", err)
	}
	if s := sealOf(t, db, "r"); len(s) != 64 {
		t.Errorf("r's seal %q", s)
	}
}

// A store sealed with the seal before the summary (v2, schema 8) is made
// again with its large columns last and sealed again with the summaries
// when azero opens it: each row whose v2 seal verifies, and no other; its
// runs keep their history, and foreign keys hold again after.
func TestMigrationSealsV2RowsWithTheirSummaries(t *testing.T) {
	t.Parallel()
	path, key, db := closedStore(t)
	for _, id := range []string{"r", "other"} {
		var (
			wf, rk, status, node, visits, errText, meta, sd, qd string
			steps, created                                      int64
		)
		if err := db.QueryRow(`SELECT workflow, run_key, status, node, state_digest, steps, visits, error, meta, question_digest, created_at FROM runs WHERE id = ?`, id).
			Scan(&wf, &rk, &status, &node, &sd, &steps, &visits, &errText, &meta, &qd, &created); err != nil {
			t.Fatal(err)
		}
		v2 := key.SealRecord("azero run v2", []byte(id), []byte(wf), []byte(rk), []byte(status), []byte(node), []byte(sd),
			[]byte(fmt.Sprint(steps)), []byte(visits), []byte(errText), []byte(meta), []byte(qd), []byte(fmt.Sprint(created)))
		exec(t, db, `UPDATE runs SET seal = ? WHERE id = ?`, v2, id)
	}
	exec(t, db, `UPDATE runs SET node = 'merge' WHERE id = 'other'`) // forged under v2
	exec(t, db, `ALTER TABLE runs DROP COLUMN summary`)
	exec(t, db, `PRAGMA user_version = 8`)
	st := open(t, path)
	ctx := t.Context()
	if r, err := st.GetRun(ctx, "r"); err != nil || r.Node != "human_review" {
		t.Errorf("GetRun(r) after the migration = %+v, %v", r, err)
	}
	if _, err := st.GetRun(ctx, "other"); !errors.Is(err, store.ErrRunForged) {
		t.Errorf("GetRun(other), forged under v2, = %v: want it refused", err)
	}
	heads, err := st.ListHeads(ctx, store.Filter{})
	if err != nil || len(heads) != 2 {
		t.Fatalf("ListHeads = %+v, %v", heads, err)
	}
	for _, h := range heads {
		switch {
		case h.ID == "r" && (h.Unverified != nil || h.Asks == nil || h.Asks.Prompt != "Merge?"):
			t.Errorf("r listed as %+v asking %+v: want it verified, asking Merge?", h.Run, h.Asks)
		case h.ID == "other" && (!errors.Is(h.Unverified, store.ErrRunForged) || h.Asks != nil):
			t.Errorf("other listed as %+v asking %+v: want it marked, showing nothing of its question", h.Run, h.Asks)
		}
	}
	if steps, err := st.History(ctx, "r"); err != nil || len(steps) != 1 {
		t.Errorf("r's history after the migration: %+v, %v", steps, err)
	}
	var cols []string
	rows, err := db.Query(`SELECT name FROM pragma_table_info('runs') ORDER BY cid`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	rows.Close()
	if n := len(cols); n < 3 || !slices.Equal(cols[n-3:], []string{"answer", "question", "state"}) {
		t.Errorf("the runs table's columns %v: want the answer, the question and the state last", cols)
	}
	if err := st.RecordCall(ctx, store.Call{RunID: "no-such-run", CostUSD: 1}); err == nil {
		t.Error("a call recorded for no run after the migration: foreign keys are off")
	}
}
