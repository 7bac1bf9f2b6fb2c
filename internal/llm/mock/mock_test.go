package mock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/llm"
	"github.com/azero-dev/azero/internal/llm/llmtest"
)

func ask(text string) llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.SpeakerUser, Text: text}}, MaxTokens: 256, Purpose: "test"}
}

func open(t *testing.T, role llm.Role, turns func(context.Context) (int, error)) llm.Model {
	t.Helper()
	m, err := New(Options{Script: "testdata/script.toml", Role: role, Turns: turns})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestScriptedTurns(t *testing.T) {
	t.Parallel()
	drafter := open(t, llm.RoleDrafter, nil)
	coder := open(t, llm.RoleCoder, nil)

	// Roles count their turns separately.
	steps := []struct {
		m        llm.Model
		wantText string
		wantStop llm.StopReason
	}{
		{drafter, "# Add a --budget flag\n\n**Labels:** enhancement\n", llm.StopEnd},
		{coder, "func Check(spent, budget float64) error {\n\tif spent >", llm.StopMaxTokens},
		{drafter, "# Add a --budget flag (revised)", llm.StopEnd},
		{coder, "### CHANGE 1\nFIND:\n\treturn nil\nREPLACE WITH:\n\treturn ErrBudget\n", llm.StopEnd},
	}
	for i, s := range steps {
		got, err := s.m.Generate(t.Context(), ask("go"))
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		if got.Text != s.wantText || got.Stop != s.wantStop || got.Model != Name || got.CostUSD != 0 {
			t.Errorf("step %d = %q (%s, %s, $%v), want %q (%s)", i+1, got.Text, got.Stop, got.Model, got.CostUSD, s.wantText, s.wantStop)
		}
		if got.InputTokens <= 0 || got.OutputTokens <= 0 {
			t.Errorf("step %d: tokens %d/%d, want estimates", i+1, got.InputTokens, got.OutputTokens)
		}
	}

	_, err := drafter.Generate(t.Context(), ask("again"))
	if !errors.Is(err, ErrNoReply) {
		t.Fatalf("third drafter call: err = %v, want ErrNoReply", err)
	}
	for _, want := range []string{`role "drafter"`, "turn 3", "testdata/script.toml"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing-reply error %q does not name %s", err, want)
		}
	}
}

func TestScriptedErrorIsRetried(t *testing.T) {
	t.Parallel()
	reviewer := open(t, llm.RoleReviewer, nil)
	sleeper := &llmtest.Sleeper{}
	got, err := llm.WithRetry(reviewer, llmtest.Policy(sleeper, 3)).Generate(t.Context(), ask("review"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != "**Verdict:** APPROVED" || got.InputTokens != 1200 || got.OutputTokens != 8 {
		t.Errorf("reply = %+v", got)
	}
	if w := sleeper.Waits(); len(w) != 1 || w[0] != 2*time.Second {
		t.Errorf("waits = %v, want the script's retry_after 2s", w)
	}

	// Without retries the scripted failure surfaces, classified as transient.
	plain := open(t, llm.RoleReviewer, nil)
	_, err = plain.Generate(t.Context(), ask("review"))
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.Kind != llm.KindRateLimited || !errors.Is(err, llm.ErrTransient) {
		t.Errorf("err = %v, want a transient rate limit", err)
	}
}

// A run that crashes after the coder's first reply and resumes in a new process counts the
// completed calls from its store: the resumed model must give the reply an uninterrupted run
// gives next.
func TestResumeGetsSameReplies(t *testing.T) {
	t.Parallel()
	uninterrupted := open(t, llm.RoleCoder, nil)
	var want []string
	for range 2 {
		r, err := uninterrupted.Generate(t.Context(), ask("code"))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, r.Text)
	}

	completed := 0 // the store's count of the coder's completed calls
	turns := func(context.Context) (int, error) { return completed, nil }
	first := open(t, llm.RoleCoder, turns)
	r, err := first.Generate(t.Context(), ask("code"))
	if err != nil {
		t.Fatal(err)
	}
	completed++
	// Crash: a new model instance, as a new process would open.
	resumed := open(t, llm.RoleCoder, turns)
	r2, err := resumed.Generate(t.Context(), ask("code"))
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{r.Text, r2.Text}; got[0] != want[0] || got[1] != want[1] {
		t.Errorf("resumed replies = %q, want %q", got, want)
	}

	failing := open(t, llm.RoleCoder, func(context.Context) (int, error) { return 0, errors.New("store closed") })
	if _, err := failing.Generate(t.Context(), ask("code")); err == nil || !strings.Contains(err.Error(), "store closed") {
		t.Errorf("a failing turn source: err = %v", err)
	}
}

func TestBuiltinReplies(t *testing.T) {
	t.Parallel()
	drafter, err := New(Options{Role: llm.RoleDrafter})
	if err != nil {
		t.Fatal(err)
	}
	req := llm.Request{
		System: "Draft an issue.",
		Messages: []llm.Message{
			{Role: llm.SpeakerUser, Text: "old brief"},
			{Role: llm.SpeakerAssistant, Text: "old draft"},
			{Role: llm.SpeakerUser, Text: "## Budget flag for workflows\n\nStop runs that spend too much."},
		},
		MaxTokens: 1000, Purpose: "draft",
	}
	a, err := drafter.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := drafter.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if a.Text != b.Text {
		t.Error("the built-in draft is not deterministic")
	}
	for _, want := range []string{"# Budget flag for workflows\n", "**Labels:** enhancement", "Stop runs that spend too much.", "## Acceptance Criteria"} {
		if !strings.Contains(a.Text, want) {
			t.Errorf("draft lacks %q:\n%s", want, a.Text)
		}
	}
	if strings.Contains(a.Text, "old brief") {
		t.Error("the draft used an earlier message, not the last user message")
	}
	// The issue workflow wraps the brief among its instructions: the
	// draft is made of the brief alone.
	req.Messages[2].Text = "<brief>\n## Budget flag for workflows\n\nStop runs that spend too much.\n</brief>\n\nWrite the issue for the brief above."
	wrapped, err := drafter.Generate(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(wrapped.Text, "# Budget flag for workflows\n") || strings.Contains(wrapped.Text, "<brief>") || strings.Contains(wrapped.Text, "Write the issue") {
		t.Errorf("a wrapped brief's draft:\n%s", wrapped.Text)
	}

	reviewer, err := New(Options{Role: llm.RoleReviewer})
	if err != nil {
		t.Fatal(err)
	}
	v, err := reviewer.Generate(t.Context(), ask(a.Text))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v.Text, "**Verdict:** APPROVED") || v.Stop != llm.StopEnd {
		t.Errorf("review = %q", v.Text)
	}

	_, err = New(Options{Role: llm.RoleCoder})
	if err == nil || !strings.Contains(err.Error(), "script") {
		t.Errorf("coder without a script: err = %v, want an error asking for a script", err)
	}
	if _, err := New(Options{Role: "boss"}); err == nil {
		t.Error("an unknown role was accepted")
	}
}

func TestParseScriptErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
		want   string // "file:line" and words the error must contain
	}{
		{"syntax", "[[reply]]\nrole = \"coder\nturn = 1\n", "s.toml:2:"},
		{"unknown key", "[[reply]]\nrole = \"coder\"\nturn = 1\nstpo = \"end\"\n", `s.toml:4:1: unknown key "reply.stpo"`},
		{"wrong type", "[[reply]]\nrole = \"coder\"\nturn = \"one\"\n", "s.toml:3:"},
		{"bad role", "[[reply]]\nrole = \"coder\"\nturn = 1\n\n[[reply]]\nturn = 1\nrole = \"tester\"\n", `s.toml:7: reply 2: role "tester"`},
		{"no role", "[[reply]]\nturn = 1\n", "s.toml:1: reply 1: has no role"},
		{"no turn", "[[reply]]\nrole = \"coder\"\ntext = \"x\"\n", "s.toml:1: reply 1: has no turn"},
		{"negative turn", "[[reply]]\nrole = \"coder\"\n\nturn = -2\n", "s.toml:4: reply 1: turn -2"},
		{"bad stop", "[[reply]]\nrole = \"coder\"\nturn = 1\nstop = \"length\"\n", `s.toml:4: reply 1: stop "length"`},
		{"bad error", "[[reply]]\nrole = \"coder\"\nturn = 1\nerror = \"flaky\"\n", `s.toml:4: reply 1: error "flaky" is not one of`},
		{"error with text", "[[reply]]\nrole = \"coder\"\nturn = 1\ntext = \"x\"\nerror = \"transient\"\n", "s.toml:5: reply 1: has an error and a text"},
		{"bad retry_after", "[[reply]]\nrole = \"coder\"\nturn = 1\nerror = \"transient\"\nretry_after = \"soon\"\n", `s.toml:5: reply 1: retry_after "soon"`},
		{"retry_after without error", "[[reply]]\nrole = \"coder\"\nturn = 1\nretry_after = \"1s\"\n", "s.toml:4: reply 1: retry_after needs an error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseScript("s.toml", []byte(tt.script))
			if !errors.Is(err, ErrScript) {
				t.Fatalf("err = %v, want ErrScript", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestScriptFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[[reply]]\nrole = \"coder\"\nturn = 1\nstop = \"nope\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(Options{Script: bad, Role: llm.RoleCoder})
	if err == nil || !strings.Contains(err.Error(), bad+":4") {
		t.Errorf("err = %v, want it to name %s:4", err, bad)
	}
	_, err = New(Options{Script: filepath.Join(dir, "missing.toml"), Role: llm.RoleCoder})
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing script: err = %v", err)
	}
	// Endless or huge: refused at once, never read into memory.
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := New(Options{Script: "/dev/zero", Role: llm.RoleCoder}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("/dev/zero as a script: err = %v", err)
		}
	}
	huge := filepath.Join(dir, "huge.toml")
	if err := os.WriteFile(huge, []byte("# "+strings.Repeat("x", MaxScriptBytes)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Script: huge, Role: llm.RoleCoder}); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a huge script: err = %v", err)
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/script.toml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseScript("script.toml", data)
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseScript("again.toml", out)
	if err != nil {
		t.Fatalf("re-parse: %v\n%s", err, out)
	}
	if !sameReplies(s.Replies, again.Replies) {
		t.Errorf("round trip changed the script:\n%+v\n%+v", s.Replies, again.Replies)
	}
}

func sameReplies(a, b []Reply) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		x.Line, y.Line = 0, 0
		if x != y {
			return false
		}
	}
	return true
}
