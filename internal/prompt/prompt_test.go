package prompt_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/azero-dev/azero/internal/human"
	"github.com/azero-dev/azero/internal/iostreams"
	"github.com/azero-dev/azero/internal/prompt"
	"github.com/azero-dev/azero/internal/testenv"
)

// newTerminal returns a real pseudo-terminal and streams on it: the
// prompter reads and writes the tty end, the test types into the master end.
func newTerminal(t *testing.T) (*testenv.Terminal, *iostreams.IOStreams) {
	term := testenv.NewTerminal(t)
	return term, term.Streams(false)
}

func noEnv(string) string { return "" }

func TestApproveNeedsTheWholeWord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		answers []string
		want    bool
		reasks  int
	}{
		{"approve", []string{"approve"}, true, 0},
		{"upper case", []string{"APPROVE"}, true, 0},
		{"reject", []string{"reject"}, false, 0},
		{"bare enter then approve", []string{"", "approve"}, true, 1},
		{"abbreviations never pass", []string{"a", "y", "yes", "approv", "reject"}, false, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			term, io := newTerminal(t)
			p := prompt.New(io, noEnv, exec.LookPath)
			type result struct {
				ok  bool
				err error
			}
			res := make(chan result, 1)
			go func() {
				ok, err := p.Approve(t.Context(), "Commit these changes?", "approve", "reject")
				res <- result{ok, err}
			}()
			term.WaitFor(t, "Type 'approve' to proceed", 1)
			for _, a := range tt.answers {
				term.Type(t, a)
			}
			select {
			case r := <-res:
				if r.err != nil || r.ok != tt.want {
					t.Fatalf("Approve = %v, %v; want %v", r.ok, r.err, tt.want)
				}
			case <-time.After(testenv.Patience):
				t.Fatal("Approve did not return")
			}
			// The screen may lag behind the answer; give it a moment.
			var got int
			for deadline := time.Now().Add(testenv.Patience); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				if got = strings.Count(term.Text(), "in full"); got >= tt.reasks {
					break
				}
			}
			if got != tt.reasks {
				t.Errorf("asked again %d times, want %d", got, tt.reasks)
			}
		})
	}
}

func TestNoTerminalNeverAsks(t *testing.T) {
	t.Parallel()
	io, in, _, errOut := iostreams.Test()
	in.WriteString("approve\nS\nhello\n")
	p := prompt.New(io, noEnv, exec.LookPath)
	ctx := t.Context()
	checks := map[string]error{}
	_, checks["Approve"] = p.Approve(ctx, "q", "approve", "reject")
	_, checks["Choose"] = p.Choose(ctx, "q", []prompt.Choice{{Key: "S", Label: "Send"}})
	_, checks["Input"] = p.Input(ctx, "q", true)
	_, checks["Paragraph"] = p.Paragraph(ctx, "q")
	checks["Edit"] = p.Edit(ctx, "f")
	for name, err := range checks {
		if !errors.Is(err, prompt.ErrNoTerminal) {
			t.Errorf("%s without terminal: %v, want ErrNoTerminal", name, err)
		}
		var nh interface{ NeedsHuman() bool }
		if !errors.As(err, &nh) || !nh.NeedsHuman() {
			t.Errorf("%s error does not report NeedsHuman", name)
		}
	}
	if errOut.Len() != 0 {
		t.Errorf("something was shown without a terminal: %q", errOut.String())
	}
}

func TestEndOfInputIsNoAnswer(t *testing.T) {
	t.Parallel()
	io, in, _, _ := iostreams.Test()
	io.SetTTY(true, false, true) // a terminal that hangs up
	in.WriteString("maybe\n")
	p := prompt.New(io, noEnv, exec.LookPath)
	ok, err := p.Approve(t.Context(), "q", "approve", "reject")
	if ok || !errors.Is(err, prompt.ErrNoAnswer) {
		t.Fatalf("Approve at EOF = %v, %v; want false, ErrNoAnswer", ok, err)
	}
}

func TestChooseMenu(t *testing.T) {
	t.Parallel()
	choices := []prompt.Choice{{Key: "S", Label: "Send"}, {Key: "R", Label: "Revise"}, {Key: "M", Label: "Manual"}}
	tests := []struct {
		name    string
		answers string
		want    string
	}{
		{"letter", "s\n", "S"},
		{"word", "Revise\n", "R"},
		{"empty and junk ask again", "\nx\nm\n", "M"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			io, in, _, errOut := iostreams.Test()
			io.SetTTY(true, false, true)
			in.WriteString(tt.answers)
			p := prompt.New(io, noEnv, exec.LookPath)
			got, err := p.Choose(t.Context(), "Iteration 1 | Draft #1", choices)
			if err != nil || got != tt.want {
				t.Fatalf("Choose = %q, %v; want %q", got, err, tt.want)
			}
			if !strings.Contains(errOut.String(), "[S]end / [R]evise / [M]anual? ") {
				t.Errorf("menu not shown as [S]end / [R]evise / [M]anual: %q", errOut.String())
			}
		})
	}
}

func TestParagraph(t *testing.T) {
	t.Parallel()
	io, in, _, _ := iostreams.Test()
	io.SetTTY(true, false, true)
	in.WriteString("\nfirst line\nsecond line\n\nnot read\n")
	p := prompt.New(io, noEnv, exec.LookPath)
	got, err := p.Paragraph(t.Context(), "Feedback:")
	if err != nil || got != "first line\nsecond line" {
		t.Fatalf("Paragraph = %q, %v", got, err)
	}
}

func TestEditorCommandOrder(t *testing.T) {
	t.Parallel()
	found := func(names ...string) func(string) (string, error) {
		return func(n string) (string, error) {
			for _, x := range names {
				if x == n {
					return "/usr/bin/" + n, nil
				}
			}
			return "", exec.ErrNotFound
		}
	}
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	tests := []struct {
		name string
		env  map[string]string
		path []string
		want string
	}{
		{"azero's own first", map[string]string{"AZERO_EDITOR": "micro", "GIT_EDITOR": "vim", "VISUAL": "nano", "EDITOR": "ed"}, nil, "micro"},
		{"git's next", map[string]string{"GIT_EDITOR": "vim -f", "VISUAL": "nano", "EDITOR": "ed"}, nil, "vim -f"},
		{"visual first", map[string]string{"VISUAL": "nano", "EDITOR": "ed"}, nil, "nano"},
		{"editor next", map[string]string{"EDITOR": "emacs -nw"}, nil, "emacs -nw"},
		{"code --wait", nil, []string{"code", "vi"}, "code --wait"},
		{"vi last", nil, []string{"vi"}, "vi"},
	}
	for _, tt := range tests {
		p := prompt.New(&iostreams.IOStreams{}, env(tt.env), found(tt.path...))
		got, err := p.EditorCommand()
		if err != nil || got != tt.want {
			t.Errorf("%s: EditorCommand = %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	p := prompt.New(&iostreams.IOStreams{}, noEnv, found())
	if _, err := p.EditorCommand(); !errors.Is(err, prompt.ErrNoEditor) {
		t.Errorf("no editor at all: %v, want ErrNoEditor", err)
	}
	p = prompt.New(&iostreams.IOStreams{}, env(map[string]string{"EDITOR": "no-such-editor --wait"}), exec.LookPath)
	if _, err := p.CheckEditor(); err == nil || !strings.Contains(err.Error(), "no-such-editor") {
		t.Errorf("CheckEditor with a missing program: %v", err)
	}
}

func TestEditWaitsForTheEditor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "my editor.sh")
	// The editor takes its time, then appends to every file it was given.
	if err := os.WriteFile(script, []byte("#!/bin/sh\nsleep 0.2\nfor f in \"$@\"; do case \"$f\" in -*) continue;; esac; echo edited >> \"$f\"; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "draft one.md"), filepath.Join(dir, "verdict.md")
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, []byte("text\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, io := newTerminal(t)
	editor := "'" + script + "' --wait"
	p := prompt.New(io, func(k string) string {
		if k == "EDITOR" {
			return editor
		}
		return ""
	}, exec.LookPath)
	if err := p.Edit(context.Background(), a, b); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{a, b} {
		got, _ := os.ReadFile(f)
		if string(got) != "text\nedited\n" {
			t.Errorf("%s = %q: Edit returned before the editor finished", f, got)
		}
	}
}

// TestTypedAheadInputNeverAnswers types an answer before the question is
// shown (while, say, a diff is still scrolling by): it must be discarded,
// and only what is typed after the question appears answers it.
func TestTypedAheadInputNeverAnswers(t *testing.T) {
	t.Parallel()
	choices := []prompt.Choice{{Key: "S", Label: "Send"}, {Key: "M", Label: "Manual"}}
	tests := []struct {
		name         string
		ahead, after []string
		shown        string // the end of the question on the screen
		ask          func(ctx context.Context, p *prompt.Prompter) (string, error)
		want         string
	}{
		{"approve", []string{"approve"}, []string{"reject"}, "to stop: ",
			func(ctx context.Context, p *prompt.Prompter) (string, error) {
				ok, err := p.Approve(ctx, "Commit this diff?", "approve", "reject")
				return fmt.Sprint(ok), err
			}, "false"},
		{"approve after a typed-ahead reject", []string{"reject"}, []string{"approve"}, "to stop: ",
			func(ctx context.Context, p *prompt.Prompter) (string, error) {
				ok, err := p.Approve(ctx, "Commit this diff?", "approve", "reject")
				return fmt.Sprint(ok), err
			}, "true"},
		{"a gate's typed word", []string{"approve"}, []string{"reject"}, "to stop: ",
			func(ctx context.Context, p *prompt.Prompter) (string, error) {
				a, err := p.Answer(ctx, human.Question{Gate: "diff_review", Kind: human.Word, Prompt: "Commit?",
					Options: []human.Option{{Key: "approve", Decision: "APPROVED"}, {Key: "reject", Decision: "REJECTED"}}})
				return a.Key, err
			}, "reject"},
		{"a gate's three words", []string{"approve"}, []string{"abort"}, "'abort' to stop: ",
			func(ctx context.Context, p *prompt.Prompter) (string, error) {
				a, err := p.Answer(ctx, human.Question{Gate: "human_review", Kind: human.Word, Prompt: "Merge?",
					Options: []human.Option{{Key: "approve", Label: "to proceed"}, {Key: "revise", Label: "to send it back", Text: "What?"}, {Key: "abort", Label: "to stop"}}})
				return a.Key, err
			}, "abort"},
		{"a gate's menu", []string{"S"}, []string{"M"}, "[M]anual? ",
			func(ctx context.Context, p *prompt.Prompter) (string, error) {
				a, err := p.Answer(ctx, human.Question{Gate: "edit_draft", Kind: human.Menu, Prompt: "Next?",
					Options: []human.Option{{Key: "S", Label: "Send"}, {Key: "M", Label: "Manual"}}})
				return a.Key, err
			}, "M"},
		{"choose", []string{"S"}, []string{"M"}, "[M]anual? ",
			func(ctx context.Context, p *prompt.Prompter) (string, error) {
				return p.Choose(ctx, "Next?", choices)
			}, "M"},
		{"input", []string{"typed ahead"}, []string{"typed after"}, "Slug? ",
			func(ctx context.Context, p *prompt.Prompter) (string, error) {
				return p.Input(ctx, "Slug?", false)
			}, "typed after"},
		{"paragraph", []string{"ahead one", "ahead two", ""}, []string{"after one", "after two", ""}, "(end with an empty line)",
			func(ctx context.Context, p *prompt.Prompter) (string, error) {
				return p.Paragraph(ctx, "Feedback:")
			}, "after one\nafter two"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			term, io := newTerminal(t)
			for _, line := range tt.ahead {
				term.Type(t, line)
			}
			// The echo shows the terminal has taken the lines in: they are
			// pending input, typed before the question exists.
			term.WaitFor(t, "\r\n", len(tt.ahead))
			p := prompt.New(io, noEnv, exec.LookPath)
			type result struct {
				answer string
				err    error
			}
			res := make(chan result, 1)
			go func() {
				a, err := tt.ask(t.Context(), p)
				res <- result{a, err}
			}()
			term.WaitFor(t, tt.shown, 1)
			for _, line := range tt.after {
				term.Type(t, line)
			}
			select {
			case r := <-res:
				if r.err != nil || r.answer != tt.want {
					t.Fatalf("answer %q, %v; want %q, typed after the question", r.answer, r.err, tt.want)
				}
			case <-time.After(testenv.Patience):
				t.Fatalf("no answer; screen:\n%s", term.Text())
			}
		})
	}
}

// TestAnswerToACancelledQuestionDoesNotCarryOver: a line typed while a
// question was being abandoned (read by the reader it left behind) does not
// answer the next question.
func TestAnswerToACancelledQuestionDoesNotCarryOver(t *testing.T) {
	t.Parallel()
	term, io := newTerminal(t)
	p := prompt.New(io, noEnv, exec.LookPath)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := p.Input(ctx, "Slug?", false)
		done <- err
	}()
	term.WaitFor(t, "Slug? ", 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled question: %v", err)
	}
	term.Type(t, "approve")
	term.WaitFor(t, "approve\r\n", 1)
	// Give the reader left behind time to take the line; with or without
	// it, the next question must not see it.
	time.Sleep(50 * time.Millisecond)
	res := make(chan bool, 1)
	go func() {
		ok, _ := p.Approve(t.Context(), "Merge?", "approve", "reject")
		res <- ok
	}()
	term.WaitFor(t, "to stop: ", 1)
	term.Type(t, "reject")
	select {
	case ok := <-res:
		if ok {
			t.Fatal("a line typed before the question approved it")
		}
	case <-time.After(testenv.Patience):
		t.Fatalf("no answer; screen:\n%s", term.Text())
	}
}

// TestAnswerer: the terminal as a gate's Answerer, for every kind of
// question: the answer names the terminal as its channel and is one the
// question allows.
func TestAnswerer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	editor := filepath.Join(dir, "editor.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nfor f in \"$@\"; do echo edited >> \"$f\"; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	verdict := human.Question{Kind: human.Menu, Prompt: "File it?", Options: []human.Option{
		{Key: "A", Label: "Approve", Decision: "approve", Confirm: "override", ConfirmWhy: "The reviewer said BLOCK."},
		{Key: "R", Label: "Revise", Decision: "revise", Text: "Feedback:"},
		{Key: "N", Label: "New name", Decision: "new_name", Text: "Slug:", OneLine: true},
	}}
	tests := []struct {
		name   string
		q      human.Question
		typed  string
		want   human.Answer
		screen string
	}{
		{"a word typed in full", human.Question{Kind: human.Word, Prompt: "Merge?", Options: []human.Option{{Key: "approve"}, {Key: "reject"}}},
			"appr\napprove\n", human.Answer{Key: "approve"}, "Please type 'approve' or 'reject' in full"},
		{"a confirmation typed wrong goes back to the menu", verdict, "A\nyes\nA\nOVERRIDE\n",
			human.Answer{Key: "A", Confirm: "override"}, "The reviewer said BLOCK."},
		{"an option that needs text", verdict, "r\nmore tests\nplease\n\n", human.Answer{Key: "R", Text: "more tests\nplease"}, "Feedback:"},
		{"an option that needs one line", verdict, "N\nnew-name\nnot read\n", human.Answer{Key: "N", Text: "new-name"}, "Slug:"},
		{"a text question", human.Question{Kind: human.Text, Prompt: "Why?"}, "because\n", human.Answer{Text: "because"}, "Why?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			io, in, _, errOut := iostreams.Test()
			io.SetTTY(true, false, true)
			in.WriteString(tt.typed)
			q := tt.q
			q.Gate = "g"
			a, err := prompt.New(io, noEnv, exec.LookPath).Answer(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.Gate, want.Channel = "g", human.ChannelTerminal
			if a.Gate != want.Gate || a.Channel != want.Channel || a.Key != want.Key || a.Text != want.Text || a.Confirm != want.Confirm {
				t.Errorf("answer = %+v, want %+v", a, want)
			}
			if _, err := human.Validate(q, a); err != nil {
				t.Errorf("the terminal's answer is refused: %v", err)
			}
			if !strings.Contains(errOut.String(), tt.screen) {
				t.Errorf("the screen lacks %q:\n%s", tt.screen, errOut.String())
			}
		})
	}

	t.Run("an editor question", func(t *testing.T) {
		t.Parallel()
		draft := filepath.Join(t.TempDir(), "draft.md")
		if err := os.WriteFile(draft, []byte("# Draft\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		// A real terminal: the editor runs attached to it.
		term, io := newTerminal(t)
		q := human.Question{Gate: "edit_draft", Kind: human.Editor, Prompt: "Send it?",
			Files:   []human.File{{Name: "draft.md", Path: draft, Content: "# Draft\n"}},
			Options: []human.Option{{Key: "S", Label: "Send"}, {Key: "M", Label: "Manual"}}}
		env := func(k string) string {
			if k == "EDITOR" {
				return editor
			}
			return ""
		}
		type result struct {
			a   human.Answer
			err error
		}
		res := make(chan result, 1)
		go func() {
			a, err := prompt.New(io, env, exec.LookPath).Answer(t.Context(), q)
			res <- result{a, err}
		}()
		term.WaitFor(t, "[M]anual? ", 1)
		term.Type(t, "S")
		var a human.Answer
		select {
		case r := <-res:
			if r.err != nil {
				t.Fatal(r.err)
			}
			a = r.a
		case <-time.After(testenv.Patience):
			t.Fatalf("no answer; screen:\n%s", term.Text())
		}
		if a.Key != "S" || a.Files["draft.md"] != "# Draft\nedited\n" || a.Channel != human.ChannelTerminal {
			t.Fatalf("answer = %+v, want S with the edited draft", a)
		}
		if _, err := human.Validate(q, a); err != nil {
			t.Errorf("the terminal's answer is refused: %v", err)
		}
	})

	t.Run("no terminal", func(t *testing.T) {
		t.Parallel()
		io, in, _, errOut := iostreams.Test()
		in.WriteString("approve\n")
		_, err := prompt.New(io, noEnv, exec.LookPath).Answer(t.Context(), human.Question{Gate: "g", Kind: human.Word, Options: []human.Option{{Key: "approve"}}})
		if !errors.Is(err, prompt.ErrNoTerminal) || !human.Needed(err) {
			t.Fatalf("err = %v, want ErrNoTerminal (a human is needed)", err)
		}
		if errOut.Len() != 0 || in.Len() == 0 {
			t.Errorf("something was asked or read without a terminal: %q", errOut.String())
		}
	})
}

// A question withdrawn while it waits (answered on the page of azero
// serve, or interrupted) ends the line it was asked on: what is printed
// next, such as who answered, starts on a line of its own.
func TestAWithdrawnQuestionEndsItsLine(t *testing.T) {
	t.Parallel()
	term, io := newTerminal(t)
	p := prompt.New(io, noEnv, exec.LookPath)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	q := human.Question{Gate: "review", Kind: human.Word, Prompt: "Merge?", Options: []human.Option{{Key: "approve"}, {Key: "reject"}}}
	go func() {
		_, err := p.Answer(ctx, q)
		done <- err
	}()
	term.WaitFor(t, "to stop: ", 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("withdrawn question: %v", err)
	}
	fmt.Fprintln(io.ErrOut, "review answered APPROVED on the web channel")
	term.WaitFor(t, "web channel", 1)
	if screen := term.Text(); !strings.Contains(screen, "to stop: \r\nreview answered APPROVED") {
		t.Errorf("the notice does not start on a line of its own:\n%q", screen)
	}
}
