package implement

import (
	"strings"
	"testing"
)

// TestNoPathSkipsAGate walks the declared graph (the engine refuses any
// edge not declared, so this is every path a run can take).
func TestNoPathSkipsAGate(t *testing.T) {
	t.Parallel()
	g := Graph(Deps{})
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{NodeCommit, NodeMerge} {
		if g.PathAvoiding(target) == nil {
			t.Fatalf("%s is unreachable: the test would prove nothing", target)
		}
		for _, gate := range []string{NodeRed, NodeGreen, NodeDiffGate, NodeReview} {
			if p := g.PathAvoiding(target, gate); p != nil {
				t.Errorf("a path reaches %s without %s: %s", target, gate, strings.Join(p, " -> "))
			}
		}
	}
	for _, gate := range []string{NodeDiffGate, NodeReview, NodeEscalate} {
		if !g.IsGate(gate) {
			t.Errorf("%s is not a human gate", gate)
		}
	}
	// Red must come before any code is written.
	if p := g.PathAvoiding(NodeImplement, NodeRed); p != nil {
		t.Errorf("code can be written before the red gate: %s", strings.Join(p, " -> "))
	}
	// The merge only follows a commit, which only follows the human review.
	for _, next := range g.Next(NodeDiffGate) {
		if next == NodeCommit || next == NodeMerge {
			t.Errorf("the diff gate leads straight to %s", next)
		}
	}
}
