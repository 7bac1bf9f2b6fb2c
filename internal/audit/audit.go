// Package audit appends azero's decisions to a JSON-lines log.
//
// Every record is one JSON object on one line with at least "time"
// (RFC 3339), "event" and, where there is one, "run_id". Records are written
// through log/slog, one write(2) per record on a file opened with O_APPEND,
// so concurrent azero processes never interleave partial lines.
//
// Invariant: secrets never reach the log. Attributes whose key names a
// secret are replaced, and every string value is scrubbed of the secret
// values known to the process (API keys and tokens from the environment)
// and of text shaped like well-known key formats.
package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/azero-dev/azero/internal/lazyre"
)

// FileName is the log's name inside the state directory.
const FileName = "audit.jsonl"

// Redacted replaces secret values.
const Redacted = "[REDACTED]"

// Logger records audit events. The zero value is not usable; a nil *Logger
// discards events, so optional auditing needs no branches.
type Logger struct {
	h      slog.Handler
	closer io.Closer
	r      *Redactor
}

// Open appends to the log at path, creating it and its directory (0700,
// the file 0600) when missing. secrets are values that must never appear
// in the log, typically from SecretsFromEnv.
func Open(path string, secrets []string) (*Logger, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create audit directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	l := New(f, secrets)
	l.closer = f
	return l, nil
}

// New returns a Logger writing to w.
func New(w io.Writer, secrets []string) *Logger {
	l := &Logger{r: NewRedactor(secrets)}
	l.h = slog.NewJSONHandler(w, &slog.HandlerOptions{ReplaceAttr: l.replace})
	return l
}

// Redactor removes secrets from text by the log's own rule: the secret
// values it was given, and text shaped like well-known key formats. It is
// how any text azero keeps or shows (a test run's output, which the
// tested code could fill with the keys it found) is kept as clean as the
// log. A nil *Redactor removes only the key-shaped text.
type Redactor struct {
	secrets []string
}

// NewRedactor returns a Redactor of secrets (typically SecretsFromEnv);
// values shorter than 8 bytes are left alone, as they would redact
// ordinary words (real keys are long).
func NewRedactor(secrets []string) *Redactor {
	r := &Redactor{}
	for _, s := range secrets {
		if len(s) >= 8 {
			r.secrets = append(r.secrets, s)
		}
	}
	return r
}

// Scrub removes known secrets and key-shaped text from s.
func (r *Redactor) Scrub(s string) string {
	if r != nil {
		for _, secret := range r.secrets {
			s = strings.ReplaceAll(s, secret, Redacted)
		}
	}
	return secretShape().ReplaceAllString(s, Redacted)
}

// Close closes the underlying file, if any.
func (l *Logger) Close() error {
	if l == nil || l.closer == nil {
		return nil
	}
	return l.closer.Close()
}

// Event records one event. runID may be empty. Attribute values may be any
// type slog accepts. It returns the write's error (a full disk, a log
// made read-only): a caller recording a decision must not act on it then.
func (l *Logger) Event(ctx context.Context, event, runID string, attrs ...slog.Attr) error {
	if l == nil {
		return nil
	}
	if runID != "" {
		attrs = append([]slog.Attr{slog.String("run_id", runID)}, attrs...)
	}
	r := slog.NewRecord(time.Now(), slog.LevelInfo, event, 0)
	r.AddAttrs(attrs...)
	if err := l.h.Handle(ctx, r); err != nil {
		return fmt.Errorf("write the audit log: %w", err)
	}
	return nil
}

var secretKey = lazyre.New(`(?i)(api_?key|token|secret|password|passwd|authorization|credential)`)

// Key shapes of the providers azero talks to: Anthropic and OpenAI (sk-...),
// Google (AIza...), GitHub (ghp_, gho_, ghs_, ghu_, github_pat_) and bearer
// headers.
var secretShape = lazyre.New(`sk-[A-Za-z0-9_\-]{16,}|AIza[0-9A-Za-z_\-]{30,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|(?i:bearer\s+)[A-Za-z0-9._\-]{16,}`)

func (l *Logger) replace(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 {
		switch a.Key {
		case slog.MessageKey:
			a.Key = "event"
			return a
		case slog.LevelKey:
			return slog.Attr{}
		}
	}
	if secretKey().MatchString(a.Key) && a.Value.Kind() != slog.KindGroup {
		return slog.String(a.Key, Redacted)
	}
	switch a.Value.Kind() {
	case slog.KindString:
		return slog.String(a.Key, l.Scrub(a.Value.String()))
	case slog.KindAny:
		if err, ok := a.Value.Any().(error); ok {
			return slog.String(a.Key, l.Scrub(err.Error()))
		}
		if ss, ok := a.Value.Any().([]string); ok {
			out := make([]string, len(ss))
			for i, s := range ss {
				out[i] = l.Scrub(s)
			}
			return slog.Any(a.Key, out)
		}
	}
	return a
}

// Scrub removes known secrets and key-shaped text from s.
func (l *Logger) Scrub(s string) string {
	if l == nil {
		return s
	}
	return l.r.Scrub(s)
}

// SecretsFromEnv returns the values of environment variables that hold
// credentials (see IsSecretName).
func SecretsFromEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && v != "" && IsSecretName(k) {
			out = append(out, v)
		}
	}
	return out
}

// IsSecretName reports whether an environment variable's name says it
// holds a credential: it ends in _KEY, _TOKEN, _SECRET or _PASSWORD.
func IsSecretName(name string) bool {
	up := strings.ToUpper(name)
	for _, suffix := range []string{"_KEY", "_TOKEN", "_SECRET", "_PASSWORD"} {
		if strings.HasSuffix(up, suffix) {
			return true
		}
	}
	return false
}

// Record is one decoded log line.
type Record map[string]any

// Read decodes every record of the log at path, in order. A missing file
// has no records.
func Read(path string) ([]Record, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	defer f.Close()
	var out []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for n := 1; sc.Scan(); n++ {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("audit log %s line %d: %w", path, n, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	return out, nil
}
