package prompt

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/azero-dev/azero/internal/human"
)

// Answer asks q at the terminal: it is the terminal's human.Answerer. The
// question's report is not printed here (the terminal's event renderer
// shows it when the question is asked); Answer opens the editor for an
// Editor question, then asks the prompt, then the text or confirmation the
// chosen option needs. Without a terminal it returns ErrNoTerminal at once.
func (p *Prompter) Answer(ctx context.Context, q human.Question) (human.Answer, error) {
	a := human.Answer{Gate: q.Gate, Channel: human.ChannelTerminal}
	if !p.CanPrompt() {
		return a, ErrNoTerminal
	}
	switch q.Kind {
	case human.Editor:
		paths := make([]string, len(q.Files))
		for i, f := range q.Files {
			if f.Path == "" {
				return a, fmt.Errorf("%s: %s has no working copy to open in the editor", q.Gate, f.Name)
			}
			paths[i] = f.Path
		}
		if err := p.Edit(ctx, paths...); err != nil {
			return a, err
		}
		a.Files = map[string]string{}
		for _, f := range q.Files {
			b, err := os.ReadFile(f.Path)
			if err != nil {
				return a, fmt.Errorf("read back %s after editing: %w", f.Name, err)
			}
			a.Files[f.Name] = string(b)
		}
		if len(q.Options) == 0 {
			return a, nil
		}
	case human.Text:
		text, err := p.Input(ctx, q.Prompt, false)
		a.Text = text
		return a, err
	}
	for {
		opt, err := p.choose(ctx, q)
		if err != nil {
			return a, err
		}
		a.Key = opt.Key
		if opt.Confirm != "" {
			ok, err := p.confirm(ctx, opt)
			if err != nil {
				return a, err
			}
			if !ok {
				continue
			}
			a.Confirm = opt.Confirm
		}
		if opt.Text != "" {
			read := p.Paragraph
			if opt.OneLine {
				read = func(ctx context.Context, q string) (string, error) { return p.Input(ctx, q, false) }
			}
			text, err := read(ctx, opt.Text)
			if err != nil {
				return a, err
			}
			a.Text = text
		}
		return a, nil
	}
}

// choose asks for one of q's options: a word typed in full, or a menu key.
func (p *Prompter) choose(ctx context.Context, q human.Question) (human.Option, error) {
	if q.Kind == human.Menu || q.Kind == human.Editor {
		choices := make([]Choice, len(q.Options))
		for i, o := range q.Options {
			choices[i] = Choice{Key: o.Key, Label: o.Label}
		}
		key, err := p.Choose(ctx, q.Prompt, choices)
		if err != nil {
			return human.Option{}, err
		}
		o, _ := q.Option(key)
		return o, nil
	}
	// What was typed before this question was shown never answers it.
	if err := p.io.FlushInput(); err != nil {
		return human.Option{}, err
	}
	cs := p.io.ColorScheme()
	words := make([]string, len(q.Options))
	parts := make([]string, len(q.Options))
	wording := q.Wording()
	for i, o := range q.Options {
		words[i] = "'" + o.Key + "'"
		parts[i] = "'" + cs.Bold(o.Key) + "'"
		if wording[i] != "" {
			parts[i] += " " + wording[i]
		}
	}
	// The page of azero serve words it the same way (human.Wording).
	ask := "Type " + joinOr(parts) + ": "
	again := "Please type " + joinOr(words) + " in full: "
	text := ask
	if q.Prompt != "" {
		text = q.Prompt + "\n" + ask
	}
	for {
		answer, err := p.readAnswer(ctx, text)
		if err != nil {
			return human.Option{}, err
		}
		if o, ok := q.Match(answer); ok {
			return o, nil
		}
		text = again
	}
}

// confirm asks for opt's confirmation word; anything else goes back to
// the question.
func (p *Prompter) confirm(ctx context.Context, opt human.Option) (bool, error) {
	why := opt.ConfirmWhy
	if why != "" {
		why += "\n"
	}
	answer, err := p.readAnswer(ctx, fmt.Sprintf("%sType '%s' to confirm, or anything else to choose again: ", why, p.io.ColorScheme().Bold(opt.Confirm)))
	if err != nil {
		return false, err
	}
	return strings.EqualFold(answer, opt.Confirm), nil
}

// joinOr joins items as "a, b or c".
func joinOr(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
