package answerkey

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/human"
)

func load(t testing.TB, dir string) *Key {
	t.Helper()
	k, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestLoadCreatesTheKeyOnce(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "state") // not there yet
	k := load(t, dir)
	info, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 || info.Size() != Size || k.Path() != filepath.Join(dir, FileName) {
		t.Errorf("key file mode %v, %d bytes, path %q: want 0600, %d bytes", info.Mode().Perm(), info.Size(), k.Path(), Size)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the state directory holds %d entries, want the key alone (no temporary file left)", len(entries))
	}
	// Loaded again, it is the same key: what one process sealed, another
	// verifies.
	q := question()
	sealed := k.Seal("run-1", q, answer())
	if err := load(t, dir).Verify("run-1", q, sealed); err != nil {
		t.Errorf("a key loaded again does not verify what the first sealed: %v", err)
	}
}

func TestLoadRacesToOneKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const n = 16
	keys := make([]*Key, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { keys[i], errs[i] = Load(dir) })
	}
	wg.Wait()
	q := question()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("load %d: %v", i, errs[i])
		}
		if err := keys[0].Verify("r", q, keys[i].Seal("r", q, answer())); err != nil {
			t.Errorf("process %d got another key than process 0", i)
		}
	}
}

func TestLoadRefusesAKeyItCannotUse(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		make  func(path string) error
		error string
	}{
		{"a directory in its place", func(p string) error { return os.Mkdir(p, 0o700) }, "not a regular file"},
		{"too short", func(p string) error { return os.WriteFile(p, []byte("short"), 0o600) }, "holds 5 bytes, not 32"},
		{"too long", func(p string) error { return os.WriteFile(p, make([]byte, 64), 0o600) }, "holds more than 32 bytes"},
		{"empty", func(p string) error { return os.WriteFile(p, nil, 0o600) }, "holds 0 bytes"},
		{"readable by others", func(p string) error {
			if err := os.WriteFile(p, make([]byte, Size), 0o600); err != nil {
				return err
			}
			return os.Chmod(p, 0o644)
		}, "can be read by other users"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, FileName)
			if err := c.make(path); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Lstat(path)
			k, err := Load(dir)
			if err == nil || k != nil {
				t.Fatalf("Load = %v, %v: want an error", k, err)
			}
			if !strings.Contains(err.Error(), c.error) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q should say %q and name %s", err, c.error, path)
			}
			// Never replaced: the answers sealed with it would all turn
			// into forgeries.
			after, serr := os.Lstat(path)
			if serr != nil || after.Size() != before.Size() || after.Mode() != before.Mode() {
				t.Errorf("Load changed the bad key file")
			}
		})
	}
}

func question() human.Question {
	q := human.Question{Gate: "human_review", Kind: human.Word, Prompt: "Merge?",
		Options: []human.Option{{Key: "approve", Decision: "APPROVED"}, {Key: "reject", Decision: "REJECTED"}}}
	q.ID = human.Fingerprint(q)
	q.Nonce = Nonce()
	return q
}

func answer() human.Answer {
	return human.Answer{Gate: "human_review", Key: "approve", Text: "ok", Confirm: "override",
		Files: map[string]string{"a.md": "A", "b.md": "B"}, Channel: human.ChannelWeb, By: "127.0.0.1:1 (curl)",
		RemoteAddr: "127.0.0.1:1", UserAgent: "curl", At: time.Date(2026, 11, 24, 10, 0, 0, 5, time.UTC)}
}

// A seal binds the answer to one asking of one question of one run and to
// everything it says: any change fails.
func TestSealBindsTheAnswerToItsQuestion(t *testing.T) {
	t.Parallel()
	k := load(t, t.TempDir())
	other := load(t, t.TempDir())
	q := question()
	sealed := k.Seal("run-1", q, answer())
	if sealed.QuestionID != q.ID || len(sealed.MAC) != 64 {
		t.Fatalf("sealed = %+v: want the question's id and a 32-byte MAC", sealed)
	}
	if err := k.Verify("run-1", q, sealed); err != nil {
		t.Fatalf("a sealed answer does not verify: %v", err)
	}
	change := func(f func(*human.Answer)) human.Answer {
		a := sealed
		a.Files = map[string]string{"a.md": "A", "b.md": "B"}
		f(&a)
		return a
	}
	later := q
	later.Nonce = Nonce()
	for _, c := range []struct {
		name string
		key  *Key
		run  string
		q    human.Question
		a    human.Answer
	}{
		{"another run", k, "run-2", q, sealed},
		{"a later asking of the same question", k, "run-1", later, sealed},
		{"another key", other, "run-1", q, sealed},
		{"no key", nil, "run-1", q, sealed},
		{"no seal", k, "run-1", q, change(func(a *human.Answer) { a.MAC = "" })},
		{"a seal that is not hex", k, "run-1", q, change(func(a *human.Answer) { a.MAC = "zz" + a.MAC[2:] })},
		{"another question id", k, "run-1", q, change(func(a *human.Answer) { a.QuestionID = "0123" })},
		{"gate", k, "run-1", q, change(func(a *human.Answer) { a.Gate = "diff_review" })},
		{"key", k, "run-1", q, change(func(a *human.Answer) { a.Key = "reject" })},
		{"text", k, "run-1", q, change(func(a *human.Answer) { a.Text = "ok!" })},
		{"confirm", k, "run-1", q, change(func(a *human.Answer) { a.Confirm = "" })},
		{"a file's content", k, "run-1", q, change(func(a *human.Answer) { a.Files["a.md"] = "AA" })},
		{"a file more", k, "run-1", q, change(func(a *human.Answer) { a.Files["c.md"] = "" })},
		{"content moved between fields", k, "run-1", q, change(func(a *human.Answer) { a.Text, a.Confirm = "okoverride", "" })},
		{"channel", k, "run-1", q, change(func(a *human.Answer) { a.Channel = human.ChannelTerminal })},
		{"by", k, "run-1", q, change(func(a *human.Answer) { a.By = "someone else" })},
		{"remote address", k, "run-1", q, change(func(a *human.Answer) { a.RemoteAddr = "10.0.0.1:1" })},
		{"user agent", k, "run-1", q, change(func(a *human.Answer) { a.UserAgent = "Firefox" })},
		{"answered at", k, "run-1", q, change(func(a *human.Answer) { a.At = a.At.Add(time.Nanosecond) })},
	} {
		if err := c.key.Verify(c.run, c.q, c.a); !errors.Is(err, ErrBadSeal) {
			t.Errorf("%s: Verify = %v, want ErrBadSeal", c.name, err)
		}
	}
	// The same instant in another zone is the same answer.
	zoned := change(func(a *human.Answer) { a.At = a.At.In(time.FixedZone("CET", 3600)) })
	if err := k.Verify("run-1", q, zoned); err != nil {
		t.Errorf("the answer's time in another zone: %v", err)
	}
	if a := (*Key)(nil).Seal("run-1", q, answer()); a.MAC != "" {
		t.Errorf("a nil key sealed: %q", a.MAC)
	}
}

// A sealed answer still verifies after it travels as JSON (the store's
// answer column, a Temporal Update's payload), whatever it holds.
func FuzzSealSurvivesJSON(f *testing.F) {
	f.Add("approve", "text", "a.md", "content\n", "127.0.0.1:1", int64(0))
	f.Add("S", "\xff\xfe not utf-8", "ü.md", "<script>&", "[::1]:80", int64(1_700_000_000_123_456_789))
	k := load(f, f.TempDir())
	q := question()
	f.Fuzz(func(t *testing.T, key, text, name, content, addr string, nanos int64) {
		a := human.Answer{Gate: q.Gate, Key: key, Text: text, Files: map[string]string{name: content}, Channel: human.ChannelWeb,
			By: addr, RemoteAddr: addr, UserAgent: text, At: time.Unix(0, nanos)}
		sealed := k.Seal("run", q, a)
		raw, err := json.Marshal(sealed)
		if err != nil {
			t.Skip("not an answer JSON can carry")
		}
		var back human.Answer
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		if err := k.Verify("run", q, back); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		back.Key += "x"
		if k.Verify("run", q, back) == nil {
			t.Fatal("a changed key still verifies")
		}
	})
}

func TestNonceIsFresh(t *testing.T) {
	t.Parallel()
	a, b := Nonce(), Nonce()
	if len(a) != 32 || a == b {
		t.Errorf("nonces %q and %q: want 16 random bytes each time", a, b)
	}
}

func BenchmarkSealVerify(b *testing.B) {
	k := load(b, b.TempDir())
	q := question()
	a := answer()
	for b.Loop() {
		if err := k.Verify("run-1", q, k.Seal("run-1", q, a)); err != nil {
			b.Fatal(err)
		}
	}
}

// A record's seal binds its kind and every field, where each field ends
// and where the next begins, to one key.
func TestRecordSealBindsEveryField(t *testing.T) {
	t.Parallel()
	k := load(t, t.TempDir())
	other := load(t, t.TempDir())
	fields := [][]byte{[]byte("run-1"), []byte("implement"), []byte(`{"commit":""}`), {}, []byte("\xff raw bytes")}
	seal := k.SealRecord("azero run v1", fields...)
	if len(seal) != 64 {
		t.Fatalf("seal %q: want 32 bytes in hex", seal)
	}
	if err := k.VerifyRecord(seal, "azero run v1", fields...); err != nil {
		t.Fatalf("a sealed record does not verify: %v", err)
	}
	with := func(i int, v string) [][]byte {
		c := slices.Clone(fields)
		c[i] = []byte(v)
		return c
	}
	for _, c := range []struct {
		name   string
		key    *Key
		seal   string
		kind   string
		fields [][]byte
	}{
		{"another key", other, seal, "azero run v1", fields},
		{"no key", nil, seal, "azero run v1", fields},
		{"no seal", k, "", "azero run v1", fields},
		{"a seal that is not hex", k, "zz" + seal[2:], "azero run v1", fields},
		{"a shorter seal", k, seal[:62], "azero run v1", fields},
		{"another kind", k, seal, "azero run v2", fields},
		{"a field changed", k, seal, "azero run v1", with(2, `{"commit":"abc"}`)},
		{"an empty field filled", k, seal, "azero run v1", with(3, "x")},
		{"a byte moved to the next field", k, seal, "azero run v1", with(0, "run-")},
		{"a field more", k, seal, "azero run v1", append(slices.Clone(fields), nil)},
		{"a field less", k, seal, "azero run v1", fields[:4]},
	} {
		if err := c.key.VerifyRecord(c.seal, c.kind, c.fields...); !errors.Is(err, ErrRecordSeal) {
			t.Errorf("%s: VerifyRecord = %v, want ErrRecordSeal", c.name, err)
		}
	}
	moved := [][]byte{[]byte("ab"), []byte("c")}
	if k.SealRecord("k", moved...) == k.SealRecord("k", []byte("a"), []byte("bc")) {
		t.Error("two records that differ only in where a field ends have one seal")
	}
	if s := (*Key)(nil).SealRecord("k", fields...); s != "" {
		t.Errorf("a nil key sealed: %q", s)
	}
	// No record's seal is an answer's.
	q := question()
	a := answer()
	a.MAC = k.SealRecord("azero answer v1", []byte("run-1"), []byte(q.ID), []byte(q.Nonce))
	a.QuestionID = q.ID
	if k.Verify("run-1", q, a) == nil {
		t.Error("a record's seal verified as an answer's")
	}
}

func BenchmarkSealRecord(b *testing.B) {
	k := load(b, b.TempDir())
	state := []byte(strings.Repeat("x", 4096))
	for b.Loop() {
		k.SealRecord("azero run v1", []byte("run-1"), []byte("implement"), state)
	}
}
