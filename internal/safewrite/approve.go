package safewrite

import (
	"context"
	"fmt"
	"strconv"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/prompt"
)

// Decision is an approver's answer: whether to write, and with which
// strategy (Line for Insert).
type Decision struct {
	Approved bool     `json:"approved"`
	Strategy Strategy `json:"strategy"`
	Line     int      `json:"line,omitempty"`
	// Channel is where the human answered (human.ChannelTerminal); the
	// audit log records it with the decision.
	Channel string `json:"channel,omitempty"`
}

// Approver decides on a proposal that needs approval. Writer calls it only
// when a human must decide; an error stops the write (a NeedsHuman error
// lets a workflow checkpoint).
type Approver interface {
	Decide(ctx context.Context, p Proposal) (Decision, error)
}

// TerminalApprover asks a human at the terminal: it shows the warning and
// the coloured diff, lets them pick a strategy, shows the preview of the
// result and needs a typed "approve".
type TerminalApprover struct {
	io *iostreams.IOStreams
	p  *prompt.Prompter
}

// NewTerminalApprover returns an Approver asking through p on io's stderr.
func NewTerminalApprover(io *iostreams.IOStreams, p *prompt.Prompter) Approver {
	return &TerminalApprover{io: io, p: p}
}

var strategyMenu = []prompt.Choice{
	{Key: "A", Label: "Append"},
	{Key: "I", Label: "Insert"},
	{Key: "E", Label: "Extend"},
	{Key: "R", Label: "Replace"},
	{Key: "C", Label: "Cancel"},
}

var strategyOfKey = map[string]Strategy{"A": Append, "I": Insert, "E": Extend, "R": Replace}

// Decide implements Approver. Cancel and reject return Decision{Approved:
// false}; Writer turns that into an error wrapping human.ErrAborted.
func (a *TerminalApprover) Decide(ctx context.Context, p Proposal) (Decision, error) {
	w := a.io.ErrOut
	cs := a.io.ColorScheme()
	warning := p.Warning
	if warning == "" {
		warning = fmt.Sprintf("about to change %d lines of %d (-%d +%d)", p.Deleted, p.ExistingLines, p.Deleted, p.Added)
	}
	fmt.Fprintf(w, "\n%s %s: %s\n", cs.Alert(" WARNING "), cs.Bold(p.Rel), warning)
	fmt.Fprintf(w, "%s\n\n", cs.Yellow(fmt.Sprintf("%d lines would be deleted and %d added. The diff:", p.Deleted, p.Added)))
	fmt.Fprint(w, ColorDiff(cs, p.Diff))
	for {
		key, err := a.p.Choose(ctx, fmt.Sprintf("\n%s: %s. How should the new content go in?", p.Rel, warning), strategyMenu)
		if err != nil {
			return Decision{}, err
		}
		if key == "C" {
			return Decision{Approved: false, Strategy: p.Strategy, Channel: human.ChannelTerminal}, nil
		}
		s := strategyOfKey[key]
		line := 0
		if s == Insert {
			if line, err = a.askLine(ctx, p.ExistingLines); err != nil {
				return Decision{}, err
			}
		}
		preview, err := p.WithStrategy(ctx, s, line)
		if err != nil {
			fmt.Fprintf(w, "%s %v\nChoose another strategy.\n", cs.Red("Cannot "+string(s)+":"), err)
			continue
		}
		fmt.Fprintf(w, "\nPreview of %s after %s (%d lines, -%d +%d):\n\n", cs.Bold(p.Rel), s, preview.NewLines, preview.Deleted, preview.Added)
		if preview.Diff == "" {
			fmt.Fprintln(w, "(no change)")
		}
		fmt.Fprint(w, ColorDiff(cs, preview.Diff))
		question := fmt.Sprintf("\nWrite %s with strategy %s?", p.Rel, s)
		if preview.Warning != "" {
			question = fmt.Sprintf("\n%s: %s. Write it?", p.Rel, preview.Warning)
		}
		ok, err := a.p.Approve(ctx, question, "approve", "reject")
		if err != nil {
			return Decision{}, err
		}
		return Decision{Approved: ok, Strategy: s, Line: line, Channel: human.ChannelTerminal}, nil
	}
}

// askLine asks for an insert line until one in 1..lines+1 is typed.
func (a *TerminalApprover) askLine(ctx context.Context, lines int) (int, error) {
	q := fmt.Sprintf("Insert at which line (1-%d; %d appends)?", lines+1, lines+1)
	for {
		answer, err := a.p.Input(ctx, q, false)
		if err != nil {
			return 0, err
		}
		n, convErr := strconv.Atoi(answer)
		if convErr == nil && n >= 1 && n <= lines+1 {
			return n, nil
		}
		q = fmt.Sprintf("Please type a line number from 1 to %d:", lines+1)
	}
}

// errAbortedBy reports a human's cancel or reject.
func errAbortedBy(rel string, base error) error {
	return fmt.Errorf("write %s: the human did not approve: %w", rel, base)
}
