// Package prompt asks a human through iostreams.
//
// Invariants: nothing here ever returns consent without a typed answer. A
// bare Enter, end of input, or the absence of a terminal is never approval:
// without a terminal every question fails at once with an error whose
// NeedsHuman method reports true, so a workflow can checkpoint and exit 3.
// Only what is typed after a question is shown answers it: every question
// first discards input typed ahead (iostreams.FlushInput), so an "approve"
// typed while a diff was still scrolling by never approves it. Lines typed
// after the question, including answers to its repeated asks, are kept.
// A question withdrawn while it waits ends its line.
package prompt

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/iostreams"
)

var (
	// ErrNoTerminal is returned when stdin or stderr is not a terminal.
	ErrNoTerminal = human.ErrNoTerminal
	// ErrNoAnswer is returned when input ended before an answer was typed.
	ErrNoAnswer = human.ErrNoAnswer
)

// Prompter asks questions on a terminal.
type Prompter struct {
	io       *iostreams.IOStreams
	getenv   func(string) string
	lookPath func(string) (string, error)
}

// New returns a Prompter over io. getenv resolves the editor variables;
// lookPath finds fallback editors (exec.LookPath in production).
func New(io *iostreams.IOStreams, getenv func(string) string, lookPath func(string) (string, error)) *Prompter {
	return &Prompter{io: io, getenv: getenv, lookPath: lookPath}
}

// CanPrompt reports whether questions can be asked at all.
func (p *Prompter) CanPrompt() bool { return p.io.CanPrompt() }

func (p *Prompter) readAnswer(ctx context.Context, question string) (string, error) {
	fmt.Fprint(p.io.ErrOut, question)
	line, err := p.io.ReadLine(ctx)
	if errors.Is(err, iostreams.ErrEOF) {
		fmt.Fprintln(p.io.ErrOut)
		return "", ErrNoAnswer
	}
	if err != nil {
		if ctx.Err() != nil {
			// Withdrawn (answered on another channel, or interrupted)
			// with the cursor after the question: what is printed next,
			// such as who answered, starts on a line of its own.
			fmt.Fprintln(p.io.ErrOut)
		}
		return "", err
	}
	return strings.TrimSpace(line), nil
}

// Approve shows question and waits until the human types word (approval)
// or reject (refusal), each in full; case does not matter. Anything else,
// including an empty line or an abbreviation, asks again.
func (p *Prompter) Approve(ctx context.Context, question, word, reject string) (bool, error) {
	if !p.CanPrompt() {
		return false, ErrNoTerminal
	}
	if err := p.io.FlushInput(); err != nil {
		return false, err
	}
	cs := p.io.ColorScheme()
	q := fmt.Sprintf("%s\nType '%s' to proceed or '%s' to stop: ", question, cs.Bold(word), cs.Bold(reject))
	for {
		answer, err := p.readAnswer(ctx, q)
		if err != nil {
			return false, err
		}
		switch {
		case strings.EqualFold(answer, word):
			return true, nil
		case strings.EqualFold(answer, reject):
			return false, nil
		}
		q = fmt.Sprintf("Please type '%s' or '%s' in full: ", word, reject)
	}
}

// Choice is one option of a menu: Key is what the human types (one letter),
// Label its meaning. The menu shows "[S]end" for Key "S", Label "Send".
type Choice struct {
	Key   string
	Label string
}

func (c Choice) String() string {
	if rest, ok := strings.CutPrefix(strings.ToLower(c.Label), strings.ToLower(c.Key)); ok && c.Label != "" {
		return "[" + c.Key + "]" + c.Label[len(c.Label)-len(rest):]
	}
	return "[" + c.Key + "] " + c.Label
}

// Choose shows a menu and returns the Key of the chosen option. The key or
// the whole label is accepted, in any case; anything else asks again. There
// is no default: an empty line asks again.
func (p *Prompter) Choose(ctx context.Context, question string, choices []Choice) (string, error) {
	if !p.CanPrompt() {
		return "", ErrNoTerminal
	}
	if err := p.io.FlushInput(); err != nil {
		return "", err
	}
	labels := make([]string, len(choices))
	for i, c := range choices {
		labels[i] = c.String()
	}
	menu := strings.Join(labels, " / ") + "? "
	q := menu
	if question != "" {
		q = question + "\n" + menu
	}
	for {
		answer, err := p.readAnswer(ctx, q)
		if err != nil {
			return "", err
		}
		for _, c := range choices {
			if strings.EqualFold(answer, c.Key) || strings.EqualFold(answer, c.Label) {
				return c.Key, nil
			}
		}
		q = "Please choose one of " + menu
	}
}

// Input asks for one line of text. With allowEmpty false an empty line
// asks again.
func (p *Prompter) Input(ctx context.Context, question string, allowEmpty bool) (string, error) {
	if !p.CanPrompt() {
		return "", ErrNoTerminal
	}
	if err := p.io.FlushInput(); err != nil {
		return "", err
	}
	q := question + " "
	for {
		answer, err := p.readAnswer(ctx, q)
		if err != nil {
			return "", err
		}
		if answer != "" || allowEmpty {
			return answer, nil
		}
	}
}

// Paragraph asks for free text over several lines, ended by an empty line.
// At least one non-empty line is required.
func (p *Prompter) Paragraph(ctx context.Context, question string) (string, error) {
	if !p.CanPrompt() {
		return "", ErrNoTerminal
	}
	if err := p.io.FlushInput(); err != nil {
		return "", err
	}
	fmt.Fprintf(p.io.ErrOut, "%s\n(end with an empty line)\n", question)
	var lines []string
	for {
		line, err := p.io.ReadLine(ctx)
		if errors.Is(err, iostreams.ErrEOF) {
			if len(lines) > 0 {
				return strings.Join(lines, "\n"), nil
			}
			return "", ErrNoAnswer
		}
		if err != nil {
			return "", err
		}
		if strings.TrimSpace(line) == "" {
			if len(lines) > 0 {
				return strings.Join(lines, "\n"), nil
			}
			continue
		}
		lines = append(lines, line)
	}
}
