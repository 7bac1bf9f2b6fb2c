// Package selftest is a small workflow that exercises the engine on this
// machine: durable checkpoints, a loop, a human gate and resume. Each node
// appends a line to effects.log in its directory, so a test (or a curious
// user) can see that every node's effect happened exactly once, except a
// node interrupted mid-way, which runs again on resume.
package selftest

import (
	"context"
	"fmt"
	"time"

	"github.com/azero-dev/azero/internal/flow"
	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/safewrite"
)

// Name is the workflow's name in the store.
const Name = "selftest"

// EffectsFile is the log of node effects inside State.Dir.
const EffectsFile = "effects.log"

// State is the run's state.
type State struct {
	Dir      string        `json:"dir"`   // where effects.log is written
	Steps    int           `json:"steps"` // how many work nodes to run
	Delay    time.Duration `json:"delay"` // how long each work node takes
	Done     int           `json:"done"`  // work nodes completed
	Approved bool          `json:"approved"`
}

// Deps are what the nodes use.
type Deps struct {
	Writer *safewrite.Writer
}

// Graph builds the workflow: prepare -> work (Steps times) -> approve
// (a gate) -> finish.
func Graph(d Deps) *flow.Graph[State] {
	effect := func(ctx context.Context, s *State, line string) error {
		_, err := d.Writer.Write(ctx, safewrite.Request{
			Root: s.Dir, Path: EffectsFile, Content: []byte(line + "\n"),
			Strategy: safewrite.Append, Actor: "azero selftest", RunID: flow.RunID(ctx),
		})
		return err
	}
	return flow.New[State](Name, "prepare").
		Node("prepare", func(ctx context.Context, s *State) (string, error) {
			if err := effect(ctx, s, "prepare"); err != nil {
				return "", err
			}
			return "work", nil
		}, "work").
		Node("work", func(ctx context.Context, s *State) (string, error) {
			select {
			case <-time.After(s.Delay):
			case <-ctx.Done():
				return "", ctx.Err()
			}
			s.Done++
			if err := effect(ctx, s, fmt.Sprintf("work %d", s.Done)); err != nil {
				return "", err
			}
			return route(s), nil
		}, "work", "approve").
		Gate("approve", func(ctx context.Context, s *State) (human.Question, error) {
			return human.Question{Kind: human.Word, Prompt: fmt.Sprintf("The self-test ran %d work steps. Finish it?", s.Done),
				Options: []human.Option{{Key: "approve", Decision: "APPROVED"}, {Key: "reject", Decision: "REJECTED"}}}, nil
		}, decide, "finish").
		Node("finish", func(ctx context.Context, s *State) (string, error) {
			if err := effect(ctx, s, "finish"); err != nil {
				return "", err
			}
			return flow.End, nil
		}, flow.End).
		MaxVisits("work", 1000)
}

// decide is the gate's router: approve finishes, reject aborts the run.
func decide(s *State, _ human.Question, a human.Answer) (string, error) {
	if a.Key != "approve" {
		return "", fmt.Errorf("self-test rejected at the gate: %w", flow.ErrAborted)
	}
	s.Approved = true
	return "finish", nil
}

// route is the work loop's router: more work, or the gate.
func route(s *State) string {
	if s.Done < s.Steps {
		return "work"
	}
	return "approve"
}
