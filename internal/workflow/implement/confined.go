package implement

import (
	"context"

	"github.com/azero-dev/azero/internal/human"
)

// confined wraps a gate's ask so that every question of the run says how
// the model's code ran: its facts (recorded with the decision in the audit
// log) name the sandbox's mechanism and whether the network was allowed,
// and a run whose code ran unconfined (--sandbox off) or with the network
// says so first in what the human reads, whatever the gate. Nobody
// approves code that ran with their full powers without being told.
func (n *nodes) confined(ask func(context.Context, *State) (human.Question, error)) func(context.Context, *State) (human.Question, error) {
	return func(ctx context.Context, s *State) (human.Question, error) {
		q, err := ask(ctx, s)
		if err != nil || n.d.Sandbox == nil {
			return q, err
		}
		box := n.d.Sandbox
		if q.Facts == nil {
			q.Facts = map[string]any{}
		}
		q.Facts["sandbox"] = box.Mechanism()
		q.Facts["network"] = box.Network()
		var warn string
		switch {
		case box.Off():
			warn = "!! The model's code ran UNCONFINED (--sandbox off): its tests, its code and the project's scripts had your files, your network and your credentials."
		case box.Network():
			warn = "!! The model's code could reach the network ([sandbox] network = true in your config)."
		}
		if warn != "" {
			q.Report = warn + "\n\n" + q.Report
		}
		return q, nil
	}
}
