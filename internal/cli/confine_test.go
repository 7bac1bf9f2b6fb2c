package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/testenv"
)

// TestTheSandboxIsToldAndRecorded: how a run's model code runs is in the
// data policy before anything runs, in the audit log, and in the facts of
// the question every gate asks (recorded with its decision); a run whose
// code ran unconfined, asked for with --sandbox off, says so first at its
// gate. A mode that does not exist is a usage error, before any work.
func TestTheSandboxIsToldAndRecorded(t *testing.T) {
	t.Parallel()
	testenv.RequireTool(t, "go")
	tests := []struct {
		name      string
		args      []string
		mechanism string // the facts' sandbox
		policy    string // in the data policy
		warned    bool   // the question's report starts with the warning
	}{
		{"confined", nil, "bubblewrap+landlock", "runs in the sandbox bubblewrap+landlock", false},
		{"landlock alone", []string{"--sandbox", "landlock"}, "landlock", "runs in the sandbox landlock", false},
		{"unconfined, asked by name", []string{"--sandbox", "off"}, "off", "sandbox OFF", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			state, base := t.TempDir(), t.TempDir()
			demo := runAzeroIn(t, state, base, nil, append([]string{"demo", "--dir", base, "--json"}, tt.args...)...)
			if demo.code != ExitNeedsHuman {
				t.Fatalf("demo: exit %d, want %d\n%s", demo.code, ExitNeedsHuman, demo.stderr)
			}
			if !strings.Contains(demo.stderr, tt.policy) {
				t.Errorf("the data policy does not say %q:\n%s", tt.policy, demo.stderr)
			}
			var out struct {
				RunID string `json:"run_id"`
			}
			if err := json.Unmarshal([]byte(demo.stdout), &out); err != nil {
				t.Fatal(err)
			}
			var q human.Question
			if err := json.Unmarshal(runByID(t, state, out.RunID).Question, &q); err != nil {
				t.Fatalf("the waiting run's question: %v", err)
			}
			network := tt.mechanism == "off" // unconfined code has the network too
			if q.Facts["sandbox"] != tt.mechanism || q.Facts["network"] != network {
				t.Errorf("the question's facts %v, want sandbox %q and network %v", q.Facts, tt.mechanism, network)
			}
			if warned := strings.HasPrefix(q.Report, "!! The model's code ran UNCONFINED"); warned != tt.warned {
				t.Errorf("the report warns: %v, want %v:\n%.300s", warned, tt.warned, q.Report)
			}
			recs := testenv.AuditEvents(t, state, "sandbox")
			if len(recs) != 1 || recs[0]["mechanism"] != tt.mechanism || recs[0]["network"] != network {
				t.Errorf("audit sandbox records %v, want one naming %s", recs, tt.mechanism)
			}
		})
	}
	state, base := t.TempDir(), t.TempDir()
	res := runAzeroIn(t, state, base, nil, "demo", "--dir", base, "--sandbox", "none")
	if res.code != ExitUsage || !strings.Contains(res.stderr, "use auto, landlock or off") {
		t.Errorf("--sandbox none: exit %d, want %d naming the modes\n%s", res.code, ExitUsage, res.stderr)
	}
}
