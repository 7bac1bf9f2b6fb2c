package audit_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/audit"
)

func TestEventsAreJSONLinesWithTimeAndEvent(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state", audit.FileName)
	l, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	l.Event(context.Background(), "gate_decision", "261122-abcdef",
		slog.String("decision", "APPROVED"), slog.Any("flagged_files", []string{"state.py"}))
	l.Event(context.Background(), "node", "")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	recs, err := audit.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	r := recs[0]
	if r["event"] != "gate_decision" || r["run_id"] != "261122-abcdef" || r["decision"] != "APPROVED" {
		t.Errorf("record = %v", r)
	}
	if _, err := time.Parse(time.RFC3339, r["time"].(string)); err != nil {
		t.Errorf("time %v is not RFC 3339: %v", r["time"], err)
	}
	if files, _ := r["flagged_files"].([]any); len(files) != 1 || files[0] != "state.py" {
		t.Errorf("flagged_files = %v", r["flagged_files"])
	}
	if _, ok := recs[1]["run_id"]; ok {
		t.Errorf("run_id present without a run: %v", recs[1])
	}
}

func TestSecretsNeverLogged(t *testing.T) {
	t.Parallel()
	const key = "sk-ant-api03-THISISAFAKEKEYVALUE0123456789"
	secrets := audit.SecretsFromEnv([]string{"ANTHROPIC_API_KEY=" + key, "GH_TOKEN=plainvalue123", "HOME=/root"})
	if len(secrets) != 2 {
		t.Fatalf("SecretsFromEnv = %v, want the key and the token", secrets)
	}
	var buf strings.Builder
	l := audit.New(&buf, secrets)
	l.Event(context.Background(), "call", "r",
		slog.String("api_key", "anything"),
		slog.String("authorization", "Bearer xyz"),
		slog.String("prompt", "my key is "+key+" and token plainvalue123"),
		slog.Any("error", errors.New("401 for key "+key)),
		slog.String("shape", "AIza"+strings.Repeat("Q", 35)),
		slog.Any("list", []string{"ghp_" + strings.Repeat("a", 36)}),
	)
	out := buf.String()
	for _, leak := range []string{key, "plainvalue123", "anything", "xyz", "AIzaQQ", "ghp_aaa"} {
		if strings.Contains(out, leak) {
			t.Errorf("log contains %q:\n%s", leak, out)
		}
	}
	if !strings.Contains(out, audit.Redacted) {
		t.Errorf("nothing marked redacted:\n%s", out)
	}
}

func TestConcurrentWritersKeepLinesWhole(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), audit.FileName)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := audit.Open(path, nil) // one file handle per writer, as processes have
			if err != nil {
				t.Error(err)
				return
			}
			defer l.Close()
			for i := range 200 {
				l.Event(context.Background(), "node", "r", slog.Int("writer", w), slog.Int("i", i),
					slog.String("pad", strings.Repeat("x", 500)))
			}
		}()
	}
	wg.Wait()
	recs, err := audit.Read(path)
	if err != nil {
		t.Fatal(err) // a torn line fails to decode
	}
	if len(recs) != 8*200 {
		t.Errorf("%d records, want %d", len(recs), 8*200)
	}
}

func TestNilLoggerDiscards(t *testing.T) {
	var l *audit.Logger
	l.Event(context.Background(), "x", "")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRedactor(t *testing.T) {
	t.Parallel()
	r := audit.NewRedactor(audit.SecretsFromEnv([]string{"MY_SERVICE_TOKEN=correct-horse-battery", "SHORT_KEY=abc", "PATH=/usr/bin"}))
	for in, want := range map[string]string{
		"env: MY_SERVICE_TOKEN=correct-horse-battery\n": "env: MY_SERVICE_TOKEN=" + audit.Redacted + "\n",
		"key sk-ant-api03-abcdefghijklmnopqrstuvwxyz":   "key " + audit.Redacted,
		"abc /usr/bin stays":                            "abc /usr/bin stays",
	} {
		if got := r.Scrub(in); got != want {
			t.Errorf("Scrub(%q) = %q, want %q", in, got, want)
		}
	}
	var none *audit.Redactor
	if got := none.Scrub("sk-ant-api03-abcdefghijklmnopqrstuvwxyz"); got != audit.Redacted {
		t.Errorf("a nil Redactor left a key-shaped text: %q", got)
	}
}
