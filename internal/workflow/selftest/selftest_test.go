package selftest

import (
	"errors"
	"strings"
	"testing"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
)

func TestNoPathSkipsTheGate(t *testing.T) {
	t.Parallel()
	g := Graph(Deps{})
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if gates := g.Gates(); len(gates) != 1 || gates[0] != "approve" {
		t.Fatalf("gates = %v, want [approve]", gates)
	}
	if g.PathAvoiding("finish") == nil {
		t.Fatal("finish is unreachable: the test would prove nothing")
	}
	if p := g.PathAvoiding("finish", "approve"); p != nil {
		t.Errorf("a path finishes without the gate: %s", strings.Join(p, " -> "))
	}
}

// TestEveryGateAnswerIsADeclaredRoute asks the gate and routes every
// answer its question allows: approve lands on a declared next node,
// reject aborts the run; any other word is refused before decide.
func TestEveryGateAnswerIsADeclaredRoute(t *testing.T) {
	t.Parallel()
	g := Graph(Deps{})
	for _, gate := range g.Gates() {
		s := State{Steps: 2, Done: 2}
		q, err := g.Ask(t.Context(), gate, &s)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Check(); err != nil {
			t.Fatal(err)
		}
		if q.Unattended != nil {
			t.Errorf("%s can pass unattended", gate)
		}
		if !strings.Contains(q.Prompt, "2 work steps") {
			t.Errorf("prompt %q does not say what ran", q.Prompt)
		}
		for _, o := range q.Options {
			s2 := s
			next, err := g.Decide(gate, &s2, q, human.Answer{Gate: gate, Key: o.Key, Channel: human.ChannelTerminal})
			switch o.Key {
			case "approve":
				if err != nil || next != "finish" || !s2.Approved {
					t.Errorf("approve: %q, %v, approved %v", next, err, s2.Approved)
				}
			case "reject":
				if !errors.Is(err, flow.ErrAborted) || s2.Approved {
					t.Errorf("reject: %q, %v, approved %v; want the run aborted", next, err, s2.Approved)
				}
			default:
				t.Errorf("unexpected answer %s: %q, %v", o.Key, next, err)
			}
		}
		for _, bad := range []string{"", "a", "appr", "yes"} {
			if _, err := g.Decide(gate, &s, q, human.Answer{Gate: gate, Key: bad, Channel: human.ChannelWeb}); err == nil {
				t.Errorf("%s accepted %q", gate, bad)
			}
		}
	}
}

func TestRoute(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		steps, done int
		want        string
	}{{3, 0, "work"}, {3, 2, "work"}, {3, 3, "approve"}, {0, 0, "approve"}} {
		if got := route(&State{Steps: tt.steps, Done: tt.done}); got != tt.want {
			t.Errorf("route(%d of %d) = %s, want %s", tt.done, tt.steps, got, tt.want)
		}
	}
}
