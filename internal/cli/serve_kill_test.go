package cli

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/store"
	"github.com/azero-dev/azero/internal/testenv"
)

// An answer accepted by azero serve is never stranded: serve killed with
// SIGKILL right after it accepted an approval (while it continues the
// run, inside the lease its dead process left) and started again at once
// continues the run to its end, without anyone running azero resume, and
// the run takes the answer once.
func TestServeKilledAfterAnAnswerContinuesTheRunWhenRestarted(t *testing.T) {
	t.Parallel()
	// The kill must land before the continued run finished, which it does
	// at once: a kill that came too late is tried again with a new run.
	var state, id, dir string
	var again *server
	for attempt := 1; ; attempt++ {
		state, dir = t.TempDir(), t.TempDir()
		// One work step: the run waits at its gate, and the approval's
		// continuation writes "finish" at once.
		res := runAzeroIn(t, state, dir, nil, "selftest", "--steps", "1", "--delay", "0s", "--dir", dir, "--json")
		if res.code != ExitNeedsHuman {
			t.Fatalf("selftest exit %d, want 3\n%s", res.code, res.stderr)
		}
		id = onlyRun(t, state).ID
		srv := startServe(t, state)
		var ans map[string]any
		if code := srv.api(t, "POST", "/api/runs/"+id+"/answer", `{"gate":"approve","answer":"approve"}`, &ans); code != http.StatusOK {
			t.Fatalf("answer: %d %v", code, ans)
		}
		if err := srv.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-srv.done
		killed := runByID(t, state, id)
		if !killed.Status.Finished() {
			t.Logf("killed with the run %s at %s (answer stored: %v, lease held by pid %d)", killed.Status, killed.Node, len(killed.Answer) > 0, killed.Lease.PID)
			// Started again at once: well inside the 30 s lease of the
			// killed process, whatever it had taken of the run.
			again = startServe(t, state)
			break
		}
		if attempt == 5 {
			t.Fatalf("azero serve finished the run before it could be killed, %d times", attempt)
		}
	}
	deadline := time.Now().Add(testenv.Patience)
	for {
		r := runByID(t, state, id)
		if r.Status == store.StatusDone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run was not continued after the restart: %s at %s (answer stored: %v)\nserve:\n%s", r.Status, r.Node, len(r.Answer) > 0, again.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	effects, err := os.ReadFile(filepath.Join(dir, "effects.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(effects), "finish"); n != 1 {
		t.Errorf("the run finished %d times:\n%s", n, effects)
	}
	if d := testenv.AuditEvents(t, state, "gate_decision"); len(d) != 1 || d[0]["decision"] != "APPROVED" || d[0]["channel"] != "api" {
		t.Errorf("gate decisions %v, want the API's approval once", d)
	}
}
